/**
 * The networks a shoot has, per family: the spec's CIDRs, and for the second family of a dual-stack shoot the seed's
 * shootDefaults of that family (the local provider's stand-in for ranges a cloud would assign).
 */
import type { Seed } from './seed.js';
import type { NetworkingStatus, Shoot } from './shoot.js';
import { shootIPFamilies } from './helpers.js';
import { formatCIDR, parseCIDR, type CIDR, type IP, type IPFamily } from '../../../net/cidr.js';

export class ShootNetworksError extends Error {}

/**
 * `status.networking` for the shoot. Throws ShootNetworksError (with the seed field to set) when a dual-stack shoot's
 * second family has no range.
 */
export function shootNetworkingStatus(shoot: Shoot, seed: Seed): NetworkingStatus {
  const networking = shoot.spec.networking ?? {};
  const families = shootIPFamilies(shoot) as IPFamily[];
  const canonical = (value: string | undefined) => {
    const cidr = value === undefined ? undefined : parseCIDR(value);
    return cidr ? [formatCIDR(cidr)] : [];
  };
  const status = {
    pods: canonical(networking.pods),
    services: canonical(networking.services),
    nodes: canonical(networking.nodes),
  };
  for (const family of families.slice(1)) {
    const defaults = seed.spec.networks?.shootDefaults ?? {};
    for (const kind of ['pods', 'services'] as const) {
      const range = canonical(defaults[kind]).find((c) => parseCIDR(c)?.family === family);
      if (!range) {
        throw new ShootNetworksError(
          `seed "${seed.metadata.name ?? ''}" has no ${family} range in spec.networks.shootDefaults.${kind}: set it so ` +
            `that dual-stack shoots get their ${family} ${kind} range`,
        );
      }
      if (!status[kind].some((c) => parseCIDR(c)?.family === family)) status[kind].push(range);
    }
  }
  return status;
}

/** The CIDRs of a networking status list in the order of the shoot's families. */
export function cidrsByFamilies(cidrs: readonly string[] | undefined, families: readonly IPFamily[]): string[] {
  return families.flatMap((family) => cidrsOfFamily(cidrs, family));
}

/** The cluster DNS Service takes the tenth address of a service range, as kubeadm and Gardener do. */
export function clusterDNSAddress(serviceRange: CIDR): IP {
  return { family: serviceRange.family, value: serviceRange.network.value + 10n };
}

/** The CIDRs of one family in a networking status list. */
export function cidrsOfFamily(cidrs: readonly string[] | undefined, family: IPFamily): string[] {
  return (cidrs ?? []).filter((c) => parseCIDR(c)?.family === family);
}
