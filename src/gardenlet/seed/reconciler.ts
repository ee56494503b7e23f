/**
 * The gardenlet's Seed reconciler: the seed's own egress NetworkPolicies in the `garden` namespace, for the seed's
 * IP families, and the Seed's last operation.
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
import { lastOperation } from '../last-operation.js';
import { GARDEN_NAMESPACE, Labels } from '../names.js';
import { Refs } from '../resources.js';
import { EgressNetworkPolicies } from '../shoot/components/deployers.js';

export interface SeedReconcilerOptions {
  readonly client: ResourceClient;
  /** Only this seed; every seed when unset. */
  readonly seedName?: string;
  readonly clock?: Clock;
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
    if (this.options.seedName !== undefined && req.name !== this.options.seedName) return;
    const raw = await client.get(Refs.seed, req.name, undefined, { signal: ctx.signal });
    const decoded = raw ? decode(Seeds, raw).value : undefined;
    if (!decoded || decoded.metadata.deletionTimestamp) return;
    const seed: Seed = Seeds.default(decoded);
    const clock = this.options.clock ?? realClock;
    const c = { signal: ctx.signal };
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

  private async patchStatus(seed: Seed, op: ReturnType<typeof lastOperation>, ctx: ReconcileContext): Promise<void> {
    const status = { lastOperation: op, observedGeneration: seed.metadata.generation };
    await patchStatusIfChanged(this.options.client, Refs.seed, seed, status, { signal: ctx.signal });
  }
}
