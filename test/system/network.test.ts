import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { netnsExists, netnsUnsupportedReason } from '../../src/system/netns.js';
import { which } from '../../src/system/process.js';
import {
  allowForwardingPastDocker,
  bridgeName,
  createNamespace,
  ensureBridge,
  hostVethName,
  linkExists,
  netnsName,
  ownerPid,
  removeForwardingPastDocker,
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

describe.skipIf(netnsUnsupportedReason() !== undefined || which('iptables') === undefined)(
  "the exception in Docker's DOCKER-USER chain (root, iptables)",
  () => {
    it('is inserted once per direction where the chain exists, and removed entirely', () => {
      const ns = netnsName('fw', 'docker');
      createNamespace(ns, { ipv4Loopback: true });
      const rules = () =>
        execFileSync('ip', ['netns', 'exec', ns, 'iptables', '-w', '-S', 'DOCKER-USER'], { encoding: 'utf8' })
          .split('\n')
          .filter((l) => l.includes('gv6b+'));
      try {
        // Without Docker's chain: nothing to do, nothing created.
        allowForwardingPastDocker(ns);
        expect(() => rules()).toThrow();
        // As Docker leaves a host: FORWARD dropping, DOCKER-USER jumped to first.
        const iptables = (...args: string[]) => execFileSync('ip', ['netns', 'exec', ns, 'iptables', '-w', ...args]);
        iptables('-P', 'FORWARD', 'DROP');
        iptables('-N', 'DOCKER-USER');
        iptables('-I', 'FORWARD', '-j', 'DOCKER-USER');
        allowForwardingPastDocker(ns);
        allowForwardingPastDocker(ns);
        expect(rules()).toEqual([
          '-A DOCKER-USER -o gv6b+ -m comment --comment "gardener-ipv6 bridges" -j ACCEPT',
          '-A DOCKER-USER -i gv6b+ -m comment --comment "gardener-ipv6 bridges" -j ACCEPT',
        ]);
        removeForwardingPastDocker(ns);
        expect(rules()).toEqual([]);
      } finally {
        execFileSync('ip', ['netns', 'del', ns]);
      }
    });
  },
);
