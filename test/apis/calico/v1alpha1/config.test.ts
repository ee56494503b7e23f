/**
 * The calico NetworkConfig API (docs/calico.md section 1) and its validation (section 2), field by field and rule
 * by rule, for each IP family: what is accepted and what is rejected with which field error.
 */
import { describe, expect, it } from 'vitest';
import { FieldPath, errorString, type ErrorList } from '../../../../src/apis/field/index.js';
import {
  API_VERSION,
  decodeNetworkConfig,
  KIND,
  validateNetworkConfig,
} from '../../../../src/apis/calico/v1alpha1/config.js';

const messages = (errors: ErrorList) => errors.map(errorString);
const FAMILIES = {
  ipv4: ['IPv4'],
  ipv6: ['IPv6'],
  dual: ['IPv4', 'IPv6'],
  'dual, IPv6 first': ['IPv6', 'IPv4'],
} as const;
type Family = keyof typeof FAMILIES;
const ALL = Object.keys(FAMILIES) as Family[];
const check = (family: Family, raw: unknown) => messages(validateNetworkConfig(raw, FAMILIES[family]));
const v4 = (raw: unknown) => check('ipv4', raw);
const v6 = (raw: unknown) => check('ipv6', raw);
const P = 'spec.providerConfig';

describe('decoding', () => {
  it('accepts an absent providerConfig (undefined or null) and decodes it to {}', () => {
    expect(decodeNetworkConfig(undefined, ['IPv4'])).toEqual({ config: {}, errors: [] });
    expect(decodeNetworkConfig(null, ['IPv6'])).toEqual({ config: {}, errors: [] });
  });

  it.each(ALL)('%s: accepts every field of the API with a supported value, and decodes it as written', (family) => {
    const hasV4 = FAMILIES[family].includes('IPv4' as never);
    const hasV6 = FAMILIES[family].includes('IPv6' as never);
    const raw = {
      apiVersion: API_VERSION,
      kind: KIND,
      backend: 'bird',
      ipam: { type: 'host-local', cidr: 'usePodCIDR' },
      ...(hasV4 ? { ipv4: { pool: 'vxlan', mode: 'Always', autoDetectionMethod: 'interface=eth.*' } } : {}),
      ...(hasV6
        ? {
            ipv6: {
              pool: 'vxlan',
              mode: 'Never',
              autoDetectionMethod: 'can-reach=2001:db8::1',
              sourceNATEnabled: true,
            },
          }
        : {}),
      typha: { enabled: false },
      vethMTU: '1440',
      ebpfDataplane: { enabled: true },
      overlay: { enabled: false, createPodRoutes: true },
      snatToUpstreamDNS: { enabled: true },
      autoScaling: {
        mode: 'static',
        resources: { node: { cpu: '250m', memory: '1Gi' }, typha: { cpu: 1, memory: '100Mi' } },
      },
      vxlan: { enabled: false },
      ipip: 'Always',
      ipAutodetectionMethod: 'first-found',
      wireguardEncryption: true,
      birdExporter: { enabled: true },
      multus: { enabled: true, installCNIPlugins: false },
      serviceLoopPrevention: 'Drop',
    };
    // `ipip` applies to IPv4 only.
    if (!hasV4) delete (raw as { ipip?: string }).ipip;
    expect(check(family, raw)).toEqual([]);
    expect(decodeNetworkConfig(raw, FAMILIES[family]).config).toEqual(raw);
  });

  it('accepts an empty object and one without apiVersion and kind', () => {
    for (const family of ALL) expect(check(family, {})).toEqual([]);
    expect(v6({ typha: { enabled: false }, overlay: { enabled: false } })).toEqual([]);
  });

  it('checks apiVersion and kind when present', () => {
    expect(v4({ apiVersion: 'calico.networking.extensions.gardener.cloud/v1', kind: 'Network' })).toEqual([
      `${P}.apiVersion: Unsupported value: "calico.networking.extensions.gardener.cloud/v1": supported values: "${API_VERSION}"`,
      `${P}.kind: Unsupported value: "Network": supported values: "NetworkConfig"`,
    ]);
  });

  it('refuses unknown fields strictly, naming each with its path in the NetworkConfig, at any depth', () => {
    expect(
      v4({
        typo: 1,
        typha: { enabled: true, replicas: 2 },
        ipv4: { pool: 'ipip', cidr: '10.0.0.0/8' },
        autoScaling: { mode: 'vpa', resources: { kubeControllers: {} } },
        kubeAPIServerEndpoints: {},
      }),
    ).toEqual([
      `${P}.ipv4.cidr: Forbidden: unknown field "ipv4.cidr"`,
      `${P}.typha.replicas: Forbidden: unknown field "typha.replicas"`,
      `${P}.autoScaling.resources.kubeControllers: Forbidden: unknown field "autoScaling.resources.kubeControllers"`,
      `${P}.typo: Forbidden: unknown field "typo"`,
      `${P}.kubeAPIServerEndpoints: Forbidden: unknown field "kubeAPIServerEndpoints"`,
    ]);
  });

  it('reports wrong types as Invalid with the offending value', () => {
    expect(v4('backend: bird')).toEqual([`${P}: Invalid value: "backend: bird": must be of type object`]);
    expect(v4([])).toEqual([`${P}: Invalid value: []: must be of type object`]);
    expect(
      check('dual', {
        ipv4: 'ipip',
        ipv6: { sourceNATEnabled: 'yes', autoDetectionMethod: 5 },
        typha: { enabled: 'true' },
        vethMTU: true,
        wireguardEncryption: 1,
        autoScaling: { resources: { node: { cpu: [] } } },
      }),
    ).toEqual([
      `${P}.ipv4: Invalid value: "ipip": must be of type object`,
      `${P}.ipv6.autoDetectionMethod: Invalid value: 5: must be of type string`,
      `${P}.ipv6.sourceNATEnabled: Invalid value: "yes": must be of type boolean`,
      `${P}.typha.enabled: Invalid value: "true": must be of type boolean`,
      `${P}.vethMTU: Invalid value: true: must be of type string or number`,
      expect.stringMatching(/^spec\.providerConfig\.autoScaling\.resources\.node\.cpu: Invalid value: \[\]/),
      `${P}.wireguardEncryption: Invalid value: 1: must be of type boolean`,
      expect.stringMatching(/^spec\.providerConfig\.autoScaling\.mode: Invalid value: "": unsupported value ""/),
    ]);
  });

  it('ipam.type is required inside ipam', () => {
    expect(v4({ ipam: { cidr: 'usePodCIDR' } })).toEqual([`${P}.ipam.type: Required value: type is required`]);
    expect(v4({ ipam: { type: '' } })).toEqual([]);
  });

  it('collects every error, shape and semantics alike, and decodes no config then', () => {
    const errors = v6({ apiVersion: 'x/v1', foo: 1, ipv4: { pool: 'ipip' }, ipv6: { pool: 'gre' }, vethMTU: '-1' });
    expect(errors).toEqual([
      `${P}.foo: Forbidden: unknown field "foo"`,
      `${P}.apiVersion: Unsupported value: "x/v1": supported values: "${API_VERSION}"`,
      `${P}.ipv4: Forbidden: IPv4 configuration must not be specified if the shoot doesn't use IPv4 networking`,
      `${P}.ipv6.pool: Invalid value: "gre": unsupported value "gre" for pool, supported values are ["ipip", "vxlan"]`,
      `${P}.vethMTU: Invalid value: "-1": MTU must be a positive integer`,
    ]);
    expect(decodeNetworkConfig({ foo: 1 }, ['IPv4']).config).toBeUndefined();
  });

  it('reports under the given path: the Shoot keeps it in spec.networking.providerConfig', () => {
    const errors = validateNetworkConfig(
      { ipv6: { pool: 'ipip' } },
      ['IPv6'],
      FieldPath.root('spec', 'networking', 'providerConfig'),
    );
    expect(messages(errors)).toEqual([
      'spec.networking.providerConfig.ipv6.pool: Unsupported value: "ipip": supported values: "vxlan"',
    ]);
  });

  it('treats no families as IPv4', () => {
    expect(messages(validateNetworkConfig({ ipv4: {} }, []))).toEqual([]);
    expect(messages(validateNetworkConfig({ ipv6: {} }, undefined))).toHaveLength(1);
  });
});

describe('backend', () => {
  it.each(['bird', 'none', 'vxlan'])('accepts %s for every family', (backend) => {
    for (const family of ALL) expect(check(family, { backend })).toEqual([]);
  });
  it.each(['', 'flannel', 'BIRD'])('refuses %j', (backend) => {
    expect(v4({ backend })).toEqual([
      `${P}.backend: Invalid value: ${JSON.stringify(backend)}: unsupported value ${JSON.stringify(backend)} for backend, supported values are ["bird", "none", "vxlan"]`,
    ]);
  });
});

describe('ipam', () => {
  it.each(ALL)('%s: host-local, and an empty type, are accepted', (family) => {
    expect(check(family, { ipam: { type: 'host-local' } })).toEqual([]);
    expect(check(family, { ipam: { type: '' } })).toEqual([]);
  });
  it('calico-ipam is accepted for IPv4 single-stack only', () => {
    expect(v4({ ipam: { type: 'calico-ipam' } })).toEqual([]);
    for (const family of ['ipv6', 'dual', 'dual, IPv6 first'] as const) {
      expect(check(family, { ipam: { type: 'calico-ipam' } })).toEqual([
        `${P}.ipam.type: Invalid value: "calico-ipam": IPAM type "calico-ipam" is only supported for IPv4 single-stack shoots, use "host-local" instead`,
      ]);
    }
  });
  it('refuses other types', () => {
    expect(v4({ ipam: { type: 'dhcp' } })).toEqual([
      `${P}.ipam.type: Invalid value: "dhcp": unsupported value "dhcp" for type, supported values are ["calico-ipam", "host-local"]`,
    ]);
  });
  it.each(['usePodCIDR', 'usepodcidr', 'USEPODCIDR', '10.0.0.0/16', '10.0.0.1/16', 'fd00:10::/64'])(
    'cidr %s is accepted',
    (cidr) => {
      expect(v4({ ipam: { type: 'host-local', cidr } })).toEqual([]);
    },
  );
  it.each(['', 'usePodCIDRs', '10.0.0.0', '10.0.0.0/33', '010.0.0.0/8'])('cidr %j is refused', (cidr) => {
    expect(v4({ ipam: { type: 'host-local', cidr } })).toEqual([
      `${P}.ipam.cidr: Invalid value: ${JSON.stringify(cidr)}: must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)`,
    ]);
  });
});

describe('ipv4 and ipv6', () => {
  describe.each([
    ['ipv4', 'ipv4', 'IPv4'],
    ['ipv6', 'ipv6', 'IPv6'],
  ] as const)('%s', (key, family, name) => {
    const other = family === 'ipv4' ? 'ipv6' : 'ipv4';
    it.each(
      [
        ['ipip', 'Always'],
        ['ipip', 'Never'],
        ['ipip', 'CrossSubnet'],
        ['vxlan', 'Always'],
        ['vxlan', 'Never'],
      ].filter(([pool]) => key === 'ipv4' || pool === 'vxlan'),
    )('pool %s, mode %s is accepted', (pool, mode) => {
      expect(check(family, { [key]: { pool, mode } })).toEqual([]);
      expect(check('dual', { [key]: { pool, mode } })).toEqual([]);
    });
    it('refuses a pool outside ipip/vxlan and a mode outside Always/Never/CrossSubnet/Off', () => {
      expect(check(family, { [key]: { pool: 'gre', mode: 'Sometimes' } })).toEqual([
        `${P}.${key}.pool: Invalid value: "gre": unsupported value "gre" for pool, supported values are ["ipip", "vxlan"]`,
        `${P}.${key}.mode: Invalid value: "Sometimes": unsupported value "Sometimes" for mode, supported values are ["Always", "Never", "CrossSubnet", "Off"]`,
      ]);
    });
    it('with pool vxlan, a mode other than Always/Never is refused', () => {
      expect(check(family, { [key]: { pool: 'vxlan', mode: 'CrossSubnet' } })).toEqual([
        `${P}.${key}.mode: Invalid value: "CrossSubnet": unsupported value "CrossSubnet" for mode with pool "vxlan", supported values are ["Always", "Never"]`,
      ]);
    });
    it(`is Forbidden on a network without ${name}`, () => {
      expect(check(other, { [key]: {} })).toEqual([
        `${P}.${key}: Forbidden: ${name} configuration must not be specified if the shoot doesn't use ${name} networking`,
      ]);
    });
  });

  it('ipv4 accepts mode Off', () => {
    expect(v4({ ipv4: { pool: 'ipip', mode: 'Off' } })).toEqual([]);
  });

  it('ipv6: pool ipip and mode Off pass networking-calico validation but do not render: NotSupported', () => {
    for (const family of ['ipv6', 'dual'] as const) {
      expect(check(family, { ipv6: { pool: 'ipip', mode: 'Off' } })).toEqual([
        `${P}.ipv6.pool: Unsupported value: "ipip": supported values: "vxlan"`,
        `${P}.ipv6.mode: Unsupported value: "Off": supported values: "Always", "Never", "CrossSubnet"`,
      ]);
    }
  });
});

describe('autodetection methods', () => {
  const methodPaths = [
    ['ipv4', (m: string) => ({ ipv4: { autoDetectionMethod: m } }), 'ipv4.autoDetectionMethod'],
    ['ipv6', (m: string) => ({ ipv6: { autoDetectionMethod: m } }), 'ipv6.autoDetectionMethod'],
    ['dual', (m: string) => ({ ipAutodetectionMethod: m }), 'ipAutodetectionMethod'],
  ] as const;
  it.each([
    'first-found',
    'kubernetes-internal-ip',
    'interface=eth0',
    'interface=eth.*,ens.*',
    'skip-interface=docker.*',
    'can-reach=www.example.com',
    'can-reach=8.8.8.8',
    'can-reach=2001:db8::1',
    'cidr=10.0.0.0/8',
    'cidr=fd00::/8',
  ])('accepts %s', (method) => {
    for (const [family, config] of methodPaths) expect(check(family, config(method))).toEqual([]);
  });
  it.each([
    [
      'eth0',
      'invalid option "eth0", supported options are [first-found can-reach interface skip-interface cidr kubernetes-internal-ip]',
    ],
    [
      'magic=1',
      'invalid option "magic", supported options are [first-found can-reach interface skip-interface cidr kubernetes-internal-ip]',
    ],
    ['first-found=x', 'option first-found does not take a parameter'],
    ['kubernetes-internal-ip=', 'option kubernetes-internal-ip does not take a parameter'],
    ['interface=', 'option interface requires a parameter'],
    ['skip-interface', 'option skip-interface requires a parameter'],
    ['can-reach=', 'option can-reach requires a parameter'],
    ['cidr', 'option cidr requires a parameter'],
    ['can-reach=not a host!', 'parameter for can-reach must be a valid IP address or DNS name'],
    ['interface=eth(', expect.stringMatching(/^invalid regex for option interface: /)],
  ] as const)('refuses %j', (method, detail) => {
    for (const [family, config, path] of methodPaths) {
      const errors = validateNetworkConfig(config(method), FAMILIES[family]);
      expect(errors).toEqual([{ type: 'FieldValueInvalid', field: `${P}.${path}`, badValue: method, detail }]);
    }
  });
  it('cidr= needs one CIDR (bad value: the parameter)', () => {
    expect(v4({ ipv4: { autoDetectionMethod: 'cidr=10.0.0.0/8,10.1.0.0/16' } })).toEqual([
      `${P}.ipv4.autoDetectionMethod: Invalid value: "10.0.0.0/8,10.1.0.0/16": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)`,
    ]);
  });
  it('an empty method is fine in ipv4/ipv6 (unset), an error in ipAutodetectionMethod', () => {
    expect(v4({ ipv4: { autoDetectionMethod: '' } })).toEqual([]);
    expect(v6({ ipv6: { autoDetectionMethod: '' } })).toEqual([]);
    expect(v4({ ipAutodetectionMethod: '' })).toEqual([
      `${P}.ipAutodetectionMethod: Invalid value: "": method cannot be empty`,
    ]);
  });
});

describe('deprecated ipip', () => {
  it.each(['Always', 'Never', 'CrossSubnet', 'Off'])('accepts %s on IPv4 networks', (mode) => {
    expect(v4({ ipip: mode })).toEqual([]);
    expect(check('dual', { ipip: mode })).toEqual([]);
  });
  it('refuses other modes, and any mode without IPv4', () => {
    expect(v4({ ipip: 'always' })).toEqual([
      `${P}.ipip: Invalid value: "always": unsupported value "always" for ipip, supported values are ["Always", "Never", "CrossSubnet", "Off"]`,
    ]);
    expect(v6({ ipip: 'Always' })).toEqual([
      `${P}.ipip: Forbidden: IPv4 configuration must not be specified if the shoot doesn't use IPv4 networking`,
    ]);
  });
});

describe('vethMTU', () => {
  it.each(['0', '1440', '9000', 0, 1440])('accepts %j', (vethMTU) => {
    for (const family of ALL) expect(check(family, { vethMTU })).toEqual([]);
  });
  it.each([
    ['', 'MTU cannot be empty'],
    ['abc', 'invalid MTU: strconv.Atoi: parsing "abc": invalid syntax'],
    ['14.4', 'invalid MTU: strconv.Atoi: parsing "14.4": invalid syntax'],
    ['-1', 'MTU must be a positive integer'],
    [-1, 'MTU must be a positive integer'],
    [1.5, 'invalid MTU: must be an integer'],
  ] as const)('refuses %j', (vethMTU, detail) => {
    expect(validateNetworkConfig({ vethMTU }, ['IPv6'])).toEqual([
      { type: 'FieldValueInvalid', field: `${P}.vethMTU`, badValue: vethMTU, detail },
    ]);
  });
});

describe('autoScaling', () => {
  it.each(['cluster-proportional', 'vpa', 'static'])('accepts mode %s', (mode) => {
    for (const family of ALL) expect(check(family, { autoScaling: { mode } })).toEqual([]);
  });
  it('refuses other modes, a missing mode included', () => {
    expect(v4({ autoScaling: { mode: 'hpa' } })).toEqual([
      `${P}.autoScaling.mode: Invalid value: "hpa": unsupported value "hpa" for mode, supported values are ["cluster-proportional", "vpa", "static"]`,
    ]);
    expect(v4({ autoScaling: {} })).toHaveLength(1);
  });
  it('resources: cpu and memory only, each positive', () => {
    expect(
      v6({
        autoScaling: {
          mode: 'static',
          resources: {
            node: { cpu: '0', memory: '-1Gi', 'nvidia.com/gpu': '1' },
            typha: { cpu: '-100m', memory: 0 },
          },
        },
      }),
    ).toEqual([
      `${P}.autoScaling.resources.node.cpu: Invalid value: "0": CPU resource must be specified and cannot be zero`,
      `${P}.autoScaling.resources.node.memory: Invalid value: "-1Gi": Memory resource must be positive`,
      `${P}.autoScaling.resources.node.nvidia.com/gpu: Invalid value: "1": Unsupported resource: nvidia.com/gpu`,
      `${P}.autoScaling.resources.typha.cpu: Invalid value: "-100m": CPU resource must be positive`,
      `${P}.autoScaling.resources.typha.memory: Invalid value: 0: Memory resource must be specified and cannot be zero`,
    ]);
  });
  it('resources must be quantities', () => {
    expect(v4({ autoScaling: { mode: 'static', resources: { node: { cpu: '1 core' } } } })).toEqual([
      `${P}.autoScaling.resources.node.cpu: Invalid value: "1 core": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
    ]);
  });
});

describe('serviceLoopPrevention', () => {
  it.each(['Disabled', 'Drop', 'Reject'])('accepts %s', (value) => {
    for (const family of ALL) expect(check(family, { serviceLoopPrevention: value })).toEqual([]);
  });
  it('refuses others', () => {
    expect(v4({ serviceLoopPrevention: 'drop' })).toEqual([
      `${P}.serviceLoopPrevention: Invalid value: "drop": unsupported value "drop" for serviceLoopPrevention, supported values are ["Disabled", "Drop", "Reject"]`,
    ]);
  });
});

describe('the boolean switches', () => {
  it.each([
    ['typha', { typha: { enabled: false } }],
    ['ebpfDataplane', { ebpfDataplane: { enabled: true } }],
    ['overlay', { overlay: { enabled: true, createPodRoutes: false } }],
    ['snatToUpstreamDNS', { snatToUpstreamDNS: { enabled: false } }],
    ['vxlan', { vxlan: { enabled: true } }],
    ['wireguardEncryption', { wireguardEncryption: true }],
    ['birdExporter', { birdExporter: { enabled: true } }],
    ['multus', { multus: { enabled: true, installCNIPlugins: true } }],
  ])('%s is accepted for every family', (_name, config) => {
    for (const family of ALL) expect(check(family, config)).toEqual([]);
  });
});

describe("networking-calico's user documentation", () => {
  const docs = {
    'typha off': { typha: { enabled: false } },
    'ebpf without overlay': {
      apiVersion: API_VERSION,
      kind: KIND,
      ebpfDataplane: { enabled: true },
      overlay: { enabled: false },
    },
    'vpa autoscaling': { apiVersion: API_VERSION, kind: KIND, autoScaling: { mode: 'vpa' } },
    'static autoscaling': {
      apiVersion: API_VERSION,
      kind: KIND,
      autoScaling: {
        mode: 'static',
        resources: { node: { cpu: '500m', memory: '500Mi' }, typha: { cpu: '200m', memory: '300Mi' } },
      },
    },
    'host-local with usePodCIDR': {
      apiVersion: API_VERSION,
      kind: KIND,
      ipam: { type: 'host-local', cidr: 'usePodCIDR' },
      vethMTU: 1440,
      typha: { enabled: true },
      overlay: { enabled: true },
      autoScaling: { mode: 'vpa' },
    },
  };
  it.each(Object.entries(docs))('%s validates for every family', (_name, config) => {
    for (const family of ALL) expect(check(family, config)).toEqual([]);
  });
});
