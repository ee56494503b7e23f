/**
 * What the shoot's machines are made with, whatever makes them (the Worker, worker.ts; the machine bootstrap): its
 * worker pools as a provider wants them and the networks its machines are configured with.
 */
import type { NetworkingStatus, Shoot } from '../../../apis/core/v1beta1/shoot.js';
import { shootIPFamilies } from '../../../apis/core/v1beta1/helpers.js';
import { isIPFamily } from '../../../apis/validation/ip-families.js';
import { formatIP, parseCIDR, type IPFamily } from '../../../net/cidr.js';
import { cidrsByFamilies, clusterDNSAddress } from '../../../apis/core/v1beta1/networks.js';

export interface WorkerPoolSpec {
  readonly name: string;
  readonly minimum: number;
  /** The pool's kernel settings, over the OperatingSystemConfig's. */
  readonly sysctls?: Readonly<Record<string, string>>;
}

/** The worker pools as the provider wants them: name, minimum, and the pool's `sysctls`. */
export function workerPools(shoot: Shoot): WorkerPoolSpec[] {
  return (shoot.spec.provider?.workers ?? []).map((w) => {
    const sysctls = (w as { sysctls?: unknown }).sysctls;
    return {
      name: w.name,
      minimum: w.minimum ?? 0,
      ...(sysctls && typeof sysctls === 'object'
        ? { sysctls: Object.fromEntries(Object.entries(sysctls).map(([k, v]) => [k, String(v)])) }
        : {}),
    };
  });
}

/** The networks a shoot's machines are configured with: families, ranges and the cluster DNS addresses. */
export function machineNetworking(
  shoot: Shoot,
  networking: NetworkingStatus,
): { families: IPFamily[]; podCIDRs: string[]; serviceCIDRs: string[]; clusterDNS: string[] } {
  const families = shootIPFamilies(shoot).filter(isIPFamily);
  const services = cidrsByFamilies(networking.services, families);
  return {
    families,
    podCIDRs: cidrsByFamilies(networking.pods, families),
    serviceCIDRs: services,
    // One per family, the primary first: the kubelets use the first, kube-dns serves all of them.
    clusterDNS: services.map((c) => formatIP(clusterDNSAddress(parseCIDR(c)!))),
  };
}

/** The prefix of a shoot's worker OperatingSystemConfigs' names: `<shoot>-worker-<pool>`. */
export function operatingSystemConfigPrefix(shoot: Shoot): string {
  return `${shoot.metadata.name ?? ''}-worker-`;
}

/** The name of a pool's worker OperatingSystemConfig. */
export function operatingSystemConfigName(shoot: Shoot, pool: string): string {
  return `${operatingSystemConfigPrefix(shoot)}${pool}`;
}
