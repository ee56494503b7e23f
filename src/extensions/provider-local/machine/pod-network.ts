/**
 * The shoot's pod network between machines, as calico-node programs it from its IP pools (one per family): with
 * the pool's encapsulation on, pod traffic to another machine travels in calico's VXLAN device of the family
 * (`vxlan.calico` over the Nodes' IPv4 addresses, `vxlan-v6.calico` over their IPv6 addresses, VNI 4096, port 4789,
 * calico's defaults); with it off, it is routed directly via the other Node's InternalIP of the family.
 *
 * This is the shoot's pod overlay. It runs over the shoot's node network, which for machine pods is itself an overlay
 * between the machine pods (`vxlan.gv6`, overlay.ts: provider-local's machine network, what a cloud's VPC is to a
 * VM), so calico's packets are encapsulated a second time there; for machines with a network namespace of their own
 * the node network is their `eth0` on a bridge.
 *
 * calico gives each Node a tunnel address from the pool, on its tunnel device; here it is the first address of the
 * Node's podCIDR, which the CNI bridge holds too: every other machine routes the podCIDR via it, on-link through the
 * tunnel device, with a permanent neighbour entry to the Node's tunnel MAC and a forwarding entry from that MAC to the
 * Node's address.
 * This kernel has no IP-in-IP: a pool of `ipipMode` is tunnelled in VXLAN as well.
 */
import type { PodNetworkPool } from '../../../apis/provider-local/v1alpha1/machine-user-data.js';
import { contains, formatIP, nthAddress, parseCIDR, parseIP, type IPFamily } from '../../../net/cidr.js';
import { familyOf } from './config.js';
import { nodePodCIDRs, type NodeInfo } from './api-client.js';
import { OVERLAY_OVERHEAD, stableMAC } from './overlay.js';

/** calico's VXLAN devices, as calico-node names them. */
export const CALICO_VXLAN_DEVICES: Readonly<Record<IPFamily, string>> = {
  IPv4: 'vxlan.calico',
  IPv6: 'vxlan-v6.calico',
};
/** felix's `vxlanVNI` and `vxlanPort` defaults, the same for both families. */
export const CALICO_VXLAN_VNI = 4096;
export const CALICO_VXLAN_PORT = 4789;

/** The MAC address of a Node's calico VXLAN device of a family (calico publishes it on the Node; here derived). */
export function calicoVXLANMAC(node: string, family: IPFamily): string {
  return stableMAC(`calico-vxlan\n${family}\n${node}`);
}

/** A pool's mode, when the machine has no setting for the family: routed directly, masqueraded. */
const DEFAULT_POOL = (family: IPFamily): PodNetworkPool => ({
  family,
  encapsulation: 'VXLAN',
  mode: 'Never',
  natOutgoing: true,
});

export function poolOf(pools: readonly PodNetworkPool[], family: IPFamily): PodNetworkPool {
  return pools.find((p) => p.family === family) ?? DEFAULT_POOL(family);
}

export interface TunnelDevice {
  readonly family: IPFamily;
  readonly name: string;
  /** The Node's own address of the family: the outer source. */
  readonly local: string;
  readonly mac: string;
  readonly mtu: number;
}

export interface PodRoute {
  /** A podCIDR of another Node. */
  readonly cidr: string;
  readonly via: string;
  readonly device: string;
  readonly node: string;
}

export interface PodNetworkPlan {
  readonly devices: readonly TunnelDevice[];
  /**
   * The machine's own tunnel address on each device (the first address of its podCIDR of the family): the source of
   * what the machine itself sends into the tunnel (kube-proxy's masquerade among it), which the other machines route
   * back through theirs, as calico puts its tunnel address on the device.
   */
  readonly addresses: readonly { readonly device: string; readonly address: string }[];
  /** Tunnel MAC → Node address, per device. */
  readonly forwarding: readonly { readonly device: string; readonly mac: string; readonly dst: string }[];
  /** Tunnel address → tunnel MAC, per device. */
  readonly neighbours: readonly { readonly device: string; readonly address: string; readonly mac: string }[];
  readonly routes: readonly PodRoute[];
}

export interface PodNetworkInput {
  readonly self: string;
  /** The Node's own addresses (without prefix), one per family. */
  readonly selfAddresses: readonly string[];
  readonly nodes: readonly NodeInfo[];
  readonly pools: readonly PodNetworkPool[];
  /** The device of the node network (`vxlan.gv6` for a machine pod, `eth0` for a machine on a bridge). */
  readonly nodeDevice: string;
  /** Its MTU: calico's devices take their headers off it. */
  readonly nodeMTU: number;
  /** The shoot's node ranges, for `CrossSubnet`; without them every Node counts as being in another subnet. */
  readonly nodeCIDRs?: readonly string[];
}

/** Whether two addresses lie in one of `cidrs`. */
function sameSubnet(a: string, b: string, cidrs: readonly string[]): boolean {
  const pa = parseIP(a);
  const pb = parseIP(b);
  if (pa === undefined || pb === undefined) return false;
  return cidrs.some((c) => {
    const parsed = parseCIDR(c);
    return parsed !== undefined && parsed.family === pa.family && contains(parsed, pa) && contains(parsed, pb);
  });
}

/** The devices a machine's pools need: one per family whose pool tunnels (Always, CrossSubnet). */
export function tunnelDevices(
  self: string,
  selfAddresses: readonly string[],
  pools: readonly PodNetworkPool[],
  nodeMTU: number,
): TunnelDevice[] {
  return selfAddresses.flatMap((local) => {
    const family = familyOf(local);
    if (poolOf(pools, family).mode === 'Never') return [];
    const name = CALICO_VXLAN_DEVICES[family];
    return [{ family, name, local, mac: calicoVXLANMAC(self, family), mtu: nodeMTU - OVERLAY_OVERHEAD[family] }];
  });
}

/** The pods' MTU: the smallest of the node network's and the tunnel devices'. */
export function podNetworkMTU(devices: readonly TunnelDevice[], nodeMTU: number): number {
  return Math.min(nodeMTU, ...devices.map((d) => d.mtu));
}

/** What machine `self` programs for the other Nodes' podCIDRs; Nodes without an address of a CIDR's family are skipped. */
export function podNetworkPlan(input: PodNetworkInput): PodNetworkPlan {
  const devices = tunnelDevices(input.self, input.selfAddresses, input.pools, input.nodeMTU);
  const own = input.nodes.find((n) => n.metadata.name === input.self);
  const addresses = devices.flatMap((d) => {
    const cidr = (own ? nodePodCIDRs(own) : []).map(parseCIDR).find((c) => c?.family === d.family);
    return cidr ? [{ device: d.name, address: formatIP(nthAddress(cidr, 1)!) }] : [];
  });
  const forwarding: { device: string; mac: string; dst: string }[] = [];
  const neighbours: { device: string; address: string; mac: string }[] = [];
  const routes: PodRoute[] = [];
  const ownFamilies = new Set(input.selfAddresses.map(familyOf));
  for (const node of input.nodes) {
    const name = node.metadata.name;
    if (name === input.self) continue;
    const internal = (node.status?.addresses ?? []).filter((a) => a.type === 'InternalIP').map((a) => a.address);
    for (const cidr of nodePodCIDRs(node)) {
      const parsed = parseCIDR(cidr);
      if (parsed === undefined) continue;
      const family = parsed.family;
      // A family the machine has no address of is not the shoot's: never routed.
      if (!ownFamilies.has(family)) continue;
      const address = internal.find((ip) => parseIP(ip)?.family === family);
      if (address === undefined) continue;
      const peerIP = formatIP(parseIP(address)!);
      const pool = poolOf(input.pools, family);
      const device = devices.find((d) => d.family === family);
      const tunnelled =
        device !== undefined && (pool.mode === 'Always' || !sameSubnet(device.local, peerIP, input.nodeCIDRs ?? []));
      if (!tunnelled) {
        routes.push({ cidr: parsed.input, via: peerIP, device: input.nodeDevice, node: name });
        continue;
      }
      const mac = calicoVXLANMAC(name, family);
      const tunnelAddress = formatIP(nthAddress(parsed, 1)!);
      if (!forwarding.some((f) => f.device === device.name && f.mac === mac))
        forwarding.push({ device: device.name, mac, dst: peerIP });
      neighbours.push({ device: device.name, address: tunnelAddress, mac });
      routes.push({ cidr: parsed.input, via: tunnelAddress, device: device.name, node: name });
    }
  }
  const byKey =
    <T>(key: (t: T) => string) =>
    (a: T, b: T) =>
      key(a).localeCompare(key(b));
  return {
    devices,
    addresses,
    forwarding: forwarding.sort(byKey((f) => `${f.device} ${f.mac}`)),
    neighbours: neighbours.sort(byKey((n) => `${n.device} ${n.address}`)),
    routes: routes.sort(byKey((r) => r.cidr)),
  };
}

export const EMPTY_POD_NETWORK: PodNetworkPlan = {
  devices: [],
  addresses: [],
  forwarding: [],
  neighbours: [],
  routes: [],
};

/**
 * The `ip`/`bridge` commands from `current` to `desired`: new devices, forwarding and neighbour entries, then the
 * routes (a podCIDR moving between a tunnel and a direct route: the old route goes just before the new one comes),
 * then what is gone, devices last.
 * Removals are marked so their failures (gone already) can be ignored.
 */
export function podNetworkCommands(
  current: PodNetworkPlan,
  desired: PodNetworkPlan,
): { argv: string[]; removal: boolean }[] {
  const key = JSON.stringify;
  const missing = <T>(from: readonly T[], other: readonly T[]) => {
    const have = new Set(other.map((x) => key(x)));
    return from.filter((x) => !have.has(key(x)));
  };
  const add = (argv: string[]) => ({ argv, removal: false });
  const del = (argv: string[]) => ({ argv, removal: true });
  const commands: { argv: string[]; removal: boolean }[] = [];
  for (const d of missing(desired.devices, current.devices)) {
    commands.push(del(['ip', 'link', 'del', d.name]));
    commands.push(
      add([
        'ip',
        'link',
        'add',
        d.name,
        'type',
        'vxlan',
        'id',
        String(CALICO_VXLAN_VNI),
        'local',
        d.local,
        'dstport',
        String(CALICO_VXLAN_PORT),
        'nolearning',
      ]),
    );
    commands.push(add(['ip', 'link', 'set', d.name, 'address', d.mac, 'mtu', String(d.mtu), 'up']));
  }
  // A device made again lost its entries: program all of its entries then.
  const remade = new Set(missing(desired.devices, current.devices).map((d) => d.name));
  const fresh = <T extends { device: string }>(from: readonly T[], other: readonly T[]) => [
    ...new Set([...missing(from, other), ...from.filter((x) => remade.has(x.device))]),
  ];
  for (const a of fresh(desired.addresses, current.addresses)) {
    const host = a.address.includes(':') ? [`${a.address}/128`, 'nodad'] : [`${a.address}/32`];
    commands.push(add(['ip', 'addr', 'replace', host[0]!, 'dev', a.device, ...host.slice(1)]));
  }
  for (const f of fresh(desired.forwarding, current.forwarding))
    commands.push(add(['bridge', 'fdb', 'replace', f.mac, 'dev', f.device, 'dst', f.dst]));
  for (const n of fresh(desired.neighbours, current.neighbours))
    commands.push(add(['ip', 'neigh', 'replace', n.address, 'lladdr', n.mac, 'dev', n.device, 'nud', 'permanent']));
  for (const r of fresh(desired.routes, current.routes)) {
    // IPv6 refuses to replace a route by one whose on-link gateway the old route covers on another device.
    const moved = current.routes.find((c) => c.cidr === r.cidr && c.device !== r.device);
    if (moved !== undefined) commands.push(del(['ip', 'route', 'del', moved.cidr, 'dev', moved.device]));
    commands.push(add(['ip', 'route', 'replace', r.cidr, 'via', r.via, 'dev', r.device, 'onlink']));
  }
  const wantedCIDRs = new Set(desired.routes.map((r) => r.cidr));
  for (const r of current.routes.filter((r) => !wantedCIDRs.has(r.cidr)))
    commands.push(del(['ip', 'route', 'del', r.cidr, 'dev', r.device]));
  const gone = new Set(missing(current.devices, desired.devices).map((d) => d.name));
  const kept = desired.devices.map((d) => d.name);
  const neighbour = (n: { device: string; address: string }) => `${n.device} ${n.address}`;
  const wantedNeighbours = new Set(desired.neighbours.map(neighbour));
  for (const n of current.neighbours.filter((n) => kept.includes(n.device) && !wantedNeighbours.has(neighbour(n))))
    commands.push(del(['ip', 'neigh', 'del', n.address, 'dev', n.device]));
  for (const a of missing(current.addresses, desired.addresses).filter((a) => kept.includes(a.device)))
    commands.push(del(['ip', 'addr', 'del', `${a.address}/${a.address.includes(':') ? 128 : 32}`, 'dev', a.device]));
  for (const f of missing(current.forwarding, desired.forwarding).filter((f) => kept.includes(f.device)))
    commands.push(del(['bridge', 'fdb', 'del', f.mac, 'dev', f.device, 'dst', f.dst]));
  for (const name of gone) if (!kept.includes(name)) commands.push(del(['ip', 'link', 'del', name]));
  return commands;
}
