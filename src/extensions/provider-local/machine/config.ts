/**
 * The configuration files of a machine, as pure functions of its options: containerd's config (2.x, version 3),
 * the KubeletConfiguration, kubeconfigs, kube-proxy's configuration and the CNI network (bridge + host-local).
 * Paths are as the machine sees them (inside its mount namespace, see holder.ts).
 *
 * Kept as one file (over 400 lines): each file is a short pure function of the machine's options, and with
 * MACHINE_PATHS they are all a machine is configured with, read and tested (config.test.ts) side by side.
 */
import { networkPolicyCNIPlugin } from './network-policy/cni-hook.js';
import { KUBELET_CONFIG_FILE_PATH, MACHINE_KUBELET_DEFAULTS } from '../../../apis/provider-local/v1alpha1/kubelet.js';
import { parse, stringify } from 'yaml';
import type { IPFamily } from '../../../net/cidr.js';
import { formatIP, parseCIDR, parseIP } from '../../../net/cidr.js';
import { urlHost } from '../../../system/net.js';
import { PAUSE_IMAGE } from './images.js';

/** Where things live inside a machine. */
export const MACHINE_PATHS = {
  containerdConfig: '/etc/containerd/config.toml',
  containerdRoot: '/var/lib/containerd',
  containerdState: '/run/containerd',
  containerdSocket: '/run/containerd/containerd.sock',
  /** containerd's registry host configs (hosts.toml per registry, `_default` for all others). */
  registryHostsDir: '/etc/containerd/certs.d',
  defaultRegistryHosts: '/etc/containerd/certs.d/_default/hosts.toml',
  /** containerd's base runtime spec and its cgroup delegation hook (cgroup-delegation.ts), where a machine has them. */
  containerdBaseRuntimeSpec: '/etc/containerd/base-runtime-spec.json',
  cgroupDelegationHook: '/etc/containerd/cgroup-delegation-hook',
  kubeletDir: '/var/lib/kubelet',
  kubeletConfig: '/etc/kubernetes/kubelet/config.yaml',
  kubeletKubeconfig: '/etc/kubernetes/kubelet/kubeconfig',
  kubeletBootstrapKubeconfig: '/etc/kubernetes/kubelet/bootstrap-kubeconfig',
  /** The client certificate and key a bootstrapped kubelet was issued (and rotates). */
  kubeletClientCertificate: '/var/lib/kubelet/pki/kubelet-client-current.pem',
  kubeProxyConfig: '/etc/kubernetes/kube-proxy/config.yaml',
  kubeProxyKubeconfig: '/etc/kubernetes/kube-proxy/kubeconfig',
  caFile: '/etc/kubernetes/pki/ca.crt',
  resolvConf: '/etc/kubernetes/resolv.conf',
  cniConfDir: '/etc/cni/net.d',
  cniConfig: '/etc/cni/net.d/10-gardener-ipv6.conflist',
  cniBinDir: '/opt/cni/bin',
  sysctlDir: '/etc/sysctl.d',
} as const;

/** The CNI plugins the machines use, named as containerd looks them up in the CNI bin dir. */
export const CNI_PLUGINS = ['bridge', 'host-local', 'loopback', 'portmap'] as const;

/** The bridge the CNI plugin creates in each machine for its pods. */
export const CNI_BRIDGE = 'cni0';

export interface ContainerdConfigOptions {
  /** runc, by absolute path (containerd's PATH need not have it). */
  runcBinary: string;
  sandboxImage?: string;
  /** runc's base spec (MACHINE_PATHS.containerdBaseRuntimeSpec), for machines that delegate cgroups. */
  baseRuntimeSpec?: string;
  /** Where the CNI plugins are. @default MACHINE_PATHS.cniBinDir */
  cniBinDir?: string;
}

/**
 * containerd 2.x: CRI with runc through the v2 shim, cgroupfs (no systemd in a machine), overlayfs snapshots, CNI
 * from the machine's dirs; the sandbox image pinned so it is never garbage collected or pulled; the streaming
 * server (exec, logs through the kubelet) on ::1 rather than 127.0.0.1, which IPv6-only machines lack.
 */
/** The host a pull of any image not present on a machine is sent to: it never resolves, and its name says why. */
export const NO_REGISTRY_HOST = 'no-registry-is-reachable-from-gardener-ipv6-machines.invalid';

/**
 * containerd's hosts.toml for every registry: no registry is reachable from the machines (their images are imported
 * when they start), so a pull goes to a host whose name tells the user so in the pod's events, instead of a
 * timeout or a DNS error that names the registry.
 */
export function defaultRegistryHostsToml(): string {
  return [
    '# No image registry is reachable from these machines: their images are imported when they start.',
    `server = 'https://${NO_REGISTRY_HOST}'`,
    '',
  ].join('\n');
}

export function containerdConfig(opts: ContainerdConfigOptions): string {
  const q = (s: string) => `'${s.replace(/'/g, '')}'`;
  return [
    'version = 3',
    `root = ${q(MACHINE_PATHS.containerdRoot)}`,
    `state = ${q(MACHINE_PATHS.containerdState)}`,
    // Snapshotters and services a machine never uses: less memory and start time per machine.
    'disabled_plugins = [',
    "  'io.containerd.snapshotter.v1.blockfile',",
    "  'io.containerd.snapshotter.v1.btrfs',",
    "  'io.containerd.snapshotter.v1.devmapper',",
    "  'io.containerd.snapshotter.v1.erofs',",
    "  'io.containerd.snapshotter.v1.zfs',",
    "  'io.containerd.tracing.processor.v1.otlp',",
    "  'io.containerd.internal.v1.tracing',",
    ']',
    '',
    '[grpc]',
    `  address = ${q(MACHINE_PATHS.containerdSocket)}`,
    '',
    "[plugins.'io.containerd.grpc.v1.cri']",
    "  stream_server_address = '::1'",
    "  stream_server_port = '0'",
    '',
    "[plugins.'io.containerd.cri.v1.images']",
    "  snapshotter = 'overlayfs'",
    '',
    "[plugins.'io.containerd.cri.v1.images'.registry]",
    `  config_path = ${q(MACHINE_PATHS.registryHostsDir)}`,
    '',
    "[plugins.'io.containerd.cri.v1.images'.pinned_images]",
    `  sandbox = ${q(opts.sandboxImage ?? PAUSE_IMAGE)}`,
    '',
    "[plugins.'io.containerd.cri.v1.runtime']",
    '  enable_selinux = false',
    // Machines share the host: no pod (nor the sandbox's default -998) gets an OOM score below containerd's own.
    // It also keeps pods starting where this process lacks CAP_SYS_RESOURCE (lowering a score needs it).
    '  restrict_oom_score_adj = true',
    '',
    "[plugins.'io.containerd.cri.v1.runtime'.cni]",
    `  bin_dirs = [${q(opts.cniBinDir ?? MACHINE_PATHS.cniBinDir)}]`,
    `  conf_dir = ${q(MACHINE_PATHS.cniConfDir)}`,
    '  max_conf_num = 1',
    '',
    "[plugins.'io.containerd.cri.v1.runtime'.containerd]",
    "  default_runtime_name = 'runc'",
    '',
    "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]",
    "  runtime_type = 'io.containerd.runc.v2'",
    ...(opts.baseRuntimeSpec !== undefined ? [`  base_runtime_spec = ${q(opts.baseRuntimeSpec)}`] : []),
    '',
    "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]",
    `  BinaryName = ${q(opts.runcBinary)}`,
    '  SystemdCgroup = false',
    '',
  ].join('\n');
}

export interface KubeletConfigOptions {
  clusterDNS: string[];
  clusterDomain: string;
  /** Kubelet's client-certificate authority for its own API (the shoot CA). */
  clientCAFile?: string;
  /**
   * The KubeletConfiguration of the worker's OperatingSystemConfig (its file KUBELET_CONFIG_FILE_PATH): what the
   * Shoot says. Without it (a machine without an OSC, such as `up`'s seed nodes) the defaults below.
   */
  fromOperatingSystemConfig?: Readonly<Record<string, unknown>>;
}

/**
 * The settings of a machine without an OperatingSystemConfig's kubelet file; the gardenlet renders the same defaults
 * into the file where the Shoot says nothing.
 */
const KUBELET_DEFAULTS: Readonly<Record<string, unknown>> = {
  // The kubelet API (logs, exec) authenticates clients by a certificate of the cluster's CA or a token the API
  // server vouches for, and asks the API server whether each may do what it asks.
  authentication: { anonymous: { enabled: false }, webhook: { enabled: true } },
  authorization: { mode: 'Webhook' },
  readOnlyPort: 0,
  ...MACHINE_KUBELET_DEFAULTS,
};

/**
 * What the machine sets whatever the OperatingSystemConfig says, because only the machine knows it or this host
 * needs it:
 * - where things are inside the machine (the CA, containerd's socket, the resolv.conf) and the cluster DNS it was
 *   configured with;
 * - its listeners: the kubelet API on `::` (IPv6 and, where the machine has it, IPv4), health on `::1` (IPv6-only
 *   machines have no 127.0.0.1 to rely on);
 * - cgroups: this host mounts cgroup v1 hierarchies and the kubelet refuses v1 since 1.35 unless
 *   `failCgroupV1: false`; each machine gets its own cgroup namespace rooted at the machine's cgroup (machine.ts),
 *   so `cgroupRoot: /` is the machine's own subtree and several kubelets coexist; cgroupfs, as there is no systemd;
 * - `oomScoreAdj: 0`: the kubelet's default -999 needs CAP_SYS_RESOURCE, which this host's processes lack, and would
 *   protect it at the host's expense;
 * - no certificate rotation or serving certificates of its own: the machine joins with a bootstrap token and the
 *   client certificate it is issued;
 * - local storage isolation (the default, spelled out): the kubelet measures each pod's writable layers, logs and
 *   emptyDirs and evicts a pod over its `ephemeral-storage` limit, so that no shoot pod fills the host's disk; the
 *   Node's ephemeral-storage capacity is that of the host's file system the machine's state is on, which the machines
 *   share as VMs share a thin-provisioned disk. Without it the kubelet collects no file system statistics at all, and
 *   its Summary API (`stats/summary`, what `kubectl top` and the eviction manager read) fails.
 */
function machineOwnedKubeletSettings(opts: KubeletConfigOptions): Record<string, unknown> {
  return {
    address: '::',
    port: 10250,
    healthzBindAddress: '::1',
    healthzPort: 10248,
    cgroupDriver: 'cgroupfs',
    cgroupRoot: '/',
    cgroupsPerQOS: true,
    failCgroupV1: false,
    oomScoreAdj: 0,
    containerRuntimeEndpoint: `unix://${MACHINE_PATHS.containerdSocket}`,
    clusterDNS: opts.clusterDNS,
    clusterDomain: opts.clusterDomain,
    resolvConf: MACHINE_PATHS.resolvConf,
    rotateCertificates: false,
    serverTLSBootstrap: false,
    localStorageCapacityIsolation: true,
  };
}

/** The KubeletConfiguration the machine's kubelet runs with, as an object. */
export function kubeletConfigObject(opts: KubeletConfigOptions): Record<string, unknown> {
  const fromOSC = opts.fromOperatingSystemConfig;
  const desired = { ...KUBELET_DEFAULTS, ...(fromOSC ?? {}) };
  const authentication = (desired.authentication ?? {}) as Record<string, unknown>;
  return {
    ...desired,
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    ...machineOwnedKubeletSettings(opts),
    authentication: { ...authentication, x509: { clientCAFile: opts.clientCAFile ?? MACHINE_PATHS.caFile } },
  };
}

/** The KubeletConfiguration the machine's kubelet runs with (kubeletConfigObject), as YAML. */
export function kubeletConfig(opts: KubeletConfigOptions): string {
  return stringify(kubeletConfigObject(opts));
}

/**
 * The KubeletConfiguration of an OperatingSystemConfig's kubelet file; an error naming the file when it is not
 * one.
 */
export function parseOSCKubeletConfig(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = parse(text);
  } catch (e) {
    throw new Error(`${KUBELET_CONFIG_FILE_PATH}: not YAML: ${(e as Error).message}`);
  }
  const object = value as { apiVersion?: unknown; kind?: unknown } | null;
  if (
    object === null ||
    typeof object !== 'object' ||
    Array.isArray(object) ||
    object.kind !== 'KubeletConfiguration' ||
    object.apiVersion !== 'kubelet.config.k8s.io/v1beta1'
  ) {
    throw new Error(`${KUBELET_CONFIG_FILE_PATH}: not a kubelet.config.k8s.io/v1beta1 KubeletConfiguration`);
  }
  return object as Record<string, unknown>;
}

/** A client certificate inline, one in a file (cert and key in one, as the kubelet keeps its own), or a token. */
export type KubeconfigCredentials =
  { certPEM: string; keyPEM: string } | { certFile: string; keyFile: string } | { token: string };

export type KubeconfigOptions = KubeconfigCredentials & {
  server: string;
  caPEM: string;
  tlsServerName?: string;
  user: string;
};

function kubeconfigUser(c: KubeconfigCredentials): Record<string, string> {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  if ('token' in c) return { token: c.token };
  if ('certFile' in c) return { 'client-certificate': c.certFile, 'client-key': c.keyFile };
  return { 'client-certificate-data': b64(c.certPEM), 'client-key-data': b64(c.keyPEM) };
}

export function kubeconfig(opts: KubeconfigOptions): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'shoot',
        cluster: {
          server: opts.server,
          'certificate-authority-data': Buffer.from(opts.caPEM).toString('base64'),
          ...(opts.tlsServerName ? { 'tls-server-name': opts.tlsServerName } : {}),
        },
      },
    ],
    users: [{ name: opts.user, user: kubeconfigUser(opts) }],
    contexts: [{ name: 'shoot', context: { cluster: 'shoot', user: opts.user } }],
    'current-context': 'shoot',
  });
}

/** kubelet's flags besides the config file. */
export function kubeletArgs(opts: {
  nodeName: string;
  nodeIPs: string[];
  bootstrap?: boolean;
  /** The labels to register the Node with (`--node-labels`). */
  nodeLabels?: Readonly<Record<string, string>>;
}): string[] {
  const labels = Object.entries(opts.nodeLabels ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`);
  return [
    `--config=${MACHINE_PATHS.kubeletConfig}`,
    `--kubeconfig=${MACHINE_PATHS.kubeletKubeconfig}`,
    // TLS bootstrapping: the kubelet writes --kubeconfig itself, pointing at the certificate it was issued.
    ...(opts.bootstrap ? [`--bootstrap-kubeconfig=${MACHINE_PATHS.kubeletBootstrapKubeconfig}`] : []),
    `--root-dir=${MACHINE_PATHS.kubeletDir}`,
    `--hostname-override=${opts.nodeName}`,
    // One address per family, primary first: the Node's InternalIPs, in this order.
    `--node-ip=${opts.nodeIPs.join(',')}`,
    ...(labels.length > 0 ? [`--node-labels=${labels.join(',')}`] : []),
    '--v=1',
  ];
}

export interface KubeProxyConfigOptions {
  nodeName: string;
  /** The shoot's pod ranges (all families). */
  clusterCIDRs: string[];
  /** The machine's primary node IP: kube-proxy takes the cluster's primary family from it. */
  primaryNodeIP: string;
}

/**
 * kube-proxy in nftables mode. `conntrack.maxPerCore: 0` leaves nf_conntrack_max alone, which is read-only in a
 * network namespace other than the host's (kind does the same); the TCP timeouts are the network namespace's own and
 * writable in it, so kube-proxy sets its defaults (established 24h, CLOSE_WAIT 1h) as on any node.
 */
export function kubeProxyConfig(opts: KubeProxyConfigOptions): string {
  return stringify({
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    clientConnection: { kubeconfig: MACHINE_PATHS.kubeProxyKubeconfig },
    mode: 'nftables',
    hostnameOverride: opts.nodeName,
    clusterCIDR: opts.clusterCIDRs.join(','),
    bindAddress: opts.primaryNodeIP,
    healthzBindAddress: '[::]:10256',
    metricsBindAddress: '[::1]:10249',
    oomScoreAdj: 0,
    conntrack: { maxPerCore: 0, min: 0 },
    nftables: { syncPeriod: '30s', minSyncPeriod: '1s' },
  });
}

export interface CNIConfigOptions {
  /** The Node's spec.podCIDRs (one per family, primary first). */
  podCIDRs: string[];
  /** Chain the NetworkPolicy enforcer's hook (network-policy/cni-hook.ts) after the bridge. */
  networkPolicyHook?: boolean;
  /** The pods' MTU, when below their machine's (an overlay's headers). */
  mtu?: number;
}

/**
 * The CNI network: a bridge per machine with the pods' gateway addresses (isGateway), host-local addresses from
 * the Node's podCIDRs (one range set per family, so dual-stack pods get both), a default route per family. No
 * masquerading: pods reach pods on other machines with their own addresses, routed by the machines (routes.ts,
 * as calico does with its overlay off, or overlay.ts, as with VXLAN on).
 */
export function cniConfig(opts: CNIConfigOptions): string {
  const families = opts.podCIDRs.map((cidr) => {
    const parsed = parseCIDR(cidr);
    if (parsed === undefined) throw new Error(`spec.podCIDRs: invalid CIDR ${JSON.stringify(cidr)}`);
    return parsed.family;
  });
  return (
    JSON.stringify(
      {
        cniVersion: '1.0.0',
        name: 'gardener-ipv6',
        plugins: [
          {
            type: 'bridge',
            bridge: CNI_BRIDGE,
            isGateway: true,
            ipMasq: false,
            ...(opts.mtu !== undefined ? { mtu: opts.mtu } : {}),
            hairpinMode: true,
            ipam: {
              type: 'host-local',
              ranges: opts.podCIDRs.map((subnet) => [{ subnet }]),
              routes: families.map((family) => ({ dst: family === 'IPv6' ? '::/0' : '0.0.0.0/0' })),
              dataDir: '/var/lib/cni/networks',
            },
          },
          // Pods' hostPorts, as in Gardener's calico chain; in nftables, which the machines have (not iptables).
          { type: 'portmap', backend: 'nftables', snat: true, capabilities: { portMappings: true } },
          ...(opts.networkPolicyHook === true ? [networkPolicyCNIPlugin()] : []),
        ],
      },
      null,
      2,
    ) + '\n'
  );
}

/** How many `nameserver` lines a resolver reads (glibc's MAXNS): the kubelet warns about and drops the rest. */
export const MAX_NAMESERVERS = 3;

/**
 * A resolv.conf for the kubelet's `resolvConf`, what pods of `dnsPolicy: Default` (CoreDNS among them) resolve
 * with: the machine's upstream resolvers, as a cloud's DHCP gives a VM its VPC resolver. No search domains: the
 * seed's would shadow the shoot's own.
 */
export function machineResolvConf(upstreams: readonly string[] = []): string {
  if (upstreams.length === 0) {
    return '# gardener-ipv6 machine: no upstream resolver; pods use the cluster DNS.\noptions ndots:5\n';
  }
  return [
    '# gardener-ipv6 machine: its upstream resolvers.',
    ...upstreams.slice(0, MAX_NAMESERVERS).map((a) => `nameserver ${a}`),
    '',
  ].join('\n');
}

/**
 * The nameservers of a resolv.conf, RFC 5952 formatted; lines that aren't an address (a scoped `fe80::1%eth0`
 * among them: it can't leave the machine's own link) are left out.
 */
export function resolvConfNameservers(text: string): string[] {
  return text.split('\n').flatMap((line) => {
    const [keyword, address] = line.trim().split(/\s+/);
    if (keyword !== 'nameserver' || address === undefined) return [];
    const parsed = parseIP(address);
    return parsed !== undefined ? [formatIP(parsed)] : [];
  });
}

/** `https://[addr]:443` from an address, for callers that have one. */
export function apiServerURL(address: string, port = 443): string {
  return `https://${urlHost(address)}:${port}`;
}

/** The family of an address or CIDR with prefix (`fd00::a/64`). */
export function familyOf(addressOrCIDR: string): IPFamily {
  const parsed = parseIP(addressOrCIDR.split('/')[0]);
  if (parsed === undefined) throw new Error(`invalid address ${JSON.stringify(addressOrCIDR)}`);
  return parsed.family;
}

/** The nftables table of a machine's own rules (kube-proxy keeps to its `kube-proxy` tables). */
export const MACHINE_NFT_TABLE = 'gardener-ipv6-machine';

/** What decides the outgoing NAT of a machine's pods, per family. */
export interface NATOutgoingInput {
  /** The shoot's pod ranges, one per family. */
  readonly podCIDRs: readonly string[];
  /** The shoot's service and node ranges: inside the cluster too. */
  readonly serviceCIDRs?: readonly string[];
  readonly nodeCIDRs?: readonly string[];
  /** The families whose pool has `natOutgoing: false`; the others masquerade. */
  readonly withoutNAT?: readonly IPFamily[];
  /** The shoot's API server addresses (the `kubernetes` Service's endpoints), masqueraded whatever the pools say. */
  readonly apiServerAddresses?: readonly string[];
  /** The machine's upstream resolvers whose DNS traffic from pods is masqueraded whatever the pools say. */
  readonly snatToUpstreamDNS?: readonly string[];
}

/**
 * Outgoing NAT of pod traffic, as calico's IP pools do (`natOutgoing`): with it on for a family, packets from the
 * shoot's pods to anything outside the cluster's pod, service and node ranges of that family leave with the
 * machine's address, so hosts without routes to the pods answer; with it off they keep the pod's address. Traffic
 * to the shoot's API server is masqueraded either way: in Gardener a pod reaches it through the apiserver-proxy on
 * its node, a connection from the node's address, and the seed here has no route to the shoot's pods. An nft script
 * that replaces the table as a whole.
 */
export function natOutgoingRules(input: NATOutgoingInput): string {
  const rules = input.podCIDRs.flatMap((cidr) => {
    const family = familyOf(cidr);
    const ip = family === 'IPv6' ? 'ip6' : 'ip';
    if (!(input.withoutNAT ?? []).includes(family)) {
      const inside = [cidr, ...(input.serviceCIDRs ?? []), ...(input.nodeCIDRs ?? [])].filter(
        (c) => familyOf(c) === family,
      );
      return [`    ${ip} saddr ${cidr} ${ip} daddr != { ${[...new Set(inside)].join(', ')} } masquerade`];
    }
    const apiServer = (input.apiServerAddresses ?? []).filter((a) => familyOf(a) === family);
    return apiServer.length > 0 ? [`    ${ip} saddr ${cidr} ${ip} daddr { ${apiServer.join(', ')} } masquerade`] : [];
  });
  // calico's snatToUpstreamDNS: the pods' queries to the resolvers (CoreDNS forwarding for them) leave with the
  // machine's address, first, so that the pools' rules don't decide them.
  const dns = input.podCIDRs.flatMap((cidr) => {
    const family = familyOf(cidr);
    const ip = family === 'IPv6' ? 'ip6' : 'ip';
    const resolvers = [...new Set((input.snatToUpstreamDNS ?? []).filter((a) => familyOf(a) === family))];
    return resolvers.length > 0
      ? [
          `    ${ip} saddr ${cidr} ${ip} daddr { ${resolvers.join(', ')} } meta l4proto { udp, tcp } th dport 53 masquerade`,
        ]
      : [];
  });
  return [
    `table inet ${MACHINE_NFT_TABLE}`,
    `delete table inet ${MACHINE_NFT_TABLE}`,
    `table inet ${MACHINE_NFT_TABLE} {`,
    '  chain nat-outgoing {',
    '    type nat hook postrouting priority srcnat; policy accept;',
    ...dns,
    ...rules,
    '  }',
    '}',
    '',
  ].join('\n');
}
