/**
 * The shoot's `Cluster` (extensions.gardener.cloud/v1alpha1), as Gardener's gardenlet writes it: named after the seed
 * namespace, holding the Shoot and its Seed for the extensions of that namespace to read (provider-local takes the
 * machines' node ranges from it). Written once the namespace is the shoot's own, deleted with it.
 */
import type { Seed } from '../../../apis/core/v1beta1/seed.js';
import type { Shoot } from '../../../apis/core/v1beta1/shoot.js';
import type { Cluster } from '../../../apis/extensions/v1alpha1/cluster.js';
import { API_VERSION } from '../../../apis/extensions/v1alpha1/common.js';
import type { ResourceClient } from '../../../runtime/client.js';
import { applyAll, deleteAll, waitGone } from '../../apply.js';
import type { ComponentContext, DeployWaiter } from '../../component.js';
import { seedNamespaceName, shootLabels } from '../../../apis/core/v1beta1/names.js';
import { Refs } from '../../../apis/refs.js';

/** An object as a Cluster embeds it: without the server's bookkeeping. */
function embedded<T extends { metadata?: object }>(object: T): T {
  const { managedFields: _managedFields, ...metadata } = (object.metadata ?? {}) as { managedFields?: unknown };
  return { ...object, metadata };
}

export function desiredCluster(shoot: Shoot, seed: Seed | undefined): Cluster {
  return {
    apiVersion: API_VERSION,
    kind: 'Cluster',
    metadata: { name: seedNamespaceName(shoot), labels: shootLabels(shoot) },
    spec: {
      // No CloudProfile kind is served here: the shoot's reference stands for it.
      cloudProfile: {
        apiVersion: 'core.gardener.cloud/v1beta1',
        kind: 'CloudProfile',
        metadata: { name: shoot.spec.cloudProfile?.name ?? shoot.spec.cloudProfileName ?? '' },
      },
      seed: seed ? embedded(seed) : {},
      shoot: embedded(shoot),
    },
  };
}

export class ShootCluster implements DeployWaiter {
  constructor(
    private readonly client: ResourceClient,
    private readonly shoot: Shoot,
    private readonly seed: Seed | undefined,
  ) {}

  async deploy(ctx: ComponentContext): Promise<void> {
    await applyAll(this.client, Refs.cluster, [desiredCluster(this.shoot, this.seed)], ctx);
  }

  async destroy(ctx: ComponentContext): Promise<void> {
    await deleteAll(this.client, Refs.cluster, [seedNamespaceName(this.shoot)], undefined, ctx);
  }

  async waitCleanup(ctx: ComponentContext): Promise<void> {
    await waitGone(this.client, Refs.cluster, [seedNamespaceName(this.shoot)], undefined, ctx);
  }
}
