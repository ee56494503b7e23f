import { describe, expect, it } from 'vitest';
import { admit } from '../../../../src/apis/admission.js';
import { defaultSeed } from '../../../../src/apis/core/v1beta1/defaults.js';
import type { Seed, SeedNetworks } from '../../../../src/apis/core/v1beta1/seed.js';
import { validateSeed, validateSeedUpdate } from '../../../../src/apis/core/v1beta1/validation/seed.js';
import { errorString, type ErrorList } from '../../../../src/apis/field/index.js';
import { featureGates } from '../../../../src/featuregate/featuregate.js';
import { seedDualStackNetworks, seedIPv4Networks, seedIPv6Networks, seedObject } from '../../../fixtures/objects.js';

const OFF = featureGates();
const IPV6 = featureGates({ IPv6SingleStack: true });
const DUAL = featureGates({ DualStack: true });
const ALL = featureGates({ IPv6SingleStack: true, DualStack: true });

const messages = (errors: ErrorList) => errors.map(errorString);
/** Validates a seed the way the API server sees it: defaulted first. */
const validate = (seed: Seed, gates = OFF) => messages(validateSeed(defaultSeed(seed), gates));
const ipv6Seed = (networks: Partial<SeedNetworks> = {}) => seedObject(networks, { base: seedIPv6Networks });
const dualSeed = (networks: Partial<SeedNetworks> = {}) => seedObject(networks, { base: seedDualStackNetworks });

describe('Seed validation', () => {
  describe('valid seeds', () => {
    it('accepts an IPv4 seed without gates', () => {
      expect(validate(seedObject())).toEqual([]);
    });
    it('accepts an IPv6 seed with IPv6SingleStack', () => {
      expect(validate(ipv6Seed(), IPV6)).toEqual([]);
    });
    it('accepts a dual-stack seed with DualStack', () => {
      expect(validate(dualSeed(), DUAL)).toEqual([]);
    });
    it('accepts a seed with only the required ranges', () => {
      expect(validate(seedObject({ nodes: undefined, shootDefaults: undefined, ipFamilies: undefined }))).toEqual([]);
    });
  });

  describe('ipFamilies', () => {
    const path = 'spec.networks.ipFamilies';

    it('rule 1: an unknown family is NotSupported at its index', () => {
      expect(validate(seedObject({ ipFamilies: ['IPv5'] }))).toEqual([
        `${path}[0]: Unsupported value: "IPv5": supported values: "IPv4", "IPv6"`,
      ]);
      expect(validate(seedObject({ ipFamilies: ['IPv4', 'ipv6'] }), DUAL)).toEqual([
        `${path}[1]: Unsupported value: "ipv6": supported values: "IPv4", "IPv6"`,
      ]);
    });

    it('rule 2: a repeated family is a Duplicate at its index, and rule 3 stays silent', () => {
      expect(validate(seedObject({ ipFamilies: ['IPv4', 'IPv4'] }))).toEqual([`${path}[1]: Duplicate value: "IPv4"`]);
      expect(validate(seedObject({ ipFamilies: ['IPv4', 'IPv6', 'IPv4'] }))).toEqual([
        `${path}[2]: Duplicate value: "IPv4"`,
      ]);
    });

    it('rule 3: two families need DualStack', () => {
      expect(validate(dualSeed())).toEqual([
        `${path}: Invalid value: ["IPv4","IPv6"]: dual-stack networking is not supported`,
      ]);
      expect(validate(dualSeed(), DUAL)).toEqual([]);
      expect(validate(dualSeed(), IPV6)).toEqual([
        `${path}: Invalid value: ["IPv4","IPv6"]: dual-stack networking is not supported`,
      ]);
    });

    it('rule 4: an IPv6 primary family needs IPv6SingleStack', () => {
      expect(validate(ipv6Seed())).toEqual([
        `${path}: Invalid value: ["IPv6"]: IPv6 single-stack networking is not supported`,
      ]);
      expect(validate(ipv6Seed(), DUAL)).toEqual([
        `${path}: Invalid value: ["IPv6"]: IPv6 single-stack networking is not supported`,
      ]);
      expect(validate(ipv6Seed(), IPV6)).toEqual([]);
    });

    it('rules 3 and 4 are independent', () => {
      const seed = dualSeed({ ipFamilies: ['IPv6', 'IPv4'], services: '10.2.0.0/16', pods: 'fd00:10:1::/56' });
      expect(validate(seed)).toEqual([
        `${path}: Invalid value: ["IPv6","IPv4"]: dual-stack networking is not supported`,
        `${path}: Invalid value: ["IPv6","IPv4"]: IPv6 single-stack networking is not supported`,
      ]);
      expect(validate(seed, DUAL)).toEqual([
        `${path}: Invalid value: ["IPv6","IPv4"]: IPv6 single-stack networking is not supported`,
      ]);
      expect(validate(seed, IPV6)).toEqual([
        `${path}: Invalid value: ["IPv6","IPv4"]: dual-stack networking is not supported`,
      ]);
      expect(validate(seed, ALL)).toEqual([]);
    });

    it('rule 4 fires alongside rules 1 and 2', () => {
      expect(validate(ipv6Seed({ ipFamilies: ['IPv6', 'IPv6'] }))).toEqual([
        `${path}[1]: Duplicate value: "IPv6"`,
        `${path}: Invalid value: ["IPv6","IPv6"]: IPv6 single-stack networking is not supported`,
      ]);
      expect(validate(ipv6Seed({ ipFamilies: ['IPv6', 'IPX'] }))).toEqual([
        `${path}[1]: Unsupported value: "IPX": supported values: "IPv4", "IPv6"`,
        `${path}: Invalid value: ["IPv6","IPX"]: IPv6 single-stack networking is not supported`,
      ]);
    });

    it('stops the CIDR checks of the section when any rule fires', () => {
      const broken = { pods: 'bogus', services: undefined, nodes: '10.1.0.0/16' };
      expect(validate(seedObject({ ...broken, ipFamilies: ['IPv5'] }))).toEqual([
        `${path}[0]: Unsupported value: "IPv5": supported values: "IPv4", "IPv6"`,
      ]);
      expect(validate(seedObject({ ...broken, ipFamilies: ['IPv4', 'IPv4'] }))).toEqual([
        `${path}[1]: Duplicate value: "IPv4"`,
      ]);
      expect(validate(seedObject({ ...broken, ipFamilies: ['IPv4', 'IPv6'] }))).toEqual([
        `${path}: Invalid value: ["IPv4","IPv6"]: dual-stack networking is not supported`,
      ]);
      expect(validate(seedObject({ ...broken, ipFamilies: ['IPv6'] }))).toEqual([
        `${path}: Invalid value: ["IPv6"]: IPv6 single-stack networking is not supported`,
      ]);
    });
  });

  describe('required ranges', () => {
    it.each(['pods', 'services'] as const)('%s is required', (name) => {
      const errors = validateSeed(defaultSeed(seedObject({ [name]: undefined })), OFF);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ type: 'FieldValueRequired', field: `spec.networks.${name}` });
    });

    it('reports both missing ranges', () => {
      const errors = validateSeed(defaultSeed(seedObject({ pods: undefined, services: undefined })), OFF);
      expect(errors.map((e) => [e.type, e.field])).toEqual([
        ['FieldValueRequired', 'spec.networks.pods'],
        ['FieldValueRequired', 'spec.networks.services'],
      ]);
    });

    it('an empty pods range counts as missing', () => {
      const errors = validateSeed(defaultSeed(seedObject({ pods: '' })), OFF);
      expect(errors.map((e) => [e.type, e.field])).toContainEqual(['FieldValueRequired', 'spec.networks.pods']);
    });

    it('requires spec.networks', () => {
      const seed = seedObject();
      delete seed.spec.networks;
      expect(validateSeed(seed, OFF).map((e) => [e.type, e.field])).toEqual([['FieldValueRequired', 'spec.networks']]);
    });

    it('nodes and shootDefaults are optional', () => {
      expect(validate(seedObject({ nodes: undefined }))).toEqual([]);
      expect(validate(seedObject({ shootDefaults: undefined }))).toEqual([]);
      expect(validate(seedObject({ shootDefaults: { pods: '100.96.0.0/11' } }))).toEqual([]);
      expect(validate(seedObject({ shootDefaults: {} }))).toEqual([]);
    });
  });

  describe('parsing', () => {
    it.each([
      ['pods', 'spec.networks.pods'],
      ['services', 'spec.networks.services'],
      ['nodes', 'spec.networks.nodes'],
    ] as const)('rejects an unparsable %s', (name, field) => {
      expect(validate(seedObject({ [name]: '10.1.0.0/33' }))).toEqual([
        `${field}: Invalid value: "10.1.0.0/33": invalid CIDR address: 10.1.0.0/33`,
      ]);
    });

    it.each(['pods', 'services'] as const)('rejects an unparsable shootDefaults.%s', (name) => {
      const shootDefaults = { ...seedIPv4Networks.shootDefaults, [name]: '100.064.0.0/13' };
      expect(validate(seedObject({ shootDefaults }))).toEqual([
        `spec.networks.shootDefaults.${name}: Invalid value: "100.064.0.0/13": invalid CIDR address: 100.064.0.0/13`,
      ]);
    });

    it('reports every unparsable range', () => {
      expect(
        validate(seedObject({ pods: 'a', services: 'b', nodes: 'c', shootDefaults: { pods: 'd', services: 'e' } })),
      ).toEqual([
        'spec.networks.pods: Invalid value: "a": invalid CIDR address: a',
        'spec.networks.services: Invalid value: "b": invalid CIDR address: b',
        'spec.networks.nodes: Invalid value: "c": invalid CIDR address: c',
        'spec.networks.shootDefaults.pods: Invalid value: "d": invalid CIDR address: d',
        'spec.networks.shootDefaults.services: Invalid value: "e": invalid CIDR address: e',
      ]);
    });

    it('does no canonical check: host bits may be set', () => {
      expect(
        validate(
          seedObject({
            pods: '10.1.2.3/16',
            services: '10.2.0.1/16',
            nodes: '10.250.1.1/16',
            shootDefaults: { pods: '100.100.0.1/11', services: '100.64.5.5/13' },
          }),
        ),
      ).toEqual([]);
      expect(validate(ipv6Seed({ pods: 'fd00:10:1::1/56', services: 'fd00:10:2::a/112' }), IPV6)).toEqual([]);
    });
  });

  describe('family check (single-stack only)', () => {
    it.each([
      ['pods', 'fd00:10:1::1/56', 'fd00:10:1::'],
      ['services', 'fd00:10:2::/112', 'fd00:10:2::'],
      ['nodes', '2001:db8:1:0:5::/48', '2001:db8:1::'],
    ] as const)('rejects an IPv6 %s on an IPv4 seed with the network address as bad value', (name, value, network) => {
      expect(validate(seedObject({ [name]: value }))).toEqual([
        `spec.networks.${name}: Invalid value: "${network}": must be a valid IPv4 address`,
      ]);
    });

    it.each(['pods', 'services'] as const)('rejects an IPv6 shootDefaults.%s on an IPv4 seed', (name) => {
      const shootDefaults = { ...seedIPv4Networks.shootDefaults, [name]: 'fd00:10:3::/56' };
      expect(validate(seedObject({ shootDefaults }))).toEqual([
        `spec.networks.shootDefaults.${name}: Invalid value: "fd00:10:3::": must be a valid IPv4 address`,
      ]);
    });

    it('checks an empty ipFamilies list against IPv4', () => {
      expect(validate(seedObject({ ipFamilies: [], pods: 'fd00:10:1::/56' }))).toEqual([
        'spec.networks.pods: Invalid value: "fd00:10:1::": must be a valid IPv4 address',
      ]);
    });

    it('rejects IPv4 ranges on an IPv6 seed, network address as bad value', () => {
      expect(
        validate(
          ipv6Seed({
            services: '10.2.3.4/16',
            nodes: '::ffff:10.250.0.0/112',
            shootDefaults: { pods: '100.96.0.0/11' },
          }),
          IPV6,
        ),
      ).toEqual([
        'spec.networks.services: Invalid value: "10.2.0.0": must be a valid IPv6 address',
        'spec.networks.nodes: Invalid value: "10.250.0.0": must be a valid IPv6 address',
        'spec.networks.shootDefaults.pods: Invalid value: "100.96.0.0": must be a valid IPv6 address',
      ]);
    });

    it('does not check families on a dual-stack seed', () => {
      const mixed = {
        pods: 'fd00:10:1::/56',
        services: '10.2.0.0/16',
        nodes: 'fd00:10::/64',
        shootDefaults: { pods: '100.96.0.0/11', services: 'fd00:10:4::/112' },
      };
      expect(validate(dualSeed(mixed), DUAL)).toEqual([]);
      expect(validate(dualSeed({ ...mixed, ipFamilies: ['IPv6', 'IPv4'] }), ALL)).toEqual([]);
    });
  });

  describe('stops after the parse and family errors', () => {
    it('skips disjointness, VPN and services-size checks once an error was found', () => {
      const overlapping = { services: '10.0.0.0/7', nodes: '10.1.0.0/24', shootDefaults: { pods: '192.168.123.0/24' } };
      expect(validate(seedObject({ ...overlapping, pods: 'bogus' }))).toEqual([
        'spec.networks.pods: Invalid value: "bogus": invalid CIDR address: bogus',
      ]);
      expect(validate(seedObject({ ...overlapping, pods: 'fd00::/8' }))).toEqual([
        'spec.networks.pods: Invalid value: "fd00::": must be a valid IPv4 address',
      ]);
      expect(validate(seedObject({ ...overlapping, pods: undefined })).map((m) => m.split(':')[0])).toEqual([
        'spec.networks.pods',
      ]);
    });
  });

  describe('pairwise disjointness', () => {
    const order = [
      ['spec.networks.pods', seedIPv4Networks.pods!],
      ['spec.networks.services', seedIPv4Networks.services!],
      ['spec.networks.nodes', seedIPv4Networks.nodes!],
      ['spec.networks.shootDefaults.pods', seedIPv4Networks.shootDefaults!.pods!],
      ['spec.networks.shootDefaults.services', seedIPv4Networks.shootDefaults!.services!],
    ] as const;
    const withValue = (field: string, value: string): Partial<SeedNetworks> => {
      if (field.startsWith('spec.networks.shootDefaults.')) {
        const name = field.slice('spec.networks.shootDefaults.'.length);
        return { shootDefaults: { ...seedIPv4Networks.shootDefaults, [name]: value } };
      }
      return { [field.slice('spec.networks.'.length)]: value };
    };
    const pairs = order.flatMap(([earlier, earlierCIDR], i) =>
      order.slice(i + 1).map(([later]) => [later, earlier, earlierCIDR] as const),
    );

    it.each(pairs)('%s overlapping %s is reported on the later field', (later, earlier, earlierCIDR) => {
      // a subnet of the earlier range, written with host bits
      const subnet = earlierCIDR.replace(/\.0\.0\/\d+$/, '.7.9/24');
      expect(validate(seedObject(withValue(later, subnet)))).toEqual([
        `${later}: Invalid value: "${subnet}": must not overlap with "${earlier}" ("${earlierCIDR}")`,
      ]);
    });

    it('reports a range against each earlier range it overlaps, in order', () => {
      const seed = seedObject({ pods: '10.1.0.0/16', services: '10.2.0.0/16', nodes: '10.0.0.0/14' });
      expect(validate(seed)).toEqual([
        'spec.networks.nodes: Invalid value: "10.0.0.0/14": must not overlap with "spec.networks.pods" ("10.1.0.0/16")',
        'spec.networks.nodes: Invalid value: "10.0.0.0/14": must not overlap with "spec.networks.services" ("10.2.0.0/16")',
      ]);
    });

    it('names the earlier range as written (host bits kept)', () => {
      expect(validate(seedObject({ pods: '10.1.2.3/16', nodes: '10.1.200.0/24' }))).toEqual([
        'spec.networks.nodes: Invalid value: "10.1.200.0/24": must not overlap with "spec.networks.pods" ("10.1.2.3/16")',
      ]);
    });

    it('checks IPv6 seeds too', () => {
      expect(validate(ipv6Seed({ services: 'fd00:10:1:ff::/112' }), IPV6)).toEqual([
        'spec.networks.services: Invalid value: "fd00:10:1:ff::/112": must not overlap with "spec.networks.pods" ("fd00:10:1::/56")',
      ]);
    });

    it('ranges of different families never overlap on a dual-stack seed', () => {
      // ::fffe:0:0/95 holds ::ffff:10.0.0.0/104, the IPv4-mapped form of the pods range, and still doesn't overlap it
      expect(validate(dualSeed({ pods: '10.0.0.0/8', services: '::fffe:0:0/95', nodes: '11.0.0.0/8' }), DUAL)).toEqual(
        [],
      );
    });
  });

  describe('VPN ranges', () => {
    it.each([
      ['pods', 'pod'],
      ['services', 'service'],
      ['nodes', 'node'],
    ] as const)('an IPv4 %s range must not touch 192.168.123.0/24', (name, kind) => {
      expect(validate(seedObject({ [name]: '192.168.0.0/16' }))).toEqual([
        `spec.networks.${name}: Invalid value: "192.168.0.0/16": ${kind} network intersects with default vpn network (192.168.123.0/24)`,
      ]);
    });

    it.each([
      ['pods', 'pod'],
      ['services', 'service'],
    ] as const)('an IPv4 shootDefaults.%s range must not touch the VPN range', (name, kind) => {
      const shootDefaults = { ...seedIPv4Networks.shootDefaults, [name]: '192.168.123.128/25' };
      expect(validate(seedObject({ shootDefaults }))).toEqual([
        `spec.networks.shootDefaults.${name}: Invalid value: "192.168.123.128/25": ${kind} network intersects with default vpn network (192.168.123.0/24)`,
      ]);
    });

    it('an IPv6 range must not touch fd8f:6d53:b97a:1::/96', () => {
      expect(validate(ipv6Seed({ pods: 'fd8f:6d53:b97a::/56' }), IPV6)).toEqual([
        'spec.networks.pods: Invalid value: "fd8f:6d53:b97a::/56": pod network intersects with default vpn network (fd8f:6d53:b97a:1::/96)',
      ]);
      expect(validate(ipv6Seed({ nodes: 'fd8f:6d53:b97a:1::1:0/112' }), IPV6)).toEqual([
        'spec.networks.nodes: Invalid value: "fd8f:6d53:b97a:1::1:0/112": node network intersects with default vpn network (fd8f:6d53:b97a:1::/96)',
      ]);
    });

    it('checks each range against the VPN range of its own family on a dual-stack seed', () => {
      expect(validate(dualSeed({ services: 'fd8f:6d53:b97a:1::/112', pods: '192.168.123.0/26' }), DUAL)).toEqual([
        'spec.networks.pods: Invalid value: "192.168.123.0/26": pod network intersects with default vpn network (192.168.123.0/24)',
        'spec.networks.services: Invalid value: "fd8f:6d53:b97a:1::/112": service network intersects with default vpn network (fd8f:6d53:b97a:1::/96)',
      ]);
    });

    it('ranges next to the VPN range are fine', () => {
      expect(validate(seedObject({ nodes: '192.168.122.0/24' }))).toEqual([]);
      expect(validate(seedObject({ nodes: '192.168.124.0/22' }))).toEqual([]);
      expect(validate(ipv6Seed({ nodes: 'fd8f:6d53:b97a:2::/64' }), IPV6)).toEqual([]);
    });
  });

  describe("Gardener's reserved IPv4 mapping ranges 240-244/8", () => {
    it.each([
      ['240.0.0.0/8', 'kube-apiserver mapping range'],
      ['241.0.0.0/8', 'seed pod network mapping range'],
      ['242.0.0.0/8', 'shoot node network mapping range'],
      ['243.0.0.0/8', 'shoot service network mapping range'],
      ['244.0.0.0/8', 'shoot pod network mapping range'],
    ])('%s (%s) is refused for every IPv4 range', (range, name) => {
      const inside = range.replace('.0.0.0/8', '.10.0.0/16');
      for (const [field, kind] of [
        ['pods', 'pod'],
        ['services', 'service'],
        ['nodes', 'node'],
      ] as const) {
        expect(validate(seedObject({ [field]: inside }))).toEqual([
          `spec.networks.${field}: Invalid value: "${inside}": ${kind} network intersects with reserved ${name} (${range})`,
        ]);
      }
      for (const [field, kind] of [
        ['pods', 'pod'],
        ['services', 'service'],
      ] as const) {
        const shootDefaults = { ...seedIPv4Networks.shootDefaults, [field]: inside };
        expect(validate(seedObject({ shootDefaults }))).toEqual([
          `spec.networks.shootDefaults.${field}: Invalid value: "${inside}": ${kind} network intersects with reserved ${name} (${range})`,
        ]);
      }
    });

    it('a range covering several reserved ranges gets one error per range', () => {
      expect(validate(seedObject({ nodes: '240.0.0.0/6' }))).toEqual([
        'spec.networks.nodes: Invalid value: "240.0.0.0/6": node network intersects with reserved kube-apiserver mapping range (240.0.0.0/8)',
        'spec.networks.nodes: Invalid value: "240.0.0.0/6": node network intersects with reserved seed pod network mapping range (241.0.0.0/8)',
        'spec.networks.nodes: Invalid value: "240.0.0.0/6": node network intersects with reserved shoot node network mapping range (242.0.0.0/8)',
        'spec.networks.nodes: Invalid value: "240.0.0.0/6": node network intersects with reserved shoot service network mapping range (243.0.0.0/8)',
      ]);
      // 240.0.0.0/4 holds the five and the broadcast address
      expect(validate(seedObject({ nodes: '240.0.0.0/4' }))).toHaveLength(6);
    });

    it('ranges next to them, and IPv6 ranges, are fine', () => {
      expect(validate(seedObject({ nodes: '245.0.0.0/8' }))).toEqual([]);
      expect(validate(dualSeed({ nodes: 'fd00:f0::/64' }), DUAL)).toEqual([]);
    });
  });

  describe('ranges no cluster network can use', () => {
    it.each([
      ['nodes', '239.255.0.0/16', 'multicast (224.0.0.0/4)'],
      ['pods', '127.0.0.0/8', 'loopback (127.0.0.0/8)'],
      ['services', '169.254.0.0/16', 'link-local (169.254.0.0/16)'],
    ])('IPv4 %s %s overlaps the %s range', (field, value, what) => {
      expect(validate(seedObject({ [field]: value }))).toEqual([
        `spec.networks.${field}: Invalid value: "${value}": must not overlap with the ${what} range`,
      ]);
    });
    it.each([
      ['nodes', 'fe80::/64', 'link-local (fe80::/10)'],
      ['pods', 'ff00::/56', 'multicast (ff00::/8)'],
      ['services', '::/112', 'unspecified (::/128)'],
    ])('IPv6 %s %s overlaps the %s range', (field, value, what) => {
      expect(validate(ipv6Seed({ [field]: value }), IPV6)).toEqual([
        `spec.networks.${field}: Invalid value: "${value}": must not overlap with the ${what} range`,
      ]);
    });
  });

  describe('IPv4 services size', () => {
    it('rejects IPv4 services larger than /8', () => {
      expect(validate(seedObject({ services: '12.0.0.0/7' }))).toEqual([
        'spec.networks.services: Invalid value: "12.0.0.0/7": cannot be larger than /8',
      ]);
    });
    it('accepts /8 and smaller', () => {
      expect(validate(seedObject({ services: '12.0.0.0/8' }))).toEqual([]);
      expect(validate(seedObject({ services: '12.0.0.0/30' }))).toEqual([]);
    });
    it('does not limit other ranges or IPv6 services', () => {
      expect(validate(seedObject({ pods: '12.0.0.0/6' }))).toEqual([]);
      expect(validate(ipv6Seed({ services: 'fd01::/16' }), IPV6)).toEqual([]);
    });
  });

  describe('blockCIDRs', () => {
    it('accepts ranges of either family', () => {
      expect(validate(seedObject({ blockCIDRs: ['169.254.169.254/32', 'fd00:ec2::254/128', '10.1.0.5/16'] }))).toEqual(
        [],
      );
    });
    it('rejects an unparsable entry at its index', () => {
      expect(validate(seedObject({ blockCIDRs: ['169.254.169.254/32', '169.254.169.254', 'fd00::/129'] }))).toEqual([
        'spec.networks.blockCIDRs[1]: Invalid value: "169.254.169.254": invalid CIDR address: 169.254.169.254',
        'spec.networks.blockCIDRs[2]: Invalid value: "fd00::/129": invalid CIDR address: fd00::/129',
      ]);
    });
    it('does not stop the overlap checks of the other ranges', () => {
      const seed = seedObject({ blockCIDRs: ['bad'], services: seedObject().spec.networks!.pods! });
      const errors = validate(seed);
      expect(errors).toContain('spec.networks.blockCIDRs[0]: Invalid value: "bad": invalid CIDR address: bad');
      expect(
        errors.some((e) => e.startsWith('spec.networks.services: Invalid value:') && e.includes('must not overlap')),
      ).toBe(true);
    });
  });

  describe('update', () => {
    const update = (next: Seed, prev: Seed, gates = OFF) =>
      messages(validateSeedUpdate(defaultSeed(next), defaultSeed(prev), gates));

    it('accepts an unchanged seed and changes to mutable fields', () => {
      expect(update(seedObject(), seedObject())).toEqual([]);
      expect(update(seedObject({ shootDefaults: { pods: '100.112.0.0/12' } }), seedObject())).toEqual([]);
      expect(update(seedObject({ blockCIDRs: ['169.254.169.254/32'] }), seedObject())).toEqual([]);
    });

    it('ipFamilies are immutable, even with DualStack', () => {
      expect(update(dualSeed(), seedObject({ services: seedDualStackNetworks.services }), ALL)).toEqual([
        'spec.networks.ipFamilies: Invalid value: ["IPv4","IPv6"]: field is immutable',
      ]);
      expect(update(seedObject(), dualSeed(), ALL)).toContain(
        'spec.networks.ipFamilies: Invalid value: ["IPv4"]: field is immutable',
      );
    });

    it('an empty ipFamilies list equals the defaulted [IPv4]', () => {
      expect(update(seedObject({ ipFamilies: [] }), seedObject({ ipFamilies: undefined }))).toEqual([]);
      expect(update(seedObject({ ipFamilies: ['IPv4'] }), seedObject({ ipFamilies: undefined }))).toEqual([]);
    });

    it.each(['pods', 'services'] as const)('%s is immutable', (name) => {
      expect(update(seedObject({ [name]: '10.9.0.0/16' }), seedObject())).toEqual([
        `spec.networks.${name}: Invalid value: "10.9.0.0/16": field is immutable`,
      ]);
    });

    it('nodes may be set once, then not changed or removed', () => {
      expect(update(seedObject(), seedObject({ nodes: undefined }))).toEqual([]);
      expect(update(seedObject({ nodes: '10.9.0.0/16' }), seedObject())).toEqual([
        'spec.networks.nodes: Invalid value: "10.9.0.0/16": field is immutable',
      ]);
      expect(update(seedObject({ nodes: undefined }), seedObject())).toEqual([
        'spec.networks.nodes: Invalid value: null: field is immutable',
      ]);
    });

    it('also validates the new object', () => {
      expect(update(seedObject({ nodes: '10.1.0.0/24' }), seedObject({ nodes: undefined }))).toEqual([
        'spec.networks.nodes: Invalid value: "10.1.0.0/24": must not overlap with "spec.networks.pods" ("10.1.0.0/16")',
      ]);
    });

    it('runs through admit with both objects defaulted', () => {
      const old = seedObject({ ipFamilies: undefined });
      expect(admit({ object: seedObject({ ipFamilies: [] }), oldObject: old, gates: OFF }).errors).toEqual([]);
      const result = admit({ object: seedObject({ pods: '10.9.0.0/16' }), oldObject: old, gates: OFF });
      expect(messages(result.errors)).toEqual(['spec.networks.pods: Invalid value: "10.9.0.0/16": field is immutable']);
    });
  });

  describe('defaulting', () => {
    it('defaults missing or empty ipFamilies to [IPv4], without touching the input', () => {
      for (const ipFamilies of [undefined, []]) {
        const input = seedObject({ ipFamilies });
        const snapshot = structuredClone(input);
        expect(defaultSeed(input).spec.networks?.ipFamilies).toEqual(['IPv4']);
        expect(input).toEqual(snapshot);
      }
    });

    it('keeps a given list', () => {
      expect(defaultSeed(ipv6Seed()).spec.networks?.ipFamilies).toEqual(['IPv6']);
      expect(defaultSeed(dualSeed({ ipFamilies: ['IPv6', 'IPv4'] })).spec.networks?.ipFamilies).toEqual([
        'IPv6',
        'IPv4',
      ]);
    });

    it('admit returns the defaulted seed', () => {
      const result = admit({ object: seedObject({ ipFamilies: undefined }), gates: OFF });
      expect(result.errors).toEqual([]);
      expect(result.id).toEqual({ group: 'core.gardener.cloud', kind: 'Seed', name: 'seed-a' });
      expect((result.object as Seed).spec.networks?.ipFamilies).toEqual(['IPv4']);
    });

    it('admit gates an IPv6 seed', () => {
      expect(messages(admit({ object: ipv6Seed(), gates: OFF }).errors)).toEqual([
        'spec.networks.ipFamilies: Invalid value: ["IPv6"]: IPv6 single-stack networking is not supported',
      ]);
      expect(admit({ object: ipv6Seed(), gates: IPV6 }).errors).toEqual([]);
    });
  });
});
