/**
 * What the calico extension reads from the Shoot of a Network (Gardener hands it over in the Cluster resource): the
 * node ranges for IP autodetection and the no-SNAT pool, the pod ranges of a dual-stack Network, and kube-proxy.
 */
import type { Shoot } from '../../apis/core/v1beta1/shoot.js';
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
    ...(nodes ? { nodes } : {}),
    ...(status?.nodes ? { statusNodes: [...status.nodes] } : {}),
    ...(status?.pods ? { statusPods: [...status.pods] } : {}),
    ...(kubeProxy ? { kubeProxy } : {}),
  };
}
