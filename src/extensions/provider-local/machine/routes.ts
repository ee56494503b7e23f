/**
 * Pod routes between machines, as calico programs them with its overlay off: for every other Node, a route to each
 * of its podCIDRs via its InternalIP of the same family. The machines share one L2 network (the shoot's node
 * bridge), so the next hop is always directly reachable.
 */
import { familyOf } from './config.js';
import { nodePodCIDRs, type NodeInfo } from './api-client.js';

export interface PodRoute {
  /** Destination, a Node's podCIDR. */
  cidr: string;
  /** The Node's InternalIP of the CIDR's family. */
  via: string;
  node: string;
}

/** The routes machine `self` needs; Nodes without podCIDRs or without an InternalIP of a family are skipped. */
export function desiredPodRoutes(self: string, nodes: readonly NodeInfo[]): PodRoute[] {
  const routes: PodRoute[] = [];
  for (const node of nodes) {
    if (node.metadata.name === self) continue;
    const internal = (node.status?.addresses ?? []).filter((a) => a.type === 'InternalIP').map((a) => a.address);
    for (const cidr of nodePodCIDRs(node)) {
      const family = familyOf(cidr);
      const via = internal.find((ip) => familyOf(ip) === family);
      if (via !== undefined) routes.push({ cidr, via, node: node.metadata.name });
    }
  }
  return routes.sort((a, b) => a.cidr.localeCompare(b.cidr));
}

/** What to change to get from the programmed routes to the desired ones. */
export function diffRoutes(
  current: ReadonlyMap<string, PodRoute>,
  desired: readonly PodRoute[],
): { add: PodRoute[]; remove: PodRoute[] } {
  const want = new Map(desired.map((r) => [r.cidr, r]));
  const add = desired.filter((r) => current.get(r.cidr)?.via !== r.via);
  const remove = [...current.values()].filter((r) => !want.has(r.cidr));
  return { add, remove };
}
