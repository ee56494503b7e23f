import { describe, expect, it } from 'vitest';
import type { PodNetworkPool } from '../../../../src/apis/provider-local/v1alpha1/machine-user-data.js';
import type { NodeInfo } from '../../../../src/extensions/provider-local/machine/api-client.js';
import {
  CALICO_VXLAN_PORT,
  CALICO_VXLAN_VNI,
  EMPTY_POD_NETWORK,
  calicoVXLANMAC,
  podNetworkCommands,
  podNetworkMTU,
  podNetworkPlan,
  type PodNetworkInput,
} from '../../../../src/extensions/provider-local/machine/pod-network.js';
import {
  OVERLAY_DEVICE,
  OVERLAY_PORT,
  OVERLAY_VNI,
} from '../../../../src/extensions/provider-local/machine/overlay.js';

const node = (name: string, ips: string[], podCIDRs: string[]): NodeInfo => ({
  metadata: { name },
  spec: { podCIDRs },
  status: {
    addresses: [...ips.map((address) => ({ type: 'InternalIP', address })), { type: 'Hostname', address: name }],
  },
});

const pool = (family: 'IPv4' | 'IPv6', mode: PodNetworkPool['mode'], natOutgoing = true): PodNetworkPool => ({
  family,
  encapsulation: 'VXLAN',
  mode,
  natOutgoing,
});

// A dual-stack shoot of two machine pods: node network vxlan.gv6 with MTU 1430 (1500 over IPv6).
const nodes = [
  node('a', ['10.10.0.10', 'fd00:fe::a'], ['10.3.0.0/24', 'fd00:10:3::/64']),
  node('b', ['10.10.0.11', 'fd00:fe::b'], ['10.3.1.0/24', 'fd00:10:3:1::/64']),
  node('c', ['fd00:fe::c'], []),
];
const input = (pools: PodNetworkPool[], extra: Partial<PodNetworkInput> = {}): PodNetworkInput => ({
  self: 'a',
  selfAddresses: ['10.10.0.10', 'fd00:fe::a'],
  nodes,
  pools,
  nodeDevice: OVERLAY_DEVICE,
  nodeMTU: 1430,
  nodeCIDRs: ['10.10.0.0/16', 'fd00:fe::/64'],
  ...extra,
});

describe("calico's pod network between machines", () => {
  it('overlay off: every other Node podCIDR is routed via its InternalIP of the family, over the node network', () => {
    const plan = podNetworkPlan(input([pool('IPv4', 'Never'), pool('IPv6', 'Never')]));
    expect(plan.devices).toEqual([]);
    expect(plan.forwarding).toEqual([]);
    expect(plan.routes).toEqual([
      { cidr: '10.3.1.0/24', via: '10.10.0.11', device: OVERLAY_DEVICE, node: 'b' },
      { cidr: 'fd00:10:3:1::/64', via: 'fd00:fe::b', device: OVERLAY_DEVICE, node: 'b' },
    ]);
    expect(podNetworkMTU(plan.devices, 1430)).toBe(1430);
    // Without pool settings (user data of before): the same.
    expect(podNetworkPlan(input([]))).toEqual(plan);
  });

  it("overlay on: calico's VXLAN device per family over the Nodes' addresses of that family", () => {
    const plan = podNetworkPlan(input([pool('IPv4', 'Always'), pool('IPv6', 'Always')]));
    expect(plan.devices).toEqual([
      { family: 'IPv4', name: 'vxlan.calico', local: '10.10.0.10', mac: calicoVXLANMAC('a', 'IPv4'), mtu: 1380 },
      { family: 'IPv6', name: 'vxlan-v6.calico', local: 'fd00:fe::a', mac: calicoVXLANMAC('a', 'IPv6'), mtu: 1360 },
    ]);
    // Its own tunnel address on each: what it sends into the tunnel itself (masqueraded traffic) comes back.
    expect(plan.addresses).toEqual([
      { device: 'vxlan.calico', address: '10.3.0.1' },
      { device: 'vxlan-v6.calico', address: 'fd00:10:3::1' },
    ]);
    expect(plan.forwarding).toEqual([
      { device: 'vxlan-v6.calico', mac: calicoVXLANMAC('b', 'IPv6'), dst: 'fd00:fe::b' },
      { device: 'vxlan.calico', mac: calicoVXLANMAC('b', 'IPv4'), dst: '10.10.0.11' },
    ]);
    expect(plan.neighbours).toEqual([
      { device: 'vxlan-v6.calico', address: 'fd00:10:3:1::1', mac: calicoVXLANMAC('b', 'IPv6') },
      { device: 'vxlan.calico', address: '10.3.1.1', mac: calicoVXLANMAC('b', 'IPv4') },
    ]);
    expect(plan.routes).toEqual([
      { cidr: '10.3.1.0/24', via: '10.3.1.1', device: 'vxlan.calico', node: 'b' },
      { cidr: 'fd00:10:3:1::/64', via: 'fd00:10:3:1::1', device: 'vxlan-v6.calico', node: 'b' },
    ]);
    // The pods fit in the smaller of the two tunnels.
    expect(podNetworkMTU(plan.devices, 1430)).toBe(1360);
    expect(calicoVXLANMAC('b', 'IPv4')).not.toBe(calicoVXLANMAC('b', 'IPv6'));
  });

  it('per family: IPv6 tunnelled, IPv4 routed', () => {
    const plan = podNetworkPlan(input([pool('IPv4', 'Never'), pool('IPv6', 'Always')]));
    expect(plan.devices.map((d) => d.name)).toEqual(['vxlan-v6.calico']);
    expect(plan.routes.map((r) => [r.cidr, r.device])).toEqual([
      ['10.3.1.0/24', OVERLAY_DEVICE],
      ['fd00:10:3:1::/64', 'vxlan-v6.calico'],
    ]);
  });

  it('CrossSubnet tunnels only to Nodes outside the node range of the machine', () => {
    const far = node('d', ['fd00:ff:1::d'], ['fd00:10:3:4::/64']);
    const plan = podNetworkPlan(
      input([pool('IPv6', 'CrossSubnet')], { selfAddresses: ['fd00:fe::a'], nodes: [...nodes, far] }),
    );
    expect(plan.routes.map((r) => [r.cidr, r.device])).toEqual([
      ['fd00:10:3:1::/64', OVERLAY_DEVICE],
      ['fd00:10:3:4::/64', 'vxlan-v6.calico'],
    ]);
  });

  it('an IPv6 single-stack machine neither routes nor tunnels IPv4, whatever IPv4 pool it is handed', () => {
    const plan = podNetworkPlan(
      input([pool('IPv4', 'Always'), pool('IPv6', 'Always')], {
        selfAddresses: ['fd00:fe::a'],
        nodes: [node('a', ['fd00:fe::a'], ['fd00:10:3::/64']), node('b', ['fd00:fe::b'], ['fd00:10:3:1::/64'])],
      }),
    );
    expect(plan.devices.map((d) => d.family)).toEqual(['IPv6']);
    expect(plan.routes.every((r) => r.cidr.includes(':'))).toBe(true);
    expect(JSON.stringify(plan)).not.toMatch(/\b10\.\d/);
  });

  it("uses calico's VNI and port, apart from the node network's", () => {
    const plan = podNetworkPlan(input([pool('IPv6', 'Always')]));
    const add = podNetworkCommands(EMPTY_POD_NETWORK, plan).find((c) => c.argv.includes('add'))!.argv;
    expect(add).toEqual([
      'ip',
      'link',
      'add',
      'vxlan-v6.calico',
      'type',
      'vxlan',
      'id',
      '4096',
      'local',
      'fd00:fe::a',
      'dstport',
      '4789',
      'nolearning',
    ]);
    expect([CALICO_VXLAN_VNI, CALICO_VXLAN_PORT]).toEqual([4096, 4789]);
    // One port, so the VNIs must differ (the kernel refuses two devices of one VNI, port and family).
    expect(OVERLAY_PORT).toBe(CALICO_VXLAN_PORT);
    expect(OVERLAY_VNI).not.toBe(CALICO_VXLAN_VNI);
  });

  it('switches in place: overlay on moves the routes into the tunnels, off moves them back and removes the devices', () => {
    const off = podNetworkPlan(input([pool('IPv4', 'Never'), pool('IPv6', 'Never')]));
    const on = podNetworkPlan(input([pool('IPv4', 'Always'), pool('IPv6', 'Always')]));
    const turnOn = podNetworkCommands(off, on).map((c) => c.argv.join(' '));
    expect(turnOn).toEqual([
      'ip link del vxlan.calico',
      'ip link add vxlan.calico type vxlan id 4096 local 10.10.0.10 dstport 4789 nolearning',
      `ip link set vxlan.calico address ${calicoVXLANMAC('a', 'IPv4')} mtu 1380 up`,
      'ip link del vxlan-v6.calico',
      'ip link add vxlan-v6.calico type vxlan id 4096 local fd00:fe::a dstport 4789 nolearning',
      `ip link set vxlan-v6.calico address ${calicoVXLANMAC('a', 'IPv6')} mtu 1360 up`,
      'ip addr replace 10.3.0.1/32 dev vxlan.calico',
      'ip addr replace fd00:10:3::1/128 dev vxlan-v6.calico nodad',
      `bridge fdb replace ${calicoVXLANMAC('b', 'IPv6')} dev vxlan-v6.calico dst fd00:fe::b`,
      `bridge fdb replace ${calicoVXLANMAC('b', 'IPv4')} dev vxlan.calico dst 10.10.0.11`,
      `ip neigh replace fd00:10:3:1::1 lladdr ${calicoVXLANMAC('b', 'IPv6')} dev vxlan-v6.calico nud permanent`,
      `ip neigh replace 10.3.1.1 lladdr ${calicoVXLANMAC('b', 'IPv4')} dev vxlan.calico nud permanent`,
      `ip route del 10.3.1.0/24 dev ${OVERLAY_DEVICE}`,
      'ip route replace 10.3.1.0/24 via 10.3.1.1 dev vxlan.calico onlink',
      `ip route del fd00:10:3:1::/64 dev ${OVERLAY_DEVICE}`,
      'ip route replace fd00:10:3:1::/64 via fd00:10:3:1::1 dev vxlan-v6.calico onlink',
    ]);
    const turnOff = podNetworkCommands(on, off);
    expect(turnOff.map((c) => c.argv.join(' '))).toEqual([
      'ip route del 10.3.1.0/24 dev vxlan.calico',
      `ip route replace 10.3.1.0/24 via 10.10.0.11 dev ${OVERLAY_DEVICE} onlink`,
      'ip route del fd00:10:3:1::/64 dev vxlan-v6.calico',
      `ip route replace fd00:10:3:1::/64 via fd00:fe::b dev ${OVERLAY_DEVICE} onlink`,
      'ip link del vxlan.calico',
      'ip link del vxlan-v6.calico',
    ]);
    expect(turnOff.filter((c) => c.argv.includes('del')).every((c) => c.removal)).toBe(true);
    expect(podNetworkCommands(on, on)).toEqual([]);
  });

  it('a Node that leaves takes its route and tunnel entries along; a new MTU makes the device again', () => {
    const on = podNetworkPlan(input([pool('IPv6', 'Always')], { selfAddresses: ['fd00:fe::a'] }));
    const alone = podNetworkPlan(
      input([pool('IPv6', 'Always')], { selfAddresses: ['fd00:fe::a'], nodes: [nodes[0]!] }),
    );
    expect(podNetworkCommands(on, alone).map((c) => c.argv.join(' '))).toEqual([
      'ip route del fd00:10:3:1::/64 dev vxlan-v6.calico',
      'ip neigh del fd00:10:3:1::1 dev vxlan-v6.calico',
      `bridge fdb del ${calicoVXLANMAC('b', 'IPv6')} dev vxlan-v6.calico dst fd00:fe::b`,
    ]);
    const smaller = podNetworkPlan(input([pool('IPv6', 'Always')], { selfAddresses: ['fd00:fe::a'], nodeMTU: 1400 }));
    const remake = podNetworkCommands(on, smaller).map((c) => c.argv.join(' '));
    expect(remake).toContain(`ip link set vxlan-v6.calico address ${calicoVXLANMAC('a', 'IPv6')} mtu 1330 up`);
    expect(remake).toContain('ip route replace fd00:10:3:1::/64 via fd00:10:3:1::1 dev vxlan-v6.calico onlink');
    expect(remake.filter((c) => c === 'ip link del vxlan-v6.calico')).toHaveLength(1);
  });
});
