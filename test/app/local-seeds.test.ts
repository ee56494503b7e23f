/**
 * The seeds `up --seeds` knows: the flag's list, and each seed's Seed and what its Nodes and load balancers are
 * made of, checked against the API's validation and against each other (one host carries every seed's networks).
 */
import { describe, expect, it } from 'vitest';
import { admit } from '../../src/apis/admission.js';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import { validateSeed } from '../../src/apis/core/v1beta1/validation/seed.js';
import { example } from '../../src/app/local-environment.js';
import { LOCAL_SEED_KINDS, localSeed, parseSeedsOption } from '../../src/app/local-seeds.js';
import { featureGates } from '../../src/featuregate/featuregate.js';
import { formatCIDR, mustParseCIDR, overlaps } from '../../src/net/cidr.js';

const gates = featureGates({ IPv6SingleStack: true, DualStack: true });

describe('--seeds', () => {
  it.each([
    ['ipv6', ['ipv6']],
    ['ipv6,dual-stack', ['ipv6', 'dual-stack']],
    [' ipv6 , dual-stack ', ['ipv6', 'dual-stack']],
    // The dual-stack seed as the garden's own cluster: up's environment to rehearse a migration in.
    ['dual-stack', ['dual-stack']],
    ['dual-stack,ipv6', ['dual-stack', 'ipv6']],
    // The dual-stack seed of IPv6 first: to rehearse [IPv6] → [IPv6, IPv4].
    ['dual-stack-ipv6', ['dual-stack-ipv6']],
    ['ipv6,dual-stack,dual-stack-ipv6', ['ipv6', 'dual-stack', 'dual-stack-ipv6']],
  ])('%j is %j', (list, kinds) => {
    expect(parseSeedsOption(list)).toEqual(kinds);
  });

  it.each([
    ['', /a comma-separated list of ipv6, dual-stack, dual-stack-ipv6/],
    ['ipv6,ipv4', /unknown seed "ipv4": one of ipv6, dual-stack, dual-stack-ipv6/],
    ['ipv6,dual-stack,ipv6', /ipv6 is listed twice/],
  ])('refuses %j, saying why', (list, message) => {
    expect(() => parseSeedsOption(list)).toThrow(message);
  });
});

describe('the local seeds', () => {
  const seeds = LOCAL_SEED_KINDS.map(localSeed);

  it("are the examples' Seeds, valid, with their families' ranges for the Nodes", () => {
    expect(seeds.map((s) => s.seed.metadata?.name)).toEqual(['local-ipv6', 'local-dual', 'local-dual6']);
    for (const { seed, networks } of seeds) {
      expect(validateSeed(seed, gates)).toEqual([]);
      expect(networks.families).toEqual(seed.spec.networks?.ipFamilies);
      // The Seed's own ranges are the primary family's.
      expect(networks.nodes[0]).toBe(seed.spec.networks?.nodes);
      expect(networks.pods[0]).toBe(seed.spec.networks?.pods);
      expect(networks.services[0]).toBe(seed.spec.networks?.services);
    }
    expect(seeds[1]!.networks).toEqual({
      families: ['IPv4', 'IPv6'],
      nodes: ['10.18.0.0/24', 'fd00:11::/64'],
      pods: ['10.1.0.0/16', 'fd00:11:1::/56'],
      services: ['10.2.0.0/16', 'fd00:11:2::/112'],
    });
    expect(seeds[2]!.networks).toEqual({
      families: ['IPv6', 'IPv4'],
      nodes: ['fd00:12::/64', '10.16.0.0/24'],
      pods: ['fd00:12:1::/56', '10.14.0.0/16'],
      services: ['fd00:12:2::/112', '10.15.0.0/16'],
    });
  });

  it("keep every range of one apart from every range of another, and from kind's Docker network", () => {
    // Each seed's own ranges, the example shoot's own ones, and the default seed's shootDefaults, which its example
    // shoot takes (other seeds' shootDefaults may repeat: a shoot's pods live in its machines).
    const rangesOf = (i: number) => {
      const { networks, loadBalancerNetworks, seed, exampleShootNetworking } = seeds[i]!;
      const defaults = seed.spec.networks?.shootDefaults;
      return [
        ...networks.nodes,
        ...networks.pods,
        ...networks.services,
        ...Object.values(loadBalancerNetworks),
        ...(exampleShootNetworking ? Object.values(exampleShootNetworking) : []),
        ...(i === 0 ? [defaults?.pods, defaults?.services] : []),
      ]
        .filter((c): c is string => c !== undefined)
        .map((c) => mustParseCIDR(c));
    };
    for (let i = 0; i < seeds.length; i++) {
      for (let j = i + 1; j < seeds.length; j++) {
        for (const a of rangesOf(i)) {
          for (const b of rangesOf(j)) expect(overlaps(a, b), `${formatCIDR(a)} and ${formatCIDR(b)}`).toBe(false);
        }
      }
      if (i > 0) {
        for (const c of rangesOf(i)) expect(overlaps(c, mustParseCIDR('172.18.0.0/16')), formatCIDR(c)).toBe(false);
      }
    }
  });

  it('give up an example shoot of a family each has: IPv6, IPv4 (to migrate) on the dual-stack one, IPv6 (to migrate) on the one of IPv6 first', () => {
    expect(seeds.map((s) => s.exampleShoot)).toEqual(['shoot-ipv6.yaml', 'shoot-ipv4.yaml', 'shoot-ipv6.yaml']);
  });

  it('give example shoots that their seed admits, and admits migrated to dual-stack', () => {
    for (const { seed, exampleShoot, exampleShootNetworking } of seeds) {
      const shoot = example(exampleShoot) as Shoot;
      shoot.spec.seedName = seed.metadata?.name;
      shoot.spec.networking = { ...shoot.spec.networking, ...exampleShootNetworking };
      const created = admit({ object: shoot, seed, gates });
      expect(created.errors.map((e) => `${e.field}: ${e.detail}`)).toEqual([]);
      const families = (created.object as Shoot).spec.networking!.ipFamilies!;
      const seedFamilies = seed.spec.networks!.ipFamilies!;
      if (seedFamilies.length < 2) continue;
      const migrated = structuredClone(created.object as Shoot);
      migrated.spec.networking!.ipFamilies = [families[0]!, seedFamilies.find((f) => f !== families[0])!];
      const update = admit({ object: migrated, oldObject: created.object, seed, gates });
      expect(update.errors.map((e) => `${e.field}: ${e.detail}`)).toEqual([]);
    }
  });

  it('name their bridges and Nodes apart', () => {
    expect(new Set(seeds.map((s) => s.tag)).size).toBe(seeds.length);
    expect(new Set(seeds.map((s) => s.nodeNamePrefix)).size).toBe(seeds.length);
  });
});
