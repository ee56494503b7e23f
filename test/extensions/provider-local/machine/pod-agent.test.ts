import { describe, expect, it } from 'vitest';
import {
  machineIndex,
  machineOptions,
  machineTopologyLabels,
  MACHINE_POD_PATHS,
  nodeAddresses,
  serveReadiness,
  underlayAddress,
} from '../../../../src/extensions/provider-local/machine/pod-agent.js';
import { MACHINE_READINESS } from '../../../../src/extensions/provider-local/machine-contract.js';
import { parseMachineUserData } from '../../../../src/apis/provider-local/v1alpha1/machine-user-data.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

describe('a machine pod underlay', () => {
  it("is the pod's address of the shoot's primary family, in RFC 5952 form", () => {
    expect(underlayAddress(['IPv6', 'IPv4'], ['10.1.0.5', 'fd00:10:1:0:0:0:0:5'])).toBe('fd00:10:1::5');
    expect(underlayAddress(['IPv4', 'IPv6'], ['10.1.0.5', 'fd00:10:1::5'])).toBe('10.1.0.5');
  });

  it('is refused without the primary family, and for a malformed address', () => {
    expect(() => underlayAddress(['IPv4', 'IPv6'], ['fd00:10:1::5'])).toThrow(/no IPv4 address/);
    expect(() => underlayAddress(['IPv6'], ['fd00::zz'])).toThrow(/POD_IPS: "fd00::zz" is not an IP address/);
  });
});

describe("a machine pod's Node topology labels", () => {
  it("spread a pool's machines over its zones by ordinal, the first zones taking one more, with the region", () => {
    const zoneOf = (i: number, zones: string[]) =>
      machineTopologyLabels(`machine-w-${i}`, zones, 'local')['topology.kubernetes.io/zone'];
    expect([0, 1, 2, 3, 4].map((i) => zoneOf(i, ['0', '1', '2']))).toEqual(['0', '1', '2', '0', '1']);
    expect(machineTopologyLabels('machine-w-4', ['a', 'b'], 'local')).toEqual({
      'topology.kubernetes.io/region': 'local',
      'topology.kubernetes.io/zone': 'a',
    });
  });

  it('are the region alone for a pool without zones, and none without a region either', () => {
    expect(machineTopologyLabels('machine-w-0', [], 'local')).toEqual({ 'topology.kubernetes.io/region': 'local' });
    expect(machineTopologyLabels('machine-w-0')).toEqual({});
  });
});

describe("a machine pod's Node addresses", () => {
  it("come from the shoot's node ranges: the pool's first machine plus the pod's ordinal, 10 into the range", () => {
    expect(machineIndex('machine-local-0', 0)).toBe(0);
    expect(machineIndex('machine-b-2', 5)).toBe(7);
    expect(nodeAddresses(['IPv6'], ['fd00:10:1:100::/56'], 0)).toEqual(['fd00:10:1:100::a/128']);
    expect(nodeAddresses(['IPv4', 'IPv6'], ['10.10.0.0/16', 'fd00:fe::/64'], 7)).toEqual([
      '10.10.0.17/32',
      'fd00:fe::11/128',
    ]);
  });

  it('are refused for a pod name without an ordinal and past the end of a range', () => {
    expect(() => machineIndex('machine-local', 0)).toThrow(/no ordinal/);
    expect(() => nodeAddresses(['IPv4'], ['10.10.0.0/28'], 6)).toThrow(/no room for machine 6/);
  });

  it('make the machine: Node addresses on the overlay, the pod address under it, every shoot family', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pod-agent-'));
    try {
      const userData = parseMachineUserData(
        JSON.stringify({
          apiVersion: 'local.provider.extensions.gardener.cloud/v1alpha1',
          kind: 'MachineUserData',
          apiServer: { url: 'https://[fd00:ff::10]:443', caPEM: 'x' },
          bootstrapToken: 'abcdef.0123456789abcdef',
          families: ['IPv6', 'IPv4'],
          clusterDNS: ['fd00:10:4::a'],
          podCIDRs: ['fd00:10:3::/56', '10.3.0.0/16'],
          serviceCIDRs: ['fd00:10:4::/112', '10.4.0.0/16'],
        }),
      );
      const options = machineOptions(
        {
          nodeName: 'machine-local-1',
          podIPs: ['fd00:10:1::7'],
          nodeCIDRs: ['fd00:10:1:100::/56', '10.10.0.0/16'],
          firstMachine: 0,
          log: () => {},
        },
        userData,
        { ...MACHINE_POD_PATHS, imagesDir: dir },
      );
      expect(options.addresses).toEqual(['fd00:10:1:100::b/128', '10.10.0.11/32']);
      expect(options.underlay).toBe('fd00:10:1::7');
      expect(options.families).toEqual(['IPv6', 'IPv4']);
      expect(options.attachment).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a machine pod's readiness endpoint", () => {
  it('answers 503 with why the machine is not ready, then 200 once it is, on IPv6', async () => {
    let reason: string | undefined = 'no Ready Node yet';
    const server = await serveReadiness(0, () => reason);
    try {
      const { port } = server.address() as { port: number };
      const url = `http://[::1]:${port}${MACHINE_READINESS.path}`;
      const notReady = await fetch(url);
      expect([notReady.status, (await notReady.text()).trim()]).toEqual([503, 'no Ready Node yet']);
      reason = undefined;
      const ready = await fetch(url);
      expect([ready.status, (await ready.text()).trim()]).toEqual([200, 'ready']);
      expect((await fetch(`http://[::1]:${port}/other`)).status).toBe(404);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
