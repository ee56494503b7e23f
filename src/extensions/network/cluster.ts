/**
 * What the calico extension reads from the Shoot of a Network (Gardener hands it over in the Cluster resource): the
 * node ranges for IP autodetection and the no-SNAT pool, the pod ranges of a dual-stack Network, and kube-proxy.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { GARDEN_NAMESPACE, Labels } from '../../apis/core/v1beta1/names.js';
import type { Shoot } from '../../apis/core/v1beta1/shoot.js';
import { nodesMigrating } from '../../apis/core/v1beta1/dual-stack-migration.js';
import type { Network } from '../../apis/extensions/v1alpha1/network.js';
import { Refs } from '../../apis/refs.js';
import type { ResourceClient } from '../../runtime/client.js';
import type { ShootNetworking } from './values.js';

/** The kube-proxy settings of a Shoot, read defensively (the Shoot schema keeps them as unknown fields). */
export function kubeProxyOf(shoot: Shoot): { enabled?: boolean; mode?: string } | undefined {
  const kubeProxy = (shoot.spec.kubernetes as { kubeProxy?: unknown } | undefined)?.kubeProxy;
  if (typeof kubeProxy !== 'object' || kubeProxy === null) return undefined;
  const { enabled, mode } = kubeProxy as { enabled?: unknown; mode?: unknown };
  return {
    ...(typeof enabled === 'boolean' ? { enabled } : {}),
    ...(typeof mode === 'string' ? { mode } : {}),
  };
}

/** The Shoot's networking as the extension uses it; `status` overrides the Shoot's own status (for `render`). */
export function shootNetworkingOf(
  shoot: Shoot,
  status: { readonly nodes?: readonly string[]; readonly pods?: readonly string[] } | undefined = shoot.status
    ?.networking,
): ShootNetworking {
  const nodes = shoot.spec.networking?.nodes;
  const kubeProxy = kubeProxyOf(shoot);
  return {
    ...(nodesMigrating(shoot) ? { nodesMigrating: true } : {}),
    ...(nodes ? { nodes } : {}),
    ...(status?.nodes ? { statusNodes: [...status.nodes] } : {}),
    ...(status?.pods ? { statusPods: [...status.pods] } : {}),
    ...(kubeProxy ? { kubeProxy } : {}),
  };
}

/**
 * Where the extension gets the networking of a Network's Shoot (node ranges, the pod ranges of a dual-stack Network,
 * kube-proxy): as Gardener hands it over, in the shoot's Cluster resource of the seed (the garden may be another
 * cluster, which extensions never reach).
 */
export interface ShootNetworkingSource {
  shootNetworking(network: Network, signal: AbortSignal): Promise<ShootNetworking | undefined>;
}

/** The Shoot a Network belongs to: from the gardenlet's labels, else from the namespace `shoot--<project>--<name>`. */
export function shootOf(network: Network): { namespace: string; name: string } | undefined {
  const labels = network.metadata.labels ?? {};
  let project = labels[Labels.project];
  let name = labels[Labels.shoot];
  if (!project || !name) {
    const match = /^shoot--([^-]+(?:-[^-]+)*)--(.+)$/.exec(network.metadata.namespace ?? '');
    if (!match) return undefined;
    [, project, name] = match as unknown as [string, string, string];
  }
  return { namespace: project === GARDEN_NAMESPACE ? GARDEN_NAMESPACE : `garden-${project}`, name };
}

/**
 * The Shoot a Cluster embeds (the gardenlet names the Cluster after the seed namespace), when it is the Network's:
 * in the Network's namespace and of the Network's shoot.
 */
export function shootOfCluster(network: Network, cluster: KubernetesObject | undefined): Shoot | undefined {
  const id = shootOf(network);
  const shoot = (cluster as { spec?: { shoot?: Shoot } } | undefined)?.spec?.shoot;
  if (!id || !shoot?.metadata || shoot.metadata.name !== id.name || shoot.metadata.namespace !== id.namespace) {
    return undefined;
  }
  return shoot;
}

/** Reads the Network's Shoot from the seed namespace's Cluster with the client. */
export class ClusterShootReader implements ShootNetworkingSource {
  constructor(private readonly client: ResourceClient) {}

  async shootNetworking(network: Network, signal: AbortSignal): Promise<ShootNetworking | undefined> {
    const namespace = network.metadata.namespace;
    if (!namespace) return undefined;
    const cluster = await this.client.get(Refs.cluster, namespace, undefined, { signal });
    const shoot = shootOfCluster(network, cluster);
    // A Network of another shoot of the same name (a former one, or one whose seed namespace collides) is not this.
    const uid = network.metadata.labels?.[Labels.shootUID];
    if (uid !== undefined && shoot?.metadata.uid !== undefined && shoot.metadata.uid !== uid) return undefined;
    return shoot ? shootNetworkingOf(shoot) : undefined;
  }
}
