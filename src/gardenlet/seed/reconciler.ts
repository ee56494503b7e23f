/**
 * The gardenlet's Seed reconciler: the seed's own egress NetworkPolicies in the `garden` namespace, for the seed's
 * IP families, and the Seed's last operation. As Gardener's, it holds the finalizer `gardener` on every Seed and
 * removes it on deletion only once no Shoot references the seed (`spec.seedName` or `status.seedName`): a Seed with
 * shoots on it stays, terminating, with a last operation naming them.
 */
import type { V1Namespace } from '@kubernetes/client-node';
import { decode } from '../../apis/admission.js';
import type { Seed } from '../../apis/core/v1beta1/seed.js';
import { Seeds } from '../../apis/registry.js';
import type { ResourceClient } from '../../runtime/client.js';
import { realClock, type Clock } from '../../runtime/clock.js';
import type { ReconcileContext, Reconciler, Request } from '../../runtime/controller.js';
import { applyAll } from '../apply.js';
import { patchStatusIfChanged } from '../../runtime/status.js';
import { lastOperation } from '../../runtime/last-operation.js';
import { addFinalizer, hasFinalizer, removeFinalizer } from '../../runtime/finalizers.js';
import type { KubernetesObject } from '@kubernetes/client-node';
import { GARDEN_NAMESPACE, Labels } from '../../apis/core/v1beta1/names.js';
import { Refs } from '../../apis/refs.js';
import { EgressNetworkPolicies } from '../shoot/components/network-policies.js';

export interface SeedReconcilerOptions {
  /** The seed's client: its `garden` namespace and the egress NetworkPolicies there. */
  readonly client: ResourceClient;
  /** The garden's client: the Seed and the Shoots that reference it. @default `client` */
  readonly garden?: ResourceClient;
  /** Only this seed; every seed when unset. */
  readonly seedName?: string;
  readonly clock?: Clock;
}

/** Gardener's finalizer on a Seed (the gardenlet's, as on Shoots). */
export const SEED_FINALIZER = 'gardener';

/** How many referencing shoots the last operation names. */
const NAMED_SHOOTS = 10;

type ShootReference = KubernetesObject & { spec?: { seedName?: string }; status?: { seedName?: string } };

/** The seeds a shoot references: the one it is scheduled on, and the one it still runs on while it moves. */
export function seedsOfShoot(shoot: ShootReference): string[] {
  return [...new Set([shoot.spec?.seedName, shoot.status?.seedName].filter((n): n is string => !!n))];
}

export function gardenNamespace(): V1Namespace {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: GARDEN_NAMESPACE, labels: { [Labels.role]: 'garden' } },
  };
}

export class SeedReconciler implements Reconciler {
  constructor(private readonly options: SeedReconcilerOptions) {}

  async reconcile(req: Request, ctx: ReconcileContext): Promise<void> {
    const { client } = this.options;
    const garden = this.options.garden ?? client;
    if (this.options.seedName !== undefined && req.name !== this.options.seedName) return;
    const raw = await garden.get(Refs.seed, req.name, undefined, { signal: ctx.signal });
    if (!raw) return;
    const clock = this.options.clock ?? realClock;
    const c = { signal: ctx.signal };
    if (raw.metadata?.deletionTimestamp) return this.delete(raw, clock, ctx);
    const decoded = decode(Seeds, raw).value;
    if (!decoded) return;
    const seed: Seed = Seeds.default(decoded);
    if (!hasFinalizer(raw, SEED_FINALIZER)) await addFinalizer(garden, Refs.seed, raw, SEED_FINALIZER, c);
    let op;
    try {
      await applyAll(client, Refs.namespace, [gardenNamespace()], c);
      await new EgressNetworkPolicies(client, { namespace: GARDEN_NAMESPACE, seed }).deploy(c);
      op = lastOperation(clock, 'Reconcile', 'Succeeded', 100, 'Seed networking has been reconciled.');
    } catch (e) {
      op = lastOperation(
        clock,
        'Reconcile',
        'Error',
        50,
        `deploying the seed NetworkPolicies: ${(e as Error).message}`,
      );
      await this.patchStatus(seed, op, ctx);
      throw e;
    }
    await this.patchStatus(seed, op, ctx);
  }

  /** Removes the finalizer once no Shoot references the seed (read from the server: a cache may lag behind). */
  private async delete(seed: KubernetesObject, clock: Clock, ctx: ReconcileContext): Promise<void> {
    const garden = this.options.garden ?? this.options.client;
    if (!hasFinalizer(seed, SEED_FINALIZER)) return;
    const name = seed.metadata?.name ?? '';
    const shoots = await garden.list<ShootReference>(Refs.shoot, { signal: ctx.signal });
    const referencing = shoots.items
      .filter((s) => seedsOfShoot(s).includes(name))
      .map((s) => `${s.metadata?.namespace ?? ''}/${s.metadata?.name ?? ''}`)
      .sort();
    if (referencing.length > 0) {
      const named = referencing.slice(0, NAMED_SHOOTS).join(', ');
      const more = referencing.length > NAMED_SHOOTS ? ` and ${referencing.length - NAMED_SHOOTS} more` : '';
      const description =
        `Cannot delete Seed because the following Shoots are still referencing it: ${named}${more}; ` +
        'it is deleted once they are gone';
      ctx.logger.debug({ seed: name, shoots: referencing.length }, 'seed still in use, kept');
      await this.patchStatus(seed as Seed, lastOperation(clock, 'Delete', 'Error', 0, description), ctx);
      return;
    }
    await removeFinalizer(garden, Refs.seed, seed, SEED_FINALIZER, { signal: ctx.signal });
  }

  private async patchStatus(seed: Seed, op: ReturnType<typeof lastOperation>, ctx: ReconcileContext): Promise<void> {
    const status = { lastOperation: op, observedGeneration: seed.metadata.generation };
    await patchStatusIfChanged(this.options.garden ?? this.options.client, Refs.seed, seed, status, {
      signal: ctx.signal,
    });
  }
}
