/**
 * One decision, three outputs: for every combination of the NetworkConfig's pool switches and every family, the pool
 * settings the machines follow (`pools`) are what calico puts in force: the IPv4 IPPool object's when it is rendered
 * (it beats calico-node's environment), else the environment's; for IPv6 the environment's mode, and the NAT both the
 * environment and the IPPool say.
 */
import { describe, expect, it } from 'vitest';
import type { NetworkConfig } from '../../../src/apis/calico/v1alpha1/config.js';
import type { CalicoPoolSettings } from '../../../src/apis/calico/v1alpha1/pools.js';
import type { CalicoValues } from '../../../src/extensions/network/values.js';
import { valuesOf, type Family } from './fixtures.js';

const MODES = ['Always', 'Never', 'CrossSubnet'] as const;

/** Every combination of the switches the pool decision reads (invalid ones included: the outputs must still agree). */
function* configs(): Generator<NetworkConfig> {
  const overlays = [undefined, { enabled: true }, { enabled: false }, { enabled: false, createPodRoutes: true }];
  const vxlans = [undefined, { enabled: true }, { enabled: false }];
  const ipv4s = [undefined, ...(['ipip', 'vxlan'] as const).flatMap((pool) => MODES.map((mode) => ({ pool, mode })))];
  const ipips = [undefined, ...MODES];
  const ipv6s = [
    undefined,
    ...MODES.flatMap((mode) => [undefined, true, false].map((sourceNATEnabled) => ({ mode, sourceNATEnabled }))),
  ];
  for (const overlay of overlays)
    for (const vxlan of vxlans)
      for (const ipv4 of ipv4s)
        for (const ipip of ipips)
          for (const ipv6 of ipv6s)
            for (const wireguardEncryption of [undefined, true]) {
              yield JSON.parse(
                JSON.stringify({ overlay, vxlan, ipv4, ipip, ipv6, wireguardEncryption }),
              ) as NetworkConfig;
            }
}

const normalMode = (mode: string | undefined): CalicoPoolSettings['mode'] =>
  mode === 'Always' || mode === 'CrossSubnet' ? mode : 'Never';

/** Each family's pool as calico would put it in force from the rendered values. */
function inForce(values: CalicoValues): Partial<Record<'IPv4' | 'IPv6', Omit<CalicoPoolSettings, 'family'>>> {
  const env = Object.fromEntries(values.node.env.map((e) => [e.name, e.value]));
  const ipv4Pool = values.ipPools.find((p) => p.name === 'default-ipv4-ippool');
  const ipv6Pool = values.ipPools.find((p) => p.name === 'default-ipv6-ippool');
  const result: ReturnType<typeof inForce> = {};
  if (env.CALICO_IPV4POOL_CIDR !== undefined) {
    if (ipv4Pool !== undefined) {
      const spec = ipv4Pool.spec as { ipipMode?: string; vxlanMode?: string; natOutgoing?: boolean };
      const vxlan = normalMode(spec.vxlanMode) !== 'Never';
      result.IPv4 = {
        encapsulation: vxlan ? 'VXLAN' : 'IPIP',
        mode: normalMode(vxlan ? spec.vxlanMode : spec.ipipMode),
        natOutgoing: spec.natOutgoing === true,
      };
    } else {
      const vxlan = env.CALICO_IPV4POOL_VXLAN !== undefined;
      result.IPv4 = {
        encapsulation: vxlan ? 'VXLAN' : 'IPIP',
        mode: normalMode(vxlan ? env.CALICO_IPV4POOL_VXLAN : env.CALICO_IPV4POOL_IPIP),
        natOutgoing: env.CALICO_IPV4POOL_NAT_OUTGOING === 'true',
      };
    }
  }
  if (env.CALICO_IPV6POOL_CIDR !== undefined) {
    const natOutgoing = env.CALICO_IPV6POOL_NAT_OUTGOING === 'true';
    expect((ipv6Pool?.spec as { natOutgoing?: boolean } | undefined)?.natOutgoing).toBe(natOutgoing);
    result.IPv6 = { encapsulation: 'VXLAN', mode: normalMode(env.CALICO_IPV6POOL_VXLAN), natOutgoing };
  }
  return result;
}

describe('the calico pool decision', () => {
  it('gives the machines the pools that calico-node and the IPPools put in force, for every switch and family', () => {
    let checked = 0;
    for (const family of ['ipv4', 'ipv6', 'dual'] as const satisfies readonly Family[]) {
      for (const config of configs()) {
        let values: CalicoValues;
        try {
          values = valuesOf(family, config);
        } catch {
          continue; // refused by calicoValues: nothing renders.
        }
        const expected = inForce(values);
        const actual = Object.fromEntries(values.pools.map(({ family: f, ...settings }) => [f, settings]));
        if (JSON.stringify(actual) !== JSON.stringify(expected)) {
          expect({ family, config, pools: actual }).toEqual({ family, config, pools: expected });
        }
        checked++;
      }
    }
    // Most combinations render; a change that refused them all would leave nothing checked.
    expect(checked).toBeGreaterThan(10_000);
  });
});
