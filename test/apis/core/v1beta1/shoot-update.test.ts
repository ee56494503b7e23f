/**
 * Shoot update validation (docs/api-reference.md, "Shoot updates"), end to end through `admit({ object, oldObject })`,
 * and through `validateShootUpdate` for the cases defaulting makes unreachable.
 */
import { describe, expect, it } from 'vitest';
import { admit, UnknownKindError } from '../../../../src/apis/admission.js';
import { validateShootUpdate } from '../../../../src/apis/core/v1beta1/validation/shoot.js';
import type { Shoot } from '../../../../src/apis/core/v1beta1/shoot.js';
import type { FeatureGates } from '../../../../src/featuregate/featuregate.js';
import {
  causesOf,
  dualStackShootObject,
  gateSets,
  ipv4ShootObject,
  ipv6ShootObject,
  seedObject,
  shootKCM,
  shootObject,
  type Cause,
} from '../../../fixtures/objects.js';

const NET = 'spec.networking';
const KCM = 'spec.kubernetes.kubeControllerManager';

function admitUpdate(object: Shoot, oldObject: Shoot, gates: FeatureGates = gateSets.none): Cause[] {
  return causesOf(admit({ object, oldObject, gates }).errors);
}

const invalid = (field: string, message: string): Cause => ({ field, reason: 'FieldValueInvalid', message });
const forbidden = (field: string, message: string): Cause => ({ field, reason: 'FieldValueForbidden', message });
const immutable = (field: string, badValue: string): Cause =>
  invalid(field, `Invalid value: ${badValue}: field is immutable`);

describe('Shoot update: unchanged objects', () => {
  it.each<[string, Shoot, FeatureGates]>([
    ['IPv4', ipv4ShootObject(), gateSets.none],
    ['IPv6', ipv6ShootObject(), gateSets.ipv6],
    ['dual-stack', dualStackShootObject(), gateSets.dual],
    ['workerless', shootObject({ workers: 0 }), gateSets.none],
    [
      'without networking (defaulted on both sides)',
      shootObject({ withoutNetworking: true, type: undefined, workers: 0 }),
      gateSets.none,
    ],
  ])('%s', (_, object, gates) => {
    expect(admitUpdate(structuredClone(object), object, gates)).toEqual([]);
  });
});

describe('Shoot update: spec.networking', () => {
  it('forbids removing networking (validateShootUpdate; admit re-creates it)', () => {
    const prev = ipv4ShootObject({ workers: 0, nodes: undefined, pods: undefined, type: undefined });
    const next = shootObject({ workers: 0, withoutNetworking: true });
    expect(causesOf(validateShootUpdate(next, prev, gateSets.none))).toEqual([
      forbidden(NET, "Forbidden: networking cannot be set to nil if it's already set"),
    ]);
  });

  it('allows setting networking that was missing', () => {
    const prev = shootObject({ workers: 0, withoutNetworking: true });
    const next = shootObject({ workers: 0, services: '100.64.0.0/13' });
    expect(validateShootUpdate(next, prev, gateSets.none)).toEqual([]);
  });

  it.each<[string, Shoot, Shoot, Cause[]]>([
    // type: immutable
    [
      'type changed',
      ipv4ShootObject({ type: 'cilium' }),
      ipv4ShootObject({ type: 'calico' }),
      [immutable(`${NET}.type`, '"cilium"')],
    ],
    [
      'type removed',
      ipv4ShootObject({ type: undefined }),
      ipv4ShootObject(),
      [
        {
          field: `${NET}.type`,
          reason: 'FieldValueRequired',
          message: 'Required value: networking type must be provided',
        },
        immutable(`${NET}.type`, 'null'),
      ],
    ],
    [
      'type set where it was missing',
      ipv4ShootObject(),
      ipv4ShootObject({ type: undefined }),
      [immutable(`${NET}.type`, '"calico"')],
    ],
    // pods and services: immutable once set
    [
      'pods changed',
      ipv4ShootObject({ pods: '100.96.0.0/12' }),
      ipv4ShootObject(),
      [immutable(`${NET}.pods`, '"100.96.0.0/12"')],
    ],
    ['pods removed', ipv4ShootObject({ pods: undefined }), ipv4ShootObject(), [immutable(`${NET}.pods`, 'null')]],
    ['pods set where missing', ipv4ShootObject(), ipv4ShootObject({ pods: undefined }), []],
    [
      'services changed',
      ipv4ShootObject({ services: '100.64.0.0/14' }),
      ipv4ShootObject(),
      [immutable(`${NET}.services`, '"100.64.0.0/14"')],
    ],
    [
      'services removed',
      ipv4ShootObject({ services: undefined }),
      ipv4ShootObject(),
      [immutable(`${NET}.services`, 'null')],
    ],
    ['services set where missing', ipv4ShootObject(), ipv4ShootObject({ services: undefined }), []],
    // nodes may change
    ['nodes changed', ipv4ShootObject({ nodes: '10.181.0.0/16' }), ipv4ShootObject(), []],
    ['nodes removed', ipv4ShootObject({ nodes: undefined }), ipv4ShootObject(), []],
    ['nodes set where missing', ipv4ShootObject(), ipv4ShootObject({ nodes: undefined }), []],
    // the new object is validated as on create, too
    [
      'pods changed to an invalid range',
      ipv4ShootObject({ pods: '100.96.0.0/33' }),
      ipv4ShootObject(),
      [
        invalid(`${NET}.pods`, 'Invalid value: "100.96.0.0/33": invalid CIDR address: 100.96.0.0/33'),
        immutable(`${NET}.pods`, '"100.96.0.0/33"'),
      ],
    ],
  ])('%s', (_, next, prev, expected) => {
    expect(admitUpdate(next, prev)).toEqual(expected);
  });
});

describe('Shoot update: ipFamilies', () => {
  // Workerless shoots without ranges: the family change is the only thing that differs between old and new.
  const families = (ipFamilies: string[]) => shootObject({ workers: 0, ipFamilies });
  const unsupported = (prev: string, next: string) =>
    forbidden(
      `${NET}.ipFamilies`,
      `Forbidden: unsupported IP family update: oldIPFamilies=[${prev}], newIPFamilies=[${next}]`,
    );

  describe('DualStack off: immutable', () => {
    it.each<[string[], string[], FeatureGates, Cause[]]>([
      [['IPv4'], ['IPv6'], gateSets.ipv6, [immutable(`${NET}.ipFamilies`, '["IPv6"]')]],
      [['IPv6'], ['IPv4'], gateSets.ipv6, [immutable(`${NET}.ipFamilies`, '["IPv4"]')]],
      [
        ['IPv4'],
        ['IPv4', 'IPv6'],
        gateSets.ipv6,
        [
          invalid(`${NET}.ipFamilies`, 'Invalid value: ["IPv4","IPv6"]: dual-stack networking is not supported'),
          immutable(`${NET}.ipFamilies`, '["IPv4","IPv6"]'),
        ],
      ],
      [['IPv4'], ['IPv4'], gateSets.none, []],
      [[], ['IPv4'], gateSets.none, []],
      [['IPv4'], [], gateSets.none, []],
      [['IPv6'], ['IPv6'], gateSets.ipv6, []],
    ])('%j → %j', (prev, next, gates, expected) => {
      expect(admitUpdate(families(next), families(prev), gates)).toEqual(expected);
    });
  });

  describe('DualStack on: a second family added, and [IPv4, IPv6] back to [IPv4]', () => {
    it.each<[string[], string[], Cause[]]>([
      [['IPv4'], ['IPv4', 'IPv6'], []],
      [['IPv6'], ['IPv6', 'IPv4'], []],
      [[], ['IPv4', 'IPv6'], []],
      [['IPv4', 'IPv6'], ['IPv4'], []],
      [['IPv4', 'IPv6'], [], []],
      [['IPv4', 'IPv6'], ['IPv4', 'IPv6'], []],
      [['IPv6', 'IPv4'], ['IPv6'], [unsupported('IPv6 IPv4', 'IPv6')]],
      [['IPv4'], ['IPv6'], [unsupported('IPv4', 'IPv6')]],
      [['IPv6'], ['IPv4'], [unsupported('IPv6', 'IPv4')]],
      [['IPv4'], ['IPv6', 'IPv4'], [unsupported('IPv4', 'IPv6 IPv4')]],
      [['IPv4', 'IPv6'], ['IPv6', 'IPv4'], [unsupported('IPv4 IPv6', 'IPv6 IPv4')]],
      [['IPv4', 'IPv6'], ['IPv6'], [unsupported('IPv4 IPv6', 'IPv6')]],
      [['IPv6', 'IPv4'], ['IPv4'], [unsupported('IPv6 IPv4', 'IPv4')]],
    ])('%j → %j', (prev, next, expected) => {
      expect(admitUpdate(families(next), families(prev), gateSets.all)).toEqual(expected);
    });
  });

  it('quotes the exact detail for a change of the primary family', () => {
    const errors = admit({
      object: families(['IPv4', 'IPv6']),
      oldObject: families(['IPv6']),
      gates: gateSets.all,
    }).errors;
    expect(errors.map((e) => e.detail)).toEqual([
      'unsupported IP family update: oldIPFamilies=[IPv6], newIPFamilies=[IPv4 IPv6]',
    ]);
  });

  it('lets a shoot with workers migrate [IPv6] → [IPv6, IPv4]: its IPv6 node mask moves to nodeCIDRMaskSizeIPv6', () => {
    const ipv6ToDual = (options: Parameters<typeof ipv6ShootObject>[0] = {}) =>
      ipv6ShootObject({ ipFamilies: ['IPv6', 'IPv4'], ...options });
    // The stored shoot holds the defaulted IPv6 mask in nodeCIDRMaskSize; the patch changes nothing but the families.
    for (const [stored, expected] of [
      [{}, 64],
      [{ nodeCIDRMaskSize: 70 }, 70],
      [{ nodeCIDRMaskSizeIPv6: 72 }, 72],
    ] as const) {
      const prev = ipv6ShootObject(stored);
      const defaultedPrev = admit({ object: prev, gates: gateSets.all }).object as Shoot;
      const next = structuredClone(defaultedPrev);
      next.spec.networking!.ipFamilies = ['IPv6', 'IPv4'];
      const result = admit({ object: next, oldObject: defaultedPrev, gates: gateSets.all });
      expect(causesOf(result.errors)).toEqual([]);
      expect(shootKCM(result.object)).toEqual({ nodeCIDRMaskSize: 24, nodeCIDRMaskSizeIPv6: expected });
      // The validating webhook sees the mutated object: the same again.
      const again = admit({ object: result.object, oldObject: defaultedPrev, gates: gateSets.all });
      expect(causesOf(again.errors)).toEqual([]);
      expect(shootKCM(again.object)).toEqual(shootKCM(result.object));
    }
    // Another IPv6 mask than the stored one is a change of an immutable field.
    expect(
      admitUpdate(ipv6ToDual({ nodeCIDRMaskSize: 24, nodeCIDRMaskSizeIPv6: 70 }), ipv6ShootObject(), gateSets.all),
    ).toEqual([immutable(`${KCM}.nodeCIDRMaskSize`, '24')]);
    // Without the family change the mask stays immutable.
    expect(admitUpdate(ipv6ShootObject({ nodeCIDRMaskSize: 70 }), ipv6ShootObject(), gateSets.all)).toEqual([
      immutable(`${KCM}.nodeCIDRMaskSize`, '70'),
    ]);
  });

  it('lets a shoot with workers migrate [IPv4] → [IPv4, IPv6] (nodeCIDRMaskSizeIPv6 is defaulted, the IPv4 mask stays)', () => {
    const prev = ipv4ShootObject();
    const next = dualStackShootObject();
    expect(admitUpdate(next, prev, gateSets.dual)).toEqual([]);
  });

  it('lets a shoot with workers migrate back [IPv4, IPv6] → [IPv4] when the IPv6 node mask goes with the family', () => {
    const prev = dualStackShootObject({ nodeCIDRMaskSize: 24, nodeCIDRMaskSizeIPv6: 64 });
    expect(admitUpdate(ipv4ShootObject({ nodeCIDRMaskSize: 24 }), prev, gateSets.dual)).toEqual([]);
    // Keeping the mask on IPv4 single-stack is still forbidden.
    expect(
      admitUpdate(ipv4ShootObject({ nodeCIDRMaskSize: 24, nodeCIDRMaskSizeIPv6: 64 }), prev, gateSets.dual),
    ).toEqual([
      {
        reason: 'FieldValueForbidden',
        field: `${KCM}.nodeCIDRMaskSizeIPv6`,
        message: 'Forbidden: nodeCIDRMaskSizeIPv6 cannot be set for IPv4 single-stack clusters',
      },
    ]);
  });
});

describe('Shoot update: kube-controller-manager', () => {
  const MASK = `${KCM}.nodeCIDRMaskSize`;
  const MASK6 = `${KCM}.nodeCIDRMaskSizeIPv6`;

  it.each<[string, Shoot, Shoot, FeatureGates, Cause[]]>([
    [
      'nodeCIDRMaskSize changed',
      ipv4ShootObject({ nodeCIDRMaskSize: 23 }),
      ipv4ShootObject({ nodeCIDRMaskSize: 24 }),
      gateSets.none,
      [immutable(MASK, '23')],
    ],
    [
      'nodeCIDRMaskSize changed against the defaulted old value',
      ipv4ShootObject({ nodeCIDRMaskSize: 22 }),
      ipv4ShootObject(),
      gateSets.none,
      [immutable(MASK, '22')],
    ],
    [
      'nodeCIDRMaskSize set to the defaulted old value',
      ipv4ShootObject({ nodeCIDRMaskSize: 24 }),
      ipv4ShootObject(),
      gateSets.none,
      [],
    ],
    [
      'nodeCIDRMaskSize left out: defaulted to the same value',
      ipv4ShootObject(),
      ipv4ShootObject({ nodeCIDRMaskSize: 24 }),
      gateSets.none,
      [],
    ],
    [
      'nodeCIDRMaskSize left out: defaulted to another value',
      ipv4ShootObject(),
      ipv4ShootObject({ nodeCIDRMaskSize: 20 }),
      gateSets.none,
      [immutable(MASK, '24')],
    ],
    [
      'IPv6 nodeCIDRMaskSize changed',
      ipv6ShootObject({ nodeCIDRMaskSize: 66 }),
      ipv6ShootObject(),
      gateSets.ipv6,
      [immutable(MASK, '66')],
    ],
    [
      'nodeCIDRMaskSizeIPv6 changed',
      dualStackShootObject({ nodeCIDRMaskSizeIPv6: 80 }),
      dualStackShootObject(),
      gateSets.dual,
      [immutable(MASK6, '80')],
    ],
    [
      'IPv6 single-stack: switching from nodeCIDRMaskSize to nodeCIDRMaskSizeIPv6',
      ipv6ShootObject({ nodeCIDRMaskSizeIPv6: 64, nodeCIDRMaskSize: undefined }),
      ipv6ShootObject({ nodeCIDRMaskSizeIPv6: undefined }),
      gateSets.ipv6,
      [immutable(MASK, 'null')],
    ],
  ])('%s', (_, next, prev, gates, expected) => {
    expect(admitUpdate(next, prev, gates)).toEqual(expected);
  });

  it.each<[string, Shoot, Shoot, Cause[]]>([
    [
      'nodeCIDRMaskSize set where it was missing',
      ipv4ShootObject({ nodeCIDRMaskSize: 24 }),
      ipv4ShootObject(),
      [immutable(MASK, '24')],
    ],
    [
      'nodeCIDRMaskSize removed',
      ipv4ShootObject(),
      ipv4ShootObject({ nodeCIDRMaskSize: 24 }),
      [immutable(MASK, 'null')],
    ],
    [
      'nodeCIDRMaskSize unchanged',
      ipv4ShootObject({ nodeCIDRMaskSize: 24 }),
      ipv4ShootObject({ nodeCIDRMaskSize: 24 }),
      [],
    ],
    [
      'nodeCIDRMaskSizeIPv6 set where it was missing',
      dualStackShootObject({ nodeCIDRMaskSizeIPv6: 64 }),
      dualStackShootObject(),
      [],
    ],
    [
      'nodeCIDRMaskSizeIPv6 removed',
      dualStackShootObject(),
      dualStackShootObject({ nodeCIDRMaskSizeIPv6: 64 }),
      [immutable(MASK6, 'null')],
    ],
  ])('%s (validateShootUpdate, without defaulting)', (_, next, prev, expected) => {
    expect(causesOf(validateShootUpdate(next, prev, gateSets.dual))).toEqual(expected);
  });
});

describe('Shoot update: admit() plumbing', () => {
  it('runs the update rules together with the seed-context rules', () => {
    const prev = ipv4ShootObject({ seedName: 'seed-a' });
    const next = ipv4ShootObject({ seedName: 'seed-a', pods: '10.1.0.0/16' });
    expect(causesOf(admit({ object: next, oldObject: prev, seed: seedObject(), gates: gateSets.none }).errors)).toEqual(
      [
        immutable(`${NET}.pods`, '"10.1.0.0/16"'),
        invalid(`${NET}.pods`, 'Invalid value: "10.1.0.0/16": shoot pod network intersects with seed pod network'),
      ],
    );
  });

  it('refuses an old object of another kind', () => {
    expect(() => admit({ object: ipv4ShootObject(), oldObject: seedObject(), gates: gateSets.none })).toThrow(
      UnknownKindError,
    );
  });
});
