/**
 * A machine's network: its own network namespace on the caller's bridge (a veth, its addresses, a default route
 * per family) or, in a machine pod, the VXLAN overlay (overlay.ts); the outgoing NAT of its pods; their MTU; and
 * the pod network to the other Nodes (pod-network.ts) as the node sync (node-sync.ts) finds them.
 */
import { formatIP, parseIP } from '../../../net/cidr.js';
import { ip } from '../../../system/netns.js';
import type { NodeInfo } from './api-client.js';
import { familyOf, natOutgoingRules } from './config.js';
import { nodeIPsOf, type BridgeAttachment, type MachineContext } from './machine-options.js';
import { runNft } from './nft.js';
import { OVERLAY_DEVICE, OVERLAY_OVERHEAD, VXLANOverlay, linkMTUOf, run, stableMAC } from './overlay.js';
import {
  EMPTY_POD_NETWORK,
  podNetworkCommands,
  podNetworkMTU,
  podNetworkPlan,
  tunnelDevices,
  type PodNetworkPlan,
  type PodRoute,
} from './pod-network.js';

/** A locally administered unicast MAC address, stable for a machine's name and addresses. */
export function machineMAC(name: string, addresses: readonly string[]): string {
  return stableMAC(`${name}\n${addresses.join(',')}`);
}

export class MachineNetwork {
  private overlayDevice: VXLANOverlay | undefined;
  private podNetwork: PodNetworkPlan = EMPTY_POD_NETWORK;

  /**
   * @param id the machine's id (janitor.ts), the name of its network namespace
   * @param vethName the host end of its veth
   */
  constructor(
    private readonly machine: MachineContext,
    private readonly id: string,
    private readonly vethName: string,
  ) {}

  private get opts() {
    return this.machine.opts;
  }

  private get netns(): string | undefined {
    return this.machine.netns;
  }

  /** The overlay, when the machine has no network namespace of its own. */
  get overlay(): VXLANOverlay | undefined {
    return this.overlayDevice;
  }

  /** The routes to the other Nodes' pods now programmed. */
  get podRoutes(): readonly PodRoute[] {
    return this.podNetwork.routes;
  }

  /** The node network: the network namespace on the bridge, or the overlay. */
  create(): void {
    if (this.opts.attachment) this.createNetwork(this.opts.attachment);
    else this.createOverlay();
  }

  /** Forgets the pod network programmed: it went with the network namespace. */
  reset(): void {
    this.podNetwork = EMPTY_POD_NETWORK;
  }

  /**
   * The VXLAN device to the other machines, over the underlay address of the network namespace we run in; with an
   * underlay of its own, the device holds the Node's addresses (before the kubelet starts: it checks its node IPs).
   */
  private createOverlay(): void {
    const overlay = new VXLANOverlay(this.opts.name, this.underlayIP, (line) => this.machine.log(line), false);
    overlay.ensureDevice(this.linkMTU());
    overlay.ensureControlPlanePeerRules();
    if (this.opts.underlay !== undefined) overlay.addAddresses(this.opts.addresses);
    this.overlayDevice = overlay;
  }

  /** What the overlay runs over: the given underlay, else the Node's primary address. */
  private get underlayIP(): string {
    return this.opts.underlay ?? nodeIPsOf(this.opts)[0]!;
  }

  /** The MTU of the device that holds the underlay address (a machine pod's eth0). */
  private linkMTU(): number {
    return linkMTUOf(this.underlayIP);
  }

  /** The device of the node network: the overlay's, or eth0 on the bridge. */
  private get nodeDevice(): string {
    return this.overlayDevice ? OVERLAY_DEVICE : 'eth0';
  }

  /** The node network's MTU: the overlay device's, or eth0's. */
  private nodeMTU(): number {
    if (this.overlayDevice) return this.linkMTU() - OVERLAY_OVERHEAD[this.overlayDevice.underlay];
    // Through ip(), which keeps the command's stderr: `ip -n` names every namespace a link's peer may be in, and
    // prints an error line for each it can't resolve (seen when `up` runs inside a network namespace of its own).
    const out = ip(['-n', this.netns!, '-o', 'link', 'show', 'eth0']);
    return Number(/\bmtu (\d+)/.exec(out)?.[1] ?? 1500);
  }

  /**
   * The pods' MTU: what is left inside the overlay and calico's tunnels of the pools; unset (the CNI's default) on
   * a bridge without tunnels.
   */
  podMTU(): number | undefined {
    const devices = tunnelDevices(this.opts.name, nodeIPsOf(this.opts), this.opts.pools ?? [], this.nodeMTU());
    if (this.overlayDevice === undefined && devices.length === 0) return undefined;
    return podNetworkMTU(devices, this.nodeMTU());
  }

  private createNetwork(attachment: BridgeAttachment): void {
    const ns = this.id;
    ip(['netns', 'add', ns]);
    ip(['-n', ns, 'link', 'set', 'lo', 'up']);
    // Loopback keeps 127.0.0.1 even on IPv6-only machines, as on a real IPv6-only node: without it Go programs
    // (kubelet, kube-proxy) listening on `::` fall back to an IPv4-only socket (Go's net package binds 0.0.0.0
    // when IPv4-mapped addresses don't work), and the kubelet would not answer on its IPv6 node address.
    // A MAC address of its own for good: the other machines' neighbor caches stay right when it comes back after a
    // restart (a new random MAC would leave them sending to the old one until their entries expire, ~30 s).
    const mac = machineMAC(this.opts.name, this.opts.addresses);
    // The bridge may live in another namespace (the shoot's control plane namespace, its network's router).
    const at = attachment.bridgeNetns !== undefined ? ['-n', attachment.bridgeNetns] : [];
    ip([...at, 'link', 'add', this.vethName, 'type', 'veth', 'peer', 'name', 'eth0', 'address', mac, 'netns', ns]);
    ip([...at, 'link', 'set', this.vethName, 'master', attachment.bridge]);
    ip([...at, 'link', 'set', this.vethName, 'up']);
    for (const address of this.opts.addresses) ip(['-n', ns, 'addr', 'add', address, 'dev', 'eth0', 'nodad']);
    ip(['-n', ns, 'link', 'set', 'eth0', 'up']);
    for (const family of this.opts.families) {
      const gateway = attachment.gateways.find((g) => familyOf(g) === family);
      if (gateway === undefined)
        throw new Error(`machine ${this.opts.name}: no ${family} gateway in ${attachment.gateways.join(', ')}`);
      ip([
        '-n',
        ns,
        family === 'IPv6' ? '-6' : '-4',
        'route',
        'add',
        'default',
        'via',
        gateway.split('/')[0]!,
        'dev',
        'eth0',
      ]);
    }
  }

  /** The API server's address, when its URL names one. */
  private apiServerAddresses(): string[] {
    const host = new URL(this.opts.apiServer.url).hostname.replace(/^\[|\]$/g, '');
    const address = parseIP(host);
    return address !== undefined ? [formatIP(address)] : [];
  }

  /** Outgoing NAT of pod traffic leaving the cluster's ranges (see natOutgoingRules). */
  async programNATOutgoing(): Promise<void> {
    try {
      await runNft(
        natOutgoingRules({
          podCIDRs: this.opts.podCIDRs,
          serviceCIDRs: this.opts.serviceCIDRs,
          nodeCIDRs: this.opts.nodeCIDRs ?? [],
          withoutNAT: (this.opts.pools ?? []).filter((p) => !p.natOutgoing).map((p) => p.family),
          apiServerAddresses: this.apiServerAddresses(),
          snatToUpstreamDNS: this.opts.snatToUpstreamDNS === true ? (this.opts.upstreamDNS ?? []) : [],
        }),
        ['-f', '-'],
        this.netns,
      );
    } catch (e) {
      throw new Error(`machine ${this.opts.name}: ${(e as Error).message}`);
    }
  }

  /**
   * Forgets the machine's connection tracking of DNS to the upstream resolvers, so that a changed snatToUpstreamDNS
   * holds for every query from then on: NAT is decided on a flow's first packet, and CoreDNS's forward plugin reuses
   * its sockets, whose flows would keep the old translation for as long as queries keep them alive (kube-proxy
   * clears UDP entries for the same reason when a Service's endpoints change). conntrack exits 1 when there were
   * none.
   */
  forgetUpstreamDNSFlows(): void {
    for (const resolver of this.opts.upstreamDNS ?? []) {
      const family = familyOf(resolver) === 'IPv6' ? 'ipv6' : 'ipv4';
      for (const protocol of ['udp', 'tcp']) {
        const argv = ['conntrack', '-D', '-f', family, '-p', protocol, '--dport', '53', '-d', resolver];
        run(this.netns !== undefined ? ['ip', 'netns', 'exec', this.netns, ...argv] : argv, true);
      }
    }
  }

  /** Programs what changed of the pod network to the other Nodes (pod-network.ts); failures are retried next time. */
  syncPodNetwork(nodes: readonly NodeInfo[]): void {
    const desired = podNetworkPlan({
      self: this.opts.name,
      selfAddresses: nodeIPsOf(this.opts),
      nodes,
      pools: this.opts.pools ?? [],
      nodeDevice: this.nodeDevice,
      nodeMTU: this.nodeMTU(),
      ...(this.opts.nodeCIDRs !== undefined ? { nodeCIDRs: this.opts.nodeCIDRs } : {}),
    });
    const commands = podNetworkCommands(this.podNetwork, desired);
    if (commands.length === 0) return;
    const inNetns = (argv: string[]) =>
      this.netns !== undefined ? [argv[0]!, '-n', this.netns, ...argv.slice(1)] : argv;
    for (const { argv, removal } of commands) run(inNetns(argv), removal);
    const was = new Set(this.podNetwork.devices.map((d) => d.name));
    for (const d of desired.devices.filter((d) => !was.has(d.name))) this.machine.log(`${d.name} up`);
    for (const d of this.podNetwork.devices.filter((d) => !desired.devices.some((x) => x.name === d.name)))
      this.machine.log(`${d.name} removed`);
    this.podNetwork = desired;
  }
}
