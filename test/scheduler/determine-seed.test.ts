import { describe, expect, it } from 'vitest';
import type { Seed, SeedNetworks } from '../../src/apis/core/v1beta1/seed.js';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import { Seeds, Shoots } from '../../src/apis/registry.js';
import {
  determineSeed,
  seedUsage,
  taintsAreTolerated,
  unusableReason,
  type SchedulingDecision,
} from '../../src/scheduler/determine-seed.js';
import {
  dualStackShootObject,
  ipv4ShootObject,
  ipv6ShootObject,
  seedDualStackMigrationNetworks,
  seedIPv4Networks,
  seedIPv6Networks,
  seedObject,
  shootObject,
} from '../fixtures/objects.js';

const READY = {
  lastOperation: {
    type: 'Reconcile',
    state: 'Succeeded',
    progress: 100,
    description: 'ok',
    lastUpdateTime: '2026-01-01T00:00:00Z',
  },
};

type SeedOptions = {
  networks?: SeedNetworks;
  region?: string;
  provider?: string;
  labels?: Record<string, string>;
  taints?: Seed['spec']['taints'];
  status?: Seed['status'] | null;
  visible?: boolean;
  deleting?: boolean;
};

/** A ready seed of the given family networks (IPv4 by default). */
function seed(name: string, o: SeedOptions = {}): Seed {
  const s = seedObject({}, { name, base: o.networks ?? seedIPv4Networks });
  s.spec.provider = { type: o.provider ?? 'local', region: o.region ?? 'local' };
  if (o.labels) s.metadata.labels = o.labels;
  if (o.taints) s.spec.taints = o.taints;
  if (o.visible !== undefined) s.spec.settings = { scheduling: { visible: o.visible } };
  if (o.deleting) s.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
  if (o.status !== null) s.status = o.status ?? READY;
  return Seeds.default(s);
}

const ipv4Seed = (name = 'ipv4', o: SeedOptions = {}) => seed(name, { networks: seedIPv4Networks, ...o });
const ipv6Seed = (name = 'ipv6', o: SeedOptions = {}) => seed(name, { networks: seedIPv6Networks, ...o });
const dualSeed = (name = 'dual', o: SeedOptions = {}) => seed(name, { networks: seedDualStackMigrationNetworks, ...o });

/** An unscheduled shoot without pods and services: the seed's shootDefaults fill them. */
function unscheduled(shoot: Shoot, edit: (s: Shoot) => void = () => {}): Shoot {
  const s = structuredClone(shoot);
  delete s.spec.networking!.pods;
  delete s.spec.networking!.services;
  edit(s);
  return Shoots.default(s);
}
const ipv4Shoot = (edit?: (s: Shoot) => void) => unscheduled(ipv4ShootObject(), edit);
const ipv6Shoot = (edit?: (s: Shoot) => void) => unscheduled(ipv6ShootObject(), edit);
/** A seed's shootDefaults hold one range per kind: a dual-stack shoot brings its IPv4 ranges, the seed the IPv6 ones. */
const dualShoot = (edit?: (s: Shoot) => void) => {
  const s = structuredClone(dualStackShootObject({ nodes: '172.19.0.0/16' }));
  edit?.(s);
  return Shoots.default(s);
};

const chosen = (d: SchedulingDecision) => ('seed' in d ? d.seed.metadata.name : undefined);
const failure = (d: SchedulingDecision) => ('error' in d ? d.error : undefined);

describe('determineSeed: IP families', () => {
  it.each([
    ['IPv4 shoot', ipv4Shoot(), 'ipv4'],
    ['IPv6 shoot', ipv6Shoot(), 'ipv6'],
    ['dual-stack shoot', dualShoot(), 'dual'],
  ])('a %s lands on the seed with its families', (_, shoot, expected) => {
    // The dual-stack seed would take an IPv4 shoot too; it has more shoots here, so the plain IPv4 seed wins.
    const shoots = [shootObject({ seedName: 'dual' })];
    expect(chosen(determineSeed(shoot, [ipv4Seed(), ipv6Seed(), dualSeed()], shoots))).toBe(expected);
  });

  it('an IPv6 shoot never lands on an IPv4 seed, and the message names each seed', () => {
    const error = failure(determineSeed(ipv6Shoot(), [ipv4Seed('a'), ipv4Seed('b')], []));
    expect(error).toBe(
      'none out of the 2 seeds supports the IP families [IPv6] of the shoot: ' +
        '{a => seed has IP families [IPv4], b => seed has IP families [IPv4]}',
    );
  });

  it('a dual-stack shoot does not land on a single-stack seed of either family', () => {
    expect(failure(determineSeed(dualShoot(), [ipv4Seed(), ipv6Seed()], []))).toMatch(
      /supports the IP families \[IPv4 IPv6\] .*ipv4 => seed has IP families \[IPv4\], ipv6 => seed has IP families \[IPv6\]/,
    );
  });

  it('an IPv4 shoot does not land on an IPv6 seed', () => {
    expect(failure(determineSeed(ipv4Shoot(), [ipv6Seed()], []))).toMatch(/\[IPv4\] of the shoot: \{ipv6 => /);
  });
});

describe('determineSeed: networks, per family', () => {
  it.each([
    [
      'IPv4 shoot nodes overlap the seed pods',
      ipv4Shoot((s) => (s.spec.networking!.nodes = '10.1.0.0/24')),
      ipv4Seed(),
      'spec.networking.nodes: Invalid value: "10.1.0.0/24": shoot node network intersects with seed pod network',
    ],
    [
      'IPv6 shoot nodes overlap the seed services',
      ipv6Shoot((s) => (s.spec.networking!.nodes = 'fd00:10:2::/120')),
      ipv6Seed(),
      'spec.networking.nodes: Invalid value: "fd00:10:2::/120": shoot node network intersects with seed service network',
    ],
    [
      'IPv6 shoot pods given and overlapping the seed nodes',
      ipv6Shoot((s) => (s.spec.networking!.pods = 'fd00:10::/64')),
      ipv6Seed(),
      'shoot pod network intersects with seed node network',
    ],
    [
      'IPv4 shoot on a seed without IPv4 shootDefaults',
      ipv4Shoot(),
      ipv4Seed('ipv4', { networks: { ...seedIPv4Networks, shootDefaults: {} } }),
      'spec.networking.pods: not set, and the seed has no IPv4 range in spec.networks.shootDefaults',
    ],
    [
      'IPv6 shoot on a seed without IPv6 shootDefaults',
      ipv6Shoot(),
      ipv6Seed('ipv6', { networks: { ...seedIPv6Networks, shootDefaults: undefined } as SeedNetworks }),
      'not set, and the seed has no IPv6 range in spec.networks.shootDefaults',
    ],
    [
      'dual-stack shoot on a seed without shootDefaults of its second family',
      dualShoot(),
      dualSeed('dual', { networks: { ...seedDualStackMigrationNetworks, shootDefaults: {} } }),
      'has no IPv6 range in spec.networks.shootDefaults.pods',
    ],
  ])('%s: no candidate, and the reason', (_, shoot, s, reason) => {
    const error = failure(determineSeed(shoot, [s], []));
    expect(error).toMatch(/^0\/1 seed cluster candidate\(s\) are eligible for scheduling: \{\w+ => invalid networks: /);
    expect(error).toContain(reason);
  });

  it("uses the seed's shootDefaults of the shoot's family for the missing ranges", () => {
    // Without defaults an IPv6 shoot's pods/services are unset: the seed's fd00:10:3::/56 and fd00:10:4::/112 fill
    // them and must not collide with the shoot's nodes.
    const colliding = ipv6Shoot((s) => (s.spec.networking!.nodes = 'fd00:10:3::/64'));
    expect(failure(determineSeed(colliding, [ipv6Seed()], []))).toContain(
      'shoot pod network intersects with shoot node network',
    );
    expect(chosen(determineSeed(ipv6Shoot(), [ipv6Seed()], []))).toBe('ipv6');
  });

  it('skips a seed whose networks collide and takes the next one', () => {
    const shoot = ipv4Shoot((s) => (s.spec.networking!.nodes = '10.1.0.0/24'));
    const other = ipv4Seed('other', { networks: { ...seedIPv4Networks, pods: '10.3.0.0/16' } });
    expect(chosen(determineSeed(shoot, [ipv4Seed('colliding'), other], []))).toBe('other');
  });
});

describe('determineSeed: usable seeds', () => {
  it.each([
    ['being deleted', { deleting: true }, 'seed is being deleted'],
    ['hidden', { visible: false }, 'seed is not visible for scheduling'],
    ['never reconciled', { status: null }, 'seed is not ready (it was never reconciled)'],
    [
      'failing',
      { status: { lastOperation: { ...READY.lastOperation, state: 'Error', description: 'boom' } } },
      'seed is not ready (last operation Reconcile Error: boom)',
    ],
    [
      'GardenletReady False',
      { status: { ...READY, conditions: [{ type: 'GardenletReady', status: 'False' }] } },
      'seed is not ready (condition GardenletReady is False)',
    ],
  ] as const)('a seed %s is not used, per family', (_, options, reason) => {
    for (const [shoot, s] of [
      [ipv4Shoot(), ipv4Seed('s', options as SeedOptions)],
      [ipv6Shoot(), ipv6Seed('s', options as SeedOptions)],
      [dualShoot(), dualSeed('s', options as SeedOptions)],
    ] as const) {
      expect(unusableReason(s)).toBe(reason);
      expect(failure(determineSeed(shoot, [s], []))).toBe(
        `none of the 1 seeds is valid for scheduling (not deleting, visible and ready): {s => ${reason}}`,
      );
    }
  });

  it('a GardenletReady True condition makes a seed ready whatever its last operation says', () => {
    const s = ipv6Seed('s', {
      status: {
        lastOperation: { ...READY.lastOperation, state: 'Processing' },
        conditions: [{ type: 'GardenletReady', status: 'True' }],
      },
    });
    expect(unusableReason(s)).toBeUndefined();
  });

  it('no seed at all', () => {
    expect(failure(determineSeed(ipv6Shoot(), [], []))).toBe('no seed is registered');
  });
});

describe('determineSeed: seed selector and provider', () => {
  it.each([
    ['IPv4', ipv4Shoot, ipv4Seed],
    ['IPv6', ipv6Shoot, ipv6Seed],
    ['dual-stack', dualShoot, dualSeed],
  ] as const)('%s: only seeds matching the selector', (_, makeShoot, makeSeed) => {
    const shoot = makeShoot(
      (s) =>
        (s.spec.seedSelector = {
          matchLabels: { env: 'prod' },
          matchExpressions: [{ key: 'zone', operator: 'In', values: ['b', 'a'] }],
        }),
    );
    const matching = makeSeed('matching', { labels: { env: 'prod', zone: 'a' } });
    const other = makeSeed('other', { labels: { env: 'dev', zone: 'a' } });
    expect(chosen(determineSeed(shoot, [other, matching], []))).toBe('matching');
    expect(failure(determineSeed(shoot, [other], []))).toBe(
      "none out of the 1 seeds has the matching labels required by seed selector of 'Shoot' " +
        `(selector: 'env=prod,zone in (a,b)'): {other => labels {"env":"dev","zone":"a"} don't match}`,
    );
  });

  it.each([
    ['IPv4', ipv4Shoot, ipv4Seed],
    ['IPv6', ipv6Shoot, ipv6Seed],
    ['dual-stack', dualShoot, dualSeed],
  ] as const)(
    '%s: only seeds of the shoot provider, unless the selector names provider types',
    (_, makeShoot, makeSeed) => {
      const aws = makeSeed('aws', { provider: 'aws' });
      expect(failure(determineSeed(makeShoot(), [aws], []))).toBe(
        'none out of the 1 seeds has a matching provider for "local": {aws => provider type is "aws"}',
      );
      const anyProvider = makeShoot((s) => (s.spec.seedSelector = { providerTypes: ['*'] }));
      expect(chosen(determineSeed(anyProvider, [aws], []))).toBe('aws');
      const named = makeShoot((s) => (s.spec.seedSelector = { providerTypes: ['gcp'] }));
      expect(failure(determineSeed(named, [aws], []))).toMatch(/has a matching provider/);
    },
  );
});

describe('determineSeed: taints', () => {
  it.each([
    ['IPv4', ipv4Shoot, ipv4Seed],
    ['IPv6', ipv6Shoot, ipv6Seed],
    ['dual-stack', dualShoot, dualSeed],
  ] as const)('%s: a tainted seed only for shoots that tolerate it', (_, makeShoot, makeSeed) => {
    const tainted = makeSeed('tainted', { taints: [{ key: 'protected' }] });
    expect(failure(determineSeed(makeShoot(), [tainted], []))).toBe(
      "0/1 seed cluster candidate(s) are eligible for scheduling: {tainted => shoot does not tolerate the seed's taints}",
    );
    const tolerating = makeShoot((s) => (s.spec.tolerations = [{ key: 'protected' }]));
    expect(chosen(determineSeed(tolerating, [tainted], []))).toBe('tainted');
  });

  it.each([
    ['no taints', [], [], true],
    ['key tolerated, any value', [{ key: 'a', value: 'x' }], [{ key: 'a' }], true],
    ['same value', [{ key: 'a', value: 'x' }], [{ key: 'a', value: 'x' }], true],
    ['other value', [{ key: 'a', value: 'x' }], [{ key: 'a', value: 'y' }], false],
    ['a valued toleration does not tolerate a taint without value', [{ key: 'a' }], [{ key: 'a', value: 'x' }], false],
    ['one of two taints tolerated', [{ key: 'a' }, { key: 'b' }], [{ key: 'a' }], false],
    ['other key', [{ key: 'a' }], [{ key: 'b' }], false],
  ])('taintsAreTolerated: %s', (_, taints, tolerations, expected) => {
    expect(taintsAreTolerated(taints, tolerations)).toBe(expected);
  });
});

describe('determineSeed: region and usage', () => {
  it.each([
    ['IPv4', ipv4Shoot, ipv4Seed],
    ['IPv6', ipv6Shoot, ipv6Seed],
    ['dual-stack', dualShoot, dualSeed],
  ] as const)("%s: prefers the shoot's region, then the seed with the fewest shoots", (_, makeShoot, makeSeed) => {
    const seeds = [makeSeed('far', { region: 'eu' }), makeSeed('busy'), makeSeed('quiet')];
    const shoots = [
      shootObject({ seedName: 'busy' }),
      shootObject({ seedName: 'quiet' }),
      shootObject({ seedName: 'busy' }),
    ];
    expect(chosen(determineSeed(makeShoot(), seeds, shoots))).toBe('quiet');
    // No seed in the shoot's region: any region, fewest shoots first.
    const elsewhere = makeShoot((s) => (s.spec.region = 'us'));
    expect(chosen(determineSeed(elsewhere, seeds, shoots))).toBe('far');
    // A tie goes to the first by name.
    expect(chosen(determineSeed(makeShoot(), [makeSeed('b'), makeSeed('a')], []))).toBe('a');
  });

  it('seedUsage counts spec.seedName, and status.seedName while a shoot moves', () => {
    const moving = shootObject({ seedName: 'b' });
    moving.status = { seedName: 'a' };
    expect(Object.fromEntries(seedUsage([shootObject({ seedName: 'a' }), moving, shootObject()]))).toEqual({
      a: 2,
      b: 1,
    });
  });
});
