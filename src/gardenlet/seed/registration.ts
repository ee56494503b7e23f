/**
 * The gardenlet's own Seed from its configuration, as Gardener's gardenlet registers it from `seedConfig`: when it
 * starts, it server-side applies the configured Seed's labels and spec to the garden (creating the Seed when it is
 * missing), as field manager {@link SEED_REGISTRATION_FIELD_MANAGER}; fields others own (the status, annotations,
 * labels of others) stay as they are. Once per start, retried with backoff until the garden answers: an operator's
 * later edit of the Seed stands until the gardenlet starts again, as in Gardener.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Seed } from '../../apis/core/v1beta1/seed.js';
import { Refs } from '../../apis/refs.js';
import type { ResourceClient } from '../../runtime/client.js';
import type { ReconcileContext, Reconciler, Request } from '../../runtime/controller.js';

export const SEED_REGISTRATION_FIELD_MANAGER = 'gardenlet';

/** What the gardenlet applies of its configured Seed: apiVersion, kind, name, labels and spec. */
export function registeredSeed(config: Seed): KubernetesObject & { spec: Seed['spec'] } {
  const labels = config.metadata.labels;
  return {
    apiVersion: 'core.gardener.cloud/v1beta1',
    kind: 'Seed',
    metadata: { name: config.metadata.name, ...(labels && Object.keys(labels).length > 0 ? { labels } : {}) },
    spec: config.spec,
  };
}

export interface SeedRegistrationOptions {
  /** The garden. */
  readonly client: ResourceClient;
  /** The Seed as configured (decoded and checked when the gardenlet's flags were). */
  readonly config: Seed;
}

export class SeedRegistrationReconciler implements Reconciler {
  constructor(private readonly options: SeedRegistrationOptions) {}

  async reconcile(req: Request, ctx: ReconcileContext): Promise<void> {
    const { client, config } = this.options;
    if (req.name !== config.metadata.name) return;
    await client.apply(Refs.seed, registeredSeed(config), {
      fieldManager: SEED_REGISTRATION_FIELD_MANAGER,
      // The configuration is the gardenlet's to say: a field another manager set (kubectl apply) is taken over.
      force: true,
      signal: ctx.signal,
    });
    ctx.logger.info({ seed: req.name }, 'registered the Seed from its configuration');
  }
}
