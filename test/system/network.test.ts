import { execFileSync } from 'node:child_process';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { netnsExists, netnsUnsupportedReason } from '../../src/localenv/netns.js';
import { waitFor } from '../support/wait.js';
import {
  attachNamespace,
  bridgeName,
  createNamespace,
  deleteLink,
  ensureBridge,
  hostVethName,
  linkExists,
  netnsName,
  ownerPid,
  removeOrphans,
} from '../../src/system/network.js';

describe('owned names', () => {
  it('carry the owner pid and fit Linux interface names', () => {
    expect(ownerPid(bridgeName('lb', 4194303))).toBe(4194303);
    expect(bridgeName('lb', 4194303).length).toBeLessThanOrEqual(15);
    expect(ownerPid(netnsName('cp', 'abcd', 77))).toBe(77);
    expect(hostVethName(netnsName('cp', 'abcd', 77))).toMatch(/^gv6v[0-9a-f]{11}$/);
    expect(ownerPid('eth0')).toBeUndefined();
    expect(ownerPid('gv6-x')).toBeUndefined();
  });
});

function connectOutcome(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 2_000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve('timeout');
    });
    socket.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

// A pid no process has (beyond pid_max is not possible, so take one that is free right now).
function deadPid(): number {
  for (let pid = 4_000_000; ; pid++) {
    try {
      process.kill(pid, 0);
    } catch {
      return pid;
    }
  }
}

describe.skipIf(netnsUnsupportedReason() !== undefined)('namespaces and bridges (root)', () => {
  it('plugs a namespace into a bridge with an address and a default route per family', async () => {
    const bridge = bridgeName('t1');
    const ns = netnsName('test', 't1');
    try {
      ensureBridge(bridge, ['fd00:ee:1::1/64', '172.31.253.1/24']);
      ensureBridge(bridge, ['fd00:ee:1::1/64', '172.31.253.1/24']);
      createNamespace(ns, { ipv4Loopback: false });
      attachNamespace(ns, {
        bridge,
        addresses: ['fd00:ee:1::5/64', '172.31.253.5/24'],
        gateways: { IPv6: 'fd00:ee:1::1', IPv4: '172.31.253.1' },
      });
      const addrs = execFileSync('ip', ['-n', ns, '-o', 'addr', 'show'], { encoding: 'utf8' });
      expect(addrs).toContain('inet6 fd00:ee:1::5/64');
      expect(addrs).toContain('inet 172.31.253.5/24');
      expect(addrs).not.toContain('127.0.0.1');
      expect(execFileSync('ip', ['-n', ns, '-6', 'route', 'show', 'default'], { encoding: 'utf8' })).toContain(
        'via fd00:ee:1::1',
      );
      // Reachable: a connection to a closed port is refused by the namespace's kernel (no timeout, no unreachable).
      expect(await connectOutcome('fd00:ee:1::5', 9)).toBe('ECONNREFUSED');
      expect(await connectOutcome('172.31.253.5', 9)).toBe('ECONNREFUSED');
    } finally {
      execFileSync('ip', ['netns', 'del', ns]);
      deleteLink(bridge);
    }
    // The kernel tears a deleted namespace down (and with it the veth) asynchronously: slower under load.
    await waitFor(() => !linkExists(hostVethName(ns)), {
      message: `veth ${hostVethName(ns)} to go with its namespace`,
    });
  });

  it('removes namespaces and bridges whose owner is gone, and nothing of a live owner', () => {
    const dead = deadPid();
    const orphanNs = netnsName('cp', 'orphan', dead);
    const orphanBridge = bridgeName('o', dead);
    const mine = netnsName('cp', 'mine');
    createNamespace(orphanNs, { ipv4Loopback: true });
    createNamespace(mine, { ipv4Loopback: true });
    ensureBridge(orphanBridge, []);
    try {
      const removed = removeOrphans();
      expect(removed).toEqual(expect.arrayContaining([orphanNs, orphanBridge]));
      expect(netnsExists(orphanNs)).toBe(false);
      expect(linkExists(orphanBridge)).toBe(false);
      expect(netnsExists(mine)).toBe(true);
    } finally {
      execFileSync('ip', ['netns', 'del', mine]);
    }
  });
});
