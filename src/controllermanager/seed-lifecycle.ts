/**
 * The seed lifecycle controller, as gardener-controller-manager's: a Seed whose gardenlet reported once (it has
 * conditions) but whose Lease in {@link SEED_LEASE_NAMESPACE} was not renewed for the monitor period gets
 * `GardenletReady: Unknown` ("Gardenlet stopped posting seed status."); once that lasted the shoot monitor period, the
 * conditions and constraints of the Shoots scheduled to it (`spec.seedName`) turn `Unknown` too: nobody checks them
 * any more, so what they said may no longer be true. Only the types a shoot has are turned (the care controller
 * writes its own again when the gardenlet is back); nothing else of the shoot, and nothing on other seeds, is touched.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  CONDITION_GARDENLET_READY,
  SEED_LEASE_NAMESPACE,
  SEED_LIFECYCLE_SYNC_PERIOD_MS,
  SEED_MONITOR_PERIOD_MS,
  SHOOT_CONDITIONS_OF_A_GARDENLET,
  SHOOT_CONSTRAINTS_OF_A_GARDENLET,
  SHOOT_MONITOR_PERIOD_MS,
} from '../apis/core/v1beta1/seed-lease.js';
import type { Condition } from '../apis/meta/schemas.js';
import { Refs } from '../apis/refs.js';
import type { ResourceClient } from '../runtime/client.js';
import { realClock, type Clock } from '../runtime/clock.js';
import type { ReconcileContext, Reconciler, Request, Result } from '../runtime/controller.js';
import { condition, mergeConditions } from '../runtime/last-operation.js';
import type { Lease } from '../runtime/leader-election.js';
import type { Manager } from '../runtime/manager.js';
import { specOrMetadataChanged } from '../runtime/predicates.js';
import { patchStatusIfChanged, sameIgnoringTimestamps } from '../runtime/status.js';

export const SEED_LIFECYCLE_CONTROLLER_NAME = 'seed-lifecycle';

type WithConditions = KubernetesObject & {
  spec?: { seedName?: string };
  status?: { conditions?: Condition[]; constraints?: Condition[] };
};

export interface SeedLifecycleOptions {
  readonly client: ResourceClient;
  /** Reads a Seed (the informer cache). */
  readonly seed: (name: string) => KubernetesObject | undefined;
  /** The Shoots (the informer cache). */
  readonly shoots: () => readonly KubernetesObject[];
  /** @default {@link SEED_MONITOR_PERIOD_MS} */
  readonly monitorPeriodMs?: number;
  /** @default {@link SHOOT_MONITOR_PERIOD_MS} */
  readonly shootMonitorPeriodMs?: number;
  /** @default {@link SEED_LIFECYCLE_SYNC_PERIOD_MS} */
  readonly syncPeriodMs?: number;
  readonly clock?: Clock;
}

const SEED_UNKNOWN = { reason: 'SeedStatusUnknown', message: 'Gardenlet stopped posting seed status.' };
const SHOOT_UNKNOWN = { reason: 'StatusUnknown', message: 'Gardenlet stopped sending heartbeats.' };

/** The conditions of `types` among `existing`, turned `Unknown` (the others as they are). */
export function turnedUnknown(
  clock: Clock,
  existing: readonly Condition[] | undefined,
  types: readonly string[],
  why: { reason: string; message: string },
): Condition[] {
  const updates = (existing ?? [])
    .filter((c) => types.includes(c.type))
    .map((c) => condition(clock, c.type, 'Unknown', why.reason, why.message, c));
  return mergeConditions(existing, updates);
}

export class SeedLifecycleReconciler implements Reconciler {
  constructor(private readonly options: SeedLifecycleOptions) {}

  async reconcile(req: Request, ctx: ReconcileContext): Promise<Result | void> {
    const { client } = this.options;
    const clock = this.options.clock ?? realClock;
    const again = { requeueAfter: this.options.syncPeriodMs ?? SEED_LIFECYCLE_SYNC_PERIOD_MS };
    const seed = this.options.seed(req.name) as WithConditions | undefined;
    if (seed === undefined) return;
    // A new Seed's gardenlet has not reported yet: nothing to judge.
    if ((seed.status?.conditions ?? []).length === 0) return again;
    const lease = await client.get<Lease>(Refs.lease, req.name, SEED_LEASE_NAMESPACE, { signal: ctx.signal });
    const renewed = lease?.spec?.renewTime !== undefined ? Date.parse(lease.spec.renewTime) : NaN;
    const now = clock.now();
    if (renewed + (this.options.monitorPeriodMs ?? SEED_MONITOR_PERIOD_MS) > now) return again;

    let ready = seed.status?.conditions?.find((c) => c.type === CONDITION_GARDENLET_READY);
    const conditions = turnedUnknown(clock, seed.status?.conditions, [CONDITION_GARDENLET_READY], SEED_UNKNOWN);
    if (ready === undefined) {
      conditions.push(
        condition(clock, CONDITION_GARDENLET_READY, 'Unknown', SEED_UNKNOWN.reason, SEED_UNKNOWN.message),
      );
    }
    if (await patchStatusIfChanged(client, Refs.seed, seed, { conditions }, { signal: ctx.signal })) {
      ctx.logger.info(
        { seed: req.name, renewTime: lease?.spec?.renewTime ?? null },
        'the gardenlet stopped renewing its Lease: GardenletReady is Unknown',
      );
    }
    ready = conditions.find((c) => c.type === CONDITION_GARDENLET_READY);
    const unknownSince = ready?.lastTransitionTime !== undefined ? Date.parse(ready.lastTransitionTime) : now;
    if (unknownSince + (this.options.shootMonitorPeriodMs ?? SHOOT_MONITOR_PERIOD_MS) > now) return again;

    const shoots = this.options.shoots().filter((s) => (s as WithConditions).spec?.seedName === req.name);
    await Promise.all(shoots.map((s) => this.markUnknown(s as WithConditions, clock, ctx)));
    return again;
  }

  private async markUnknown(shoot: WithConditions, clock: Clock, ctx: ReconcileContext): Promise<void> {
    const conditions = turnedUnknown(clock, shoot.status?.conditions, SHOOT_CONDITIONS_OF_A_GARDENLET, SHOOT_UNKNOWN);
    const constraints = turnedUnknown(
      clock,
      shoot.status?.constraints,
      SHOOT_CONSTRAINTS_OF_A_GARDENLET,
      SHOOT_UNKNOWN,
    );
    if (
      sameIgnoringTimestamps(shoot.status?.conditions ?? [], conditions) &&
      sameIgnoringTimestamps(shoot.status?.constraints ?? [], constraints)
    ) {
      return;
    }
    await this.options.client.mergePatch(
      Refs.shoot,
      shoot.metadata?.name ?? '',
      shoot.metadata?.namespace,
      {
        // Guarded: a gardenlet that is back and wrote meanwhile wins; the next look sees its Lease.
        metadata: { resourceVersion: shoot.metadata?.resourceVersion },
        status: { conditions, ...(constraints.length > 0 ? { constraints } : {}) },
      },
      { subresource: 'status', signal: ctx.signal },
    );
  }
}

/** Adds the seed lifecycle controller: every Seed, looked at each sync period. */
export function addSeedLifecycleController(
  manager: Manager,
  options: Pick<SeedLifecycleOptions, 'monitorPeriodMs' | 'shootMonitorPeriodMs' | 'syncPeriodMs'> = {},
): void {
  const seeds = manager.informer<KubernetesObject>(Refs.seed);
  const shoots = manager.informer<KubernetesObject>(Refs.shoot);
  manager
    .controller({
      name: SEED_LIFECYCLE_CONTROLLER_NAME,
      reconciler: new SeedLifecycleReconciler({
        client: manager.client,
        clock: manager.clock,
        seed: (name) => seeds.get(name),
        shoots: () => shoots.list(),
        ...options,
      }),
    })
    .watch(seeds, undefined, specOrMetadataChanged);
}
