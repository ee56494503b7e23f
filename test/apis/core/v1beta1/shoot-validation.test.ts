/**
 * Shoot create validation (docs/api-reference.md, "Shoot" and "The ipFamilies rules"), end to end
 * through `admit()` unless a rule can only be reached by calling `validateShoot` directly.
 */
import { describe, expect, it } from 'vitest';
import { admit } from '../../../../src/apis/admission.js';
import { validateShoot } from '../../../../src/apis/core/v1beta1/validation/shoot.js';
import type { Shoot } from '../../../../src/apis/core/v1beta1/shoot.js';
import { parseFeatureGates, type FeatureGates } from '../../../../src/featuregate/featuregate.js';
import {
  causesOf,
  dualStackShootObject,
  gateSets,
  ipv4ShootObject,
  ipv6ShootObject,
  SHOOT_IPV4_RANGES,
  SHOOT_IPV6_RANGES,
  shootObject,
  type Cause,
} from '../../../fixtures/objects.js';

const NET = 'spec.networking';
const KCM = 'spec.kubernetes.kubeControllerManager';
const WORKERLESS = 'Forbidden: this field should not be set for workerless Shoot clusters';

function admitShoot(object: Shoot, gates: FeatureGates = gateSets.none): Cause[] {
  return causesOf(admit({ object, gates }).errors);
}

const invalid = (field: string, message: string): Cause => ({ field, reason: 'FieldValueInvalid', message });
const required = (field: string, message: string): Cause => ({ field, reason: 'FieldValueRequired', message });
const forbidden = (field: string, message: string): Cause => ({ field, reason: 'FieldValueForbidden', message });
const notSupported = (field: string, value: string): Cause => ({
  field,
  reason: 'FieldValueNotSupported',
  message: `Unsupported value: "${value}": supported values: "IPv4", "IPv6"`,
});
const duplicate = (field: string, value: string): Cause => ({
  field,
  reason: 'FieldValueDuplicate',
  message: `Duplicate value: "${value}"`,
});

describe('Shoot create: valid shoots', () => {
  it.each<[string, Shoot, FeatureGates]>([
    ['IPv4 with all ranges, gates off', ipv4ShootObject(), gateSets.none],
    ['IPv4 with explicit [IPv4]', ipv4ShootObject({ ipFamilies: ['IPv4'] }), gateSets.none],
    ['IPv4 without any range (no seed: pods/services are not required)', shootObject(), gateSets.none],
    ['IPv6 single-stack with IPv6SingleStack on', ipv6ShootObject(), gateSets.ipv6],
    ['[IPv4, IPv6] with DualStack on', dualStackShootObject(), gateSets.dual],
    [
      '[IPv6, IPv4] with both gates on',
      shootObject({ ipFamilies: ['IPv6', 'IPv4'], ...SHOOT_IPV6_RANGES }),
      gateSets.all,
    ],
    ['workerless with services only', shootObject({ workers: 0, services: SHOOT_IPV4_RANGES.services }), gateSets.none],
    [
      'workerless IPv6 with services only',
      shootObject({ workers: 0, ipFamilies: ['IPv6'], services: SHOOT_IPV6_RANGES.services }),
      gateSets.ipv6,
    ],
  ])('%s', (_, object, gates) => {
    expect(admitShoot(object, gates)).toEqual([]);
  });
});

describe('Shoot create: worker pool sizes', () => {
  const withPool = (minimum: number, maximum: number) => {
    const shoot = shootObject({ ipFamilies: ['IPv4'] });
    shoot.spec.provider!.workers = [{ ...shoot.spec.provider!.workers![0]!, minimum, maximum }];
    return shoot;
  };

  it('refuses a maximum below the minimum and negative sizes, naming the field', () => {
    const errors = (shoot: Shoot) => causesOf(validateShoot(shoot, gateSets.none));
    expect(errors(withPool(3, 1))).toEqual([
      forbidden('spec.provider.workers[0].maximum', 'Forbidden: maximum value must not be less than minimum value'),
    ]);
    expect(errors(withPool(-1, 1))).toEqual([
      invalid('spec.provider.workers[0].minimum', 'Invalid value: -1: must be greater than or equal to 0'),
    ]);
  });

  it('refuses a zone named twice, and a maximum below the number of zones (a machine in each)', () => {
    const errors = (shoot: Shoot) => causesOf(validateShoot(shoot, gateSets.none));
    const zoned = (minimum: number, maximum: number, zones: string[]) => {
      const shoot = withPool(minimum, maximum);
      shoot.spec.provider!.workers![0]!.zones = zones;
      return shoot;
    };
    expect(errors(zoned(3, 3, ['0', '1', '2']))).toEqual([]);
    // A pool that is off has no machine to place.
    expect(errors(zoned(0, 0, ['0', '1', '2']))).toEqual([]);
    expect(errors(zoned(1, 2, ['0', '1', '2']))).toEqual([
      forbidden(
        'spec.provider.workers[0].maximum',
        'Forbidden: maximum value must not be less than the number of zones',
      ),
    ]);
    expect(errors(zoned(2, 2, ['0', '1', '0']))).toEqual([
      forbidden(
        'spec.provider.workers[0].maximum',
        'Forbidden: maximum value must not be less than the number of zones',
      ),
      { field: 'spec.provider.workers[0].zones[2]', reason: 'FieldValueDuplicate', message: 'Duplicate value: "0"' },
    ]);
  });

  it("refuses machineControllerManager durations that don't parse or are negative, and negative counts", () => {
    const shoot = withPool(1, 1);
    shoot.spec.provider!.workers![0]!.machineControllerManager = {
      machineDrainTimeout: '10 minutes',
      machineHealthTimeout: '-1m',
      machineCreationTimeout: '20m',
      maxEvictRetries: -3,
    };
    const path = 'spec.provider.workers[0].machineControllerManager';
    expect(causesOf(validateShoot(shoot, gateSets.none))).toEqual([
      invalid(
        `${path}.machineDrainTimeout`,
        'Invalid value: "10 minutes": must be a duration such as 90s, 5m or 1h30m',
      ),
      invalid(`${path}.machineHealthTimeout`, 'Invalid value: "-1m": must not be negative'),
      invalid(`${path}.maxEvictRetries`, 'Invalid value: -3: must be greater than or equal to 0'),
    ]);
    shoot.spec.provider!.workers![0]!.machineControllerManager = { machineDrainTimeout: '0', maxEvictRetries: 0 };
    expect(validateShoot(shoot, gateSets.none)).toEqual([]);
  });

  it('accepts pools of any size from zero, empty ones included', () => {
    expect(validateShoot(withPool(0, 0), gateSets.none)).toEqual([]);
    expect(validateShoot(withPool(2, 5), gateSets.none)).toEqual([]);
  });
});

describe('Shoot create: spec.networking presence and type', () => {
  it('requires networking for a shoot with workers (validateShoot; admit always creates it)', () => {
    const errors = validateShoot(shootObject({ withoutNetworking: true }), gateSets.none);
    expect(causesOf(errors)).toEqual([
      required(NET, 'Required value: networking should not be nil for a Shoot with workers'),
    ]);
  });

  it('does not require networking for a workerless shoot', () => {
    expect(validateShoot(shootObject({ workers: 0, withoutNetworking: true }), gateSets.none)).toEqual([]);
  });

  it.each<[string, string | undefined]>([
    ['missing', undefined],
    ['empty', ''],
  ])('requires the networking type of a shoot with workers (%s)', (_, type) => {
    expect(admitShoot(ipv4ShootObject({ type }))).toEqual([
      required(`${NET}.type`, 'Required value: networking type must be provided'),
    ]);
  });

  it.each<[string, Parameters<typeof shootObject>[0], string]>([
    ['type', { type: 'calico' }, `${NET}.type`],
    [
      'providerConfig',
      { providerConfig: { apiVersion: 'calico.networking.extensions.gardener.cloud/v1alpha1' } },
      `${NET}.providerConfig`,
    ],
    ['pods', { pods: SHOOT_IPV4_RANGES.pods }, `${NET}.pods`],
    ['nodes', { nodes: SHOOT_IPV4_RANGES.nodes }, `${NET}.nodes`],
  ])('forbids %s on a workerless shoot', (_, options, field) => {
    expect(admitShoot(shootObject({ workers: 0, ...options }))).toEqual([forbidden(field, WORKERLESS)]);
  });

  it('forbids each of type, providerConfig, pods and nodes on a workerless shoot, services stays allowed', () => {
    const object = shootObject({
      workers: 0,
      type: 'calico',
      providerConfig: { kind: 'NetworkConfig' },
      ...SHOOT_IPV4_RANGES,
    });
    expect(admitShoot(object)).toEqual([
      forbidden(`${NET}.type`, WORKERLESS),
      forbidden(`${NET}.providerConfig`, WORKERLESS),
      forbidden(`${NET}.pods`, WORKERLESS),
      forbidden(`${NET}.nodes`, WORKERLESS),
    ]);
  });
});

describe('Shoot create: ipFamilies rules 1–4 and feature gates', () => {
  const IPV6_NOT_SUPPORTED = 'IPv6 single-stack networking is not supported';
  const DUAL_NOT_SUPPORTED = 'dual-stack networking is not supported';
  const onList = (list: string[], detail: string) =>
    invalid(`${NET}.ipFamilies`, `Invalid value: ${JSON.stringify(list)}: ${detail}`);

  it.each<[string, string[], FeatureGates, Cause[]]>([
    // rule 1
    ['unknown family', ['IPv5'], gateSets.all, [notSupported(`${NET}.ipFamilies[0]`, 'IPv5')]],
    ['families are case-sensitive', ['ipv4'], gateSets.all, [notSupported(`${NET}.ipFamilies[0]`, 'ipv4')]],
    ['unknown second family', ['IPv4', 'IPv7'], gateSets.all, [notSupported(`${NET}.ipFamilies[1]`, 'IPv7')]],
    ['empty string', [''], gateSets.all, [notSupported(`${NET}.ipFamilies[0]`, '')]],
    // rule 2 (and rule 3 is skipped after rule 1 or 2, even with DualStack off)
    ['duplicate IPv4, DualStack off', ['IPv4', 'IPv4'], gateSets.none, [duplicate(`${NET}.ipFamilies[1]`, 'IPv4')]],
    ['duplicate in three', ['IPv4', 'IPv6', 'IPv4'], gateSets.all, [duplicate(`${NET}.ipFamilies[2]`, 'IPv4')]],
    [
      'unknown and duplicate, DualStack off',
      ['IPv4', 'IPv5', 'IPv5'],
      gateSets.none,
      [
        notSupported(`${NET}.ipFamilies[1]`, 'IPv5'),
        notSupported(`${NET}.ipFamilies[2]`, 'IPv5'),
        duplicate(`${NET}.ipFamilies[2]`, 'IPv5'),
      ],
    ],
    // rule 3
    [
      '[IPv4, IPv6] with DualStack off',
      ['IPv4', 'IPv6'],
      gateSets.none,
      [onList(['IPv4', 'IPv6'], DUAL_NOT_SUPPORTED)],
    ],
    [
      '[IPv4, IPv6] with only IPv6SingleStack',
      ['IPv4', 'IPv6'],
      gateSets.ipv6,
      [onList(['IPv4', 'IPv6'], DUAL_NOT_SUPPORTED)],
    ],
    ['[IPv4, IPv6] with DualStack on', ['IPv4', 'IPv6'], gateSets.dual, []],
    // rule 4
    ['[IPv6] with gates off', ['IPv6'], gateSets.none, [onList(['IPv6'], IPV6_NOT_SUPPORTED)]],
    ['[IPv6] with only DualStack', ['IPv6'], gateSets.dual, [onList(['IPv6'], IPV6_NOT_SUPPORTED)]],
    ['[IPv6] with IPv6SingleStack on', ['IPv6'], gateSets.ipv6, []],
    // rules 3 and 4 are independent
    [
      '[IPv6, IPv4] with gates off: both',
      ['IPv6', 'IPv4'],
      gateSets.none,
      [onList(['IPv6', 'IPv4'], DUAL_NOT_SUPPORTED), onList(['IPv6', 'IPv4'], IPV6_NOT_SUPPORTED)],
    ],
    [
      '[IPv6, IPv4] with only DualStack',
      ['IPv6', 'IPv4'],
      gateSets.dual,
      [onList(['IPv6', 'IPv4'], IPV6_NOT_SUPPORTED)],
    ],
    [
      '[IPv6, IPv4] with only IPv6SingleStack',
      ['IPv6', 'IPv4'],
      gateSets.ipv6,
      [onList(['IPv6', 'IPv4'], DUAL_NOT_SUPPORTED)],
    ],
    ['[IPv6, IPv4] with both gates', ['IPv6', 'IPv4'], gateSets.all, []],
    // rule 4 does not wait for rules 1–2
    [
      '[IPv6, IPv6] with gates off',
      ['IPv6', 'IPv6'],
      gateSets.none,
      [duplicate(`${NET}.ipFamilies[1]`, 'IPv6'), onList(['IPv6', 'IPv6'], IPV6_NOT_SUPPORTED)],
    ],
    // defaulting
    ['empty list (defaulted to [IPv4])', [], gateSets.none, []],
    ['[IPv4] with gates off', ['IPv4'], gateSets.none, []],
  ])('%s', (_, ipFamilies, gates, expected) => {
    expect(admitShoot(shootObject({ ipFamilies }), gates)).toEqual(expected);
  });

  it('takes the gates in --feature-gates format', () => {
    const object = shootObject({ ipFamilies: ['IPv6', 'IPv4'] });
    expect(admitShoot(object, parseFeatureGates('IPv6SingleStack=true,DualStack=true'))).toEqual([]);
    expect(admitShoot(object, parseFeatureGates('IPv6SingleStack=true,DualStack=false'))).toEqual([
      onList(['IPv6', 'IPv4'], DUAL_NOT_SUPPORTED),
    ]);
  });

  it.each<[string, string[], FeatureGates]>([
    ['rule 1', ['IPv5'], gateSets.all],
    ['rule 2', ['IPv4', 'IPv4'], gateSets.all],
    ['rule 3', ['IPv4', 'IPv6'], gateSets.none],
    ['rule 4', ['IPv6'], gateSets.none],
  ])('skips the CIDR checks of the section when %s fires', (_, ipFamilies, gates) => {
    const object = shootObject({ ipFamilies, nodes: 'nodes', pods: '10.0.0.1/8', services: '2001:db8::/16' });
    const errors = admitShoot(object, gates);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.map((e) => e.field).filter((f) => !f.startsWith(`${NET}.ipFamilies`))).toEqual([]);
  });
});

describe('Shoot create: CIDR checks of nodes, pods and services', () => {
  it.each<[string, Shoot, FeatureGates, Cause[]]>([
    // parse
    ...(['nodes', 'pods', 'services'] as const).map((name): [string, Shoot, FeatureGates, Cause[]] => [
      `${name}: not a CIDR`,
      ipv4ShootObject({ [name]: '10.0.0.0/33' }),
      gateSets.none,
      [invalid(`${NET}.${name}`, 'Invalid value: "10.0.0.0/33": invalid CIDR address: 10.0.0.0/33')],
    ]),
    [
      'an address without prefix',
      ipv4ShootObject({ pods: '100.96.0.0' }),
      gateSets.none,
      [invalid(`${NET}.pods`, 'Invalid value: "100.96.0.0": invalid CIDR address: 100.96.0.0')],
    ],
    [
      'IPv4 octet with a leading zero',
      ipv4ShootObject({ nodes: '010.180.0.0/16' }),
      gateSets.none,
      [invalid(`${NET}.nodes`, 'Invalid value: "010.180.0.0/16": invalid CIDR address: 010.180.0.0/16')],
    ],
    [
      'garbage',
      ipv4ShootObject({ services: 'services' }),
      gateSets.none,
      [invalid(`${NET}.services`, 'Invalid value: "services": invalid CIDR address: services')],
    ],
    [
      'IPv6 prefix too long',
      ipv6ShootObject({ pods: 'fd00::/129' }),
      gateSets.ipv6,
      [invalid(`${NET}.pods`, 'Invalid value: "fd00::/129": invalid CIDR address: fd00::/129')],
    ],
    // family against the primary family (single-stack only); the bad value is the network address
    [
      'IPv6 pods on an IPv4 shoot',
      ipv4ShootObject({ pods: '2001:db8:1::/48' }),
      gateSets.none,
      [invalid(`${NET}.pods`, 'Invalid value: "2001:db8:1::": must be a valid IPv4 address')],
    ],
    [
      'IPv4 nodes on an IPv6 shoot',
      ipv6ShootObject({ nodes: '10.180.0.0/16' }),
      gateSets.ipv6,
      [invalid(`${NET}.nodes`, 'Invalid value: "10.180.0.0": must be a valid IPv6 address')],
    ],
    [
      'IPv4 services on an IPv6 shoot',
      ipv6ShootObject({ services: '100.64.0.0/13' }),
      gateSets.ipv6,
      [invalid(`${NET}.services`, 'Invalid value: "100.64.0.0": must be a valid IPv6 address')],
    ],
    [
      'IPv4-mapped IPv6 counts as IPv4 (on an IPv6 shoot)',
      ipv6ShootObject({ pods: '::ffff:10.0.0.0/104' }),
      gateSets.ipv6,
      [invalid(`${NET}.pods`, 'Invalid value: "10.0.0.0": must be a valid IPv6 address')],
    ],
    [
      'IPv4-mapped IPv6 counts as IPv4 (on an IPv4 shoot)',
      ipv4ShootObject({ pods: '::ffff:100.96.0.0/107' }),
      gateSets.none,
      [],
    ],
    [
      'family and canonical check both report, family with the network address',
      ipv4ShootObject({ pods: '2001:db8:1::5/48' }),
      gateSets.none,
      [
        invalid(`${NET}.pods`, 'Invalid value: "2001:db8:1::": must be a valid IPv4 address'),
        invalid(`${NET}.pods`, 'Invalid value: "2001:db8:1::5/48": must be valid canonical CIDR'),
      ],
    ],
    [
      'no family check on dual-stack [IPv4, IPv6]',
      dualStackShootObject({ nodes: '2001:db8:2::/64', pods: 'fd00:20:1::/56' }),
      gateSets.dual,
      [],
    ],
    [
      'no family check on dual-stack [IPv6, IPv4]',
      shootObject({ ipFamilies: ['IPv6', 'IPv4'], ...SHOOT_IPV4_RANGES }),
      gateSets.all,
      [],
    ],
    // canonical
    [
      'IPv4 nodes with host bits',
      ipv4ShootObject({ nodes: '10.180.0.1/16' }),
      gateSets.none,
      [invalid(`${NET}.nodes`, 'Invalid value: "10.180.0.1/16": must be valid canonical CIDR')],
    ],
    [
      'IPv4 pods with host bits',
      ipv4ShootObject({ pods: '100.96.0.5/11' }),
      gateSets.none,
      [invalid(`${NET}.pods`, 'Invalid value: "100.96.0.5/11": must be valid canonical CIDR')],
    ],
    [
      'IPv6 services with host bits',
      ipv6ShootObject({ services: 'fd00:20:2::1/112' }),
      gateSets.ipv6,
      [invalid(`${NET}.services`, 'Invalid value: "fd00:20:2::1/112": must be valid canonical CIDR')],
    ],
    // order: nodes, pods, services
    [
      'errors come in the order nodes, pods, services',
      ipv4ShootObject({ services: 'x', pods: '100.96.0.1/11', nodes: '2001:db8::/64' }),
      gateSets.none,
      [
        invalid(`${NET}.nodes`, 'Invalid value: "2001:db8::": must be a valid IPv4 address'),
        invalid(`${NET}.pods`, 'Invalid value: "100.96.0.1/11": must be valid canonical CIDR'),
        invalid(`${NET}.services`, 'Invalid value: "x": invalid CIDR address: x'),
      ],
    ],
  ])('%s', (_, object, gates, expected) => {
    expect(admitShoot(object, gates)).toEqual(expected);
  });
});

describe('Shoot create: ranges no cluster network can use', () => {
  it.each<[string, Shoot, FeatureGates, Cause[]]>([
    [
      'IPv6 link-local nodes',
      ipv6ShootObject({ nodes: 'fe80::/64' }),
      gateSets.ipv6,
      [invalid(`${NET}.nodes`, 'Invalid value: "fe80::/64": must not overlap with the link-local (fe80::/10) range')],
    ],
    [
      'IPv6 multicast pods',
      ipv6ShootObject({ pods: 'ff02::/56' }),
      gateSets.ipv6,
      [invalid(`${NET}.pods`, 'Invalid value: "ff02::/56": must not overlap with the multicast (ff00::/8) range')],
    ],
    [
      'IPv6 services around loopback',
      ipv6ShootObject({ services: '::/112' }),
      gateSets.ipv6,
      [invalid(`${NET}.services`, 'Invalid value: "::/112": must not overlap with the unspecified (::/128) range')],
    ],
    [
      'IPv4 loopback nodes',
      ipv4ShootObject({ nodes: '127.0.0.0/16' }),
      gateSets.none,
      [
        invalid(
          `${NET}.nodes`,
          'Invalid value: "127.0.0.0/16": must not overlap with the loopback (127.0.0.0/8) range',
        ),
      ],
    ],
    [
      'IPv4 link-local pods',
      ipv4ShootObject({ pods: '169.254.0.0/16' }),
      gateSets.none,
      [
        invalid(
          `${NET}.pods`,
          'Invalid value: "169.254.0.0/16": must not overlap with the link-local (169.254.0.0/16) range',
        ),
      ],
    ],
    [
      'IPv4 pods spanning multicast',
      ipv4ShootObject({ pods: '192.0.0.0/2' }),
      gateSets.none,
      [invalid(`${NET}.pods`, 'Invalid value: "192.0.0.0/2": must not overlap with the multicast (224.0.0.0/4) range')],
    ],
    ['ULA and private ranges next to them', ipv6ShootObject({ nodes: 'fd00:10:1:100::/56' }), gateSets.ipv6, []],
  ])('%s', (_name, object, gates, expected) => {
    expect(admitShoot(object, gates)).toEqual(expected);
  });
});

describe('Shoot create: services range size (kube-apiserver --service-cluster-ip-range)', () => {
  it.each<[string, Shoot, FeatureGates, Cause[]]>([
    ['IPv4 /12 is the largest accepted', ipv4ShootObject({ services: '100.64.0.0/12' }), gateSets.none, []],
    [
      'IPv4 /11 is too large',
      ipv4ShootObject({ services: '100.64.0.0/11' }),
      gateSets.none,
      [invalid(`${NET}.services`, 'Invalid value: "100.64.0.0/11": cannot be larger than /12')],
    ],
    [
      'IPv4 /8 is too large',
      shootObject({ services: '11.0.0.0/8' }),
      gateSets.none,
      [invalid(`${NET}.services`, 'Invalid value: "11.0.0.0/8": cannot be larger than /12')],
    ],
    ['IPv6 /108 is the largest accepted', ipv6ShootObject({ services: 'fd00:20:2::/108' }), gateSets.ipv6, []],
    [
      'IPv6 /107 is too large',
      ipv6ShootObject({ services: 'fd00:20:2::/107' }),
      gateSets.ipv6,
      [invalid(`${NET}.services`, 'Invalid value: "fd00:20:2::/107": cannot be larger than /108')],
    ],
    [
      "IPv6 /48 (GEP-21's example) is too large",
      ipv6ShootObject({ services: 'fd00:20:2::/48' }),
      gateSets.ipv6,
      [invalid(`${NET}.services`, 'Invalid value: "fd00:20:2::/48": cannot be larger than /108')],
    ],
    [
      'by the family of the range on dual-stack',
      dualStackShootObject({ services: 'fd00:20:2::/64' }),
      gateSets.dual,
      [invalid(`${NET}.services`, 'Invalid value: "fd00:20:2::/64": cannot be larger than /108')],
    ],
    [
      'workerless shoots too',
      shootObject({ workers: 0, services: '100.64.0.0/10' }),
      gateSets.none,
      [invalid(`${NET}.services`, 'Invalid value: "100.64.0.0/10": cannot be larger than /12')],
    ],
    [
      'not checked when the range failed the canonical check',
      ipv4ShootObject({ services: '100.64.0.1/8' }),
      gateSets.none,
      [invalid(`${NET}.services`, 'Invalid value: "100.64.0.1/8": must be valid canonical CIDR')],
    ],
    [
      'not checked when the range failed the family check',
      ipv4ShootObject({ services: 'fd00::/48' }),
      gateSets.none,
      [invalid(`${NET}.services`, 'Invalid value: "fd00::": must be a valid IPv4 address')],
    ],
  ])('%s', (_, object, gates, expected) => {
    expect(admitShoot(object, gates)).toEqual(expected);
  });
});

describe('Shoot create: disjointness of nodes, pods and services', () => {
  const POD_SVC = 'shoot pod network intersects with shoot service network';
  const POD_NODE = 'shoot pod network intersects with shoot node network';
  const SVC_NODE = 'shoot service network intersects with shoot node network';

  it.each<[string, Shoot, FeatureGates, Cause[]]>([
    [
      'pods ∩ services, on services',
      ipv4ShootObject({ services: '100.96.0.0/16' }),
      gateSets.none,
      [invalid(`${NET}.services`, `Invalid value: "100.96.0.0/16": ${POD_SVC}`)],
    ],
    [
      'pods ∩ nodes, on pods',
      ipv4ShootObject({ nodes: '100.100.0.0/16' }),
      gateSets.none,
      [invalid(`${NET}.pods`, `Invalid value: "100.96.0.0/11": ${POD_NODE}`)],
    ],
    [
      'services ∩ nodes, on services',
      ipv4ShootObject({ nodes: '100.64.0.0/16' }),
      gateSets.none,
      [invalid(`${NET}.services`, `Invalid value: "100.64.0.0/13": ${SVC_NODE}`)],
    ],
    [
      'nodes containing pods',
      ipv4ShootObject({ nodes: '100.0.0.0/8', services: '10.96.0.0/12' }),
      gateSets.none,
      [invalid(`${NET}.pods`, `Invalid value: "100.96.0.0/11": ${POD_NODE}`)],
    ],
    [
      'all three the same range',
      ipv4ShootObject({ nodes: '10.0.0.0/16', pods: '10.0.0.0/16', services: '10.0.0.0/16' }),
      gateSets.none,
      [
        invalid(`${NET}.services`, `Invalid value: "10.0.0.0/16": ${POD_SVC}`),
        invalid(`${NET}.pods`, `Invalid value: "10.0.0.0/16": ${POD_NODE}`),
        invalid(`${NET}.services`, `Invalid value: "10.0.0.0/16": ${SVC_NODE}`),
      ],
    ],
    [
      'IPv6 pods ∩ services',
      ipv6ShootObject({ services: 'fd00:20:1::/112' }),
      gateSets.ipv6,
      [invalid(`${NET}.services`, `Invalid value: "fd00:20:1::/112": ${POD_SVC}`)],
    ],
    [
      'IPv6 services ∩ nodes',
      ipv6ShootObject({ services: '2001:db8:2::/112' }),
      gateSets.ipv6,
      [invalid(`${NET}.services`, `Invalid value: "2001:db8:2::/112": ${SVC_NODE}`)],
    ],
    [
      'IPv6 ranges of a dual-stack shoot',
      dualStackShootObject({ pods: 'fd00:20::/48', services: 'fd00:20:0:1::/112' }),
      gateSets.dual,
      [invalid(`${NET}.services`, `Invalid value: "fd00:20:0:1::/112": ${POD_SVC}`)],
    ],
    [
      'different families never intersect',
      dualStackShootObject({ pods: 'fd00:20::/48', services: '100.96.0.0/13' }),
      gateSets.dual,
      [],
    ],
    [
      'adjacent ranges do not intersect',
      ipv4ShootObject({ nodes: '100.128.0.0/16', pods: '100.96.0.0/11', services: '100.80.0.0/12' }),
      gateSets.none,
      [],
    ],
  ])('%s', (_, object, gates, expected) => {
    expect(admitShoot(object, gates)).toEqual(expected);
  });
});

describe('Shoot create: status.networking', () => {
  it.each<[string, NonNullable<Parameters<typeof shootObject>[0]>['statusNetworking'], Cause[]]>([
    [
      'valid ranges of any family',
      {
        nodes: ['10.180.0.0/16'],
        pods: ['100.96.0.0/11', 'fd00:20:1::/56'],
        services: ['100.64.0.0/13'],
        egressCIDRs: ['203.0.113.7/32', '2001:db8::/64'],
      },
      [],
    ],
    [
      'nodes with host bits',
      { nodes: ['10.180.0.1/16'] },
      [invalid('status.networking.nodes[0]', 'Invalid value: "10.180.0.1/16": must be valid canonical CIDR')],
    ],
    [
      'pods[1] unparsable',
      { pods: ['100.96.0.0/11', 'pods'] },
      [invalid('status.networking.pods[1]', 'Invalid value: "pods": invalid CIDR address: pods')],
    ],
    [
      'services with host bits (IPv6)',
      { services: ['fd00:20:2::1/112'] },
      [invalid('status.networking.services[0]', 'Invalid value: "fd00:20:2::1/112": must be valid canonical CIDR')],
    ],
    [
      'egressCIDRs without prefix',
      { egressCIDRs: ['203.0.113.7'] },
      [invalid('status.networking.egressCIDRs[0]', 'Invalid value: "203.0.113.7": invalid CIDR address: 203.0.113.7')],
    ],
  ])('%s', (_, statusNetworking, expected) => {
    expect(admitShoot(ipv4ShootObject({ statusNetworking }))).toEqual(expected);
  });
});

describe('Shoot create: kube-controller-manager', () => {
  const BOTH = 'Forbidden: only one of nodeCIDRMaskSize or nodeCIDRMaskSizeIPv6 can be set for single-stack clusters';
  const MASK = `${KCM}.nodeCIDRMaskSize`;
  const MASK6 = `${KCM}.nodeCIDRMaskSizeIPv6`;

  it.each<[string, Shoot, FeatureGates, Cause[]]>([
    // workerless
    [
      'workerless: nodeCIDRMaskSize forbidden',
      shootObject({ workers: 0, nodeCIDRMaskSize: 24 }),
      gateSets.none,
      [forbidden(MASK, WORKERLESS)],
    ],
    [
      'workerless: nodeCIDRMaskSizeIPv6 forbidden',
      shootObject({ workers: 0, ipFamilies: ['IPv4', 'IPv6'], nodeCIDRMaskSizeIPv6: 64 }),
      gateSets.dual,
      [forbidden(MASK6, WORKERLESS)],
    ],
    [
      'workerless: both forbidden',
      shootObject({ workers: 0, nodeCIDRMaskSize: 24, nodeCIDRMaskSizeIPv6: 64 }),
      gateSets.none,
      [forbidden(MASK, WORKERLESS), forbidden(MASK6, WORKERLESS)],
    ],
    // both set on IPv6 single-stack
    [
      'IPv6 single-stack: both set',
      ipv6ShootObject({ nodeCIDRMaskSize: 64, nodeCIDRMaskSizeIPv6: 64 }),
      gateSets.ipv6,
      [forbidden(MASK, BOTH)],
    ],
    [
      'dual-stack: both set is fine',
      dualStackShootObject({ nodeCIDRMaskSize: 24, nodeCIDRMaskSizeIPv6: 64 }),
      gateSets.dual,
      [],
    ],
    // nodeCIDRMaskSize bounds, IPv4 single-stack 16..28
    ['IPv4: 16', ipv4ShootObject({ nodeCIDRMaskSize: 16 }), gateSets.none, []],
    ['IPv4: 28 (maxPods 14)', ipv4ShootObject({ nodeCIDRMaskSize: 28, maxPods: 14 }), gateSets.none, []],
    [
      'IPv4: 15',
      ipv4ShootObject({ nodeCIDRMaskSize: 15 }),
      gateSets.none,
      [invalid(MASK, 'Invalid value: 15: nodeCIDRMaskSize must be between 16 and 28')],
    ],
    [
      'IPv4: 29 (maxPods 6)',
      ipv4ShootObject({ nodeCIDRMaskSize: 29, maxPods: 6 }),
      gateSets.none,
      [invalid(MASK, 'Invalid value: 29: nodeCIDRMaskSize must be between 16 and 28')],
    ],
    // IPv6 single-stack 64..124
    ['IPv6: 64', ipv6ShootObject({ nodeCIDRMaskSize: 64 }), gateSets.ipv6, []],
    [
      'IPv6: 124 (maxPods 14, pods /108)',
      ipv6ShootObject({ nodeCIDRMaskSize: 124, maxPods: 14, pods: 'fd00:20:1::/108' }),
      gateSets.ipv6,
      [],
    ],
    [
      'IPv6: 63',
      ipv6ShootObject({ nodeCIDRMaskSize: 63 }),
      gateSets.ipv6,
      [invalid(MASK, 'Invalid value: 63: nodeCIDRMaskSize must be between 64 and 124 for IPv6 single-stack clusters')],
    ],
    [
      'IPv6: 125 (maxPods 6, no pods)',
      ipv6ShootObject({ nodeCIDRMaskSize: 125, maxPods: 6, pods: undefined }),
      gateSets.ipv6,
      [invalid(MASK, 'Invalid value: 125: nodeCIDRMaskSize must be between 64 and 124 for IPv6 single-stack clusters')],
    ],
    // dual-stack: unbounded
    ['dual-stack: 12', dualStackShootObject({ nodeCIDRMaskSize: 12 }), gateSets.dual, []],
    ['dual-stack: 30 (maxPods 2)', dualStackShootObject({ nodeCIDRMaskSize: 30, maxPods: 2 }), gateSets.dual, []],
    // nodeCIDRMaskSizeIPv6
    [
      'IPv4 single-stack: nodeCIDRMaskSizeIPv6 forbidden',
      ipv4ShootObject({ nodeCIDRMaskSizeIPv6: 64 }),
      gateSets.none,
      [forbidden(MASK6, 'Forbidden: nodeCIDRMaskSizeIPv6 cannot be set for IPv4 single-stack clusters')],
    ],
    ['dual-stack: nodeCIDRMaskSizeIPv6 64', dualStackShootObject({ nodeCIDRMaskSizeIPv6: 64 }), gateSets.dual, []],
    ['dual-stack: nodeCIDRMaskSizeIPv6 124', dualStackShootObject({ nodeCIDRMaskSizeIPv6: 124 }), gateSets.dual, []],
    [
      'dual-stack: nodeCIDRMaskSizeIPv6 63',
      dualStackShootObject({ nodeCIDRMaskSizeIPv6: 63 }),
      gateSets.dual,
      [invalid(MASK6, 'Invalid value: 63: nodeCIDRMaskSizeIPv6 must be between 64 and 124')],
    ],
    [
      'dual-stack: nodeCIDRMaskSizeIPv6 125',
      dualStackShootObject({ nodeCIDRMaskSizeIPv6: 125 }),
      gateSets.dual,
      [invalid(MASK6, 'Invalid value: 125: nodeCIDRMaskSizeIPv6 must be between 64 and 124')],
    ],
    [
      'IPv6 single-stack: nodeCIDRMaskSizeIPv6 alone 80',
      ipv6ShootObject({ nodeCIDRMaskSizeIPv6: 80, pods: 'fd00:20::/64' }),
      gateSets.ipv6,
      [],
    ],
    [
      'IPv6 single-stack: nodeCIDRMaskSizeIPv6 alone 130',
      ipv6ShootObject({ nodeCIDRMaskSizeIPv6: 130, pods: undefined }),
      gateSets.ipv6,
      [invalid(MASK6, 'Invalid value: 130: nodeCIDRMaskSizeIPv6 must be between 64 and 124')],
    ],
  ])('%s', (_, object, gates, expected) => {
    expect(admitShoot(object, gates)).toEqual(expected);
  });

  describe('nodeCIDRMaskSize leaves room for maxPods: 2^(B − mask) − 2 ≥ maxPods', () => {
    it.each<[string, Shoot, FeatureGates, { mask: number; addresses: number; maxPods: number } | undefined]>([
      ['IPv4 /25 holds 126 ≥ 110', ipv4ShootObject({ nodeCIDRMaskSize: 25 }), gateSets.none, undefined],
      [
        'IPv4 /26 holds 62 < 110 (default maxPods)',
        ipv4ShootObject({ nodeCIDRMaskSize: 26 }),
        gateSets.none,
        { mask: 26, addresses: 62, maxPods: 110 },
      ],
      [
        'IPv4 /25 with shoot maxPods 126',
        ipv4ShootObject({ nodeCIDRMaskSize: 25, maxPods: 126 }),
        gateSets.none,
        undefined,
      ],
      [
        'IPv4 /25 with shoot maxPods 127',
        ipv4ShootObject({ nodeCIDRMaskSize: 25, maxPods: 127 }),
        gateSets.none,
        { mask: 25, addresses: 126, maxPods: 127 },
      ],
      [
        'IPv4 /24 with a worker at 250',
        ipv4ShootObject({ nodeCIDRMaskSize: 24, workerMaxPods: [undefined, 250] }),
        gateSets.none,
        undefined,
      ],
      [
        'IPv4 /24 with a worker at 260',
        ipv4ShootObject({ nodeCIDRMaskSize: 24, workerMaxPods: [100, 260] }),
        gateSets.none,
        { mask: 24, addresses: 254, maxPods: 260 },
      ],
      [
        'IPv4 /24 with shoot 300 and worker 50',
        ipv4ShootObject({ nodeCIDRMaskSize: 24, maxPods: 300, workerMaxPods: [50] }),
        gateSets.none,
        { mask: 24, addresses: 254, maxPods: 300 },
      ],
      [
        'IPv6 /120 holds 254 (B = 128)',
        ipv6ShootObject({ nodeCIDRMaskSize: 120, maxPods: 254, pods: 'fd00:20::/112' }),
        gateSets.ipv6,
        undefined,
      ],
      [
        'IPv6 /120 with maxPods 255',
        ipv6ShootObject({ nodeCIDRMaskSize: 120, maxPods: 255, pods: 'fd00:20::/112' }),
        gateSets.ipv6,
        { mask: 120, addresses: 254, maxPods: 255 },
      ],
      [
        'dual-stack uses B = 32: /26 with 110',
        dualStackShootObject({ nodeCIDRMaskSize: 26 }),
        gateSets.dual,
        { mask: 26, addresses: 62, maxPods: 110 },
      ],
    ])('%s', (_, object, gates, failure) => {
      const errors = admitShoot(object, gates);
      if (!failure) {
        expect(errors).toEqual([]);
        return;
      }
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ field: MASK, reason: 'FieldValueInvalid' });
      expect(errors[0]!.message).toMatch(new RegExp(`^Invalid value: ${failure.mask}: `));
      expect(errors[0]!.message).toContain(`${failure.mask} only supports ${failure.addresses} IP addresses.`);
      expect(errors[0]!.message).toContain(`The highest maxPod setting is ${failure.maxPods} `);
    });
  });

  describe('IPv6 node mask against IPv6 pods (at most 16 bits longer than the pods prefix)', () => {
    it.each<[string, Shoot, FeatureGates, { field: string; mask: number; pods: string } | undefined]>([
      [
        'IPv6 single-stack, pods /48, defaulted /64',
        ipv6ShootObject({ pods: 'fd00:20::/48' }),
        gateSets.ipv6,
        undefined,
      ],
      ['IPv6 single-stack, pods /56, defaulted /64', ipv6ShootObject(), gateSets.ipv6, undefined],
      [
        'IPv6 single-stack, pods /64, defaulted /64',
        ipv6ShootObject({ pods: 'fd00:20::/64' }),
        gateSets.ipv6,
        undefined,
      ],
      [
        'IPv6 single-stack, pods /47, defaulted /64',
        ipv6ShootObject({ pods: 'fd00:20::/47' }),
        gateSets.ipv6,
        { field: MASK, mask: 64, pods: 'fd00:20::/47' },
      ],
      [
        'IPv6 single-stack, pods /72, defaulted /64 (mask shorter than pods)',
        ipv6ShootObject({ pods: 'fd00:20::/72' }),
        gateSets.ipv6,
        { field: MASK, mask: 64, pods: 'fd00:20::/72' },
      ],
      [
        'IPv6 single-stack, nodeCIDRMaskSizeIPv6 80 with pods /56',
        ipv6ShootObject({ nodeCIDRMaskSizeIPv6: 80 }),
        gateSets.ipv6,
        { field: MASK6, mask: 80, pods: SHOOT_IPV6_RANGES.pods },
      ],
      [
        'IPv6 single-stack, nodeCIDRMaskSizeIPv6 72 with pods /56',
        ipv6ShootObject({ nodeCIDRMaskSizeIPv6: 72 }),
        gateSets.ipv6,
        undefined,
      ],
      [
        'dual-stack, IPv6 pods /48, defaulted nodeCIDRMaskSizeIPv6 /64',
        dualStackShootObject({ pods: 'fd00:20::/48' }),
        gateSets.dual,
        undefined,
      ],
      [
        'dual-stack, IPv6 pods /48, nodeCIDRMaskSizeIPv6 65',
        dualStackShootObject({ pods: 'fd00:20::/48', nodeCIDRMaskSizeIPv6: 65 }),
        gateSets.dual,
        { field: MASK6, mask: 65, pods: 'fd00:20::/48' },
      ],
      ['IPv4 pods: not applicable', ipv4ShootObject({ nodeCIDRMaskSize: 16 }), gateSets.none, undefined],
    ])('%s', (_, object, gates, failure) => {
      const errors = admitShoot(object, gates);
      if (!failure) {
        expect(errors).toEqual([]);
        return;
      }
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ field: failure.field, reason: 'FieldValueInvalid' });
      expect(errors[0]!.message).toMatch(new RegExp(`^Invalid value: ${failure.mask}: `));
      expect(errors[0]!.message).toContain('at most 16 bits longer than the pods prefix');
      expect(errors[0]!.message).toContain(failure.pods);
    });

    it('uses nodeCIDRMaskSize on dual-stack only for IPv4 (validateShoot without defaults)', () => {
      const object = dualStackShootObject({ pods: 'fd00:20::/48', nodeCIDRMaskSize: 24 });
      expect(validateShoot(object, gateSets.dual)).toEqual([]);
    });
  });
});
