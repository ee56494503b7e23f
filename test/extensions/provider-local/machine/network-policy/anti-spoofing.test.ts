/**
 * The anti-spoofing rules of a pod's port as nft scripts; their packets are the subject of rules.test.ts and the
 * shoot-kubelet e2e.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  allowedSourcePrefixes,
  AntiSpoofing,
  antiSpoofingPortScript,
} from '../../../../../src/extensions/provider-local/machine/network-policy/anti-spoofing.js';
import { which } from '../../../../../src/system/process.js';

const canRunNft = process.getuid?.() === 0 && which('nft') !== undefined && which('ip') !== undefined;

describe("a pod's port on the bridge", () => {
  it('allows its own addresses and the prefixes of its annotation as sources, nothing else', () => {
    const prefixes = allowedSourcePrefixes({
      'cni.projectcalico.org/allowedSourcePrefixes': '["fd00:10:3:0::/56", "10.3.0.0/16", "bad"]',
    });
    expect(prefixes).toEqual(['fd00:10:3::/56', '10.3.0.0/16']);
    expect(allowedSourcePrefixes({ 'cni.projectcalico.org/allowedSourcePrefixes': '{' })).toEqual([]);
    const script = antiSpoofingPortScript({
      hostInterface: 'veth1',
      mac: '0A:00:00:00:00:01',
      ips: ['fd00:1::5', '10.1.0.5'],
      allowedSourcePrefixes: prefixes,
    });
    expect(script).toContain('port-veth1 ether saddr != 0a:00:00:00:00:01 drop');
    expect(script).toContain('port-veth1 ip6 saddr != { ::, fe80::/10, fd00:1::5, fd00:10:3::/56 } drop');
    expect(script).toContain('port-veth1 ip saddr != { 10.1.0.5, 10.3.0.0/16 } drop');
    expect(script).toContain('@th,64,128 != 0xfd000001000000000000000000000005');
    // An IPv6-only pod sends no IPv4 and no ARP.
    expect(antiSpoofingPortScript({ hostInterface: 'veth2', mac: '0a:00:00:00:00:02', ips: ['fd00:1::6'] })).toContain(
      'port-veth2 ether type { arp, ip } drop',
    );
  });
});

describe.runIf(canRunNft)("a pod's port removed twice at once (needs root and nft)", () => {
  it("is removed, and the removal that finds it gone meanwhile doesn't fail", async () => {
    const netns = `gv6-as-${randomBytes(3).toString('hex')}`;
    execFileSync('ip', ['netns', 'add', netns]);
    try {
      const table = new AntiSpoofing(netns);
      await table.add({ hostInterface: 'veth9', mac: '0a:00:00:00:00:09', ips: ['fd00:1::9'] });
      // A sandbox's teardown and the collection of gone ports, at once.
      await Promise.all([table.remove('veth9'), table.collect(() => false), table.remove('veth9')]);
      expect(await table.collect(() => false)).toEqual([]);
      const listed = execFileSync('ip', [
        'netns',
        'exec',
        netns,
        'nft',
        'list',
        'table',
        'bridge',
        'gardener-ipv6-anti-spoofing',
      ]);
      expect(listed.toString()).not.toContain('veth9');
    } finally {
      execFileSync('ip', ['netns', 'del', netns]);
    }
  });
});
