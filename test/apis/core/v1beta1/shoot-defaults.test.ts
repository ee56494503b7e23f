/**
 * Shoot defaulting (docs/api-reference.md, "Defaulting"): directly through `defaultShoot` and end to end through
 * `admit()`, plus the pipeline properties every kind must have: unknown fields survive, the input is never modified.
 */
import { describe, expect, it } from 'vitest';
import { admit } from '../../../../src/apis/admission.js';
import {
  applyCloudProfileDefaults,
  applySeedShootDefaults,
  defaultCloudProfile,
  defaultShoot,
  ipv4NodeCIDRMaskSize,
} from '../../../../src/apis/core/v1beta1/defaults.js';
import type { Shoot } from '../../../../src/apis/core/v1beta1/shoot.js';
import type { FeatureGates } from '../../../../src/featuregate/featuregate.js';
import {
  cloudProfileObject,
  dualStackShootObject,
  gateSets,
  ipv4ShootObject,
  ipv6ShootObject,
  seedObject,
  SHOOT_IPV4_RANGES,
  shootKCM,
  shootNetworking,
  shootObject,
} from '../../../fixtures/objects.js';

/** 32 − ceil(log2(2 × maxPods)), computed with integers only. */
function formula(maxPods: number): number {
  let bits = 0;
  while (2 ** bits < 2 * maxPods) bits++;
  return 32 - bits;
}

function admitted(object: Shoot, gates: FeatureGates = gateSets.all): Shoot {
  const result = admit({ object, gates });
  expect(result.errors).toEqual([]);
  return result.object as Shoot;
}

describe('Shoot defaulting: spec.networking', () => {
  it('creates spec.networking with ipFamilies [IPv4] when missing', () => {
    expect(shootNetworking(defaultShoot(shootObject({ withoutNetworking: true })))).toEqual({ ipFamilies: ['IPv4'] });
    expect(shootNetworking(defaultShoot(shootObject({ workers: 0, withoutNetworking: true })))).toEqual({
      ipFamilies: ['IPv4'],
    });
  });

  it('creates spec.networking before validation, so admit does not report it missing', () => {
    const result = admit({ object: shootObject({ withoutNetworking: true }), gates: gateSets.none });
    expect(shootNetworking(result.object)).toEqual({ ipFamilies: ['IPv4'] });
    // The defaulted networking still has no type: that is what admit reports.
    expect(result.errors.map((e) => [e.field, e.type])).toEqual([['spec.networking.type', 'FieldValueRequired']]);
  });

  it.each<[string, string[] | undefined, string[]]>([
    ['missing', undefined, ['IPv4']],
    ['empty', [], ['IPv4']],
    ['[IPv4]', ['IPv4'], ['IPv4']],
    ['[IPv6]', ['IPv6'], ['IPv6']],
    ['[IPv6, IPv4] (order kept)', ['IPv6', 'IPv4'], ['IPv6', 'IPv4']],
    ['invalid values are left for validation', ['IPv5'], ['IPv5']],
  ])('ipFamilies %s → %j', (_, ipFamilies, expected) => {
    expect(shootNetworking(defaultShoot(shootObject({ ipFamilies })))?.ipFamilies).toEqual(expected);
  });

  it('does not invent pods, services or nodes without a seed', () => {
    const networking = shootNetworking(admitted(shootObject()));
    expect(networking).toEqual({ type: 'calico', ipFamilies: ['IPv4'] });
  });
});

describe('Shoot defaulting: kube-controller-manager nodeCIDRMaskSize', () => {
  describe('IPv4 single-stack: 32 − ceil(log2(2 × maxPods))', () => {
    it.each<[number, number]>([
      [110, 24],
      [250, 23],
      [260, 22],
      [1, 31],
      [64, 25],
      [65, 24],
      [128, 24],
      [129, 23],
      [256, 23],
      [257, 22],
    ])('maxPods %i → /%i', (maxPods, mask) => {
      expect(ipv4NodeCIDRMaskSize(maxPods)).toBe(mask);
      expect(shootKCM(defaultShoot(shootObject({ maxPods })))).toEqual({ nodeCIDRMaskSize: mask });
    });

    it('matches the formula for every maxPods from 1 to 2000', () => {
      for (let maxPods = 1; maxPods <= 2000; maxPods++)
        expect(ipv4NodeCIDRMaskSize(maxPods), `${maxPods}`).toBe(formula(maxPods));
    });

    it.each<[string, Parameters<typeof shootObject>[0], number]>([
      ['nothing set: kubelet default 110', {}, 24],
      ['explicit [IPv4]', { ipFamilies: ['IPv4'] }, 24],
      ['shoot kubelet 250', { maxPods: 250 }, 23],
      ['shoot kubelet 260', { maxPods: 260 }, 22],
      ['a worker at 250', { workerMaxPods: [250] }, 23],
      ['a worker at 260 among others', { workerMaxPods: [undefined, 260, 100] }, 22],
      ['workers below the 110 default', { workerMaxPods: [50, 60] }, 24],
      ['shoot kubelet 50, worker 260', { maxPods: 50, workerMaxPods: [260] }, 22],
      ['shoot kubelet 260, worker 50', { maxPods: 260, workerMaxPods: [50] }, 22],
      ['shoot kubelet 64, worker without maxPods', { maxPods: 64, workerMaxPods: [undefined] }, 25],
    ])('%s → /%i', (_, options, mask) => {
      const defaulted = admitted(shootObject(options), gateSets.none);
      expect(shootKCM(defaulted)).toEqual({ nodeCIDRMaskSize: mask });
    });
  });

  it.each<[string, Shoot, Record<string, number>]>([
    // IPv6 single-stack: 64 unless either field is set
    ['IPv6 single-stack → 64', ipv6ShootObject(), { nodeCIDRMaskSize: 64 }],
    [
      'IPv6 single-stack ignores maxPods',
      ipv6ShootObject({ maxPods: 260, workerMaxPods: [500] }),
      { nodeCIDRMaskSize: 64 },
    ],
    [
      'IPv6 single-stack keeps a set nodeCIDRMaskSize',
      ipv6ShootObject({ nodeCIDRMaskSize: 72 }),
      { nodeCIDRMaskSize: 72 },
    ],
    [
      'IPv6 single-stack with nodeCIDRMaskSizeIPv6 gets no nodeCIDRMaskSize',
      ipv6ShootObject({ nodeCIDRMaskSizeIPv6: 70 }),
      { nodeCIDRMaskSizeIPv6: 70 },
    ],
    // dual-stack: IPv4 formula and 64
    ['[IPv4, IPv6] → formula and 64', dualStackShootObject(), { nodeCIDRMaskSize: 24, nodeCIDRMaskSizeIPv6: 64 }],
    [
      '[IPv6, IPv4] → formula and 64',
      shootObject({ ipFamilies: ['IPv6', 'IPv4'] }),
      { nodeCIDRMaskSize: 24, nodeCIDRMaskSizeIPv6: 64 },
    ],
    [
      'dual-stack with a worker at 250',
      dualStackShootObject({ workerMaxPods: [250] }),
      { nodeCIDRMaskSize: 23, nodeCIDRMaskSizeIPv6: 64 },
    ],
    [
      'dual-stack with shoot kubelet 260',
      dualStackShootObject({ maxPods: 260 }),
      { nodeCIDRMaskSize: 22, nodeCIDRMaskSizeIPv6: 64 },
    ],
    // set fields are never overwritten
    [
      'IPv4 keeps a set nodeCIDRMaskSize',
      ipv4ShootObject({ nodeCIDRMaskSize: 20, maxPods: 260 }),
      { nodeCIDRMaskSize: 20 },
    ],
    [
      'dual-stack keeps a set nodeCIDRMaskSize',
      dualStackShootObject({ nodeCIDRMaskSize: 20 }),
      { nodeCIDRMaskSize: 20, nodeCIDRMaskSizeIPv6: 64 },
    ],
    [
      'dual-stack keeps a set nodeCIDRMaskSizeIPv6',
      dualStackShootObject({ nodeCIDRMaskSizeIPv6: 80 }),
      { nodeCIDRMaskSize: 24, nodeCIDRMaskSizeIPv6: 80 },
    ],
    [
      'dual-stack keeps both',
      dualStackShootObject({ nodeCIDRMaskSize: 26, maxPods: 50, nodeCIDRMaskSizeIPv6: 72 }),
      { nodeCIDRMaskSize: 26, nodeCIDRMaskSizeIPv6: 72 },
    ],
  ])('%s', (_, object, kcm) => {
    expect(shootKCM(defaultShoot(object))).toEqual(kcm);
    expect(shootKCM(admitted(object))).toEqual(kcm);
  });

  it('does not give IPv4 single-stack shoots a nodeCIDRMaskSizeIPv6', () => {
    expect(shootKCM(defaultShoot(ipv4ShootObject()))).not.toHaveProperty('nodeCIDRMaskSizeIPv6');
  });

  it('keeps other kube-controller-manager fields', () => {
    const object = ipv4ShootObject();
    object.spec.kubernetes = { ...object.spec.kubernetes, kubeControllerManager: { nodeMonitorGracePeriod: '40s' } };
    expect(shootKCM(defaultShoot(object))).toEqual({ nodeMonitorGracePeriod: '40s', nodeCIDRMaskSize: 24 });
  });

  it.each<[string, Shoot]>([
    ['IPv4', shootObject({ workers: 0 })],
    ['IPv6', shootObject({ workers: 0, ipFamilies: ['IPv6'] })],
    ['dual-stack', shootObject({ workers: 0, ipFamilies: ['IPv4', 'IPv6'], maxPods: 250 })],
  ])('gives workerless %s shoots no kube-controller-manager defaults', (_, object) => {
    const defaulted = defaultShoot(object);
    expect(shootKCM(defaulted)).toBeUndefined();
    expect(defaulted.spec.kubernetes).toEqual(object.spec.kubernetes);
    expect(shootKCM(admitted(object))).toBeUndefined();
  });

  it('leaves an empty kube-controller-manager section of a workerless shoot empty', () => {
    const object = shootObject({ workers: 0 });
    object.spec.kubernetes = { ...object.spec.kubernetes, kubeControllerManager: {} };
    expect(shootKCM(defaultShoot(object))).toEqual({});
  });

  it('creates spec.kubernetes for a shoot with workers that has none', () => {
    const object = shootObject();
    delete object.spec.kubernetes;
    expect(defaultShoot(object).spec.kubernetes).toEqual({ kubeControllerManager: { nodeCIDRMaskSize: 24 } });
  });
});

describe('Shoot defaulting: purity and idempotence', () => {
  it.each<[string, Shoot]>([
    ['IPv4', ipv4ShootObject()],
    ['IPv6', ipv6ShootObject()],
    ['dual-stack', dualStackShootObject({ workerMaxPods: [250] })],
    ['without networking', shootObject({ withoutNetworking: true })],
    ['workerless', shootObject({ workers: 0 })],
  ])('%s: defaulting twice changes nothing more, and the input stays as it was', (_, object) => {
    const before = structuredClone(object);
    const once = defaultShoot(object);
    expect(object).toEqual(before);
    expect(defaultShoot(once)).toEqual(once);
  });
});

describe("Shoot defaulting: the admission's steps written into defaultShoot's copies", () => {
  it.each<[string, Shoot]>([
    ['IPv4', ipv4ShootObject()],
    ['IPv6', ipv6ShootObject()],
    ['dual-stack', dualStackShootObject({ workerMaxPods: [250] })],
    ['workerless', shootObject({ workers: 0 })],
    ['a partial version and pools without images', withPartialVersion(ipv6ShootObject())],
  ])('%s: give what the copying steps give, and leave the input as it was', (_, object) => {
    const before = structuredClone(object);
    const profile = defaultCloudProfile(cloudProfileObject());
    const seed = seedObject({ shootDefaults: { pods: '100.96.0.0/11', services: '100.64.0.0/13' } });
    const now = new Date('2026-01-01T00:00:00Z');
    const copying = applySeedShootDefaults(applyCloudProfileDefaults(defaultShoot(object), profile, { now }), seed);
    const owned = defaultShoot(object);
    const written = applySeedShootDefaults(applyCloudProfileDefaults(owned, profile, { now, owned: true }), seed, true);
    expect(JSON.stringify(written)).toBe(JSON.stringify(copying));
    expect(written).toBe(owned);
    expect(object).toEqual(before);
  });

  function withPartialVersion(shoot: Shoot): Shoot {
    shoot.spec.kubernetes = { ...shoot.spec.kubernetes, version: '1.37' };
    for (const worker of shoot.spec.provider?.workers ?? []) if (worker.machine) delete worker.machine.image;
    return shoot;
  }
});

describe('Shoot through admit(): Gardener fields, raw extensions and the input object', () => {
  /** A shoot with Gardener fields defaulting does not touch at every level, and a raw extension of any content. */
  function shootWithGardenerFields(): Record<string, unknown> {
    const object = ipv4ShootObject({
      providerConfig: {
        apiVersion: 'calico.networking.extensions.gardener.cloud/v1alpha1',
        kind: 'NetworkConfig',
        ipam: { type: 'host-local' },
      },
    }) as unknown as {
      metadata: Record<string, unknown>;
      spec: Record<string, unknown> & {
        networking: Record<string, unknown>;
        provider: { workers: Record<string, unknown>[] };
        kubernetes: Record<string, unknown>;
      };
      [key: string]: unknown;
    };
    object.metadata.labels = { team: 'net' };
    object.metadata.annotations = { 'gardener.cloud/operation': 'reconcile' };
    object.spec.hibernation = { enabled: false, schedules: [{ start: '00 20 * * 1,2,3,4,5' }] };
    object.spec.maintenance = { autoUpdate: { kubernetesVersion: true } };
    object.spec.extensions = [
      { type: 'foo', providerConfig: { futureField: { nested: [1, 'two', { three: true }] } } },
    ];
    object.spec.provider.workers[0]!.volume = { type: 'gp3', size: '50Gi' };
    object.spec.kubernetes.kubeAPIServer = { enableAnonymousAuthentication: false };
    object.spec.kubernetes.kubeProxy = { mode: 'IPTables' };
    object.status = {
      technicalID: 'shoot--dev--a',
      networking: { nodes: ['10.180.0.0/16'] },
      uid: 'abc',
      hibernated: false,
    };
    return object;
  }

  it('keeps every field and the raw extensions as they are (round trip), adding only defaults', () => {
    const input = shootWithGardenerFields();
    const result = admit({ object: input, gates: gateSets.none });
    expect(result.errors).toEqual([]);
    const expected = structuredClone(input) as {
      spec: { networking: Record<string, unknown>; kubernetes: Record<string, unknown> };
    };
    expected.spec.networking.ipFamilies = ['IPv4'];
    expected.spec.kubernetes.kubeControllerManager = { nodeCIDRMaskSize: 24 };
    expect(result.object).toEqual(expected);
  });

  it('keeps the fields through an update and the seed context', () => {
    const input = shootWithGardenerFields();
    const result = admit({
      object: input,
      oldObject: shootWithGardenerFields(),
      seed: seedObject(),
      gates: gateSets.none,
    });
    expect(result.errors).toEqual([]);
    expect(result.object).toMatchObject({
      metadata: { labels: { team: 'net' } },
      spec: {
        hibernation: { enabled: false },
        extensions: [{ providerConfig: { futureField: { nested: [1, 'two', { three: true }] } } }],
      },
      status: { uid: 'abc' },
    });
  });

  it('does not modify the input, the old object or the seed', () => {
    const object = shootObject({ withoutNetworking: true });
    const oldObject = shootWithGardenerFields();
    const seed = seedObject();
    const copies = structuredClone({ object, oldObject, seed });
    for (const value of [object, oldObject, seed]) deepFreeze(value);
    admit({ object, oldObject, seed, gates: gateSets.none });
    admit({ object: oldObject, seed, gates: gateSets.none });
    expect({ object, oldObject, seed }).toEqual(copies);
  });

  it('returns a new object even when there is nothing to default', () => {
    const object = ipv4ShootObject({ ipFamilies: ['IPv4'], nodeCIDRMaskSize: 24 });
    const result = admit({ object, gates: gateSets.none });
    expect(result.object).toEqual(object);
    expect(result.object).not.toBe(object);
    expect(shootNetworking(result.object)).not.toBe(object.spec.networking);
  });

  it('treats null fields as unset, as an API server does', () => {
    const object = { ...ipv4ShootObject(), status: null } as unknown as Record<string, unknown>;
    (object.spec as Record<string, unknown>).networking = { ...SHOOT_IPV4_RANGES, type: 'calico', ipFamilies: null };
    const result = admit({ object, gates: gateSets.none });
    expect(result.errors).toEqual([]);
    expect(shootNetworking(result.object)?.ipFamilies).toEqual(['IPv4']);
  });
});

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const item of Object.values(value)) deepFreeze(item);
}
