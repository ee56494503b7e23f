import { describe, expect, it } from 'vitest';
import {
  CONTROL_PLANE_PEER_TABLE,
  OVERLAY_DEVICE,
  OVERLAY_UNDERLAY_ANNOTATION,
  controlPlanePeerCommands,
  controlPlanePeerMAC,
  controlPlanePeerRuleCommands,
  desiredControlPlanePeers,
  desiredOverlayPeers,
  overlayCommands,
  overlayMAC,
  serviceRouteCommands,
  stableMAC,
} from '../../../../src/extensions/provider-local/machine/overlay.js';
import type { NodeInfo } from '../../../../src/extensions/provider-local/machine/api-client.js';
import { peerLease } from '../../../../src/extensions/provider-local/machine/overlay-peer.js';

const node = (name: string, ips: string[], podCIDRs: string[]): NodeInfo => ({
  metadata: { name },
  spec: { podCIDRs },
  status: { addresses: ips.map((address) => ({ type: 'InternalIP', address })) },
});

describe('VXLAN overlay between machine pods', () => {
  it("on machines carries only the Nodes' addresses: the pod network routes the podCIDRs", () => {
    const annotated = (name: string, underlay: string, ips: string[], podCIDRs: string[]): NodeInfo => ({
      ...node(name, ips, podCIDRs),
      metadata: { name, annotations: { [OVERLAY_UNDERLAY_ANNOTATION]: underlay } },
    });
    const nodes = [
      annotated('m-0', 'fd00:10:1::5', ['fd00:fe::a'], ['fd00:10:3::/64']),
      annotated('m-1', 'fd00:10:1::7', ['fd00:fe::b', '10.10.0.11'], ['fd00:10:3:1::/64', '10.3.1.0/24']),
      annotated('m-2', 'fd00:10:1::9', ['fd00:fe::c'], []),
    ];
    const peers = desiredOverlayPeers('m-0', nodes, 'IPv6', false);
    expect(peers.map((p) => [p.node, p.addresses, p.routes])).toEqual([
      ['m-1', ['fd00:fe::b', '10.10.0.11'], []],
      ['m-2', ['fd00:fe::c'], []],
    ]);
    expect(overlayCommands([], peers).some((c) => c.includes('fd00:10:3:1::/64'))).toBe(false);
  });

  it('derives a stable, locally administered unicast MAC per Node', () => {
    const mac = overlayMAC('machine-worker-0');
    expect(mac).toMatch(/^([0-9a-f]{2}:){5}[0-9a-f]{2}$/);
    expect(parseInt(mac.slice(0, 2), 16) & 0b11).toBe(0b10);
    expect(overlayMAC('machine-worker-0')).toBe(mac);
    expect(overlayMAC('machine-worker-1')).not.toBe(mac);
    expect(stableMAC('x')).not.toBe(stableMAC('y'));
  });

  it('routes every other Node podCIDR via its gateway, over the underlay family of its InternalIPs', () => {
    const nodes = [
      node('m-0', ['fd00:10:1::5'], ['fd00:10:3::/64']),
      node('m-1', ['fd00:10:1:1::7', '10.1.0.7'], ['fd00:10:3:1::/64', '10.3.1.0/24']),
      node('m-2', ['fd00:10:1::9'], []),
      node('m-3', ['10.1.0.9'], ['fd00:10:3:3::/64']),
    ];
    expect(desiredOverlayPeers('m-0', nodes, 'IPv6')).toEqual([
      {
        node: 'm-1',
        mac: overlayMAC('m-1'),
        underlayIP: 'fd00:10:1:1::7',
        addresses: [],
        routes: [
          { cidr: 'fd00:10:3:1::/64', gateway: 'fd00:10:3:1::1' },
          { cidr: '10.3.1.0/24', gateway: '10.3.1.1' },
        ],
      },
    ]);
    expect(desiredOverlayPeers('m-0', nodes, 'IPv4').map((p) => [p.node, p.underlayIP])).toEqual([
      ['m-1', '10.1.0.7'],
      ['m-3', '10.1.0.9'],
    ]);
  });

  it("reaches a machine pod's Node at its published underlay, with host routes to its InternalIPs", () => {
    const annotated = (n: NodeInfo, underlay: string): NodeInfo => ({
      ...n,
      metadata: { ...n.metadata, annotations: { [OVERLAY_UNDERLAY_ANNOTATION]: underlay } },
    });
    const nodes = [
      annotated(node('m-1', ['fd00:10:1:100::b', '10.10.0.11'], ['fd00:10:3:1::/64']), 'fd00:10:1:0:0:0:0:7'),
      annotated(node('m-2', ['fd00:10:1:100::c'], ['fd00:10:3:2::/64']), '10.1.0.9'),
    ];
    const peers = desiredOverlayPeers('m-0', nodes, 'IPv6');
    // m-2's underlay is of the other family: not reachable over this one, not even at its InternalIP.
    expect(peers.map((p) => [p.node, p.underlayIP, p.addresses])).toEqual([
      ['m-1', 'fd00:10:1::7', ['fd00:10:1:100::b', '10.10.0.11']],
    ]);
    const mac = overlayMAC('m-1');
    const commands = overlayCommands([], peers);
    expect(commands).toContainEqual(['bridge', 'fdb', 'replace', mac, 'dev', OVERLAY_DEVICE, 'dst', 'fd00:10:1::7']);
    expect(commands.slice(-4)).toEqual([
      ['ip', 'neigh', 'replace', 'fd00:10:1:100::b', 'lladdr', mac, 'dev', OVERLAY_DEVICE, 'nud', 'permanent'],
      ['ip', 'route', 'replace', 'fd00:10:1:100::b/128', 'dev', OVERLAY_DEVICE],
      ['ip', 'neigh', 'replace', '10.10.0.11', 'lladdr', mac, 'dev', OVERLAY_DEVICE, 'nud', 'permanent'],
      ['ip', 'route', 'replace', '10.10.0.11/32', 'dev', OVERLAY_DEVICE],
    ]);
    expect(overlayCommands(peers, []).slice(1, 5)).toEqual([
      ['ip', 'neigh', 'del', 'fd00:10:3:1::1', 'dev', OVERLAY_DEVICE],
      ['ip', 'route', 'del', 'fd00:10:1:100::b/128', 'dev', OVERLAY_DEVICE],
      ['ip', 'neigh', 'del', 'fd00:10:1:100::b', 'dev', OVERLAY_DEVICE],
      ['ip', 'route', 'del', '10.10.0.11/32', 'dev', OVERLAY_DEVICE],
    ]);
  });

  it('programs new peers and removes gone ones, leaving unchanged ones alone', () => {
    const a = desiredOverlayPeers('self', [node('a', ['fd00::a'], ['fd00:3::/64'])], 'IPv6');
    const b = desiredOverlayPeers('self', [node('b', ['fd00::b'], ['fd00:3:1::/64'])], 'IPv6');
    expect(overlayCommands([], a)).toEqual([
      ['bridge', 'fdb', 'replace', overlayMAC('a'), 'dev', OVERLAY_DEVICE, 'dst', 'fd00::a'],
      ['ip', 'neigh', 'replace', 'fd00:3::1', 'lladdr', overlayMAC('a'), 'dev', OVERLAY_DEVICE, 'nud', 'permanent'],
      ['ip', 'route', 'replace', 'fd00:3::/64', 'via', 'fd00:3::1', 'dev', OVERLAY_DEVICE, 'onlink'],
    ]);
    expect(overlayCommands(a, a)).toEqual([]);
    const moved = overlayCommands(a, b);
    expect(moved.slice(0, 3)).toEqual([
      ['ip', 'route', 'del', 'fd00:3::/64', 'dev', OVERLAY_DEVICE],
      ['ip', 'neigh', 'del', 'fd00:3::1', 'dev', OVERLAY_DEVICE],
      ['bridge', 'fdb', 'del', overlayMAC('a'), 'dev', OVERLAY_DEVICE, 'dst', 'fd00::a'],
    ]);
    expect(moved.slice(3).map((c) => c.slice(0, 3).join(' '))).toEqual([
      'bridge fdb replace',
      'ip neigh replace',
      'ip route replace',
    ]);
  });

  it("routes a control plane pod's service ranges via the first Node's pod gateway of each family", () => {
    const peers = desiredOverlayPeers(
      'control-plane/kube-apiserver-0',
      [node('m-1', ['fd00::b'], ['fd00:3:1::/64', '10.3.1.0/24']), node('m-0', ['fd00::a'], ['fd00:3::/64'])],
      'IPv6',
    );
    expect(serviceRouteCommands(['fd00:4::/112', '10.4.0.0/16', '10.5.0.0/16'], peers)).toEqual([
      ['ip', 'route', 'replace', 'fd00:4::/112', 'via', 'fd00:3::1', 'dev', OVERLAY_DEVICE, 'onlink'],
      ['ip', 'route', 'replace', '10.4.0.0/16', 'via', '10.3.1.1', 'dev', OVERLAY_DEVICE, 'onlink'],
      ['ip', 'route', 'replace', '10.5.0.0/16', 'via', '10.3.1.1', 'dev', OVERLAY_DEVICE, 'onlink'],
    ]);
    expect(serviceRouteCommands(['fd00:4::/112'], [])).toEqual([]);
  });
});

describe('control plane peers in the overlay', () => {
  const now = Date.parse('2026-11-26T07:00:00Z');
  const lease = (pod: string, underlay: string, podIPs: string[], renewed: number) =>
    peerLease(pod, underlay, podIPs, new Date(renewed)) as unknown as Parameters<
      typeof desiredControlPlanePeers
    >[0][number];

  it('reads the peers of fresh Leases of the underlay family, with every pod address, and drops stale ones', () => {
    const leases = [
      lease('kube-apiserver-b', 'fd00:10:1::c', ['fd00:10:1::c', '10.1.0.12'], now - 5_000),
      lease('kube-apiserver-a', 'fd00:10:1::9', ['fd00:10:1::9'], now - 39_000),
      lease('kube-apiserver-old', 'fd00:10:1::7', ['fd00:10:1::7'], now - 41_000),
      lease('kube-apiserver-v4', '10.1.0.3', ['10.1.0.3'], now),
    ];
    expect(desiredControlPlanePeers(leases, 'IPv6', now)).toEqual([
      {
        name: 'kube-apiserver-a',
        mac: controlPlanePeerMAC('kube-apiserver-a'),
        underlayIP: 'fd00:10:1::9',
        addresses: ['fd00:10:1::9'],
      },
      {
        name: 'kube-apiserver-b',
        mac: controlPlanePeerMAC('kube-apiserver-b'),
        underlayIP: 'fd00:10:1::c',
        addresses: ['10.1.0.12', 'fd00:10:1::c'],
      },
    ]);
    expect(desiredControlPlanePeers(leases, 'IPv4', now).map((p) => p.name)).toEqual(['kube-apiserver-v4']);
  });

  it('skips Leases without a holder, a parseable renewal or an underlay address', () => {
    const broken = lease('x', 'fd00:10:1::c', ['fd00:10:1::c'], now);
    const spec = broken.spec!;
    expect(desiredControlPlanePeers([{ ...broken, spec: { ...spec, holderIdentity: '' } }], 'IPv6', now)).toEqual([]);
    expect(desiredControlPlanePeers([{ ...broken, spec: { ...spec, renewTime: 'soon' } }], 'IPv6', now)).toEqual([]);
    expect(desiredControlPlanePeers([{ ...broken, metadata: { name: 'x' } }], 'IPv6', now)).toEqual([]);
  });

  it("routes a peer's addresses through the overlay in the peers' table, and removes a gone peer's", () => {
    const peer = desiredControlPlanePeers(
      [lease('kube-apiserver-b', 'fd00:10:1::c', ['fd00:10:1::c'], now)],
      'IPv6',
      now,
    );
    const mac = controlPlanePeerMAC('kube-apiserver-b');
    const add = controlPlanePeerCommands([], peer);
    expect(add).toEqual([
      ['bridge', 'fdb', 'replace', mac, 'dev', OVERLAY_DEVICE, 'dst', 'fd00:10:1::c'],
      ['ip', 'neigh', 'replace', 'fd00:10:1::c', 'lladdr', mac, 'dev', OVERLAY_DEVICE, 'nud', 'permanent'],
      ['ip', 'route', 'replace', 'fd00:10:1::c/128', 'dev', OVERLAY_DEVICE, 'table', CONTROL_PLANE_PEER_TABLE],
    ]);
    expect(controlPlanePeerCommands(peer, peer)).toEqual([]);
    expect(controlPlanePeerCommands(peer, [])).toEqual([
      ['ip', 'route', 'del', 'fd00:10:1::c/128', 'dev', OVERLAY_DEVICE, 'table', CONTROL_PLANE_PEER_TABLE],
      ['ip', 'neigh', 'del', 'fd00:10:1::c', 'dev', OVERLAY_DEVICE],
      ['bridge', 'fdb', 'del', mac, 'dev', OVERLAY_DEVICE, 'dst', 'fd00:10:1::c'],
    ]);
  });

  it("keeps the machine's own encapsulated packets out of the peers' table", () => {
    expect(controlPlanePeerRuleCommands('fd00:10:1::f')).toEqual([
      ['ip', '-6', 'rule', 'add', 'not', 'from', 'fd00:10:1::f/128', 'lookup', '4096', 'priority', '4096'],
      ['ip', '-4', 'rule', 'add', 'lookup', '4096', 'priority', '4096'],
    ]);
    expect(controlPlanePeerRuleCommands('10.1.0.15')[0]).toEqual([
      'ip',
      '-4',
      'rule',
      'add',
      'not',
      'from',
      '10.1.0.15/32',
      'lookup',
      '4096',
      'priority',
      '4096',
    ]);
  });

  it('publishes a Lease whose renewal is a MicroTime', () => {
    const published = peerLease('kube-apiserver-b', 'fd00:10:1::c', ['fd00:10:1::c'], new Date(now)) as {
      metadata: { name: string; namespace: string };
      spec: { renewTime: string };
    };
    expect(published.metadata).toMatchObject({ name: 'overlay-peer-kube-apiserver-b', namespace: 'kube-system' });
    expect(published.spec.renewTime).toBe('2026-11-26T07:00:00.000000Z');
  });
});
