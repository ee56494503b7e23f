/**
 * provider-local's load-balancer address pools: every shoot API server Service gets its own address per family,
 * from a network per family (IPv6 `fd00:ff::/64` by default, as Gardener's local setup uses `fd00:ff::/64` host
 * addresses; IPv4 `172.18.255.0/24`). The network's first address is the gateway, which the environment puts on its
 * load-balancer bridge; services get the addresses after it. An address is held as long as a Service's status
 * carries it: allocation looks at every other Service, so a restart loses nothing and deletion releases.
 */
import { formatIP, nthAddress, parseCIDR, parseIP, type CIDR, type IPFamily } from '../../../net/cidr.js';

export type LoadBalancerNetworks = Readonly<Partial<Record<IPFamily, string>>>;

export const DEFAULT_LOAD_BALANCER_NETWORKS: LoadBalancerNetworks = { IPv6: 'fd00:ff::/64', IPv4: '172.18.255.0/24' };

/** The gateway (first host address) of a load-balancer network, with its prefix: `fd00:ff::1/64`. */
export function gatewayCIDR(network: string): string {
  const cidr = mustParse(network);
  return `${formatIP(nthAddress(cidr, 1)!)}/${cidr.prefix}`;
}

function mustParse(network: string): CIDR {
  const cidr = parseCIDR(network);
  if (cidr === undefined) throw new Error(`${JSON.stringify(network)} is not a CIDR`);
  if (cidr.prefix > (cidr.family === 'IPv6' ? 126 : 30)) throw new Error(`${network} is too small for a pool`);
  return cidr;
}

/** Checks the networks (one per family, the family of its key) and returns them canonical. */
export function parseLoadBalancerNetworks(networks: LoadBalancerNetworks): Record<IPFamily, CIDR | undefined> {
  const result: Record<IPFamily, CIDR | undefined> = { IPv4: undefined, IPv6: undefined };
  for (const [family, text] of Object.entries(networks) as [IPFamily, string | undefined][]) {
    if (text === undefined) continue;
    const cidr = mustParse(text);
    if (cidr.family !== family) throw new Error(`load-balancer network ${text} is not an ${family} network`);
    result[family] = cidr;
  }
  return result;
}

export class AddressPool {
  private readonly networks: Record<IPFamily, CIDR | undefined>;

  constructor(networks: LoadBalancerNetworks = DEFAULT_LOAD_BALANCER_NETWORKS) {
    this.networks = parseLoadBalancerNetworks(networks);
  }

  /** The pool's network of a family. */
  network(family: IPFamily): CIDR | undefined {
    return this.networks[family];
  }

  /** True when `ip` is a service address of the family's pool (not the network address or the gateway). */
  owns(family: IPFamily, ip: string): boolean {
    const network = this.networks[family];
    const parsed = parseIP(ip);
    if (network === undefined || parsed === undefined || parsed.family !== family) return false;
    const offset = parsed.value - network.network.value;
    return offset >= 2n && nthAddress(network, offset) !== undefined && offset < lastOffset(network);
  }

  /**
   * The lowest free address of the family: not the gateway, not the broadcast address of an IPv4 network, not in
   * `taken`. Throws when the pool is exhausted or has no network of that family.
   */
  allocate(family: IPFamily, taken: ReadonlySet<string>): string {
    const network = this.networks[family];
    if (network === undefined) throw new Error(`no ${family} load-balancer network is configured`);
    const last = lastOffset(network);
    // Linear from the bottom: the pool holds as many entries as there are shoots, so this stays small.
    for (let offset = 2n; offset < last; offset++) {
      const ip = formatIP(nthAddress(network, offset)!);
      if (!taken.has(ip)) return ip;
    }
    throw new Error(`the ${family} load-balancer network ${network.input} has no free address left`);
  }
}

/** One past the last usable offset: IPv4 keeps its broadcast address; IPv6 pools are capped at 2^20 entries. */
function lastOffset(network: CIDR): bigint {
  const size = 1n << BigInt((network.family === 'IPv6' ? 128 : 32) - network.prefix);
  const usable = network.family === 'IPv4' ? size - 1n : size;
  return usable < 1n << 20n ? usable : 1n << 20n;
}
