/**
 * The pod overlay between machine pods, as calico's VXLAN mode (or flannel's) builds one: the machine pods sit on the
 * seed's pod network, which knows nothing of the shoot's pod ranges, so shoot pod traffic between machines travels
 * in VXLAN over the machine pods' own addresses.
 *
 * Every machine has one VXLAN device with a MAC address derived from its Node's name, so no machine needs to
 * publish it. For every other Node, a machine programs
 *   - a forwarding entry: the Node's MAC is reached at its InternalIP (of the underlay family),
 *   - per podCIDR, a permanent neighbour entry for the Node's pod gateway (the first address of the podCIDR, which
 *     the CNI bridge holds there) with that MAC, and a route to the podCIDR via that gateway, on-link,
 *   - for a Node whose overlay runs over an address of its own (a machine pod's, published in the Node's
 *     OVERLAY_UNDERLAY_ANNOTATION), a permanent neighbour entry and a host route for each of its InternalIPs: the
 *     Node's addresses come from the shoot's node ranges and live on its overlay device.
 * A packet for a pod on another machine is thus sent to that machine's MAC, encapsulated to its address, and routed
 * there to its pod bridge. Inner packets of both families travel over one underlay family (the primary).
 *
 * Control plane pods join the overlay too (overlay-peer.ts: kube-apiserver reaching Nodes, pods and Services). Their
 * connections start from their pod addresses, so the answers must go back through the overlay as well: sent plainly
 * over the seed's pod network, they would cross the seed node's bridge without the connection's first packets (those
 * went encapsulated), and a seed whose kube-proxy drops conntrack-INVALID packets (iptables mode with
 * br_netfilter, as on kind) would drop them. Each control plane peer publishes a Lease in the shoot's kube-system
 * (CONTROL_PLANE_PEER_LABEL, its addresses in annotations, renewed while it runs); machines route its addresses
 * through the overlay in a table of their own (CONTROL_PLANE_PEER_TABLE), consulted for every packet not sent from
 * the machine's own underlay address, so the encapsulated packets themselves still leave over the pod network.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { formatIP, nthAddress, parseCIDR, parseIP, type IPFamily } from '../../../net/cidr.js';
import { ip } from '../../../system/netns.js';
import { which } from '../../../system/process.js';
import { familyOf } from './config.js';
import { nodePodCIDRs, type NodeInfo } from './api-client.js';

export const OVERLAY_DEVICE = 'vxlan.gv6';
/**
 * Not calico's 4096: the shoot's own pod overlay (pod-network.ts: `vxlan.calico`, `vxlan-v6.calico`, calico's VNI
 * and port) runs on the machines beside this one, and one VNI can't have two devices per port and family.
 */
export const OVERLAY_VNI = 4100;
export const OVERLAY_PORT = 4789;
/** VXLAN's headers over each underlay family: outer IP + UDP + VXLAN + inner Ethernet. */
export const OVERLAY_OVERHEAD: Readonly<Record<IPFamily, number>> = { IPv6: 70, IPv4: 50 };

/** A locally administered unicast MAC address derived from `seed`: stable, and distinct for distinct seeds. */
export function stableMAC(seed: string): string {
  const bytes = createHash('sha256').update(seed).digest().subarray(0, 6);
  bytes[0] = (bytes[0]! & 0xfe) | 0x02;
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join(':');
}

/** The MAC address of a Node's VXLAN device. */
export function overlayMAC(node: string): string {
  return stableMAC(`overlay\n${node}`);
}

/**
 * The Node annotation with the address its machine's overlay runs over, when that is not one of its InternalIPs (a
 * machine pod: the pod's address, while the Node's addresses come from the shoot's node ranges and live on the
 * overlay device), as flannel publishes its `public-ip`.
 */
export const OVERLAY_UNDERLAY_ANNOTATION = 'local.provider.extensions.gardener.cloud/overlay-underlay-ip';

export interface OverlayPeer {
  readonly node: string;
  readonly mac: string;
  /** Where the Node's overlay device is reached: its underlay annotation, else its InternalIP of that family. */
  readonly underlayIP: string;
  /** The Node's addresses reached through the overlay (when it has an underlay of its own). */
  readonly addresses: readonly string[];
  /** Its podCIDRs, each with the gateway address the route goes via. */
  readonly routes: readonly { readonly cidr: string; readonly gateway: string }[];
}

/**
 * The peers machine `self` needs; Nodes without podCIDRs or without an underlay address of the underlay family
 * (annotation or InternalIP) are skipped.
 */
export function desiredOverlayPeers(
  self: string,
  nodes: readonly NodeInfo[],
  underlay: IPFamily,
  podRoutes = true,
): OverlayPeer[] {
  const peers: OverlayPeer[] = [];
  for (const node of nodes) {
    const name = node.metadata.name;
    if (name === self) continue;
    const internalIPs = (node.status?.addresses ?? []).filter((a) => a.type === 'InternalIP').map((a) => a.address);
    const annotated = node.metadata.annotations?.[OVERLAY_UNDERLAY_ANNOTATION]?.trim();
    const published = annotated ? parseIP(annotated) : undefined;
    const underlayIP =
      published !== undefined
        ? published.family === underlay
          ? formatIP(published)
          : undefined
        : internalIPs.find((a) => familyOf(a) === underlay);
    const addresses = published !== undefined ? internalIPs.filter((a) => parseIP(a) !== undefined) : [];
    const routes = (podRoutes ? nodePodCIDRs(node) : []).flatMap((cidr) => {
      const parsed = parseCIDR(cidr);
      const gateway = parsed ? nthAddress(parsed, 1) : undefined;
      return gateway ? [{ cidr: parsed!.input, gateway: formatIP(gateway) }] : [];
    });
    if (underlayIP !== undefined && (routes.length > 0 || (!podRoutes && addresses.length > 0)))
      peers.push({ node: name, mac: overlayMAC(name), underlayIP, addresses, routes });
  }
  return peers.sort((a, b) => a.node.localeCompare(b.node));
}

/** The label of the Leases of control plane peers (in the shoot's kube-system). */
export const CONTROL_PLANE_PEER_LABEL = 'local.provider.extensions.gardener.cloud/overlay-peer';
/** A control plane peer Lease's annotation: its pod's addresses (comma-separated), the underlay's among them. */
export const OVERLAY_ADDRESSES_ANNOTATION = 'local.provider.extensions.gardener.cloud/overlay-addresses';
/** The routing table of the routes to control plane peers. */
export const CONTROL_PLANE_PEER_TABLE = '4096';
/** The priority of the rule that consults it (before the main table's 32766). */
export const CONTROL_PLANE_PEER_RULE_PRIORITY = '4096';

/** A control plane pod in the overlay: reached at `underlayIP` by its MAC; `addresses` are its pod's addresses. */
export interface ControlPlanePeer {
  readonly name: string;
  readonly mac: string;
  readonly underlayIP: string;
  readonly addresses: readonly string[];
}

/** The MAC address of a control plane peer's VXLAN device (its node name is `control-plane/<pod>`). */
export function controlPlanePeerMAC(pod: string): string {
  return overlayMAC(`control-plane/${pod}`);
}

/** What the machines read of a peer's Lease. */
export interface PeerLease {
  readonly metadata: { readonly name: string; readonly annotations?: Record<string, string> };
  readonly spec?: {
    readonly holderIdentity?: string;
    readonly renewTime?: string;
    readonly leaseDurationSeconds?: number;
  };
}

/**
 * The control plane peers of fresh Leases (renewed within their duration of `now`) whose underlay is of the
 * `underlay` family, sorted by name. A peer whose pod is gone stops renewing and drops out.
 */
export function desiredControlPlanePeers(
  leases: readonly PeerLease[],
  underlay: IPFamily,
  now: number = Date.now(),
): ControlPlanePeer[] {
  const peers: ControlPlanePeer[] = [];
  for (const lease of leases) {
    const pod = lease.spec?.holderIdentity;
    const renewed = Date.parse(lease.spec?.renewTime ?? '');
    const duration = (lease.spec?.leaseDurationSeconds ?? 0) * 1000;
    if (!pod || Number.isNaN(renewed) || renewed + duration < now) continue;
    const annotations = lease.metadata.annotations ?? {};
    const underlayIP = parseIP(annotations[OVERLAY_UNDERLAY_ANNOTATION]?.trim() ?? '');
    if (underlayIP === undefined || underlayIP.family !== underlay) continue;
    const addresses = (annotations[OVERLAY_ADDRESSES_ANNOTATION] ?? '')
      .split(',')
      .map((a) => parseIP(a.trim()))
      .filter((a) => a !== undefined)
      .map((a) => formatIP(a));
    const all = [...new Set([formatIP(underlayIP), ...addresses])].sort();
    peers.push({ name: pod, mac: controlPlanePeerMAC(pod), underlayIP: formatIP(underlayIP), addresses: all });
  }
  return peers.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The commands that take the control plane peers from `current` to `desired`: those of peers with addresses and no
 * podCIDRs, their host routes in the peers' table.
 */
export function controlPlanePeerCommands(
  current: readonly ControlPlanePeer[],
  desired: readonly ControlPlanePeer[],
  device = OVERLAY_DEVICE,
): string[][] {
  const asPeer = (p: ControlPlanePeer): OverlayPeer => ({
    node: p.name,
    mac: p.mac,
    underlayIP: p.underlayIP,
    addresses: p.addresses,
    routes: [],
  });
  return overlayCommands(current.map(asPeer), desired.map(asPeer), device, CONTROL_PLANE_PEER_TABLE);
}

/**
 * The rules that send everything but the machine's own encapsulated packets (from `underlayIP`) to the control plane
 * peers' table first, per family (`ip -6 rule` for IPv6); a packet for another destination falls through to main.
 */
export function controlPlanePeerRuleCommands(underlayIP: string): string[][] {
  const underlay = familyOf(underlayIP);
  const flag = (family: IPFamily) => (family === 'IPv6' ? '-6' : '-4');
  const other: IPFamily = underlay === 'IPv6' ? 'IPv4' : 'IPv6';
  const lookup = ['lookup', CONTROL_PLANE_PEER_TABLE, 'priority', CONTROL_PLANE_PEER_RULE_PRIORITY];
  return [
    ['ip', flag(underlay), 'rule', 'add', 'not', 'from', hostRoute(underlayIP), ...lookup],
    // The other family carries no encapsulated packets: all of it may take the table.
    ['ip', flag(other), 'rule', 'add', ...lookup],
  ];
}

/** A host route's destination: the address with its full prefix. */
function hostRoute(address: string): string {
  return `${address}/${familyOf(address) === 'IPv6' ? 128 : 32}`;
}

/**
 * The `ip`/`bridge` commands that take `current` peers to `desired` ones (removals first); the host routes of their
 * addresses go into `table` when given.
 */
export function overlayCommands(
  current: readonly OverlayPeer[],
  desired: readonly OverlayPeer[],
  device = OVERLAY_DEVICE,
  table?: string,
): string[][] {
  const inTable = table === undefined ? [] : ['table', table];
  const key = (p: OverlayPeer) => JSON.stringify(p);
  const wanted = new Set(desired.map(key));
  const have = new Set(current.map(key));
  const commands: string[][] = [];
  for (const peer of current.filter((p) => !wanted.has(key(p)))) {
    for (const r of peer.routes) {
      commands.push(['ip', 'route', 'del', r.cidr, 'dev', device]);
      commands.push(['ip', 'neigh', 'del', r.gateway, 'dev', device]);
    }
    for (const address of peer.addresses) {
      commands.push(['ip', 'route', 'del', hostRoute(address), 'dev', device, ...inTable]);
      commands.push(['ip', 'neigh', 'del', address, 'dev', device]);
    }
    commands.push(['bridge', 'fdb', 'del', peer.mac, 'dev', device, 'dst', peer.underlayIP]);
  }
  for (const peer of desired.filter((p) => !have.has(key(p)))) {
    commands.push(['bridge', 'fdb', 'replace', peer.mac, 'dev', device, 'dst', peer.underlayIP]);
    for (const r of peer.routes) {
      commands.push(['ip', 'neigh', 'replace', r.gateway, 'lladdr', peer.mac, 'dev', device, 'nud', 'permanent']);
      commands.push(['ip', 'route', 'replace', r.cidr, 'via', r.gateway, 'dev', device, 'onlink']);
    }
    for (const address of peer.addresses) {
      commands.push(['ip', 'neigh', 'replace', address, 'lladdr', peer.mac, 'dev', device, 'nud', 'permanent']);
      commands.push(['ip', 'route', 'replace', hostRoute(address), 'dev', device, ...inTable]);
    }
  }
  return commands;
}

/** The VXLAN device and its peers in the network namespace this process runs in. */
export class VXLANOverlay {
  private peers: OverlayPeer[] = [];
  private controlPlanePeers: ControlPlanePeer[] = [];

  /**
   * `podRoutes`: route the other Nodes' podCIDRs through this overlay too (a control plane peer's way to the pods);
   * machines leave that to the pod network (pod-network.ts), and carry only the Nodes' addresses here.
   */
  constructor(
    private readonly node: string,
    private readonly underlayIP: string,
    private readonly log: (line: string) => void = () => {},
    private readonly podRoutes = true,
  ) {}

  get underlay(): IPFamily {
    return familyOf(this.underlayIP);
  }

  /** Creates the device (again, if it exists with other settings) with the MTU left by `linkMTU`. */
  ensureDevice(linkMTU: number): void {
    const mtu = String(linkMTU - OVERLAY_OVERHEAD[this.underlay]);
    run(['ip', 'link', 'del', OVERLAY_DEVICE], true);
    run([
      'ip',
      'link',
      'add',
      OVERLAY_DEVICE,
      'type',
      'vxlan',
      'id',
      String(OVERLAY_VNI),
      'local',
      this.underlayIP,
      'dstport',
      String(OVERLAY_PORT),
      'nolearning',
    ]);
    run(['ip', 'link', 'set', OVERLAY_DEVICE, 'address', overlayMAC(this.node), 'mtu', mtu, 'up']);
    this.peers = [];
    this.controlPlanePeers = [];
  }

  /**
   * The rules of the control plane peers' table (machines only; a control plane peer answers through its routes of
   * the Nodes' addresses). Rules of an earlier run in this network namespace are replaced.
   */
  ensureControlPlanePeerRules(): void {
    for (const family of ['-6', '-4']) {
      // Deleting by priority removes one rule per call: until none is left (bounded, in case deletion is refused).
      for (let i = 0; i < 16; i++) {
        try {
          execFileSync(which('ip') ?? 'ip', [family, 'rule', 'del', 'priority', CONTROL_PLANE_PEER_RULE_PRIORITY], {
            stdio: 'ignore',
          });
        } catch {
          break;
        }
      }
    }
    for (const command of controlPlanePeerRuleCommands(this.underlayIP)) run(command);
  }

  /** Puts host addresses (a machine pod's Node addresses) on the device. */
  addAddresses(addresses: readonly string[]): void {
    for (const address of addresses) {
      const ipv6 = familyOf(address.split('/')[0]!) === 'IPv6';
      run(['ip', 'addr', 'replace', address, 'dev', OVERLAY_DEVICE, ...(ipv6 ? ['nodad'] : [])]);
    }
  }

  /**
   * Programs what changed since the last call: the Nodes, and (on machines) the control plane peers of `leases`. A
   * failed command leaves the rest for the next call.
   */
  sync(nodes: readonly NodeInfo[], leases?: readonly PeerLease[]): void {
    const desired = desiredOverlayPeers(this.node, nodes, this.underlay, this.podRoutes);
    const commands = overlayCommands(this.peers, desired);
    for (const command of commands) runIdempotent(command);
    if (commands.length > 0)
      this.log(`overlay: ${desired.map((p) => `${p.node} at ${p.underlayIP}`).join(', ') || 'no peers'}`);
    this.peers = desired;
    if (leases === undefined) return;
    const peers = desiredControlPlanePeers(leases, this.underlay);
    const peerCommands = controlPlanePeerCommands(this.controlPlanePeers, peers);
    for (const command of peerCommands) runIdempotent(command);
    if (peerCommands.length > 0)
      this.log(`overlay: control plane ${peers.map((p) => `${p.name} at ${p.underlayIP}`).join(', ') || 'none'}`);
    this.controlPlanePeers = peers;
  }

  current(): readonly OverlayPeer[] {
    return this.peers;
  }
}

/** The MTU of the device that holds `address` (a pod's eth0). */
export function linkMTUOf(address: string): number {
  const out = ip(['-o', 'addr', 'show', 'to', address]);
  const device = /^\d+:\s+(\S+)/.exec(out)?.[1]?.replace(/@.*$/, '');
  if (device === undefined) throw new Error(`no device holds ${address}`);
  return Number(readFileSync(`/sys/class/net/${device}/mtu`, 'utf8').trim());
}

/**
 * Routes of the shoot's service ranges into the overlay, for a peer outside the shoot (a control plane pod): each
 * via the pod gateway of the first Node that has a podCIDR of the range's family, where kube-proxy forwards (and
 * masquerades: the peer is outside the cluster's pod ranges, so the answers come back the same way).
 */
export function serviceRouteCommands(
  serviceCIDRs: readonly string[],
  peers: readonly OverlayPeer[],
  device = OVERLAY_DEVICE,
): string[][] {
  return serviceCIDRs.flatMap((cidr) => {
    const family = familyOf(cidr);
    const gateway = peers.flatMap((p) => p.routes).find((r) => familyOf(r.cidr) === family)?.gateway;
    return gateway ? [['ip', 'route', 'replace', cidr, 'via', gateway, 'dev', device, 'onlink']] : [];
  });
}

/** Removals of what is gone already are fine; an addition that fails throws (and is retried next time). */
function runIdempotent(command: string[]): void {
  run(command, command.includes('del'));
}

/** Runs `argv` (ip, bridge) in this network namespace; failures of removals are ignored when asked. */
export function run(argv: string[], ignoreFailure = false): void {
  try {
    execFileSync(which(argv[0]!) ?? argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    if (ignoreFailure) return;
    const error = e as Error & { stderr?: Buffer };
    throw new Error(`${argv.join(' ')}: ${error.stderr?.toString().trim() || error.message}`);
  }
}
