/**
 * The gardenlet's heartbeat for the seeds it serves (its `seedName`, or every Seed when it serves all): every
 * {@link SEED_LEASE_RESYNC_MS} it renews the Lease named after the Seed in {@link SEED_LEASE_NAMESPACE} (created,
 * with its namespace, when missing; owned by the Seed, so it goes with it) and keeps the Seed's `GardenletReady`
 * condition `True`, as Gardener's seed lease controller does. The garden's seed lifecycle controller (src/controllermanager/seed-lifecycle.ts) reads both.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Condition } from '../../apis/meta/schemas.js';
import {
  CONDITION_GARDENLET_READY,
  SEED_LEASE_NAMESPACE,
  SEED_LEASE_RESYNC_MS,
  SEED_MONITOR_PERIOD_MS,
} from '../../apis/core/v1beta1/seed-lease.js';
import { metav1MicroTime } from '../../apis/meta/time.js';
import { Refs } from '../../apis/refs.js';
import type { ResourceClient } from '../../runtime/client.js';
import { realClock, type Clock } from '../../runtime/clock.js';
import type { ReconcileContext, Reconciler, Request, Result } from '../../runtime/controller.js';
import { isAlreadyExists, isNotFound } from '../../runtime/errors.js';
import { condition, mergeConditions } from '../../runtime/last-operation.js';
import { patchStatusIfChanged } from '../../runtime/status.js';
import type { Lease } from '../../runtime/leader-election.js';

export interface SeedLeaseOptions {
  readonly client: ResourceClient;
  /** Reads the Seed (the informer cache). */
  readonly seed: (name: string) => KubernetesObject | undefined;
  /** Only this seed; every seed when unset. */
  readonly seedName?: string;
  /** @default {@link SEED_LEASE_RESYNC_MS} */
  readonly resyncMs?: number;
  readonly clock?: Clock;
}

type SeedWithConditions = KubernetesObject & { status?: { conditions?: Condition[] } };

export class SeedLeaseReconciler implements Reconciler {
  constructor(private readonly options: SeedLeaseOptions) {}

  async reconcile(req: Request, ctx: ReconcileContext): Promise<Result | void> {
    const { client } = this.options;
    if (this.options.seedName !== undefined && req.name !== this.options.seedName) return;
    const seed = this.options.seed(req.name) as SeedWithConditions | undefined;
    if (seed === undefined || seed.metadata?.deletionTimestamp) return;
    const clock = this.options.clock ?? realClock;
    await this.renew(seed, clock.now(), ctx);
    const previous = seed.status?.conditions?.find((c) => c.type === CONDITION_GARDENLET_READY);
    const ready = condition(
      clock,
      CONDITION_GARDENLET_READY,
      true,
      'GardenletReady',
      'Gardenlet is posting ready status.',
      previous,
    );
    // Written when it changes (timestamps aside), not at every renewal: the Lease is the heartbeat.
    await patchStatusIfChanged(
      client,
      Refs.seed,
      seed,
      { conditions: mergeConditions(seed.status?.conditions, [ready]) },
      { signal: ctx.signal },
    );
    return { requeueAfter: this.options.resyncMs ?? SEED_LEASE_RESYNC_MS };
  }

  /**
   * Renews the Seed's Lease, creating it when it is missing, and its namespace when that is missing too (the chart
   * creates it; `up` leaves it to the gardenlet).
   */
  private async renew(seed: KubernetesObject, now: number, ctx: ReconcileContext): Promise<void> {
    const { client } = this.options;
    const seedName = seed.metadata?.name ?? '';
    const c = { signal: ctx.signal };
    const spec = {
      holderIdentity: seedName,
      leaseDurationSeconds: SEED_MONITOR_PERIOD_MS / 1000,
      renewTime: metav1MicroTime(now),
    };
    const lease = await client.get<Lease>(Refs.lease, seedName, SEED_LEASE_NAMESPACE, c);
    if (lease !== undefined) {
      await client.update<Lease>(Refs.lease, { ...lease, spec: { ...lease.spec, ...spec } }, c);
      return;
    }
    const create = () =>
      client.create<Lease>(
        Refs.lease,
        {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: {
            name: seedName,
            namespace: SEED_LEASE_NAMESPACE,
            // Gone with its Seed (the garbage collector), as Gardener's.
            ...(seed.metadata?.uid !== undefined
              ? {
                  ownerReferences: [
                    {
                      apiVersion: 'core.gardener.cloud/v1beta1',
                      kind: 'Seed',
                      name: seedName,
                      uid: seed.metadata.uid,
                      controller: false,
                      blockOwnerDeletion: false,
                    },
                  ],
                }
              : {}),
          },
          spec: { ...spec, acquireTime: spec.renewTime },
        },
        c,
      );
    try {
      await create();
    } catch (e) {
      // Another renewal won the race: the next one updates it.
      if (isAlreadyExists(e)) return;
      if (!isNotFound(e)) throw e;
      await client
        .create(Refs.namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SEED_LEASE_NAMESPACE } }, c)
        .catch((err: unknown) => {
          if (!isAlreadyExists(err)) throw err;
        });
      await create();
    }
  }
}
