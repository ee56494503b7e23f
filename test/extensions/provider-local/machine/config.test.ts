import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { kubeletConfiguration } from '../../../../src/gardenlet/shoot/components/kubelet-config.js';
import {
  KUBELET_CONFIG_FILE_PATH,
  KUBELET_NODE_LABELS_FILE_PATH,
  nodeLabelsFile,
  parseNodeLabels,
} from '../../../../src/apis/provider-local/v1alpha1/kubelet.js';
import {
  MACHINE_PATHS,
  kubeletConfigObject,
  parseOSCKubeletConfig,
  cniConfig,
  containerdConfig,
  defaultRegistryHostsToml,
  NO_REGISTRY_HOST,
  familyOf,
  kubeProxyConfig,
  kubeconfig,
  kubeletArgs,
  kubeletConfig,
  machineResolvConf,
  natOutgoingRules,
  resolvConfNameservers,
} from '../../../../src/extensions/provider-local/machine/config.js';

describe('machine configuration', () => {
  it('containerd 2.x: version 3, runc through the v2 shim with cgroupfs, pinned sandbox image, CNI dirs', () => {
    const toml = containerdConfig({ runcBinary: '/bin/dir/runc' });
    expect(toml.startsWith('version = 3\n')).toBe(true);
    expect(toml).toContain(
      "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]\n  runtime_type = 'io.containerd.runc.v2'",
    );
    expect(toml).toContain("BinaryName = '/bin/dir/runc'\n  SystemdCgroup = false");
    expect(toml).toContain(
      "[plugins.'io.containerd.cri.v1.images'.pinned_images]\n  sandbox = 'registry.k8s.io/pause:3.10'",
    );
    expect(toml).toContain(`bin_dirs = ['${MACHINE_PATHS.cniBinDir}']`);
    expect(toml).toContain("snapshotter = 'overlayfs'");
    // No IPv4 loopback in IPv6-only machines: the streaming server binds ::1.
    expect(toml).toContain("stream_server_address = '::1'");
    expect(toml).not.toContain('127.0.0.1');
    // Registry hosts from the machine's certs.d, where _default sends every pull to a host that says why it fails.
    expect(toml).toContain(
      `[plugins.'io.containerd.cri.v1.images'.registry]\n  config_path = '${MACHINE_PATHS.registryHostsDir}'`,
    );
    expect(defaultRegistryHostsToml()).toContain(`server = 'https://${NO_REGISTRY_HOST}'`);
    expect(MACHINE_PATHS.defaultRegistryHosts).toBe(`${MACHINE_PATHS.registryHostsDir}/_default/hosts.toml`);
    expect(toml).not.toContain('base_runtime_spec');
  });

  it("containerd: runc's base spec in runc's one table, for machines that delegate cgroups", () => {
    const toml = containerdConfig({ runcBinary: '/bin/dir/runc', baseRuntimeSpec: '/etc/containerd/base.json' });
    expect(toml).toContain(
      "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]\n  runtime_type = 'io.containerd.runc.v2'\n" +
        "  base_runtime_spec = '/etc/containerd/base.json'\n",
    );
    // A TOML table is declared once.
    expect(toml.split("[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]\n")).toHaveLength(2);
  });

  it('kubelet: cgroup v1 allowed, cgroupfs in the machine cgroup namespace, cluster DNS, no IPv4 listeners', () => {
    const config = parse(kubeletConfig({ clusterDNS: ['fd00:10:2::a'], clusterDomain: 'cluster.local' }));
    expect(config).toMatchObject({
      kind: 'KubeletConfiguration',
      failCgroupV1: false,
      failSwapOn: false,
      cgroupDriver: 'cgroupfs',
      cgroupRoot: '/',
      clusterDNS: ['fd00:10:2::a'],
      clusterDomain: 'cluster.local',
      containerRuntimeEndpoint: 'unix:///run/containerd/containerd.sock',
      address: '::',
      healthzBindAddress: '::1',
      readOnlyPort: 0,
      // Pods' writes are measured and limited, and the Summary API has the node's file system.
      localStorageCapacityIsolation: true,
    });
    expect(config.authentication.anonymous.enabled).toBe(false);
    // Who may use the kubelet API is the API server's decision (SubjectAccessReview), not any holder of a CA cert.
    expect(config.authorization).toEqual({ mode: 'Webhook' });
    expect(config.authentication.webhook.enabled).toBe(true);
  });

  it("kubelet: the OSC's file of a Shoot without kubelet settings changes nothing of the machine's defaults", () => {
    const machine = { clusterDNS: ['fd00:10:2::a'], clusterDomain: 'cluster.local' };
    const fromOperatingSystemConfig = parseOSCKubeletConfig(stringify(kubeletConfiguration(undefined)));
    expect(kubeletConfigObject({ ...machine, fromOperatingSystemConfig })).toEqual(kubeletConfigObject(machine));
  });

  it("kubelet: the Shoot's settings from the OSC's file, the machine's own over whatever the file says", () => {
    const fromOperatingSystemConfig = {
      ...kubeletConfiguration({ seccompDefault: true, maxPods: 50, evictionHard: { memoryAvailable: '80Mi' } }),
      // What only the machine may say: a file's values are not taken.
      address: '0.0.0.0',
      cgroupRoot: '/elsewhere',
      oomScoreAdj: -999,
      clusterDNS: ['10.0.0.10'],
      authentication: { x509: { clientCAFile: '/tmp/ca.crt' }, anonymous: { enabled: false } },
    };
    const config = kubeletConfigObject({
      clusterDNS: ['fd00:10:2::a'],
      clusterDomain: 'cluster.local',
      fromOperatingSystemConfig,
    });
    expect(config).toMatchObject({
      seccompDefault: true,
      maxPods: 50,
      evictionHard: { 'memory.available': '80Mi', 'nodefs.available': '1%', 'imagefs.available': '1%' },
      address: '::',
      cgroupRoot: '/',
      oomScoreAdj: 0,
      clusterDNS: ['fd00:10:2::a'],
      authentication: { x509: { clientCAFile: MACHINE_PATHS.caFile }, anonymous: { enabled: false } },
    });
  });

  it('kubelet: refuses an OSC file that is not a KubeletConfiguration, naming the file', () => {
    expect(() => parseOSCKubeletConfig('kind: Pod\napiVersion: v1\n')).toThrow(
      `${KUBELET_CONFIG_FILE_PATH}: not a kubelet.config.k8s.io/v1beta1 KubeletConfiguration`,
    );
    expect(() => parseOSCKubeletConfig('a: [')).toThrow(`${KUBELET_CONFIG_FILE_PATH}: not YAML`);
  });

  it('kubelet flags: one node IP per family, primary first', () => {
    expect(kubeletArgs({ nodeName: 'm1', nodeIPs: ['fd00:10:1::a', '10.10.0.10'] })).toContain(
      '--node-ip=fd00:10:1::a,10.10.0.10',
    );
    expect(kubeletArgs({ nodeName: 'm1', nodeIPs: ['fd00:10:1::a'] })).toContain('--hostname-override=m1');
  });

  it("kubelet flags: the user data's labels, sorted, as --node-labels; none without any", () => {
    const labels = { 'worker.gardener.cloud/pool': 'w', 'a.example/b': '' };
    expect(kubeletArgs({ nodeName: 'm1', nodeIPs: ['fd00::a'], nodeLabels: labels })).toContain(
      '--node-labels=a.example/b=,worker.gardener.cloud/pool=w',
    );
    expect(kubeletArgs({ nodeName: 'm1', nodeIPs: ['fd00::a'], nodeLabels: {} }).join(' ')).not.toMatch(/node-labels/);
  });

  it('node labels file: key=value lines round-trip; a line that is not a label names its line and problem', () => {
    const labels = { 'worker.gardener.cloud/pool': 'pool-1', tier: '' };
    expect(nodeLabelsFile(labels)).toBe('tier=\nworker.gardener.cloud/pool=pool-1\n');
    expect(parseNodeLabels(`# the pool\n\n${nodeLabelsFile(labels)}`)).toEqual(labels);
    expect(() => parseNodeLabels('worker.gardener.cloud/pool\n')).toThrow(
      `${KUBELET_NODE_LABELS_FILE_PATH}: line 1 ("worker.gardener.cloud/pool"): no "="`,
    );
    expect(() => parseNodeLabels('a=1\nbad key=x\n')).toThrow(/line 2 \("bad key=x"\): name part must consist/);
    expect(() => parseNodeLabels(`a=${'v'.repeat(64)}`)).toThrow(/line 1 .*must be no more than 63 characters/);
  });

  it("kube-proxy: nftables mode, the shoot pods as cluster CIDR, conntrack's table size left to the host", () => {
    const config = parse(
      kubeProxyConfig({
        nodeName: 'm1',
        clusterCIDRs: ['fd00:10:3::/56', '10.3.0.0/16'],
        primaryNodeIP: 'fd00:10:1::a',
      }),
    );
    expect(config).toMatchObject({
      kind: 'KubeProxyConfiguration',
      mode: 'nftables',
      clusterCIDR: 'fd00:10:3::/56,10.3.0.0/16',
      hostnameOverride: 'm1',
      bindAddress: 'fd00:10:1::a',
      conntrack: { maxPerCore: 0 },
      healthzBindAddress: '[::]:10256',
    });
    // The network namespace's own TCP timeouts: kube-proxy's defaults, as on any node.
    expect(config.conntrack.tcpCloseWaitTimeout).toBeUndefined();
    expect(config.conntrack.tcpEstablishedTimeout).toBeUndefined();
  });

  it.each([
    ['IPv6', ['fd00:10:3:1::/64'], ['::/0']],
    ['IPv4', ['10.3.1.0/24'], ['0.0.0.0/0']],
    ['dual-stack', ['fd00:10:3:1::/64', '10.3.1.0/24'], ['::/0', '0.0.0.0/0']],
  ])('CNI for %s pods: bridge + host-local with one range set and default route per family', (_, podCIDRs, routes) => {
    const config = JSON.parse(cniConfig({ podCIDRs }));
    const bridge = config.plugins[0];
    expect(bridge).toMatchObject({ type: 'bridge', isGateway: true, ipMasq: false });
    expect(bridge.ipam.type).toBe('host-local');
    expect(bridge.ipam.ranges).toEqual(podCIDRs.map((subnet) => [{ subnet }]));
    expect(bridge.ipam.routes.map((r: { dst: string }) => r.dst)).toEqual(routes);
    // hostPorts through portmap, as in Gardener's calico chain; nftables, as the machines have no iptables.
    expect(config.plugins[1]).toEqual({
      type: 'portmap',
      backend: 'nftables',
      snat: true,
      capabilities: { portMappings: true },
    });
  });

  it('CNI: an invalid podCIDR is an error naming the field', () => {
    expect(() => cniConfig({ podCIDRs: ['nope'] })).toThrow(/spec\.podCIDRs: invalid CIDR "nope"/);
  });

  it('kubeconfig: embedded CA and client certificate, optional TLS server name', () => {
    const config = parse(
      kubeconfig({
        server: 'https://[fd00:ff::10]:443',
        caPEM: 'CA',
        certPEM: 'C',
        keyPEM: 'K',
        user: 'u',
        tlsServerName: 'api.x',
      }),
    );
    expect(config.clusters[0].cluster).toEqual({
      server: 'https://[fd00:ff::10]:443',
      'certificate-authority-data': Buffer.from('CA').toString('base64'),
      'tls-server-name': 'api.x',
    });
    expect(config.users[0].user['client-key-data']).toBe(Buffer.from('K').toString('base64'));
  });

  it('families of addresses and CIDRs', () => {
    expect(familyOf('fd00:10:1::a/64')).toBe('IPv6');
    expect(familyOf('10.0.0.1')).toBe('IPv4');
    expect(() => familyOf('x')).toThrow(/invalid address/);
  });
});

describe("a machine's resolv.conf", () => {
  it('lists the upstream resolvers (at most three, no search domains), or says there are none', () => {
    const text = machineResolvConf(['fd00:ff:e5::1', '10.0.0.2', 'fd00::3', 'fd00::4']);
    expect(text.match(/^nameserver .*$/gm)).toEqual([
      'nameserver fd00:ff:e5::1',
      'nameserver 10.0.0.2',
      'nameserver fd00::3',
    ]);
    expect(text).not.toMatch(/^search/m);
    expect(machineResolvConf()).not.toMatch(/^nameserver/m);
  });

  it("reads a pod's nameservers, RFC 5952 formatted, leaving out what is no address", () => {
    const pod = [
      'search shoot--e2e--m6.svc.cluster.local svc.cluster.local cluster.local',
      'nameserver fd00:1F:2:0::A',
      'nameserver 10.36.0.10',
      'nameserver fe80::1%eth0',
      'nameserver',
      'options ndots:5',
    ].join('\n');
    expect(resolvConfNameservers(pod)).toEqual(['fd00:1f:2::a', '10.36.0.10']);
    expect(resolvConfNameservers('')).toEqual([]);
  });
});

describe('outgoing NAT of pod traffic', () => {
  it('masquerades traffic from the pod ranges to anything outside them, per family, replacing the table', () => {
    const script = natOutgoingRules({ podCIDRs: ['fd00:10:3::/56', '10.3.0.0/16'] });
    expect(script).toContain('ip6 saddr fd00:10:3::/56 ip6 daddr != { fd00:10:3::/56 } masquerade');
    expect(script).toContain('ip saddr 10.3.0.0/16 ip daddr != { 10.3.0.0/16 } masquerade');
    expect(script.indexOf('delete table inet gardener-ipv6-machine')).toBeLessThan(
      script.indexOf('chain nat-outgoing'),
    );
  });

  const cluster = {
    podCIDRs: ['10.3.0.0/16', 'fd00:10:3::/56'],
    serviceCIDRs: ['10.4.0.0/16', 'fd00:10:4::/112'],
    nodeCIDRs: ['10.10.0.0/16', 'fd00:fe::/64'],
    apiServerAddresses: ['fd00:ff::2'],
  };

  it('leaves the cluster ranges of the family alone: pods, services and nodes', () => {
    const script = natOutgoingRules(cluster);
    expect(script).toContain('ip saddr 10.3.0.0/16 ip daddr != { 10.3.0.0/16, 10.4.0.0/16, 10.10.0.0/16 } masquerade');
    expect(script).toContain(
      'ip6 saddr fd00:10:3::/56 ip6 daddr != { fd00:10:3::/56, fd00:10:4::/112, fd00:fe::/64 } masquerade',
    );
  });

  it('natOutgoing off for a family: its pods keep their address, except towards the API server', () => {
    const script = natOutgoingRules({ ...cluster, withoutNAT: ['IPv6'] });
    expect(script).toContain('ip saddr 10.3.0.0/16 ip daddr != {');
    expect(script).not.toContain('ip6 daddr != ');
    expect(script).toContain('ip6 saddr fd00:10:3::/56 ip6 daddr { fd00:ff::2 } masquerade');
    // Off for both, no API server address of IPv4: nothing of IPv4 is masqueraded.
    const none = natOutgoingRules({ ...cluster, withoutNAT: ['IPv4', 'IPv6'] });
    expect(none).not.toMatch(/\bip saddr/);
    expect(none.match(/masquerade/g)).toHaveLength(1);
  });

  it("snatToUpstreamDNS: the pods' DNS to the upstream resolvers of each family is masqueraded, first", () => {
    const script = natOutgoingRules({
      ...cluster,
      withoutNAT: ['IPv6'],
      snatToUpstreamDNS: ['fd00:1f:2::a', '10.36.0.10', 'fd00:1f:2::a'],
    });
    const ipv6 = 'ip6 saddr fd00:10:3::/56 ip6 daddr { fd00:1f:2::a } meta l4proto { udp, tcp } th dport 53 masquerade';
    expect(script).toContain(ipv6);
    expect(script).toContain(
      'ip saddr 10.3.0.0/16 ip daddr { 10.36.0.10 } meta l4proto { udp, tcp } th dport 53 masquerade',
    );
    // Before the pools' rules, whatever they say.
    expect(script.indexOf(ipv6)).toBeLessThan(script.indexOf('ip saddr 10.3.0.0/16 ip daddr != {'));
    // Off (no resolvers given): no DNS rule.
    expect(natOutgoingRules({ ...cluster, withoutNAT: ['IPv6'] })).not.toContain('dport 53');
  });

  it('joins with a bootstrap token: the kubelet gets --bootstrap-kubeconfig, kube-proxy its issued certificate', () => {
    const args = kubeletArgs({ nodeName: 'm1', nodeIPs: ['fd00:10:1::a'], bootstrap: true });
    expect(args).toContain(`--bootstrap-kubeconfig=${MACHINE_PATHS.kubeletBootstrapKubeconfig}`);
    expect(args).toContain(`--kubeconfig=${MACHINE_PATHS.kubeletKubeconfig}`);
    expect(kubeletArgs({ nodeName: 'm1', nodeIPs: ['fd00:10:1::a'] }).join(' ')).not.toContain('bootstrap');
    const server = { server: 'https://[fd00:ff::2]:443', caPEM: 'CA', user: 'u' };
    expect(parse(kubeconfig({ ...server, token: 'abcdef.0123456789abcdef' })).users[0].user).toEqual({
      token: 'abcdef.0123456789abcdef',
    });
    const issued = MACHINE_PATHS.kubeletClientCertificate;
    expect(parse(kubeconfig({ ...server, certFile: issued, keyFile: issued })).users[0].user).toEqual({
      'client-certificate': issued,
      'client-key': issued,
    });
  });

  it('gives pods the overlay MTU when asked', () => {
    expect(JSON.parse(cniConfig({ podCIDRs: ['fd00:10:3::/64'], mtu: 1430 })).plugins[0].mtu).toBe(1430);
    expect(JSON.parse(cniConfig({ podCIDRs: ['fd00:10:3::/64'] })).plugins[0]).not.toHaveProperty('mtu');
  });

  it("chains the NetworkPolicy enforcer's hook after the bridge only when asked", () => {
    const types = (hook: boolean) =>
      (
        JSON.parse(cniConfig({ podCIDRs: ['fd00:10:3::/64'], networkPolicyHook: hook })) as {
          plugins: { type: string }[];
        }
      ).plugins.map((p) => p.type);
    expect(types(true)).toEqual(['bridge', 'portmap', 'gardener-ipv6-network-policy']);
    expect(types(false)).toEqual(['bridge', 'portmap']);
  });
});
