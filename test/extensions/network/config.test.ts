import { describe, expect, it } from 'vitest';
import { FieldPath, errorString, type ErrorList } from '../../../src/apis/field/index.js';
import {
  API_VERSION,
  decodeNetworkConfig,
  defaultNetworkConfig,
  KIND,
  validateNetworkConfig,
} from '../../../src/extensions/network/apis/config.js';
import { dualStackNetwork, ipv4Network, ipv6Network } from './fixtures.js';

const messages = (errors: ErrorList) => errors.map(errorString);
const v4 = (raw: unknown) => messages(validateNetworkConfig(raw, ipv4Network()));
const v6 = (raw: unknown) => messages(validateNetworkConfig(raw, ipv6Network()));
const dual = (raw: unknown) => messages(validateNetworkConfig(raw, dualStackNetwork()));

describe('calico providerConfig validation', () => {
  it('accepts an absent providerConfig (undefined or null) and decodes it to {}', () => {
    expect(decodeNetworkConfig(undefined, ipv4Network())).toEqual({ config: {}, errors: [] });
    expect(decodeNetworkConfig(null, ipv6Network())).toEqual({ config: {}, errors: [] });
  });

  it('accepts every field with a supported value', () => {
    const raw = {
      apiVersion: API_VERSION,
      kind: KIND,
      backend: 'bird',
      ipv4: { pool: 'vxlan', mode: 'CrossSubnet', autoDetectionMethod: 'interface=eth.*' },
      ipv6: { pool: 'vxlan', mode: 'Always', autoDetectionMethod: 'can-reach=2001:db8::1', sourceNATEnabled: false },
      ipam: { type: 'host-local' },
    };
    expect(dual(raw)).toEqual([]);
    expect(decodeNetworkConfig(raw, dualStackNetwork()).config).toEqual(raw);
  });

  it('accepts an empty object and one without apiVersion and kind', () => {
    expect(v4({})).toEqual([]);
    expect(v6({ backend: 'vxlan', ipv6: { mode: 'Always' } })).toEqual([]);
  });

  it('checks apiVersion and kind when present', () => {
    expect(v4({ apiVersion: 'calico.networking.extensions.gardener.cloud/v1', kind: 'Network' })).toEqual([
      'spec.providerConfig.apiVersion: Unsupported value: "calico.networking.extensions.gardener.cloud/v1": supported values: "calico.networking.extensions.gardener.cloud/v1alpha1"',
      'spec.providerConfig.kind: Unsupported value: "Network": supported values: "NetworkConfig"',
    ]);
  });

  it('refuses unknown fields, naming each, at any depth', () => {
    expect(
      v4({ typha: { enabled: true }, ipv4: { pool: 'ipip', cidr: '10.0.0.0/8' }, ipam: { cidr: 'usePodCIDR' } }),
    ).toEqual([
      'spec.providerConfig.ipv4.cidr: Forbidden: unknown field "cidr"',
      'spec.providerConfig.ipam.cidr: Forbidden: unknown field "cidr"',
      'spec.providerConfig.typha: Forbidden: unknown field "typha"',
    ]);
  });

  it('reports wrong types as Invalid', () => {
    expect(v4('backend: bird')).toEqual([
      'spec.providerConfig: Invalid value: "backend: bird": must be of type object',
    ]);
    expect(v4([])).toEqual(['spec.providerConfig: Invalid value: []: must be of type object']);
    expect(dual({ ipv4: 'ipip', ipv6: { sourceNATEnabled: 'yes', autoDetectionMethod: 5 }, ipam: null })).toEqual([
      'spec.providerConfig.ipv4: Invalid value: "ipip": must be of type object',
      'spec.providerConfig.ipv6.autoDetectionMethod: Invalid value: 5: must be of type string',
      'spec.providerConfig.ipv6.sourceNATEnabled: Invalid value: "yes": must be of type boolean',
      'spec.providerConfig.ipam: Invalid value: null: must be of type object',
    ]);
  });

  it('ipv6.pool ipip is NotSupported: calico has no IP-in-IP for IPv6', () => {
    expect(v6({ ipv6: { pool: 'ipip' } })).toEqual([
      'spec.providerConfig.ipv6.pool: Unsupported value: "ipip": supported values: "vxlan"',
    ]);
  });

  it('refuses values outside each enumeration as NotSupported', () => {
    expect(
      dual({
        backend: 'flannel',
        ipv4: { pool: 'gre', mode: 'Sometimes' },
        ipv6: { mode: 'CrossSubnet' },
        ipam: { type: 'dhcp' },
      }),
    ).toEqual([
      'spec.providerConfig.backend: Unsupported value: "flannel": supported values: "bird", "vxlan", "none"',
      'spec.providerConfig.ipv4.pool: Unsupported value: "gre": supported values: "ipip", "vxlan"',
      'spec.providerConfig.ipv4.mode: Unsupported value: "Sometimes": supported values: "Always", "Never", "CrossSubnet"',
      'spec.providerConfig.ipv6.mode: Unsupported value: "CrossSubnet": supported values: "Never", "Always"',
      'spec.providerConfig.ipam.type: Unsupported value: "dhcp": supported values: "calico-ipam", "host-local"',
    ]);
    expect(v4({ backend: 3 })).toEqual([
      'spec.providerConfig.backend: Unsupported value: 3: supported values: "bird", "vxlan", "none"',
    ]);
  });

  describe('ipv4 settings on an IPv6 single-stack Network', () => {
    it('are Forbidden', () => {
      expect(v6({ ipv4: { pool: 'ipip' } })).toEqual([
        'spec.providerConfig.ipv4: Forbidden: IPv4 settings are not allowed on an IPv6 single-stack network',
      ]);
      expect(v6({ ipv4: {} })).toHaveLength(1);
    });
    it('are allowed on IPv4 and dual-stack Networks, and IPv6 settings on an IPv4 one (kept for a migration)', () => {
      expect(v4({ ipv4: { pool: 'ipip' }, ipv6: { mode: 'Always' } })).toEqual([]);
      expect(dual({ ipv4: { pool: 'ipip' } })).toEqual([]);
      expect(messages(validateNetworkConfig({ ipv4: {} }, ipv4Network({ ipFamilies: undefined })))).toEqual([]);
    });
  });

  describe('autoDetectionMethod', () => {
    it.each([
      'first-found',
      'kubernetes-internal-ip',
      'interface=eth0',
      'interface=eth.*,ens.*',
      'skip-interface=docker.*',
      'can-reach=www.example.com',
    ])('accepts %s for both families', (method) => {
      expect(dual({ ipv4: { autoDetectionMethod: method }, ipv6: { autoDetectionMethod: method } })).toEqual([]);
    });
    it('wants addresses of its own family in cidr= and can-reach=', () => {
      expect(dual({ ipv4: { autoDetectionMethod: 'cidr=10.0.0.0/8,192.168.0.0/16' } })).toEqual([]);
      expect(dual({ ipv6: { autoDetectionMethod: 'cidr=fd00::/8' } })).toEqual([]);
      expect(dual({ ipv4: { autoDetectionMethod: 'can-reach=8.8.8.8' } })).toEqual([]);
      expect(
        dual({ ipv4: { autoDetectionMethod: 'cidr=fd00::/8' }, ipv6: { autoDetectionMethod: 'can-reach=8.8.8.8' } }),
      ).toEqual([
        'spec.providerConfig.ipv4.autoDetectionMethod: Invalid value: "cidr=fd00::/8": "fd00::/8" is not an IPv4 CIDR',
        'spec.providerConfig.ipv6.autoDetectionMethod: Invalid value: "can-reach=8.8.8.8": "8.8.8.8" is not an IPv6 address',
      ]);
      expect(dual({ ipv6: { autoDetectionMethod: 'cidr=fd00::/8,nope' } })).toEqual([
        'spec.providerConfig.ipv6.autoDetectionMethod: Invalid value: "cidr=fd00::/8,nope": "nope" is not a CIDR',
      ]);
    });
    it.each(['', 'eth0', 'interface=', 'interface=eth0\nIP: none', 'interface=a b', 'magic=1', 'first-found=x'])(
      'refuses %j',
      (method) => {
        const errors = v4({ ipv4: { autoDetectionMethod: method } });
        expect(errors).toHaveLength(1);
        expect(errors[0]).toMatch(
          /^spec\.providerConfig\.ipv4\.autoDetectionMethod: Invalid value: .*: must be one of first-found, kubernetes-internal-ip, can-reach=<value>/,
        );
      },
    );
  });

  describe('IP-in-IP needs the bird backend', () => {
    it('refuses an ipip pool with mode other than Never on the vxlan and none backends', () => {
      for (const backend of ['vxlan', 'none']) {
        expect(v4({ backend, ipv4: { pool: 'ipip' } })).toEqual([
          `spec.providerConfig.ipv4.pool: Invalid value: "ipip": IP-in-IP needs the "bird" backend (BGP), not "${backend}": use pool "vxlan" or mode "Never"`,
        ]);
        expect(v4({ backend, ipv4: { pool: 'ipip', mode: 'CrossSubnet' } })).toHaveLength(1);
      }
    });
    it('accepts ipip with mode Never, vxlan pools, and backends without an explicit pool (which default to vxlan)', () => {
      expect(v4({ backend: 'vxlan', ipv4: { pool: 'ipip', mode: 'Never' } })).toEqual([]);
      expect(v4({ backend: 'none', ipv4: { pool: 'vxlan' } })).toEqual([]);
      expect(v4({ backend: 'vxlan' })).toEqual([]);
    });
  });

  it('collects every error, shape and semantics alike', () => {
    const errors = v6({
      apiVersion: 'x/v1',
      foo: 1,
      ipv4: { pool: 'ipip' },
      ipv6: { pool: 'ipip', autoDetectionMethod: 'nope' },
    });
    expect(errors).toEqual([
      'spec.providerConfig.ipv6.pool: Unsupported value: "ipip": supported values: "vxlan"',
      'spec.providerConfig.foo: Forbidden: unknown field "foo"',
      'spec.providerConfig.apiVersion: Unsupported value: "x/v1": supported values: "calico.networking.extensions.gardener.cloud/v1alpha1"',
      'spec.providerConfig.ipv4: Forbidden: IPv4 settings are not allowed on an IPv6 single-stack network',
      expect.stringMatching(/^spec\.providerConfig\.ipv6\.autoDetectionMethod: Invalid value: "nope"/),
    ]);
    expect(decodeNetworkConfig({ foo: 1 }, ipv4Network()).config).toBeUndefined();
  });

  it('reports under the given path', () => {
    const errors = validateNetworkConfig(
      { ipv6: { pool: 'ipip' } },
      ipv6Network(),
      FieldPath.root('spec', 'networking', 'providerConfig'),
    );
    expect(messages(errors)).toEqual([
      'spec.networking.providerConfig.ipv6.pool: Unsupported value: "ipip": supported values: "vxlan"',
    ]);
  });
});

describe('calico providerConfig defaults', () => {
  it('defaults to bird, an ipip IPv4 pool in mode Always, a vxlan IPv6 pool in mode Never, calico-ipam', () => {
    expect(defaultNetworkConfig(undefined, 'fd00:10:3::/56')).toEqual({
      backend: 'bird',
      ipv4: { pool: 'ipip', mode: 'Always' },
      ipv6: { pool: 'vxlan', mode: 'Never', sourceNATEnabled: true },
      ipam: { type: 'calico-ipam' },
    });
  });

  it.each([
    ['fd00:10:3::/56', true],
    ['fc00::/7', true],
    ['fdff:ffff::/64', true],
    ['fc00::/6', false],
    ['2001:db8::/56', false],
    ['fe80::/64', false],
    [undefined, false],
  ])('IPv6 source NAT for pods in %s: %s (on exactly inside fc00::/7)', (pods, nat) => {
    expect(defaultNetworkConfig({}, pods).ipv6.sourceNATEnabled).toBe(nat);
  });

  it('keeps what is set', () => {
    const set = {
      backend: 'none' as const,
      ipv4: { pool: 'vxlan' as const, mode: 'CrossSubnet' as const, autoDetectionMethod: 'first-found' },
      ipv6: {
        pool: 'vxlan' as const,
        mode: 'Always' as const,
        autoDetectionMethod: 'interface=eth0',
        sourceNATEnabled: false,
      },
      ipam: { type: 'host-local' as const },
    };
    expect(defaultNetworkConfig(set, 'fd00::/56')).toEqual(set);
  });

  it('defaults the IPv4 pool to vxlan when the backend is not bird (IP-in-IP routes come from BGP)', () => {
    expect(defaultNetworkConfig({ backend: 'vxlan' }).ipv4.pool).toBe('vxlan');
    expect(defaultNetworkConfig({ backend: 'none' }).ipv4.pool).toBe('vxlan');
    expect(defaultNetworkConfig({ backend: 'bird' }).ipv4.pool).toBe('ipip');
  });

  it('is idempotent', () => {
    const once = defaultNetworkConfig({ ipv6: { mode: 'Always' } }, 'fd00::/56');
    expect(defaultNetworkConfig(once, '2001:db8::/56')).toEqual(once);
  });
});
