import type { V1LoadBalancerIngress, V1Service } from '@kubernetes/client-node';
import { isIPFamily } from '../../../apis/validation/ip-families.js';
import { canonicalIP, type IPFamily } from '../../../net/cidr.js';

/** The host addresses the local provider hands out as load balancer IPs, per family. */
export type HostIPs = Readonly<Record<IPFamily, string>>;

export const DEFAULT_HOST_IPS: HostIPs = { IPv4: '127.0.0.1', IPv6: '::1' };

/** One host IP per family of the service, in the order of `spec.ipFamilies` (IPv4 when unset). */
export function desiredLoadBalancerIngress(
  service: V1Service,
  hostIPs: HostIPs = DEFAULT_HOST_IPS,
): V1LoadBalancerIngress[] {
  const families = (service.spec?.ipFamilies ?? ['IPv4']).filter(isIPFamily);
  return families.map((family) => ({ ip: canonicalIP(hostIPs[family]) ?? hostIPs[family], ipMode: 'VIP' }));
}

/** Host IPs from flags, each checked to be an address of its family. */
export function parseHostIPs(ipv4: string | undefined, ipv6: string | undefined): HostIPs {
  const check = (value: string, family: IPFamily) => {
    const canonical = canonicalIP(value);
    if (canonical === undefined || canonical.includes(':') !== (family === 'IPv6')) {
      throw new Error(`${JSON.stringify(value)} is not an ${family} address`);
    }
    return canonical;
  };
  return {
    IPv4: check(ipv4 ?? DEFAULT_HOST_IPS.IPv4, 'IPv4'),
    IPv6: check(ipv6 ?? DEFAULT_HOST_IPS.IPv6, 'IPv6'),
  };
}
