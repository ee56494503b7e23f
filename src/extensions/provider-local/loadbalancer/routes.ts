/**
 * How a load-balancer address reaches its Service when the control planes run as workloads of the seed: a host
 * route of the address (`/128`, `/32`) via a Ready seed Node of its family, where kube-proxy forwards traffic for the
 * Service's `status.loadBalancer.ingress` addresses to its pods, as a cloud load balancer forwards to the nodes.
 * The routes live in the namespace the gardenlet runs in (the environment's, where `up`'s shell and BIND9 are).
 */
import { ip } from '../../../system/netns.js';
import { parseIP, type IPFamily } from '../../../net/cidr.js';

/** No seed Node can take an address yet (they are still starting): a state to wait out, not a failure. */
export class NoRouteYetError extends Error {}

/** What the service controller asks of the network for the addresses it hands out. */
export interface LoadBalancerRoutes {
  /** Routes `addresses` (the Service `key`'s) to the seed; idempotent. NoRouteYetError while no Node can take them. */
  ensure(key: string, addresses: readonly string[]): Promise<void>;
  /** Removes the routes of a Service that is gone. */
  remove(key: string): void;
  /** Removes every route made here (at stop). */
  removeAll(): void;
}

export class HostRoutesToNodes implements LoadBalancerRoutes {
  private readonly routes = new Map<string, Map<string, string>>();

  /** `nextHop` gives a Ready seed Node's address of the family, or undefined when there is none. */
  constructor(private readonly nextHop: (family: IPFamily) => Promise<string | undefined>) {}

  async ensure(key: string, addresses: readonly string[]): Promise<void> {
    const mine = this.routes.get(key) ?? new Map<string, string>();
    this.routes.set(key, mine);
    for (const address of addresses) {
      const family = parseIP(address)?.family;
      if (family === undefined) continue;
      const via = await this.nextHop(family);
      if (via === undefined) throw new NoRouteYetError(`no Ready seed Node of ${family} to route ${address} to`);
      if (mine.get(address) === via) continue;
      ip([
        family === 'IPv6' ? '-6' : '-4',
        'route',
        'replace',
        `${address}/${family === 'IPv6' ? 128 : 32}`,
        'via',
        via,
      ]);
      mine.set(address, via);
    }
    for (const address of [...mine.keys()].filter((a) => !addresses.includes(a))) this.del(mine, address);
  }

  remove(key: string): void {
    const mine = this.routes.get(key);
    if (mine === undefined) return;
    for (const address of [...mine.keys()]) this.del(mine, address);
    this.routes.delete(key);
  }

  removeAll(): void {
    for (const key of [...this.routes.keys()]) this.remove(key);
  }

  private del(mine: Map<string, string>, address: string): void {
    mine.delete(address);
    // A Service that held the address a moment before another took it over leaves the other's route alone.
    if ([...this.routes.values()].some((other) => other.has(address))) return;
    const family = parseIP(address)?.family;
    try {
      ip([family === 'IPv6' ? '-6' : '-4', 'route', 'del', `${address}/${family === 'IPv6' ? 128 : 32}`]);
    } catch {
      // Gone already.
    }
  }
}
