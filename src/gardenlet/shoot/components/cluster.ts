/**
 * The shoot's `Cluster` (extensions.gardener.cloud/v1alpha1), as Gardener's gardenlet writes it: named after the seed
 * namespace, holding the Shoot, its Seed and its CloudProfile for the extensions of that namespace to read
 * (provider-local takes the machines' node ranges and machine types from it). Written once the namespace is the shoot's own, deleted with it.
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

export function desiredCluster(shoot: Shoot, seed: Seed | undefined, cloudProfile?: unknown): Cluster {
  const isObject = typeof cloudProfile === 'object' && cloudProfile !== null;
  return {
    apiVersion: API_VERSION,
    kind: 'Cluster',
    metadata: { name: seedNamespaceName(shoot), labels: shootLabels(shoot) },
    spec: {
      // The CloudProfile as the garden has it (provider-local sizes machines by its machine types); its reference
      // alone when the garden has none of that name.
      cloudProfile: isObject
        ? { apiVersion: 'core.gardener.cloud/v1beta1', kind: 'CloudProfile', ...embedded(cloudProfile) }
        : {
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
    private readonly cloudProfile?: unknown,
  ) {}

  async deploy(ctx: ComponentContext): Promise<void> {
    await applyAll(this.client, Refs.cluster, [desiredCluster(this.shoot, this.seed, this.cloudProfile)], ctx);
  }

  async destroy(ctx: ComponentContext): Promise<void> {
    await deleteAll(this.client, Refs.cluster, [seedNamespaceName(this.shoot)], undefined, ctx);
  }

  async waitCleanup(ctx: ComponentContext): Promise<void> {
    await waitGone(this.client, Refs.cluster, [seedNamespaceName(this.shoot)], undefined, ctx);
  }
}
