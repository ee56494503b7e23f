/**
 * docs/calico.md section 3 (overlay → backend and pool modes) and section 4 (what renders per IP family), row by
 * row, checked on the rendered manifests (so the templates carry what the values say), plus the errors of
 * calicoValues.
 */
import { describe, expect, it } from 'vitest';
import type { NetworkConfig } from '../../../src/apis/calico/v1alpha1/config.js';
import { calicoValues, CalicoValuesError, MissingPodCIDRError } from '../../../src/extensions/network/values.js';
import {
  calicoNodeContainer,
  cniConfig,
  configData,
  containersOf,
  dualStackNetwork,
  envOf,
  find,
  ipPools,
  ipv4Network,
  ipv6Network,
  IPV4_NODES,
  IPV4_PODS,
  IPV6_NODES,
  IPV6_PODS,
  nodeEnv,
  renderFamily,
  valuesOf,
  type Family,
} from './fixtures.js';

const FAMILIES: readonly Family[] = ['ipv4', 'ipv6', 'dual'];
const hasV4 = (f: Family) => f !== 'ipv6';
const hasV6 = (f: Family) => f !== 'ipv4';
const has = (manifests: ReturnType<typeof renderFamily>, kind: string, name: string) =>
  manifests.some((m) => m.kind === kind && m.metadata.name === name);

describe('§3 overlay, backend and pool mode', () => {
  const outcome = (family: Family, config: NetworkConfig) => {
    const manifests = renderFamily(family, config);
    const env = nodeEnv(manifests);
    return {
      backend: configData(manifests).calico_backend,
      ipv4Mode: env.CALICO_IPV4POOL_IPIP ?? env.CALICO_IPV4POOL_VXLAN,
      ipv6Mode: env.CALICO_IPV6POOL_VXLAN,
    };
  };

  it.each([
    // family, config, backend, IPv4 mode, IPv6 mode
    ['ipv4', { overlay: { enabled: true } }, 'bird', 'Always', undefined],
    ['ipv4', { overlay: { enabled: true }, vxlan: { enabled: true } }, 'vxlan', 'Always', undefined],
    ['ipv4', { overlay: { enabled: false } }, 'none', 'Never', undefined],
    ['ipv4', { overlay: { enabled: false, createPodRoutes: true } }, 'bird', 'Never', undefined],
    ['ipv4', {}, 'bird', 'Always', undefined],
    ['ipv4', { backend: 'vxlan', ipv4: { pool: 'vxlan', mode: 'Never' } }, 'vxlan', 'Never', undefined],
    ['ipv4', { backend: 'none' }, 'none', 'Never', undefined],
    ['ipv4', { ipip: 'CrossSubnet' }, 'bird', 'CrossSubnet', undefined],
    ['ipv4', { overlay: { enabled: true }, ipv4: { mode: 'Never' } }, 'bird', 'Always', undefined],
    ['ipv6', { overlay: { enabled: true } }, 'bird', undefined, 'Always'],
    ['ipv6', { overlay: { enabled: true }, vxlan: { enabled: true } }, 'vxlan', undefined, 'Always'],
    ['ipv6', { overlay: { enabled: false } }, 'none', undefined, 'Never'],
    ['ipv6', { overlay: { enabled: false, createPodRoutes: true } }, 'bird', undefined, 'Never'],
    ['ipv6', {}, 'none', undefined, 'Never'],
    ['ipv6', { backend: 'bird', ipv6: { mode: 'Always' } }, 'none', undefined, 'Never'],
    ['dual', {}, 'none', 'Never', 'Never'],
    ['dual', { overlay: { enabled: true } }, 'bird', 'Always', 'Always'],
    ['dual', { overlay: { enabled: false } }, 'none', 'Never', 'Never'],
    ['dual', { overlay: { enabled: false, createPodRoutes: true } }, 'bird', 'Never', 'Never'],
  ] as const)('%s %j: backend %s, IPv4 mode %s, IPv6 mode %s', (family, config, backend, ipv4Mode, ipv6Mode) => {
    expect(outcome(family, config as NetworkConfig)).toEqual({ backend, ipv4Mode, ipv6Mode });
  });

  describe('autodetection from the shoot', () => {
    it('spec.networking.nodes: cidr=<nodes> for IPv4', () => {
      expect(nodeEnv(renderFamily('ipv4', {}, { nodes: IPV4_NODES })).IP_AUTODETECTION_METHOD).toBe(
        `cidr=${IPV4_NODES}`,
      );
      const v6 = nodeEnv(renderFamily('ipv6', {}, { nodes: IPV6_NODES }));
      expect(v6).not.toHaveProperty('IP_AUTODETECTION_METHOD');
      expect(v6).not.toHaveProperty('IP6_AUTODETECTION_METHOD');
    });
    it('status.networking.nodes: each family its own ranges, comma-joined, over the providerConfig', () => {
      const env = nodeEnv(
        renderFamily(
          'dual',
          { ipv4: { autoDetectionMethod: 'first-found' }, ipv6: { autoDetectionMethod: 'first-found' } },
          { nodes: IPV4_NODES, statusNodes: [IPV4_NODES, '10.251.0.0/16', IPV6_NODES] },
        ),
      );
      expect(env.IP_AUTODETECTION_METHOD).toBe(`cidr=${IPV4_NODES},10.251.0.0/16`);
      expect(env.IP6_AUTODETECTION_METHOD).toBe(`cidr=${IPV6_NODES}`);
    });
    it('the providerConfig method without node ranges; the deprecated one only without ipv4', () => {
      expect(
        nodeEnv(renderFamily('ipv4', { ipv4: { autoDetectionMethod: 'interface=eth0' } })).IP_AUTODETECTION_METHOD,
      ).toBe('interface=eth0');
      expect(nodeEnv(renderFamily('ipv4', { ipAutodetectionMethod: 'interface=eth1' })).IP_AUTODETECTION_METHOD).toBe(
        'interface=eth1',
      );
      expect(nodeEnv(renderFamily('ipv4', { ipv4: {}, ipAutodetectionMethod: 'interface=eth1' }))).not.toHaveProperty(
        'IP_AUTODETECTION_METHOD',
      );
      expect(
        nodeEnv(renderFamily('ipv6', { ipv6: { autoDetectionMethod: 'cidr=fd00::/8' } })).IP6_AUTODETECTION_METHOD,
      ).toBe('cidr=fd00::/8');
    });
  });
});

describe('§4 what renders per family', () => {
  describe('CNI ipam (host-local by default)', () => {
    it.each([
      ['ipv4', { type: 'host-local', subnet: 'usePodCidr', assign_ipv4: 'true', assign_ipv6: 'false' }],
      ['ipv6', { type: 'host-local', subnet: 'usePodCidrIPv6', assign_ipv4: 'false', assign_ipv6: 'true' }],
      [
        'dual',
        {
          type: 'host-local',
          ranges: [[{ subnet: 'usePodCidrIPv6' }], [{ subnet: 'usePodCidr' }]],
          assign_ipv4: 'true',
          assign_ipv6: 'true',
        },
      ],
    ] as const)('%s', (family, ipam) => {
      const manifests = renderFamily(family);
      expect(cniConfig(manifests).plugins[0]!.ipam).toEqual(ipam);
      expect(nodeEnv(manifests).USE_POD_CIDR).toBe('true');
    });
    it('ipam.cidr: usePodCIDR in any case is the family keyword; a CIDR is used canonical (single-stack)', () => {
      expect(
        cniConfig(renderFamily('ipv6', { ipam: { type: 'host-local', cidr: 'USEPODCIDR' } })).plugins[0]!.ipam,
      ).toMatchObject({
        subnet: 'usePodCidrIPv6',
      });
      expect(
        cniConfig(renderFamily('ipv4', { ipam: { type: 'host-local', cidr: '10.1.2.3/16' } })).plugins[0]!.ipam,
      ).toMatchObject({
        subnet: '10.1.0.0/16',
      });
      expect(
        cniConfig(renderFamily('dual', { ipam: { type: 'host-local', cidr: '10.1.0.0/16' } })).plugins[0]!.ipam,
      ).not.toHaveProperty('subnet');
    });
    it('calico-ipam (IPv4 single-stack): no USE_POD_CIDR; vxlan.enabled picks it too', () => {
      for (const config of [{ ipam: { type: 'calico-ipam' } }, { vxlan: { enabled: true } }]) {
        const manifests = renderFamily('ipv4', config);
        expect(cniConfig(manifests).plugins[0]!.ipam).toEqual({
          type: 'calico-ipam',
          assign_ipv4: 'true',
          assign_ipv6: 'false',
        });
        expect(nodeEnv(manifests)).not.toHaveProperty('USE_POD_CIDR');
      }
      expect(cniConfig(renderFamily('dual', { vxlan: { enabled: true } })).plugins[0]!.ipam).toMatchObject({
        type: 'host-local',
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

  describe('pool env', () => {
    it.each([
      ['ipip', 'Always'],
      ['ipip', 'CrossSubnet'],
      ['vxlan', 'Always'],
      ['vxlan', 'Never'],
    ] as const)('IPv4 only, pool %s mode %s', (pool, mode) => {
      const env = nodeEnv(renderFamily('ipv4', { ipv4: { pool, mode } }));
      expect(env.CALICO_IPV4POOL_CIDR).toBe(IPV4_PODS);
      expect(env[pool === 'ipip' ? 'CALICO_IPV4POOL_IPIP' : 'CALICO_IPV4POOL_VXLAN']).toBe(mode);
      expect(env).not.toHaveProperty(pool === 'ipip' ? 'CALICO_IPV4POOL_VXLAN' : 'CALICO_IPV4POOL_IPIP');
      expect(env.CALICO_IPV4POOL_NAT_OUTGOING).toBe('true');
    });
    it('IPv6 not in families: no IPv6 pool env; IPv4 not in families: no IPv4 pool env', () => {
      expect(Object.keys(nodeEnv(renderFamily('ipv4'))).filter((k) => k.startsWith('CALICO_IPV6POOL'))).toEqual([]);
      expect(Object.keys(nodeEnv(renderFamily('ipv6'))).filter((k) => k.startsWith('CALICO_IPV4POOL'))).toEqual([]);
    });
    it.each([
      [{}, 'false'],
      [{ ipv6: { sourceNATEnabled: true } }, 'true'],
      [{ wireguardEncryption: true }, 'true'],
      [{ wireguardEncryption: true, ipv6: { sourceNATEnabled: false } }, 'false'],
    ] as const)('IPv6 %j: CALICO_IPV6POOL_CIDR and NAT_OUTGOING %s', (config, nat) => {
      for (const family of ['ipv6', 'dual'] as const) {
        const env = nodeEnv(renderFamily(family, config as NetworkConfig));
        expect(env.CALICO_IPV6POOL_CIDR).toBe(IPV6_PODS);
        expect(env.CALICO_IPV6POOL_NAT_OUTGOING).toBe(nat);
      }
    });
  });

  describe('felix', () => {
    it.each(FAMILIES)('%s: FELIX_IPV6SUPPORT, CALICO_ROUTER_ID', (family) => {
      const env = nodeEnv(renderFamily(family));
      expect(env.FELIX_IPV6SUPPORT).toBe(String(hasV6(family)));
      if (hasV4(family)) expect(env).not.toHaveProperty('CALICO_ROUTER_ID');
      else expect(env.CALICO_ROUTER_ID).toBe('hash');
    });
    it.each([
      ['ipv4', {}, 'true'],
      ['ipv4', { overlay: { enabled: true } }, 'true'],
      ['ipv4', { ipv4: { mode: 'CrossSubnet' } }, 'true'],
      ['ipv4', { overlay: { enabled: false } }, 'false'],
      ['ipv4', { backend: 'none' }, 'false'],
      ['ipv4', { ipv4: { mode: 'Never' } }, 'false'],
      ['ipv4', { ipv4: { pool: 'vxlan' } }, 'false'],
      ['ipv6', { overlay: { enabled: true } }, 'false'],
      ['dual', { overlay: { enabled: true } }, 'false'],
    ] as const)('FELIX_IPINIPENABLED, %s %j: %s', (family, config, enabled) => {
      expect(nodeEnv(renderFamily(family, config as NetworkConfig)).FELIX_IPINIPENABLED).toBe(enabled);
    });
    it('ebpf: FELIX_BPFENABLED; kube-proxy off: the iptables cleanup; nftables kube-proxy: nftables mode', () => {
      expect(nodeEnv(renderFamily('ipv6', { ebpfDataplane: { enabled: true } })).FELIX_BPFENABLED).toBe('true');
      expect(nodeEnv(renderFamily('ipv6'))).not.toHaveProperty('FELIX_BPFENABLED');
      const off = nodeEnv(
        renderFamily('ipv6', { ebpfDataplane: { enabled: true } }, { kubeProxy: { enabled: false } }),
      );
      expect(off.FELIX_BPFKUBEPROXYIPTABLESCLEANUPENABLED).toBe('true');
      expect(nodeEnv(renderFamily('ipv4', {}, { kubeProxy: { mode: 'NFTables' } })).FELIX_NFTABLESMODE).toBe('Enabled');
    });
    it('kube-proxy off without ebpf cannot be rendered', () => {
      expect(() => valuesOf('ipv6', {}, { kubeProxy: { enabled: false } })).toThrow(
        'spec.kubernetes.kubeProxy.enabled: Disabling kube-proxy is forbidden in conjunction with calico without running in ebpf dataplane',
      );
    });
    it.each([
      ['ipv4', 'true', 'false'],
      ['ipv6', 'false', 'true'],
      ['dual', 'true', 'true'],
    ] as const)('%s wireguard: FELIX_WIREGUARDENABLED %s, FELIX_WIREGUARDENABLEDV6 %s', (family, v4, v6) => {
      const env = nodeEnv(renderFamily(family, { wireguardEncryption: true }));
      expect([env.FELIX_WIREGUARDENABLED, env.FELIX_WIREGUARDENABLEDV6]).toEqual([v4, v6]);
      expect(nodeEnv(renderFamily(family))).not.toHaveProperty('FELIX_WIREGUARDENABLED');
    });
    it.each(['Disabled', 'Drop', 'Reject'])('serviceLoopPrevention %s', (value) => {
      expect(nodeEnv(renderFamily('ipv6', { serviceLoopPrevention: value })).FELIX_SERVICELOOPPREVENTION).toBe(value);
      expect(nodeEnv(renderFamily('ipv6'))).not.toHaveProperty('FELIX_SERVICELOOPPREVENTION');
    });
  });

  describe('IPPools', () => {
    const v4Pool = (ipipMode: string, vxlanMode: string) => ({
      apiVersion: 'crd.projectcalico.org/v1',
      kind: 'IPPool',
      metadata: { name: 'default-ipv4-ippool' },
      spec: {
        cidr: IPV4_PODS,
        allowedUses: ['Workload', 'Tunnel'],
        blockSize: 26,
        ipipMode,
        vxlanMode,
        natOutgoing: true,
        nodeSelector: 'all()',
      },
    });
    const noSNAT = {
      apiVersion: 'crd.projectcalico.org/v1',
      kind: 'IPPool',
      metadata: { name: 'no-snat-for-node-cidr' },
      spec: { cidr: IPV4_NODES, disabled: true, disableBGPExport: true },
    };
    const v6Pool = (natOutgoing: boolean) => ({
      apiVersion: 'crd.projectcalico.org/v1',
      kind: 'IPPool',
      metadata: { name: 'default-ipv6-ippool' },
      spec: {
        cidr: IPV6_PODS,
        allowedUses: ['Workload', 'Tunnel'],
        blockSize: 122,
        ipipMode: 'Never',
        vxlanMode: 'Never',
        natOutgoing,
        nodeSelector: 'all()',
      },
    });
    it('IPv4 without an overlay statement: none (calico-node makes it from the env)', () => {
      expect(ipPools(renderFamily('ipv4'))).toEqual([]);
      expect(ipPools(renderFamily('ipv4', { ipv4: { mode: 'CrossSubnet' } }, { nodes: IPV4_NODES }))).toEqual([]);
    });
    it('IPv4 with overlay on: ipip, or vxlan with vxlan.enabled', () => {
      expect(ipPools(renderFamily('ipv4', { overlay: { enabled: true } }))).toEqual([v4Pool('Always', 'Never')]);
      expect(ipPools(renderFamily('ipv4', { overlay: { enabled: true }, vxlan: { enabled: true } }))).toEqual([
        v4Pool('Never', 'Always'),
      ]);
    });
    it('IPv4 with overlay off: both Never, and no-snat-for-node-cidr for the nodes when known', () => {
      expect(ipPools(renderFamily('ipv4', { overlay: { enabled: false } }))).toEqual([v4Pool('Never', 'Never')]);
      expect(ipPools(renderFamily('ipv4', { overlay: { enabled: false } }, { nodes: IPV4_NODES }))).toEqual([
        v4Pool('Never', 'Never'),
        noSNAT,
      ]);
    });
    it('IPv6: default-ipv6-ippool, blockSize 122, modes Never, natOutgoing = sourceNATEnabled (or wireguard)', () => {
      expect(ipPools(renderFamily('ipv6'))).toEqual([v6Pool(false)]);
      expect(ipPools(renderFamily('ipv6', { overlay: { enabled: true }, ipv6: { sourceNATEnabled: true } }))).toEqual([
        v6Pool(true),
      ]);
      expect(ipPools(renderFamily('ipv6', { wireguardEncryption: true }))).toEqual([v6Pool(true)]);
      expect(ipPools(renderFamily('ipv6', { overlay: { enabled: false } }, { nodes: IPV6_NODES }))).toEqual([
        v6Pool(false),
      ]);
    });
    it('dual-stack: both, IPv4 first', () => {
      expect(ipPools(renderFamily('dual', { overlay: { enabled: false } }, { nodes: IPV4_NODES }))).toEqual([
        v4Pool('Never', 'Never'),
        noSNAT,
        v6Pool(false),
      ]);
      expect(ipPools(renderFamily('dual'))).toEqual([v6Pool(false)]);
    });
  });

  describe('ConfigMap, typha, kube-controllers', () => {
    it.each(FAMILIES)(
      '%s: typha on by default: Deployment and Service, and the service name in the ConfigMap',
      (family) => {
        const manifests = renderFamily(family);
        expect(configData(manifests).typha_service_name).toBe('calico-typha');
        expect(has(manifests, 'Deployment', 'calico-typha')).toBe(true);
        expect(has(manifests, 'Service', 'calico-typha')).toBe(true);
        expect(calicoNodeContainer(manifests).env).toContainEqual({
          name: 'FELIX_TYPHAK8SSERVICENAME',
          valueFrom: { configMapKeyRef: { name: 'calico-config', key: 'typha_service_name' } },
        });
      },
    );
    it('a typha or snatToUpstreamDNS section without enabled is off, as networking-calico decodes it', () => {
      expect(configData(renderFamily('ipv6', { typha: {} })).typha_service_name).toBe('none');
      const sidecars = containersOf(
        renderFamily('ipv6', { overlay: { enabled: false }, snatToUpstreamDNS: {} }),
        'DaemonSet',
        'calico-node',
      );
      expect(sidecars.map((c) => c.name)).toEqual(['calico-node']);
    });
    it.each(FAMILIES)('%s: typha off: none of it', (family) => {
      const manifests = renderFamily(family, { typha: { enabled: false } });
      expect(configData(manifests).typha_service_name).toBe('none');
      expect(has(manifests, 'Deployment', 'calico-typha')).toBe(false);
      expect(has(manifests, 'Service', 'calico-typha')).toBe(false);
    });
    it('typha health on the wildcard address of the primary family, probed over HTTP by the kubelet', () => {
      const typhaEnv = (family: Family) => envOf(containersOf(renderFamily(family), 'Deployment', 'calico-typha')[0]!);
      expect(typhaEnv('ipv4').TYPHA_HEALTHHOST).toBe('0.0.0.0');
      expect(typhaEnv('ipv6').TYPHA_HEALTHHOST).toBe('::');
      expect(typhaEnv('dual').TYPHA_HEALTHHOST).toBe('0.0.0.0');
    });
    it('kube-controllers only with a backend other than none; bird probes only with bird', () => {
      for (const [family, config, controllers, birdProbes] of [
        ['ipv4', {}, true, true],
        ['ipv4', { backend: 'vxlan' }, true, false],
        ['ipv4', { overlay: { enabled: false } }, false, false],
        ['ipv6', {}, false, false],
        ['ipv6', { overlay: { enabled: true } }, true, true],
        ['dual', { overlay: { enabled: false, createPodRoutes: true } }, true, true],
      ] as const) {
        const manifests = renderFamily(family, config as NetworkConfig);
        expect(has(manifests, 'Deployment', 'calico-kube-controllers'), `${family} ${JSON.stringify(config)}`).toBe(
          controllers,
        );
        expect(calicoNodeContainer(manifests).livenessProbe?.exec?.command.includes('-bird-live')).toBe(birdProbes);
        expect(nodeEnv(manifests).CLUSTER_TYPE).toBe(birdProbes ? 'k8s,bgp' : 'k8s');
      }
    });
    it('veth_mtu: "0" by default, the configured MTU as a string otherwise', () => {
      expect(configData(renderFamily('ipv6')).veth_mtu).toBe('0');
      expect(configData(renderFamily('ipv6', { vethMTU: '1440' })).veth_mtu).toBe('1440');
      expect(configData(renderFamily('ipv4', { vethMTU: 1400 })).veth_mtu).toBe('1400');
    });
  });

  describe('upstream-DNS source NAT sidecar', () => {
    const sidecars = (family: Family, config: NetworkConfig) =>
      containersOf(renderFamily(family, config), 'DaemonSet', 'calico-node').filter((c) => c.name !== 'calico-node');
    it.each([
      ['ipv4', [['snat-upstream-dns-ipv4', 'IPv4', IPV4_PODS, 'iptables']]],
      ['ipv6', [['snat-upstream-dns-ipv6', 'IPv6', IPV6_PODS, 'ip6tables']]],
      [
        'dual',
        [
          ['snat-upstream-dns-ipv4', 'IPv4', IPV4_PODS, 'iptables'],
          ['snat-upstream-dns-ipv6', 'IPv6', IPV6_PODS, 'ip6tables'],
        ],
      ],
    ] as const)('%s: one per family with overlay off', (family, expected) => {
      const found = sidecars(family, { overlay: { enabled: false } });
      expect(found.map((c) => [c.name, envOf(c).IP_FAMILY, envOf(c).POD_CIDR, envOf(c).IPTABLES])).toEqual(expected);
      expect(nodeEnv(renderFamily(family, { overlay: { enabled: false } })).FELIX_CHAININSERTMODE).toBe('Append');
    });
    it.each(FAMILIES)('%s: none with overlay on, unstated, or SNAT turned off', (family) => {
      expect(sidecars(family, { overlay: { enabled: true } })).toEqual([]);
      expect(sidecars(family, {})).toEqual([]);
      expect(sidecars(family, { snatToUpstreamDNS: { enabled: true } })).toEqual([]);
      expect(sidecars(family, { overlay: { enabled: false }, snatToUpstreamDNS: { enabled: false } })).toEqual([]);
    });
  });

  describe('static autoscaling', () => {
    it('sets the requests of calico-node and typha from the resources; other modes keep the defaults', () => {
      const config = {
        autoScaling: { mode: 'static', resources: { node: { cpu: '500m' }, typha: { memory: '300Mi' } } },
      };
      const manifests = renderFamily('ipv6', config);
      expect(calicoNodeContainer(manifests).resources?.requests).toEqual({ cpu: '500m', memory: '100Mi' });
      expect(containersOf(manifests, 'Deployment', 'calico-typha')[0]!.resources?.requests).toEqual({
        cpu: '200m',
        memory: '300Mi',
      });
      const vpa = renderFamily('ipv6', { ...config, autoScaling: { ...config.autoScaling, mode: 'vpa' } });
      expect(calicoNodeContainer(vpa).resources?.requests).toEqual({ cpu: '250m', memory: '100Mi' });
    });
  });

  describe('addresses of the right family', () => {
    it.each([
      ['ipv4', '127.0.0.1'],
      ['dual', '127.0.0.1'],
      ['ipv6', '::1'],
    ] as const)('%s: felix health on the loopback of the primary family (%s)', (family, host) => {
      expect(nodeEnv(renderFamily(family)).FELIX_HEALTHHOST).toBe(host);
    });
    it('an IPv6-primary dual-stack network has its health endpoints on IPv6', () => {
      const network = dualStackNetwork({ ipFamilies: ['IPv6', 'IPv4'], podCIDR: IPV6_PODS });
      const values = calicoValues(network, {}, { shoot: { statusPods: [IPV6_PODS, IPV4_PODS] } });
      expect(values.node.env).toContainEqual({ name: 'FELIX_HEALTHHOST', value: '::1' });
      expect(values.typha.env).toContainEqual({ name: 'TYPHA_HEALTHHOST', value: '::' });
      expect(values.ipFamilies).toEqual(['IPv6', 'IPv4']);
      expect(values.podCIDRs).toEqual({ IPv4: IPV4_PODS, IPv6: IPV6_PODS });
    });
  });
});

describe('pod ranges', () => {
  it('are canonical', () => {
    expect(calicoValues(ipv6Network({ podCIDR: 'FD00:10:3:0:0::1/56' }), {}).podCIDRs).toEqual({
      IPv6: 'fd00:10:3::/56',
    });
  });
  it('a dual-stack network needs the second family pod range from the shoot', () => {
    expect(() => calicoValues(dualStackNetwork(), {})).toThrow(MissingPodCIDRError);
    expect(() => calicoValues(dualStackNetwork(), {}, { shoot: { statusPods: [IPV4_PODS] } })).toThrow(
      "the IPv6 pod range of the dual-stack network is missing: the shoot's status.networking.pods has no IPv6 CIDR yet",
    );
    expect(calicoValues(dualStackNetwork(), {}, { secondFamilyPodCIDR: IPV6_PODS }).podCIDRs.IPv6).toBe(IPV6_PODS);
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

it('find fails loudly for a missing object', () => {
  expect(() => find([], 'Deployment', 'x')).toThrow('no Deployment x rendered');
});

describe('the pool settings in force per family (what the machines apply)', () => {
  const pools = (family: Family, config: NetworkConfig) => valuesOf(family, config).pools;

  it.each([
    // family, config, IPv4 [encapsulation, mode, natOutgoing], IPv6 [mode, natOutgoing]
    ['ipv4', {}, ['IPIP', 'Always', true], undefined],
    ['ipv4', { overlay: { enabled: true }, vxlan: { enabled: true } }, ['VXLAN', 'Always', true], undefined],
    ['ipv4', { overlay: { enabled: false } }, ['IPIP', 'Never', true], undefined],
    ['ipv4', { ipv4: { pool: 'vxlan', mode: 'Never' } }, ['VXLAN', 'Never', true], undefined],
    ['ipv6', {}, undefined, ['Never', false]],
    ['ipv6', { overlay: { enabled: true } }, undefined, ['Always', false]],
    // Without an overlay statement an IPv6 pool is never tunnelled, whatever its mode says (§3).
    ['ipv6', { ipv6: { mode: 'Always', sourceNATEnabled: true } }, undefined, ['Never', true]],
    ['ipv6', { wireguardEncryption: true }, undefined, ['Never', true]],
    ['dual', {}, ['IPIP', 'Never', true], ['Never', false]],
    ['dual', { overlay: { enabled: true } }, ['IPIP', 'Always', true], ['Always', false]],
    ['dual', { overlay: { enabled: true }, vxlan: { enabled: true } }, ['VXLAN', 'Always', true], ['Always', false]],
    [
      'dual',
      { overlay: { enabled: false }, ipv6: { sourceNATEnabled: true } },
      ['IPIP', 'Never', true],
      ['Never', true],
    ],
  ] as const)('%s %j', (family, config, ipv4, ipv6) => {
    const got = pools(family, config as NetworkConfig);
    expect(got.find((p) => p.family === 'IPv4')).toEqual(
      ipv4 && { family: 'IPv4', encapsulation: ipv4[0], mode: ipv4[1], natOutgoing: ipv4[2] },
    );
    expect(got.find((p) => p.family === 'IPv6')).toEqual(
      ipv6 && { family: 'IPv6', encapsulation: 'VXLAN', mode: ipv6[0], natOutgoing: ipv6[1] },
    );
  });

  it('agree with the rendered IPPools wherever a pool is rendered', () => {
    for (const family of FAMILIES) {
      for (const config of [{ overlay: { enabled: true } }, { overlay: { enabled: false } }, {}] as NetworkConfig[]) {
        const values = valuesOf(family, config);
        for (const pool of values.ipPools.filter((p) => p.spec.allowedUses !== undefined)) {
          const settings = values.pools.find((p) => (p.family === 'IPv6') === pool.spec.cidr.includes(':'))!;
          const mode = settings.encapsulation === 'VXLAN' ? pool.spec.vxlanMode : pool.spec.ipipMode;
          expect(mode).toBe(pool.name === 'default-ipv6-ippool' ? 'Never' : settings.mode);
          expect(pool.spec.natOutgoing).toBe(settings.natOutgoing);
        }
      }
    }
  });
});
