/**
 * The seeds `up --seeds` knows: the flag's list, and each seed's Seed and what its Nodes and load balancers are
 * made of, checked against the API's validation and against each other (one host carries every seed's networks).
 */
import { describe, expect, it } from 'vitest';
import { validateSeed } from '../../src/apis/core/v1beta1/validation/seed.js';
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
  ])('%j is %j', (list, kinds) => {
    expect(parseSeedsOption(list)).toEqual(kinds);
  });

  it.each([
    ['', /a comma-separated list of ipv6, dual-stack/],
    ['ipv6,ipv4', /unknown seed "ipv4": one of ipv6, dual-stack/],
    ['ipv6,dual-stack,ipv6', /ipv6 is listed twice/],
  ])('refuses %j, saying why', (list, message) => {
    expect(() => parseSeedsOption(list)).toThrow(message);
  });
});

describe('the local seeds', () => {
  const seeds = LOCAL_SEED_KINDS.map(localSeed);

  it("are the examples' Seeds, valid, with their families' ranges for the Nodes", () => {
    expect(seeds.map((s) => s.seed.metadata?.name)).toEqual(['local-ipv6', 'local-dual']);
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
  });

  it("keep every range of one apart from every range of another, and from kind's Docker network", () => {
    const rangesOf = (i: number) => {
      const { networks, loadBalancerNetworks, seed } = seeds[i]!;
      return [
        ...networks.nodes,
        ...networks.pods,
        ...networks.services,
        ...Object.values(loadBalancerNetworks),
        ...(i === 0
          ? [seed.spec.networks?.shootDefaults?.pods ?? '', seed.spec.networks?.shootDefaults?.services ?? '']
          : []),
      ].map((c) => mustParseCIDR(c));
    };
    const [first, second] = [rangesOf(0), rangesOf(1)];
    for (const a of first)
      for (const b of second) expect(overlaps(a, b), `${formatCIDR(a)} and ${formatCIDR(b)}`).toBe(false);
    for (const c of second) expect(overlaps(c, mustParseCIDR('172.18.0.0/16')), formatCIDR(c)).toBe(false);
  });

  it('give up an example shoot of a family each has: IPv6, and IPv4 (to migrate) on the dual-stack one', () => {
    expect(seeds.map((s) => s.exampleShoot)).toEqual(['shoot-ipv6.yaml', 'shoot-ipv4.yaml']);
  });

  it('name their bridges and Nodes apart', () => {
    expect(new Set(seeds.map((s) => s.tag)).size).toBe(seeds.length);
    expect(new Set(seeds.map((s) => s.nodeNamePrefix)).size).toBe(seeds.length);
  });
});
