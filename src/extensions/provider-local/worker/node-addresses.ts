/**
 * provider-local's IPAM for machines: every machine's node address comes from its shoot's node range
 * (`spec.networking.nodes`), as a cloud's subnet gives a VM its address. The first address of a range is its
 * gateway, machine i gets address 10 + i. A family the shoot has no node range for (the second family of a
 * dual-stack shoot: Gardener's Shoot has one `nodes` field) takes a local default. Pools take consecutive slices of
 * the range, each as large as its `maximum`, so scaling a pool never moves another pool's machines.
 */
import { formatIP, nthAddress, parseCIDR, type IPFamily } from '../../../net/cidr.js';

/** Node ranges for a family the shoot has none of. */
export const DEFAULT_NODE_RANGES: Readonly<Record<IPFamily, string>> = {
  IPv6: 'fd00:fe::/64',
  IPv4: '10.255.255.0/24',
};
/** Machine i's address is this far into the node range (the first addresses are the gateway's and reserved). */
export const FIRST_MACHINE_OFFSET = 10;

export interface NodeNetwork {
  /** Per family, the CIDR each machine's address is in and the gateway. */
  readonly ranges: Readonly<Partial<Record<IPFamily, { cidr: string; prefix: number; gateway: string }>>>;
}

/** The node range and gateway of each of the shoot's families. */
export function nodeNetwork(families: readonly IPFamily[], nodeCIDRs: readonly string[]): NodeNetwork {
  const ranges: Partial<Record<IPFamily, { cidr: string; prefix: number; gateway: string }>> = {};
  for (const family of families) {
    const cidr =
      nodeCIDRs.map((c) => parseCIDR(c)).find((c) => c?.family === family) ?? parseCIDR(DEFAULT_NODE_RANGES[family])!;
    ranges[family] = { cidr: cidr.input, prefix: cidr.prefix, gateway: formatIP(nthAddress(cidr, 1)!) };
  }
  return { ranges };
}

/** Machine i's address per family, with the range's prefix, primary family first. */
export function machineAddresses(network: NodeNetwork, families: readonly IPFamily[], index: number): string[] {
  return families.map((family) => {
    const range = network.ranges[family]!;
    const address = nthAddress(parseCIDR(range.cidr)!, FIRST_MACHINE_OFFSET + index);
    if (address === undefined) throw new Error(`node range ${range.cidr} has no room for machine ${index}`);
    return `${formatIP(address)}/${range.prefix}`;
  });
}

/** The node range of each family, in family order: the shoot's own where it has one, else the default. */
export function nodeCIDRsOf(families: readonly IPFamily[], nodes: string | undefined): string[] {
  const network = nodeNetwork(families, nodes ? [nodes] : []);
  return families.map((f) => network.ranges[f]!.cidr);
}

/**
 * The index of each pool's first machine: pools in order, each taking `max(minimum, maximum)` addresses. Fails
 * naming the pool when a range has no room for its last machine.
 */
export function poolMachineOffsets(
  pools: readonly { name: string; minimum?: number; maximum?: number }[],
  network: NodeNetwork,
  families: readonly IPFamily[],
): Map<string, number> {
  const offsets = new Map<string, number>();
  let next = 0;
  for (const pool of pools) {
    const size = Math.max(0, pool.minimum ?? 0, pool.maximum ?? 0);
    offsets.set(pool.name, next);
    if (size > 0) {
      try {
        machineAddresses(network, families, next + size - 1);
      } catch (e) {
        throw new Error(`pool ${pool.name}: ${(e as Error).message} (its maximum is ${size})`);
      }
    }
    next += size;
  }
  return offsets;
}
