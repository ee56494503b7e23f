/**
 * Shoot rules in the context of its seed (docs/api-reference.md, "A Shoot with its seed"): families, the seed's
 * shoot defaults, disjointness from the seed's ranges and from the VPN range. End to end through
 * `admit({ object, seed })`.
 */
import { describe, expect, it } from 'vitest';
import { admit, UnknownKindError } from '../../../../src/apis/admission.js';
import { applySeedShootDefaults, defaultSeed, defaultShoot } from '../../../../src/apis/core/v1beta1/defaults.js';
import type { Seed, SeedNetworks } from '../../../../src/apis/core/v1beta1/seed.js';
import type { Shoot } from '../../../../src/apis/core/v1beta1/shoot.js';
import { validateShootAgainstSeed } from '../../../../src/apis/core/v1beta1/validation/shoot.js';
import type { FeatureGates } from '../../../../src/featuregate/featuregate.js';
import {
  causesOf,
  dualStackShootObject,
  gateSets,
  ipv4ShootObject,
  ipv6ShootObject,
  seedDualStackNetworks,
  seedIPv4Networks,
  seedIPv6Networks,
  seedObject,
  SHOOT_IPV4_RANGES,
  SHOOT_IPV6_RANGES,
  shootNetworking,
  shootObject,
  type Cause,
} from '../../../fixtures/objects.js';

const NET = 'spec.networking';

const ipv4Seed = (networks: Partial<SeedNetworks> = {}, name?: string) => seedObject(networks, { name });
const ipv6Seed = (networks: Partial<SeedNetworks> = {}) => seedObject(networks, { base: seedIPv6Networks });
const dualStackSeed = (networks: Partial<SeedNetworks> = {}) => seedObject(networks, { base: seedDualStackNetworks });

function admitOnSeed(object: Shoot, seed: Seed, gates: FeatureGates = gateSets.all) {
  const result = admit({ object, seed, gates });
  return { causes: causesOf(result.errors), networking: shootNetworking(result.object) };
}

const invalid = (field: string, message: string): Cause => ({ field, reason: 'FieldValueInvalid', message });
const required = (field: string, message: string): Cause => ({ field, reason: 'FieldValueRequired', message });
const familiesForbidden = (shoot: string, seed: string, name = 'seed-a'): Cause => ({
  field: 'spec.seedName',
  reason: 'FieldValueForbidden',
  message: `Forbidden: seed "${name}" does not support IP families [${shoot}] of the shoot (seed: [${seed}])`,
});

describe('Shoot on a seed: IP families must be a subset of the seed families', () => {
  it.each<[string, Shoot, Seed, Cause[]]>([
    ['IPv4 shoot on an IPv4 seed', ipv4ShootObject(), ipv4Seed(), []],
    [
      'IPv4 shoot (families defaulted) on a seed with families defaulted',
      ipv4ShootObject({ ipFamilies: [] }),
      ipv4Seed({ ipFamilies: undefined }),
      [],
    ],
    ['IPv6 shoot on an IPv6 seed', ipv6ShootObject(), ipv6Seed(), []],
    ['IPv6 shoot on an IPv4 seed', ipv6ShootObject(), ipv4Seed(), [familiesForbidden('IPv6', 'IPv4')]],
    [
      'IPv6 shoot on a seed with families defaulted',
      ipv6ShootObject(),
      ipv4Seed({ ipFamilies: [] }),
      [familiesForbidden('IPv6', 'IPv4')],
    ],
    ['IPv4 shoot on an IPv6 seed', ipv4ShootObject(), ipv6Seed(), [familiesForbidden('IPv4', 'IPv6')]],
    [
      '[IPv4, IPv6] shoot on an IPv4 seed',
      dualStackShootObject(),
      ipv4Seed(),
      [familiesForbidden('IPv4 IPv6', 'IPv4')],
    ],
    [
      '[IPv6, IPv4] shoot on an IPv6 seed',
      shootObject({ ipFamilies: ['IPv6', 'IPv4'], ...SHOOT_IPV6_RANGES }),
      ipv6Seed(),
      [familiesForbidden('IPv6 IPv4', 'IPv6')],
    ],
    ['IPv4 shoot on a dual-stack seed', ipv4ShootObject(), dualStackSeed(), []],
    ['IPv6 shoot on a dual-stack seed', ipv6ShootObject(), dualStackSeed(), []],
    ['[IPv4, IPv6] shoot on a dual-stack seed', dualStackShootObject(), dualStackSeed(), []],
    [
      '[IPv6, IPv4] shoot on an [IPv4, IPv6] seed (order does not matter)',
      shootObject({ ipFamilies: ['IPv6', 'IPv4'], ...SHOOT_IPV6_RANGES }),
      dualStackSeed(),
      [],
    ],
    [
      'the seed is named by its metadata.name',
      ipv6ShootObject(),
      ipv4Seed({}, 'aws-eu1'),
      [familiesForbidden('IPv6', 'IPv4', 'aws-eu1')],
    ],
  ])('%s', (_, object, seed, expected) => {
    expect(admitOnSeed(object, seed).causes).toEqual(expected);
  });
});

describe("Shoot on a seed: missing pods and services from the seed's shoot defaults", () => {
  const PODS_REQUIRED = required(`${NET}.pods`, 'Required value: pods is required');
  const SERVICES_REQUIRED = required(`${NET}.services`, 'Required value: services is required');
  const V4 = { pods: '100.96.0.0/11', services: '100.64.0.0/13' };
  const V6 = { pods: 'fd00:10:3::/56', services: 'fd00:10:4::/112' };

  it.each<[string, Shoot, Seed, { pods?: string; services?: string }, Cause[]]>([
    [
      'IPv4 shoot, IPv4 defaults: both taken',
      ipv4ShootObject({ pods: undefined, services: undefined }),
      ipv4Seed({ shootDefaults: V4 }),
      V4,
      [],
    ],
    [
      'IPv4 shoot, only pods missing',
      ipv4ShootObject({ pods: undefined }),
      ipv4Seed({ shootDefaults: V4 }),
      { pods: V4.pods, services: SHOOT_IPV4_RANGES.services },
      [],
    ],
    [
      'set ranges are not overwritten',
      ipv4ShootObject({ pods: '100.128.0.0/11', services: '100.72.0.0/13' }),
      ipv4Seed({ shootDefaults: V4 }),
      { pods: '100.128.0.0/11', services: '100.72.0.0/13' },
      [],
    ],
    [
      'no shoot defaults: both required',
      ipv4ShootObject({ pods: undefined, services: undefined }),
      ipv4Seed({ shootDefaults: undefined }),
      {},
      [PODS_REQUIRED, SERVICES_REQUIRED],
    ],
    [
      'shoot defaults without pods: pods required',
      ipv4ShootObject({ pods: undefined, services: undefined }),
      ipv4Seed({ shootDefaults: { services: V4.services } }),
      { services: V4.services },
      [PODS_REQUIRED],
    ],
    [
      'IPv6 shoot, IPv6 defaults: both taken',
      ipv6ShootObject({ pods: undefined, services: undefined }),
      ipv6Seed({ shootDefaults: V6 }),
      V6,
      [],
    ],
    [
      'IPv6 shoot, IPv4 defaults (dual-stack seed): neither taken',
      ipv6ShootObject({ pods: undefined, services: undefined }),
      dualStackSeed({ shootDefaults: V4 }),
      {},
      [PODS_REQUIRED, SERVICES_REQUIRED],
    ],
    [
      'IPv4 shoot, IPv6 pods and IPv4 services defaults: services taken',
      ipv4ShootObject({ pods: undefined, services: undefined }),
      dualStackSeed({ shootDefaults: { pods: V6.pods, services: V4.services } }),
      { services: V4.services },
      [PODS_REQUIRED],
    ],
    [
      '[IPv4, IPv6] shoot, IPv4 defaults: primary family, taken',
      dualStackShootObject({ pods: undefined, services: undefined }),
      dualStackSeed({ shootDefaults: V4 }),
      V4,
      [],
    ],
    [
      '[IPv4, IPv6] shoot, IPv6 defaults: not the primary family',
      dualStackShootObject({ pods: undefined, services: undefined }),
      dualStackSeed({ shootDefaults: V6 }),
      {},
      [PODS_REQUIRED, SERVICES_REQUIRED],
    ],
    [
      '[IPv6, IPv4] shoot, IPv6 defaults: primary family, taken',
      shootObject({ ipFamilies: ['IPv6', 'IPv4'], nodes: SHOOT_IPV6_RANGES.nodes }),
      dualStackSeed({ shootDefaults: V6 }),
      V6,
      [],
    ],
    [
      '[IPv6, IPv4] shoot, IPv4 defaults: not the primary family',
      shootObject({ ipFamilies: ['IPv6', 'IPv4'] }),
      dualStackSeed({ shootDefaults: V4 }),
      {},
      [PODS_REQUIRED, SERVICES_REQUIRED],
    ],
    [
      'workerless shoot: services taken, pods never (they are forbidden there)',
      shootObject({ workers: 0 }),
      ipv4Seed({ shootDefaults: V4 }),
      { services: V4.services },
      [],
    ],
    [
      'workerless shoot without shoot defaults: nothing required',
      shootObject({ workers: 0 }),
      ipv4Seed({ shootDefaults: undefined }),
      {},
      [],
    ],
  ])('%s', (_, object, seed, ranges, expected) => {
    const { causes, networking } = admitOnSeed(object, seed);
    expect(causes).toEqual(expected);
    expect({ pods: networking?.pods, services: networking?.services }).toEqual({
      pods: ranges.pods,
      services: ranges.services,
    });
  });

  it('validates ranges taken from the seed like ranges written by the user', () => {
    const object = ipv4ShootObject({ nodes: '100.96.0.0/16', pods: undefined });
    expect(admitOnSeed(object, ipv4Seed({ shootDefaults: V4 })).causes).toEqual([
      invalid(`${NET}.pods`, 'Invalid value: "100.96.0.0/11": shoot pod network intersects with shoot node network'),
    ]);
  });

  it('applySeedShootDefaults does not modify its input', () => {
    const shoot = defaultShoot(ipv4ShootObject({ pods: undefined, services: undefined }));
    const before = structuredClone(shoot);
    const defaulted = applySeedShootDefaults(shoot, defaultSeed(ipv4Seed({ shootDefaults: V4 })));
    expect(shoot).toEqual(before);
    expect(shootNetworking(defaulted)).toMatchObject(V4);
  });

  it('validateShootAgainstSeed requires pods and services of a shoot with workers even without networking', () => {
    const shoot = shootObject({ withoutNetworking: true });
    expect(causesOf(validateShootAgainstSeed(shoot, defaultSeed(ipv4Seed())))).toEqual([
      PODS_REQUIRED,
      SERVICES_REQUIRED,
    ]);
  });
});

describe("Shoot on a seed: disjoint from the seed's ranges", () => {
  type Kind = 'node' | 'service' | 'pod';
  const SHOOT_FIELDS = { node: 'nodes', service: 'services', pod: 'pods' } as const;
  const SEED_FIELDS = { node: 'nodes', service: 'services', pod: 'pods' } as const;
  const combos = (['node', 'service', 'pod'] as const).flatMap((shootKind) =>
    (['service', 'pod', 'node'] as const).map((seedKind) => [shootKind, seedKind] as [Kind, Kind]),
  );

  it.each(combos)('shoot %s network vs seed %s network (IPv4)', (shootKind, seedKind) => {
    const field = SHOOT_FIELDS[shootKind];
    const value = seedIPv4Networks[SEED_FIELDS[seedKind]]!;
    const object = ipv4ShootObject({ [field]: value });
    expect(admitOnSeed(object, ipv4Seed(), gateSets.none).causes).toEqual([
      invalid(
        `${NET}.${field}`,
        `Invalid value: "${value}": shoot ${shootKind} network intersects with seed ${seedKind} network`,
      ),
    ]);
  });

  it.each<[string, Shoot, Seed, Cause[]]>([
    [
      'IPv6 pods inside the seed pods',
      ipv6ShootObject({ pods: 'fd00:10:1::/64' }),
      ipv6Seed({ pods: 'fd00:10:1::/56' }),
      [invalid(`${NET}.pods`, 'Invalid value: "fd00:10:1::/64": shoot pod network intersects with seed pod network')],
    ],
    [
      'IPv6 services inside the seed nodes',
      ipv6ShootObject({ services: 'fd00:10::/112' }),
      ipv6Seed({ nodes: 'fd00:10::/64' }),
      [
        invalid(
          `${NET}.services`,
          'Invalid value: "fd00:10::/112": shoot service network intersects with seed node network',
        ),
      ],
    ],
    [
      'IPv6 nodes containing the seed services',
      ipv6ShootObject({ nodes: 'fd00:10::/32' }),
      ipv6Seed({
        nodes: '2001:db8:1::/64',
        pods: 'fd00:11::/56',
        services: 'fd00:10:2::/112',
        shootDefaults: undefined,
      }),
      [
        invalid(
          `${NET}.nodes`,
          'Invalid value: "fd00:10::/32": shoot node network intersects with seed service network',
        ),
      ],
    ],
    [
      'one shoot range against all three seed ranges: seed services, pods, nodes in that order',
      ipv4ShootObject({ pods: '10.0.0.0/8', nodes: undefined }),
      ipv4Seed({ nodes: '10.250.0.0/16', pods: '10.1.0.0/16', services: '10.2.0.0/16' }),
      [
        invalid(`${NET}.pods`, 'Invalid value: "10.0.0.0/8": shoot pod network intersects with seed service network'),
        invalid(`${NET}.pods`, 'Invalid value: "10.0.0.0/8": shoot pod network intersects with seed pod network'),
        invalid(`${NET}.pods`, 'Invalid value: "10.0.0.0/8": shoot pod network intersects with seed node network'),
      ],
    ],
    [
      'ranges of different families never intersect',
      dualStackShootObject({ pods: 'fd00:10:1::/56' }),
      dualStackSeed({ pods: '10.1.0.0/16' }),
      [],
    ],
  ])('%s', (_, object, seed, expected) => {
    expect(admitOnSeed(object, seed).causes).toEqual(expected);
  });
});

describe('Shoot on a seed: disjoint from the VPN range of its family', () => {
  it.each<[string, Shoot, Cause[]]>([
    [
      'IPv4 nodes = VPN range',
      ipv4ShootObject({ nodes: '192.168.123.0/24' }),
      [
        invalid(
          `${NET}.nodes`,
          'Invalid value: "192.168.123.0/24": shoot node network intersects with default vpn network (192.168.123.0/24)',
        ),
      ],
    ],
    [
      'IPv4 pods containing the VPN range',
      ipv4ShootObject({ pods: '192.168.0.0/16' }),
      [
        invalid(
          `${NET}.pods`,
          'Invalid value: "192.168.0.0/16": shoot pod network intersects with default vpn network (192.168.123.0/24)',
        ),
      ],
    ],
    [
      'IPv4 services inside the VPN range',
      ipv4ShootObject({ services: '192.168.123.128/25' }),
      [
        invalid(
          `${NET}.services`,
          'Invalid value: "192.168.123.128/25": shoot service network intersects with default vpn network (192.168.123.0/24)',
        ),
      ],
    ],
    ['IPv4 nodes next to the VPN range', ipv4ShootObject({ nodes: '192.168.124.0/24' }), []],
    [
      'IPv6 nodes containing the VPN range',
      ipv6ShootObject({ nodes: 'fd8f:6d53:b97a:1::/64' }),
      [
        invalid(
          `${NET}.nodes`,
          'Invalid value: "fd8f:6d53:b97a:1::/64": shoot node network intersects with default vpn network (fd8f:6d53:b97a:1::/96)',
        ),
      ],
    ],
    [
      'IPv6 pods containing the VPN range',
      ipv6ShootObject({ pods: 'fd8f:6d53:b97a::/48' }),
      [
        invalid(
          `${NET}.pods`,
          'Invalid value: "fd8f:6d53:b97a::/48": shoot pod network intersects with default vpn network (fd8f:6d53:b97a:1::/96)',
        ),
      ],
    ],
    [
      'IPv6 services inside the VPN range',
      ipv6ShootObject({ services: 'fd8f:6d53:b97a:1::/112' }),
      [
        invalid(
          `${NET}.services`,
          'Invalid value: "fd8f:6d53:b97a:1::/112": shoot service network intersects with default vpn network (fd8f:6d53:b97a:1::/96)',
        ),
      ],
    ],
    ['IPv6 services next to the VPN range', ipv6ShootObject({ services: 'fd8f:6d53:b97a:2::/112' }), []],
  ])('%s', (_, object, expected) => {
    expect(admitOnSeed(object, dualStackSeed()).causes).toEqual(expected);
  });

  it('is a seed-context rule: without a seed the VPN range is not checked', () => {
    expect(admit({ object: ipv4ShootObject({ nodes: '192.168.123.0/24' }), gates: gateSets.none }).errors).toEqual([]);
  });
});

describe('Shoot on a seed: the seed document', () => {
  it('must be a Seed', () => {
    expect(() => admit({ object: ipv4ShootObject(), seed: ipv4ShootObject(), gates: gateSets.none })).toThrow(
      UnknownKindError,
    );
  });

  it('is only used for Shoots', () => {
    const seed = ipv4Seed();
    const result = admit({ object: ipv4Seed(), seed, gates: gateSets.none });
    expect(result.kind.kind).toBe('Seed');
    expect(result.errors).toEqual([]);
  });
});
