/**
 * The values of the calico chart for a Network: overlay → backend and pool modes (docs/calico.md section 3), then
 * what renders per IP family (section 4), as networking-calico computes them. Pure.
 *
 * Kept as one file (over 400 lines): one pure computation, networking-calico's, from a Network to the chart's values,
 * its steps all reading the decisions of decide().
 */
import type { Network } from '../../apis/extensions/v1alpha1/network.js';
import { isIPFamily } from '../../apis/validation/ip-families.js';
import {
  poolDecisions,
  calicoSNATToUpstreamDNS,
  poolSettings,
  type CalicoPoolSettings,
} from '../../apis/calico/v1alpha1/pools.js';
import { cniNetworkConfig, type CNINetworkConfig } from './cni.js';
import { formatCIDR, parseCIDR, type IPFamily } from '../../net/cidr.js';
import {
  AutoscalingMode,
  Backend,
  familiesOrIPv4,
  IPAMType,
  PoolMode,
  PoolType,
  vethMTUString,
  type NetworkConfig,
} from '../../apis/calico/v1alpha1/config.js';

/** A container environment variable with a literal value. */
export interface EnvVar {
  readonly name: string;
  readonly value: string;
}

/** One calico `IPPool` (crd.projectcalico.org/v1): its name and its spec as it is rendered. */
export interface IPPoolValues {
  readonly name: string;
  readonly spec: IPPoolSpec;
}

export interface IPPoolSpec {
  readonly cidr: string;
  readonly allowedUses?: readonly string[];
  readonly blockSize?: number;
  readonly ipipMode?: string;
  readonly vxlanMode?: string;
  readonly natOutgoing?: boolean;
  readonly nodeSelector?: string;
  readonly disabled?: boolean;
  readonly disableBGPExport?: boolean;
}

/** Resource requests of a container. */
export interface ResourceRequests {
  readonly cpu: string;
  readonly memory: string;
}

/** A sidecar of calico-node that masquerades the pods' DNS traffic to the node's upstream resolvers of one family. */
export interface SNATSidecarValues {
  readonly name: string;
  readonly env: readonly EnvVar[];
}

/** Everything the calico chart's templates read, apart from the chart defaults (images) in its values.yaml. */
export interface CalicoValues {
  /** The families in effect, primary first (the Network's order). */
  readonly ipFamilies: readonly IPFamily[];
  /** Pod range per family, canonical. */
  readonly podCIDRs: Readonly<Partial<Record<IPFamily, string>>>;
  /** `calico_backend` of the ConfigMap: `bird`, `vxlan` or `none`. */
  readonly backend: string;
  /** `veth_mtu` of the ConfigMap; `"0"` lets calico detect it. */
  readonly vethMTU: string;
  /** `typha_service_name` of the ConfigMap: `calico-typha`, or `none` without typha. */
  readonly typhaServiceName: string;
  /** The CNI configuration list (cni.ts); `mtu` holds CNI_MTU_PLACEHOLDER, which install-cni replaces. */
  readonly cni: CNINetworkConfig;
  readonly node: {
    /** The calico-node container's literal environment, in a stable order. */
    readonly env: readonly EnvVar[];
    readonly livenessProbe: readonly string[];
    readonly readinessProbe: readonly string[];
    readonly resources: ResourceRequests;
    /** Source NAT of the pods' DNS traffic to the node's upstream resolvers (overlay off). */
    readonly snatToUpstreamDNS: boolean;
    /** One per family when source NAT to the upstream DNS servers is on; empty otherwise. */
    readonly snatSidecars: readonly SNATSidecarValues[];
  };
  readonly typha: {
    readonly enabled: boolean;
    readonly env: readonly EnvVar[];
    readonly resources: ResourceRequests;
  };
  readonly kubeControllers: { readonly enabled: boolean };
  readonly ipPools: readonly IPPoolValues[];
  /** The pool settings calico-node puts in force per family (from the IPPools, or from its env without them). */
  readonly pools: readonly CalicoPoolSettings[];
}

export const IPV4_POOL_NAME = 'default-ipv4-ippool';
export const IPV6_POOL_NAME = 'default-ipv6-ippool';
export const NO_SNAT_POOL_NAME = 'no-snat-for-node-cidr';
export const IPV4_BLOCK_SIZE = 26;
export const IPV6_BLOCK_SIZE = 122;
export const TYPHA_SERVICE_NAME = 'calico-typha';
export const TYPHA_PORT = 5473;
export const TYPHA_HEALTH_PORT = 9098;

export const DEFAULT_NODE_REQUESTS: ResourceRequests = { cpu: '250m', memory: '100Mi' };
export const DEFAULT_TYPHA_REQUESTS: ResourceRequests = { cpu: '200m', memory: '100Mi' };

/** Loopback of each family, where felix serves its health endpoint for the exec probes. */
const LOOPBACK: Record<IPFamily, string> = { IPv4: '127.0.0.1', IPv6: '::1' };
/** Wildcard of each family, where typha serves its health endpoint for the kubelet's HTTP probes. */
const WILDCARD: Record<IPFamily, string> = { IPv4: '0.0.0.0', IPv6: '::' };
/** The packet filter of each family in the calico-node image. */
const IPTABLES: Record<IPFamily, string> = { IPv4: 'iptables', IPv6: 'ip6tables' };

/** What the extension reads from the Shoot (Gardener: from the Cluster resource). */
export interface ShootNetworking {
  /** `spec.networking.nodes`. */
  readonly nodes?: string;
  /** `status.networking.nodes`: the node ranges per family once known. */
  readonly statusNodes?: readonly string[];
  /** `status.networking.pods`: where the pod range of a dual-stack Network's second family comes from. */
  readonly statusPods?: readonly string[];
  /** `spec.kubernetes.kubeProxy`. */
  readonly kubeProxy?: { readonly enabled?: boolean; readonly mode?: string };
  /**
   * The shoot's Nodes migrate to dual-stack (its `DualStackNodesMigrationReady` constraint is there and not True): a
   * dual-stack Network runs its primary family only until then, as Gardener's calico extension does.
   */
  readonly nodesMigrating?: boolean;
}

export interface CalicoValuesOptions {
  /**
   * The pod range of the family of a dual-stack Network that `spec.podCIDR` does not cover. Taken from
   * `shoot.statusPods` when not given; required for dual-stack Networks, ignored otherwise.
   */
  readonly secondFamilyPodCIDR?: string;
  readonly shoot?: ShootNetworking;
}

/** The Network can't be rendered: its families or ranges are inconsistent, or the second pod range is missing. */
export class CalicoValuesError extends Error {
  override readonly name: string = 'CalicoValuesError';
}

/** The pod range of a dual-stack Network's second family is not known (yet): the Shoot's status may still get it. */
export class MissingPodCIDRError extends CalicoValuesError {
  override readonly name = 'MissingPodCIDRError';
}

export const KUBE_PROXY_WITHOUT_EBPF =
  'Disabling kube-proxy is forbidden in conjunction with calico without running in ebpf dataplane';

/** True when the shoot turns kube-proxy off, which calico only supports with its eBPF dataplane. */
export function kubeProxyNeedsEBPF(config: NetworkConfig | undefined, shoot: ShootNetworking | undefined): boolean {
  return shoot?.kubeProxy?.enabled === false && config?.ebpfDataplane?.enabled !== true;
}

/**
 * The chart values for `network` with its (decoded, valid) providerConfig `config`. Throws CalicoValuesError when
 * the Network's families and pod ranges don't fit together.
 */
export function calicoValues(
  network: Network,
  config: NetworkConfig | undefined,
  options: CalicoValuesOptions = {},
): CalicoValues {
  const d = decide(network, config ?? {}, options);
  const staticResources = d.cfg.autoScaling?.mode === AutoscalingMode.Static ? d.cfg.autoScaling.resources : undefined;
  return {
    ipFamilies: d.families,
    podCIDRs: d.podCIDRs,
    backend: d.backend,
    vethMTU: vethMTUString(d.cfg.vethMTU),
    typhaServiceName: d.typhaEnabled ? TYPHA_SERVICE_NAME : 'none',
    cni: cniNetworkConfig(d.families, d.ipamType, d.cfg.ipam?.cidr),
    node: {
      env: nodeEnv(d),
      livenessProbe: ['/bin/calico-node', '-felix-live', ...(d.bird ? ['-bird-live'] : [])],
      readinessProbe: ['/bin/calico-node', '-felix-ready', ...(d.bird ? ['-bird-ready'] : [])],
      resources: requests(staticResources?.node, DEFAULT_NODE_REQUESTS),
      snatToUpstreamDNS: d.snatToUpstreamDNS,
      snatSidecars: snatSidecars(d),
    },
    typha: {
      enabled: d.typhaEnabled,
      env: typhaEnv(d.primary),
      resources: requests(staticResources?.typha, DEFAULT_TYPHA_REQUESTS),
    },
    pools: poolSettings(d.cfg, d.families),
    kubeControllers: { enabled: d.backend !== Backend.None },
    ipPools: ipPools(d),
  };
}

/** What the config decides, merged with networking-calico's defaults in its order: what every part below reads. */
type Decisions = ReturnType<typeof decide>;

function decide(network: Network, cfg: NetworkConfig, options: CalicoValuesOptions) {
  const shoot = options.shoot ?? {};
  const families = networkFamilies(network);
  const podCIDRs = podCIDRsByFamily(network, families, options);
  const hasIPv4 = families.includes('IPv4');
  const hasIPv6 = families.includes('IPv6');
  if (kubeProxyNeedsEBPF(cfg, shoot))
    throw new CalicoValuesError(`spec.kubernetes.kubeProxy.enabled: ${KUBE_PROXY_WITHOUT_EBPF}`);

  const pools = poolDecisions(cfg, families);
  // VXLAN on IPv4 single-stack takes calico-ipam, whatever the config says (networking-calico's order); calico-ipam
  // is for IPv4 single-stack only (the validation refuses it with IPv6).
  const calicoIPAM = hasIPv4 && !hasIPv6 && cfg.vxlan?.enabled === true;
  const ipamType: string = calicoIPAM ? IPAMType.Calico : cfg.ipam?.type ? cfg.ipam.type : IPAMType.HostLocal;
  return {
    cfg,
    shoot,
    families,
    podCIDRs,
    hasIPv4,
    hasIPv6,
    primary: families[0]!,
    ...pools,
    bird: pools.backend === Backend.Bird,
    ipamType,
    snatToUpstreamDNS: calicoSNATToUpstreamDNS(cfg),
    typhaEnabled: cfg.typha ? cfg.typha.enabled === true : true,
  };
}

/** How calico-node finds each family's node address: the providerConfig's method, beaten by the node ranges. */
function autoDetectionMethods(d: Decisions): Partial<Record<IPFamily, string>> {
  const { cfg, shoot } = d;
  const methods: Partial<Record<IPFamily, string>> = {};
  const ipv4Method = cfg.ipv4 !== undefined ? cfg.ipv4.autoDetectionMethod : cfg.ipAutodetectionMethod;
  if (ipv4Method) methods.IPv4 = ipv4Method;
  if (cfg.ipv6?.autoDetectionMethod) methods.IPv6 = cfg.ipv6.autoDetectionMethod;
  // The node ranges Gardener knows beat a method from the providerConfig.
  if (shoot.nodes && d.hasIPv4) methods.IPv4 = `cidr=${shoot.nodes}`;
  for (const family of d.families) {
    const ranges = (shoot.statusNodes ?? []).filter((c) => parseCIDR(c)?.family === family);
    if (ranges.length > 0) methods[family] = `cidr=${ranges.join(',')}`;
  }
  return methods;
}

/** calico-node's environment: the datastore, each family's address and pool, then felix's switches. */
function nodeEnv(d: Decisions): EnvVar[] {
  const { cfg, shoot, podCIDRs, hasIPv4, hasIPv6 } = d;
  const autoDetection = autoDetectionMethods(d);
  const felixIPIP =
    !hasIPv6 && d.ipv4Pool === PoolType.IPIP && (d.ipv4Mode === PoolMode.Always || d.ipv4Mode === PoolMode.CrossSubnet);
  const env: EnvVar[] = [
    { name: 'DATASTORE_TYPE', value: 'kubernetes' },
    { name: 'WAIT_FOR_DATASTORE', value: 'true' },
    { name: 'CLUSTER_TYPE', value: d.bird ? 'k8s,bgp' : 'k8s' },
    { name: 'CALICO_DISABLE_FILE_LOGGING', value: 'true' },
    { name: 'FELIX_DEFAULTENDPOINTTOHOSTACTION', value: 'ACCEPT' },
    { name: 'FELIX_LOGSEVERITYSCREEN', value: 'info' },
    { name: 'FELIX_HEALTHENABLED', value: 'true' },
    { name: 'FELIX_HEALTHHOST', value: LOOPBACK[d.primary] },
  ];
  if (hasIPv4) {
    env.push({ name: 'IP', value: 'autodetect' });
    if (autoDetection.IPv4 !== undefined) env.push({ name: 'IP_AUTODETECTION_METHOD', value: autoDetection.IPv4 });
    env.push(
      { name: 'CALICO_IPV4POOL_CIDR', value: podCIDRs.IPv4! },
      { name: 'CALICO_IPV4POOL_BLOCK_SIZE', value: String(IPV4_BLOCK_SIZE) },
      { name: d.ipv4Pool === PoolType.VXLAN ? 'CALICO_IPV4POOL_VXLAN' : 'CALICO_IPV4POOL_IPIP', value: d.ipv4Mode },
      { name: 'CALICO_IPV4POOL_NAT_OUTGOING', value: 'true' },
    );
  } else {
    env.push({ name: 'IP', value: 'none' });
  }
  if (hasIPv6) {
    env.push({ name: 'IP6', value: 'autodetect' });
    if (autoDetection.IPv6 !== undefined) env.push({ name: 'IP6_AUTODETECTION_METHOD', value: autoDetection.IPv6 });
    env.push(
      { name: 'CALICO_IPV6POOL_CIDR', value: podCIDRs.IPv6! },
      { name: 'CALICO_IPV6POOL_BLOCK_SIZE', value: String(IPV6_BLOCK_SIZE) },
      { name: 'CALICO_IPV6POOL_VXLAN', value: d.ipv6Mode },
      { name: 'CALICO_IPV6POOL_NAT_OUTGOING', value: String(d.ipv6NATOutgoing) },
    );
  }
  env.push({ name: 'FELIX_IPV6SUPPORT', value: String(hasIPv6) });
  env.push({ name: 'FELIX_IPINIPENABLED', value: String(felixIPIP) });
  // BGP needs a 32-bit router id, which calico takes from the node's IPv4 address unless told to hash the name.
  if (!hasIPv4) env.push({ name: 'CALICO_ROUTER_ID', value: 'hash' });
  if (d.ipamType === IPAMType.HostLocal) env.push({ name: 'USE_POD_CIDR', value: 'true' });
  if (cfg.ebpfDataplane?.enabled === true) env.push({ name: 'FELIX_BPFENABLED', value: 'true' });
  if (shoot.kubeProxy?.enabled === false) env.push({ name: 'FELIX_BPFKUBEPROXYIPTABLESCLEANUPENABLED', value: 'true' });
  if (shoot.kubeProxy?.enabled !== false && shoot.kubeProxy?.mode === 'NFTables') {
    env.push({ name: 'FELIX_NFTABLESMODE', value: 'Enabled' });
  }
  if (cfg.wireguardEncryption === true) {
    env.push(
      { name: 'FELIX_WIREGUARDENABLED', value: String(hasIPv4) },
      { name: 'FELIX_WIREGUARDENABLEDV6', value: String(hasIPv6) },
    );
  }
  if (cfg.serviceLoopPrevention !== undefined) {
    env.push({ name: 'FELIX_SERVICELOOPPREVENTION', value: cfg.serviceLoopPrevention });
  }
  // The masquerade rules of the sidecar must come before felix's, which accept pod traffic.
  if (d.snatToUpstreamDNS) env.push({ name: 'FELIX_CHAININSERTMODE', value: 'Append' });
  return env;
}

/** A sidecar per family that masquerades pod traffic to the upstream DNS servers, when that is on. */
function snatSidecars(d: Decisions): SNATSidecarValues[] {
  if (!d.snatToUpstreamDNS) return [];
  return d.families.map((family) => ({
    name: `snat-upstream-dns-${family.toLowerCase()}`,
    env: [
      { name: 'IP_FAMILY', value: family },
      { name: 'POD_CIDR', value: d.podCIDRs[family]! },
      { name: 'IPTABLES', value: IPTABLES[family] },
    ],
  }));
}

/** The IPPools rendered as objects: IPv4's only with an overlay statement (else calico-node's env makes it). */
function ipPools(d: Decisions): IPPoolValues[] {
  const pools: IPPoolValues[] = [];
  if (d.hasIPv4 && d.overlayStated) {
    const encapsulated = !d.overlayOff;
    pools.push({
      name: IPV4_POOL_NAME,
      spec: {
        cidr: d.podCIDRs.IPv4!,
        allowedUses: ['Workload', 'Tunnel'],
        blockSize: IPV4_BLOCK_SIZE,
        ipipMode: encapsulated && !d.vxlanOverlay ? PoolMode.Always : PoolMode.Never,
        vxlanMode: encapsulated && d.vxlanOverlay ? PoolMode.Always : PoolMode.Never,
        natOutgoing: true,
        nodeSelector: 'all()',
      },
    });
    if (d.overlayOff && d.shoot.nodes) {
      pools.push({ name: NO_SNAT_POOL_NAME, spec: { cidr: d.shoot.nodes, disabled: true, disableBGPExport: true } });
    }
  }
  if (d.hasIPv6) {
    pools.push({
      name: IPV6_POOL_NAME,
      spec: {
        cidr: d.podCIDRs.IPv6!,
        allowedUses: ['Workload', 'Tunnel'],
        blockSize: IPV6_BLOCK_SIZE,
        ipipMode: PoolMode.Never,
        vxlanMode: PoolMode.Never,
        natOutgoing: d.ipv6NATOutgoing,
        nodeSelector: 'all()',
      },
    });
  }
  return pools;
}

/** calico-typha's environment; its health endpoint on the wildcard address of the primary family. */
function typhaEnv(primary: IPFamily): EnvVar[] {
  return [
    { name: 'TYPHA_LOGSEVERITYSCREEN', value: 'info' },
    { name: 'TYPHA_LOGFILEPATH', value: 'none' },
    { name: 'TYPHA_LOGSEVERITYSYS', value: 'none' },
    { name: 'TYPHA_DATASTORETYPE', value: 'kubernetes' },
    { name: 'TYPHA_HEALTHENABLED', value: 'true' },
    { name: 'TYPHA_HEALTHHOST', value: WILDCARD[primary] },
    { name: 'TYPHA_HEALTHPORT', value: String(TYPHA_HEALTH_PORT) },
    { name: 'TYPHA_K8SNAMESPACE', value: 'kube-system' },
  ];
}

/** Static requests from a ResourceList of the providerConfig over the defaults. */
function requests(list: Record<string, string | number> | undefined, defaults: ResourceRequests): ResourceRequests {
  return {
    cpu: list?.cpu !== undefined ? String(list.cpu) : defaults.cpu,
    memory: list?.memory !== undefined ? String(list.memory) : defaults.memory,
  };
}

/** The Network's families, primary first; none means IPv4. */
function networkFamilies(network: Network): IPFamily[] {
  const families = familiesOrIPv4(network.spec.ipFamilies);
  const bad = families.find((f) => !isIPFamily(f));
  if (bad !== undefined) throw new CalicoValuesError(`spec.ipFamilies: unsupported IP family ${JSON.stringify(bad)}`);
  if (new Set(families).size !== families.length) {
    throw new CalicoValuesError(`spec.ipFamilies: duplicate IP family in [${families.join(', ')}]`);
  }
  return families as IPFamily[];
}

function podCIDRsByFamily(
  network: Network,
  families: readonly IPFamily[],
  options: CalicoValuesOptions,
): Partial<Record<IPFamily, string>> {
  const podCIDR = parseCIDR(network.spec.podCIDR);
  if (podCIDR === undefined) {
    throw new CalicoValuesError(`spec.podCIDR: ${JSON.stringify(network.spec.podCIDR ?? null)} is not a CIDR`);
  }
  if (!families.includes(podCIDR.family)) {
    throw new CalicoValuesError(
      `spec.podCIDR: ${network.spec.podCIDR} is an ${podCIDR.family} range, but the network's IP families are [${families.join(', ')}]`,
    );
  }
  const cidrs: Partial<Record<IPFamily, string>> = { [podCIDR.family]: formatCIDR(podCIDR) };
  for (const family of families) {
    if (family === podCIDR.family) continue;
    const second =
      options.secondFamilyPodCIDR ?? (options.shoot?.statusPods ?? []).find((c) => parseCIDR(c)?.family === family);
    if (second === undefined) {
      throw new MissingPodCIDRError(
        `the ${family} pod range of the dual-stack network is missing: the shoot's status.networking.pods has no ${family} CIDR yet`,
      );
    }
    const cidr = parseCIDR(second);
    if (cidr === undefined || cidr.family !== family) {
      throw new CalicoValuesError(`the second pod range ${JSON.stringify(second)} is not an ${family} CIDR`);
    }
    cidrs[family] = formatCIDR(cidr);
  }
  return cidrs;
}
