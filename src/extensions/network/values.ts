/**
 * The values of the calico chart for a Network: everything that depends on the Network's IP families, pod ranges
 * and providerConfig, computed per family exactly as the table in calico-ipv6.md says. Pure.
 */
import type { Network } from '../../apis/extensions/v1alpha1/network.js';
import { isIPFamily } from '../../apis/validation/ip-families.js';
import { formatCIDR, parseCIDR, type IPFamily } from '../../net/cidr.js';
import {
  Backend,
  defaultNetworkConfig,
  familiesOf,
  IPAMType,
  PoolMode,
  PoolType,
  type NetworkConfig,
  type ResolvedNetworkConfig,
} from './apis/config.js';

/** A container environment variable with a literal value. */
export interface EnvVar {
  readonly name: string;
  readonly value: string;
}

/** One calico `IPPool` (crd.projectcalico.org/v1). */
export interface IPPoolValues {
  readonly name: string;
  readonly cidr: string;
  readonly blockSize: number;
  readonly ipipMode: PoolMode;
  readonly vxlanMode: PoolMode;
  readonly natOutgoing: boolean;
  readonly nodeSelector: string;
}

/** The calico CNI plugin's `ipam` section. */
export type CNIIPAMConfig =
  | { readonly type: 'calico-ipam'; readonly assign_ipv4: 'true' | 'false'; readonly assign_ipv6: 'true' | 'false' }
  | { readonly type: 'host-local'; readonly ranges: readonly (readonly { readonly subnet: string }[])[] };

/** The CNI network configuration list calico's install-cni writes to `/etc/cni/net.d` (after substitutions). */
export interface CNINetworkConfig {
  readonly name: string;
  readonly cniVersion: string;
  readonly plugins: readonly Record<string, unknown>[];
}

/** Everything the calico chart's templates read, apart from the chart defaults (images) in its values.yaml. */
export interface CalicoValues {
  /** The families in effect, primary first (the Network's order). */
  readonly ipFamilies: readonly IPFamily[];
  /** Pod range per family, canonical. */
  readonly podCIDRs: Readonly<Partial<Record<IPFamily, string>>>;
  readonly config: ResolvedNetworkConfig;
  /** `calico_backend` of the ConfigMap: `bird`, `vxlan` or `none`. */
  readonly backend: string;
  /** The CNI configuration list; `mtu` holds {@link CNI_MTU_PLACEHOLDER}, which install-cni replaces. */
  readonly cni: CNINetworkConfig;
  readonly node: {
    /** The calico-node container's literal environment, in a stable order. */
    readonly env: readonly EnvVar[];
    readonly livenessProbe: readonly string[];
    readonly readinessProbe: readonly string[];
  };
  readonly ipPools: readonly IPPoolValues[];
}

/** Written as an unquoted number by install-cni (`"mtu": __CNI_MTU__`), from the ConfigMap's `veth_mtu`. */
export const CNI_MTU_PLACEHOLDER = '__CNI_MTU__';

export const IPV4_POOL_NAME = 'default-ipv4-ippool';
export const IPV6_POOL_NAME = 'default-ipv6-ippool';
export const IPV4_BLOCK_SIZE = 26;
export const IPV6_BLOCK_SIZE = 122;

/** Loopback of each family, where felix serves its health endpoint for the probes (never the wildcard address). */
const LOOPBACK: Record<IPFamily, string> = { IPv4: '127.0.0.1', IPv6: '::1' };

export interface CalicoValuesOptions {
  /**
   * The pod range of the family of a dual-stack Network that `spec.podCIDR` does not cover: the first CIDR of that
   * family in the Shoot's `status.networking.pods`. Required for dual-stack Networks, ignored otherwise.
   */
  readonly secondFamilyPodCIDR?: string;
}

/** The Network can't be rendered: its families or ranges are inconsistent, or the second pod range is missing. */
export class CalicoValuesError extends Error {
  override readonly name: string = 'CalicoValuesError';
}

/** The pod range of a dual-stack Network's second family is not known (yet): the Shoot's status may still get it. */
export class MissingPodCIDRError extends CalicoValuesError {
  override readonly name = 'MissingPodCIDRError';
}

/**
 * The chart values for `network` with its (decoded, valid) providerConfig `config`. Throws CalicoValuesError when
 * the Network's families and pod ranges don't fit together.
 */
export function calicoValues(
  network: Network,
  config: NetworkConfig | ResolvedNetworkConfig | undefined,
  options: CalicoValuesOptions = {},
): CalicoValues {
  const families = networkFamilies(network);
  const podCIDRs = podCIDRsByFamily(network, families, options);
  const resolved = defaultNetworkConfig(config, podCIDRs.IPv6);
  const has = (family: IPFamily) => families.includes(family);
  const primary = families[0]!;
  const { ipv4, ipv6 } = resolved;

  const env: EnvVar[] = [
    { name: 'DATASTORE_TYPE', value: 'kubernetes' },
    { name: 'WAIT_FOR_DATASTORE', value: 'true' },
    { name: 'CLUSTER_TYPE', value: resolved.backend === Backend.Bird ? 'k8s,bgp' : 'k8s' },
    { name: 'CALICO_DISABLE_FILE_LOGGING', value: 'true' },
    { name: 'FELIX_DEFAULTENDPOINTTOHOSTACTION', value: 'ACCEPT' },
    { name: 'FELIX_LOGSEVERITYSCREEN', value: 'info' },
    { name: 'FELIX_HEALTHENABLED', value: 'true' },
    { name: 'FELIX_HEALTHHOST', value: LOOPBACK[primary] },
  ];
  if (has('IPv4')) {
    env.push({ name: 'IP', value: 'autodetect' });
    if (ipv4.autoDetectionMethod !== undefined) {
      env.push({ name: 'IP_AUTODETECTION_METHOD', value: ipv4.autoDetectionMethod });
    }
    env.push(
      { name: 'CALICO_IPV4POOL_CIDR', value: podCIDRs.IPv4! },
      { name: 'CALICO_IPV4POOL_BLOCK_SIZE', value: String(IPV4_BLOCK_SIZE) },
      { name: ipv4.pool === PoolType.IPIP ? 'CALICO_IPV4POOL_IPIP' : 'CALICO_IPV4POOL_VXLAN', value: ipv4.mode },
      { name: 'CALICO_IPV4POOL_NAT_OUTGOING', value: 'true' },
    );
  } else {
    env.push({ name: 'IP', value: 'none' });
  }
  if (has('IPv6')) {
    env.push({ name: 'IP6', value: 'autodetect' });
    if (ipv6.autoDetectionMethod !== undefined) {
      env.push({ name: 'IP6_AUTODETECTION_METHOD', value: ipv6.autoDetectionMethod });
    }
    env.push(
      { name: 'CALICO_IPV6POOL_CIDR', value: podCIDRs.IPv6! },
      { name: 'CALICO_IPV6POOL_BLOCK_SIZE', value: String(IPV6_BLOCK_SIZE) },
      { name: 'CALICO_IPV6POOL_VXLAN', value: ipv6.mode },
      { name: 'CALICO_IPV6POOL_NAT_OUTGOING', value: String(ipv6.sourceNATEnabled) },
    );
  }
  env.push({ name: 'FELIX_IPV6SUPPORT', value: String(has('IPv6')) });
  const ipip = has('IPv4') && ipv4.pool === PoolType.IPIP && ipv4.mode !== PoolMode.Never;
  env.push({ name: 'FELIX_IPINIPENABLED', value: String(ipip) });
  // BGP needs a 32-bit router id, which calico takes from the node's IPv4 address unless told to hash the name.
  if (!has('IPv4')) env.push({ name: 'CALICO_ROUTER_ID', value: 'hash' });
  if (resolved.ipam.type === IPAMType.HostLocal) env.push({ name: 'USE_POD_CIDR', value: 'true' });

  const ipPools: IPPoolValues[] = [];
  if (has('IPv4')) {
    ipPools.push({
      name: IPV4_POOL_NAME,
      cidr: podCIDRs.IPv4!,
      blockSize: IPV4_BLOCK_SIZE,
      ipipMode: ipv4.pool === PoolType.IPIP ? ipv4.mode : PoolMode.Never,
      vxlanMode: ipv4.pool === PoolType.VXLAN ? ipv4.mode : PoolMode.Never,
      natOutgoing: true,
      nodeSelector: 'all()',
    });
  }
  if (has('IPv6')) {
    ipPools.push({
      name: IPV6_POOL_NAME,
      cidr: podCIDRs.IPv6!,
      blockSize: IPV6_BLOCK_SIZE,
      ipipMode: PoolMode.Never,
      vxlanMode: ipv6.mode,
      natOutgoing: ipv6.sourceNATEnabled,
      nodeSelector: 'all()',
    });
  }

  const bird = resolved.backend === Backend.Bird;
  return {
    ipFamilies: families,
    podCIDRs,
    config: resolved,
    backend: resolved.backend,
    cni: cniNetworkConfig(families, resolved),
    node: {
      env,
      livenessProbe: ['/bin/calico-node', '-felix-live', ...(bird ? ['-bird-live'] : [])],
      readinessProbe: ['/bin/calico-node', '-felix-ready', ...(bird ? ['-bird-ready'] : [])],
    },
    ipPools,
  };
}

function cniNetworkConfig(families: readonly IPFamily[], config: ResolvedNetworkConfig): CNINetworkConfig {
  const ipam: CNIIPAMConfig =
    config.ipam.type === IPAMType.HostLocal
      ? {
          type: 'host-local',
          // The node's podCIDR(s) as kube-controller-manager assigns them, primary family first.
          ranges: families.map((family) => [{ subnet: family === 'IPv4' ? 'usePodCidr' : 'usePodCidrIPv6' }]),
        }
      : {
          type: 'calico-ipam',
          assign_ipv4: families.includes('IPv4') ? 'true' : 'false',
          assign_ipv6: families.includes('IPv6') ? 'true' : 'false',
        };
  return {
    name: 'k8s-pod-network',
    cniVersion: '0.3.1',
    plugins: [
      {
        type: 'calico',
        log_level: 'info',
        log_file_path: '/var/log/calico/cni/cni.log',
        datastore_type: 'kubernetes',
        nodename: '__KUBERNETES_NODE_NAME__',
        mtu: CNI_MTU_PLACEHOLDER,
        ipam,
        policy: { type: 'k8s' },
        kubernetes: { kubeconfig: '__KUBECONFIG_FILEPATH__' },
      },
      { type: 'portmap', snat: true, capabilities: { portMappings: true } },
      { type: 'bandwidth', capabilities: { bandwidth: true } },
    ],
  };
}

/**
 * The CNI configuration as install-cni expects it: JSON, except that `mtu` is the bare placeholder `__CNI_MTU__`.
 * No string value can produce the bare placeholder: JSON.stringify escapes the quotes around any string.
 */
export function cniNetworkConfigText(cni: CNINetworkConfig): string {
  return JSON.stringify(cni, null, 2).replace(`"mtu": "${CNI_MTU_PLACEHOLDER}"`, `"mtu": ${CNI_MTU_PLACEHOLDER}`);
}

/** The Network's families, primary first; none means IPv4. */
function networkFamilies(network: Network): IPFamily[] {
  const families = familiesOf(network);
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
    const second = options.secondFamilyPodCIDR;
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
