/**
 * The per-family table of calico-ipv6.md, row by row, checked on the rendered manifests (so the templates carry
 * what the values say), plus the errors of calicoValues.
 */
import { describe, expect, it } from 'vitest';
import type { NetworkConfig } from '../../../src/extensions/network/apis/config.js';
import { calicoValues, CalicoValuesError, MissingPodCIDRError } from '../../../src/extensions/network/values.js';
import {
  calicoNodeContainer,
  cniConfig,
  dualStackNetwork,
  find,
  ipPools,
  ipv4Network,
  ipv6Network,
  IPV4_PODS,
  IPV6_PODS,
  nodeEnv,
  renderFamily,
  type Family,
} from './fixtures.js';

const FAMILIES: readonly Family[] = ['ipv4', 'ipv6', 'dual'];
const hasV4 = (f: Family) => f !== 'ipv6';
const hasV6 = (f: Family) => f !== 'ipv4';

describe('calico settings per IP family (calico-ipv6.md)', () => {
  describe('CNI ipam.assign_ipv4 / assign_ipv6 (strings)', () => {
    it.each(FAMILIES)('%s', (family) => {
      const ipam = cniConfig(renderFamily(family)).plugins[0]!.ipam;
      expect(ipam).toEqual({
        type: 'calico-ipam',
        assign_ipv4: hasV4(family) ? 'true' : 'false',
        assign_ipv6: hasV6(family) ? 'true' : 'false',
      });
    });
  });

  describe('calico-node IP / IP6', () => {
    it.each(FAMILIES)('%s', (family) => {
      const env = nodeEnv(renderFamily(family));
      expect(env.IP).toBe(hasV4(family) ? 'autodetect' : 'none');
      if (hasV6(family)) expect(env.IP6).toBe('autodetect');
      else expect(env).not.toHaveProperty('IP6');
    });
  });

  describe('IP_AUTODETECTION_METHOD / IP6_AUTODETECTION_METHOD only when set', () => {
    it.each(FAMILIES)('%s, set', (family) => {
      const config: NetworkConfig = {
        ...(hasV4(family) ? { ipv4: { autoDetectionMethod: 'interface=eth0' } } : {}),
        ipv6: { autoDetectionMethod: 'cidr=fd00:10::/64' },
      };
      const env = nodeEnv(renderFamily(family, config));
      if (hasV4(family)) expect(env.IP_AUTODETECTION_METHOD).toBe('interface=eth0');
      else expect(env).not.toHaveProperty('IP_AUTODETECTION_METHOD');
      // The IPv6 method is in the config of an IPv4 network too, but no IPv6 means no IP6 settings.
      if (hasV6(family)) expect(env.IP6_AUTODETECTION_METHOD).toBe('cidr=fd00:10::/64');
      else expect(env).not.toHaveProperty('IP6_AUTODETECTION_METHOD');
    });
    it.each(FAMILIES)('%s, unset', (family) => {
      const env = nodeEnv(renderFamily(family));
      expect(env).not.toHaveProperty('IP_AUTODETECTION_METHOD');
      expect(env).not.toHaveProperty('IP6_AUTODETECTION_METHOD');
    });
  });

  describe('pool env', () => {
    it.each([
      ['ipip', 'Always'],
      ['ipip', 'CrossSubnet'],
      ['vxlan', 'Always'],
      ['vxlan', 'Never'],
    ] as const)('IPv4 in families, pool %s mode %s', (pool, mode) => {
      for (const family of ['ipv4', 'dual'] as const) {
        const env = nodeEnv(renderFamily(family, { ipv4: { pool, mode } }));
        expect(env.CALICO_IPV4POOL_CIDR).toBe(IPV4_PODS);
        expect(env[pool === 'ipip' ? 'CALICO_IPV4POOL_IPIP' : 'CALICO_IPV4POOL_VXLAN']).toBe(mode);
        expect(env).not.toHaveProperty(pool === 'ipip' ? 'CALICO_IPV4POOL_VXLAN' : 'CALICO_IPV4POOL_IPIP');
        expect(env.CALICO_IPV4POOL_NAT_OUTGOING).toBe('true');
      }
    });
    it('IPv4 not in families: no IPv4 pool env', () => {
      const env = nodeEnv(renderFamily('ipv6'));
      expect(Object.keys(env).filter((k) => k.startsWith('CALICO_IPV4POOL'))).toEqual([]);
    });
    it.each([
      ['Never', undefined, 'true'],
      ['Always', true, 'true'],
      ['Never', false, 'false'],
    ] as const)('IPv6 in families, mode %s, sourceNATEnabled %s', (mode, sourceNATEnabled, nat) => {
      for (const family of ['ipv6', 'dual'] as const) {
        const config = { ipv6: { mode, ...(sourceNATEnabled !== undefined ? { sourceNATEnabled } : {}) } };
        const env = nodeEnv(renderFamily(family, config));
        expect(env.CALICO_IPV6POOL_CIDR).toBe(IPV6_PODS);
        expect(env.CALICO_IPV6POOL_VXLAN).toBe(mode);
        expect(env.CALICO_IPV6POOL_NAT_OUTGOING).toBe(nat);
      }
    });
    it('IPv6 source NAT defaults to off for pods outside fc00::/7', () => {
      const network = ipv6Network({ podCIDR: '2001:db8:1::/56' });
      const values = calicoValues(network, {});
      expect(values.node.env).toContainEqual({ name: 'CALICO_IPV6POOL_NAT_OUTGOING', value: 'false' });
      expect(values.ipPools[0]).toMatchObject({ name: 'default-ipv6-ippool', natOutgoing: false });
    });
    it('IPv6 not in families: no IPv6 pool env', () => {
      const env = nodeEnv(renderFamily('ipv4', { ipv6: { mode: 'Always' } }));
      expect(Object.keys(env).filter((k) => k.startsWith('CALICO_IPV6POOL'))).toEqual([]);
    });
  });

  describe('FELIX_IPV6SUPPORT', () => {
    it.each(FAMILIES)('%s', (family) => {
      expect(nodeEnv(renderFamily(family)).FELIX_IPV6SUPPORT).toBe(hasV6(family) ? 'true' : 'false');
    });
  });

  describe('FELIX_IPINIPENABLED: true only for an ipip pool with mode other than Never', () => {
    it.each([
      ['ipv4', 'ipip', 'Always', 'true'],
      ['ipv4', 'ipip', 'CrossSubnet', 'true'],
      ['ipv4', 'ipip', 'Never', 'false'],
      ['ipv4', 'vxlan', 'Always', 'false'],
      ['dual', 'ipip', 'Always', 'true'],
      ['dual', 'vxlan', 'CrossSubnet', 'false'],
    ] as const)('%s, pool %s, mode %s: %s', (family, pool, mode, enabled) => {
      expect(nodeEnv(renderFamily(family, { ipv4: { pool, mode } })).FELIX_IPINIPENABLED).toBe(enabled);
    });
    it('IPv4 not in families: false', () => {
      expect(nodeEnv(renderFamily('ipv6')).FELIX_IPINIPENABLED).toBe('false');
    });
  });

  describe('CALICO_ROUTER_ID', () => {
    it.each(FAMILIES)('%s', (family) => {
      const env = nodeEnv(renderFamily(family));
      if (hasV4(family)) expect(env).not.toHaveProperty('CALICO_ROUTER_ID');
      else expect(env.CALICO_ROUTER_ID).toBe('hash');
    });
  });

  describe('IPPools', () => {
    const v4Pool = (ipipMode: string, vxlanMode: string) => ({
      apiVersion: 'crd.projectcalico.org/v1',
      kind: 'IPPool',
      metadata: { name: 'default-ipv4-ippool' },
      spec: { cidr: IPV4_PODS, blockSize: 26, ipipMode, vxlanMode, natOutgoing: true, nodeSelector: 'all()' },
    });
    const v6Pool = (vxlanMode: string, natOutgoing: boolean) => ({
      apiVersion: 'crd.projectcalico.org/v1',
      kind: 'IPPool',
      metadata: { name: 'default-ipv6-ippool' },
      spec: { cidr: IPV6_PODS, blockSize: 122, ipipMode: 'Never', vxlanMode, natOutgoing, nodeSelector: 'all()' },
    });
    it('IPv4: default-ipv4-ippool, blockSize 26, ipipMode from an ipip pool, natOutgoing true', () => {
      expect(ipPools(renderFamily('ipv4'))).toEqual([v4Pool('Always', 'Never')]);
      expect(ipPools(renderFamily('ipv4', { ipv4: { mode: 'CrossSubnet' } }))).toEqual([
        v4Pool('CrossSubnet', 'Never'),
      ]);
    });
    it('IPv4: vxlanMode from a vxlan pool', () => {
      expect(ipPools(renderFamily('ipv4', { ipv4: { pool: 'vxlan', mode: 'CrossSubnet' } }))).toEqual([
        v4Pool('Never', 'CrossSubnet'),
      ]);
    });
    it('IPv6: default-ipv6-ippool, blockSize 122, vxlanMode from mode, natOutgoing = sourceNATEnabled', () => {
      expect(ipPools(renderFamily('ipv6'))).toEqual([v6Pool('Never', true)]);
      expect(ipPools(renderFamily('ipv6', { ipv6: { mode: 'Always', sourceNATEnabled: false } }))).toEqual([
        v6Pool('Always', false),
      ]);
    });
    it('dual-stack: both, IPv4 first', () => {
      expect(ipPools(renderFamily('dual'))).toEqual([v4Pool('Always', 'Never'), v6Pool('Never', true)]);
    });
  });

  describe('addresses of the right family', () => {
    it.each([
      ['ipv4', '127.0.0.1'],
      ['dual', '127.0.0.1'],
      ['ipv6', '::1'],
    ] as const)('%s: felix health on the loopback of the primary family (%s), probed by exec', (family, host) => {
      const manifests = renderFamily(family);
      expect(nodeEnv(manifests).FELIX_HEALTHHOST).toBe(host);
      const container = calicoNodeContainer(manifests);
      expect(container.livenessProbe?.exec?.command).toEqual(['/bin/calico-node', '-felix-live', '-bird-live']);
      expect(container.readinessProbe?.exec?.command).toEqual(['/bin/calico-node', '-felix-ready', '-bird-ready']);
    });
    it('an IPv6-primary dual-stack network has its health endpoint on ::1', () => {
      const network = dualStackNetwork({ ipFamilies: ['IPv6', 'IPv4'], podCIDR: IPV6_PODS });
      const values = calicoValues(network, {}, { secondFamilyPodCIDR: IPV4_PODS });
      expect(values.node.env).toContainEqual({ name: 'FELIX_HEALTHHOST', value: '::1' });
      expect(values.ipFamilies).toEqual(['IPv6', 'IPv4']);
      expect(values.podCIDRs).toEqual({ IPv4: IPV4_PODS, IPv6: IPV6_PODS });
    });
  });

  describe('backends', () => {
    it('bird: BGP cluster type and bird probes; vxlan and none: felix probes only', () => {
      expect(find(renderFamily('ipv4'), 'ConfigMap', 'calico-config').data).toMatchObject({ calico_backend: 'bird' });
      for (const backend of ['vxlan', 'none'] as const) {
        const manifests = renderFamily('ipv6', { backend });
        expect(find(manifests, 'ConfigMap', 'calico-config').data).toMatchObject({ calico_backend: backend });
        expect(nodeEnv(manifests).CLUSTER_TYPE).toBe('k8s');
        expect(calicoNodeContainer(manifests).livenessProbe?.exec?.command).toEqual([
          '/bin/calico-node',
          '-felix-live',
        ]);
      }
    });
  });

  describe('host-local IPAM', () => {
    it.each([
      ['ipv4', [[{ subnet: 'usePodCidr' }]]],
      ['ipv6', [[{ subnet: 'usePodCidrIPv6' }]]],
      ['dual', [[{ subnet: 'usePodCidr' }], [{ subnet: 'usePodCidrIPv6' }]]],
    ] as const)('%s: the node podCIDRs of its families, and USE_POD_CIDR', (family, ranges) => {
      const manifests = renderFamily(family, { ipam: { type: 'host-local' } });
      expect(cniConfig(manifests).plugins[0]!.ipam).toEqual({ type: 'host-local', ranges });
      expect(nodeEnv(manifests).USE_POD_CIDR).toBe('true');
    });
  });

  describe('pod ranges', () => {
    it('are canonical', () => {
      const values = calicoValues(ipv6Network({ podCIDR: 'FD00:10:3:0:0::1/56' }), {});
      expect(values.podCIDRs).toEqual({ IPv6: 'fd00:10:3::/56' });
    });
    it('a dual-stack network needs the second family pod range', () => {
      expect(() => calicoValues(dualStackNetwork(), {})).toThrow(MissingPodCIDRError);
      expect(() => calicoValues(dualStackNetwork(), {})).toThrow(
        "the IPv6 pod range of the dual-stack network is missing: the shoot's status.networking.pods has no IPv6 CIDR yet",
      );
    });
    it('the second range must be of the second family', () => {
      expect(() => calicoValues(dualStackNetwork(), {}, { secondFamilyPodCIDR: '10.0.0.0/8' })).toThrow(
        'the second pod range "10.0.0.0/8" is not an IPv6 CIDR',
      );
      expect(() => calicoValues(dualStackNetwork(), {}, { secondFamilyPodCIDR: 'nope' })).toThrow(CalicoValuesError);
    });
    it('single-stack networks ignore a second range', () => {
      expect(calicoValues(ipv4Network(), {}, { secondFamilyPodCIDR: IPV6_PODS }).podCIDRs).toEqual({ IPv4: IPV4_PODS });
    });
    it('spec.podCIDR must parse and be of one of the families', () => {
      expect(() => calicoValues(ipv6Network({ podCIDR: IPV4_PODS }), {})).toThrow(
        "spec.podCIDR: 100.96.0.0/11 is an IPv4 range, but the network's IP families are [IPv6]",
      );
      expect(() => calicoValues(ipv4Network({ podCIDR: undefined }), {})).toThrow('spec.podCIDR: null is not a CIDR');
    });
    it('refuses unknown and duplicate families; none means IPv4', () => {
      expect(() => calicoValues(ipv4Network({ ipFamilies: ['IPv5'] }), {})).toThrow('unsupported IP family "IPv5"');
      expect(() => calicoValues(ipv4Network({ ipFamilies: ['IPv4', 'IPv4'] }), {})).toThrow('duplicate IP family');
      expect(calicoValues(ipv4Network({ ipFamilies: [] }), {}).ipFamilies).toEqual(['IPv4']);
    });
  });
});
