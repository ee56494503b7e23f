/**
 * What a machine is made of: its options (the caller's network, the shoot's ranges, how it joins, its
 * configuration), its status, and what the parts of a machine (machine-network.ts, node-sync.ts, node-config.ts)
 * share of it. The machine itself is machine.ts.
 */
import type { File } from '../../../apis/extensions/v1alpha1/operatingsystemconfig.js';
import type { PodNetworkPool } from '../../../apis/provider-local/v1alpha1/machine-user-data.js';
import type { IPFamily } from '../../../net/cidr.js';
import type { SupervisedState } from '../../../system/supervisor.js';
import type { APIServerAccess, ClientCredentials } from './api-client.js';
import type { BuiltImage } from './image-archive.js';
import type { HostKernel } from './kubelet-host.js';
import type { EnforcerStatus } from './network-policy/enforcer.js';
import type { PodRoute } from './pod-network.js';

/** The node binaries, by the names hack/ensure-binaries.sh builds them under. */
export const MACHINE_BINARIES = [
  'kubelet',
  'kube-proxy',
  'containerd',
  'containerd-shim-runc-v2',
  'ctr',
  'runc',
  'pause',
  'cni-bridge',
  'cni-host-local',
  'cni-loopback',
  'cni-portmap',
] as const;

export interface MachineOptions {
  /** Also the Node's name. Lowercase letters, digits and '-'. */
  name: string;
  /** The machine's persistent files (containerd's images, kubelet's state, /etc changes). */
  stateDir: string;
  /** The folder with MACHINE_BINARIES. */
  binDir: string;
  /**
   * A network namespace of the machine's own, attached to the caller's bridge. Without it the machine uses the
   * network namespace it runs in (a machine pod's), whose addresses `addresses` are, and reaches the other machines'
   * pods through a VXLAN overlay (overlay.ts).
   */
  attachment?: BridgeAttachment;
  /** The machine's addresses with prefix length, one per family, primary first: `['fd00:10:1::a/64']`. */
  addresses: string[];
  /**
   * Without `attachment`: the address of the network namespace the overlay runs over (a machine pod's pod IP). The
   * Node's `addresses` (from the shoot's node ranges) are then held by the overlay device, the other machines reach
   * them through it, and the Node carries the underlay address in its OVERLAY_UNDERLAY_ANNOTATION.
   */
  underlay?: string;
  /** The shoot's families, primary first. */
  families: IPFamily[];
  apiServer: APIServerAccess;
  /**
   * How the machine joins: with certificates issued by the caller, or (Gardener's way, for machines whose names
   * nobody knows in advance) with a bootstrap token the kubelet trades for its client certificate.
   */
  join: CertificateJoin | BootstrapTokenJoin;
  /** The cluster DNS address (10th of the primary service range). */
  clusterDNS: string;
  /** @default cluster.local */
  clusterDomain?: string;
  /** The shoot's pod ranges, one per family (kube-proxy's clusterCIDR). */
  podCIDRs: string[];
  /** The shoot's service ranges, one per family. */
  serviceCIDRs: string[];
  /** The shoot's node ranges, one per family (inside the cluster for the outgoing NAT; CrossSubnet). */
  nodeCIDRs?: string[];
  /** The pod network's pool settings per family (pod-network.ts); a family without one: routed, masqueraded. */
  pools?: PodNetworkPool[];
  /** The machine's upstream resolvers, in its kubelet's resolv.conf (CoreDNS forwards to them). @default none */
  upstreamDNS?: string[];
  /** Masquerade the pods' DNS traffic to the upstream resolvers (calico's `snatToUpstreamDNS`). @default false */
  snatToUpstreamDNS?: boolean;
  /** The worker's OperatingSystemConfig; the machine starts its kubelet only after the node agent applied it. */
  operatingSystemConfig: { spec: { files?: File[] } };
  /** The worker pool's `sysctls`, overriding the OSC's. */
  sysctls?: Record<string, string>;
  /**
   * Labels the Node gets from its machine, as a cloud's Nodes get theirs from the cloud (its region and zone): with the
   * OSC's, which win where both name a key. @default none
   */
  nodeLabels?: Readonly<Record<string, string>>;
  /** Image archives imported into containerd before the kubelet starts (pause, test, CoreDNS images). */
  images: BuiltImage[];
  /** The host's kernel, as the kubelet checks it (kubelet-host.ts). @default this host's /proc */
  hostKernel?: HostKernel;
  /**
   * Give the cgroups of this machine's containers that run in user namespaces of their own (`hostUsers: false` pods)
   * to their namespace's root (cgroup-delegation.ts): a machine that runs machine pods (a seed Node). @default false
   */
  delegateCgroupsToUserNamespaces?: boolean;
  /**
   * A read-only folder inside the machine with the CNI plugins under the names containerd looks for, the NetworkPolicy
   * plugin among them (a machine image's, pod-image.ts): nothing in the machine can change what containerd runs for
   * a pod's network. Without it the machine links the plugins from `binDir` into MACHINE_PATHS.cniBinDir.
   */
  cniBinDir?: string;
  /** Enforce the cluster's NetworkPolicies on this machine (network-policy/). @default true */
  networkPolicies?: boolean;
  log?: (line: string) => void;
}

/** A veth from the machine's network namespace into a bridge the caller made. */
export interface BridgeAttachment {
  bridge: string;
  /** The network namespace the bridge is in, when not the caller's. */
  bridgeNetns?: string;
  /** The gateways on the bridge, one per family (any order). */
  gateways: string[];
}

export interface CertificateJoin {
  /** The node's client certificate: CN=system:node:<name>, O=system:nodes. */
  credentials: ClientCredentials;
  /** kube-proxy's client certificate: CN=system:kube-proxy (bound to system:node-proxier by default RBAC). */
  kubeProxyCredentials: ClientCredentials;
}

/**
 * TLS bootstrapping: the token (`<id>.<secret>`) authenticates as `system:bootstrappers`, the kubelet asks for a
 * client certificate with a CertificateSigningRequest that kube-controller-manager approves and signs. kube-proxy
 * and the node sync then use the kubelet's certificate: the shoot binds `system:nodes` to `system:node-proxier`.
 */
export interface BootstrapTokenJoin {
  bootstrapToken: string;
}

export interface MachineStatus {
  name: string;
  /** Its own network namespace, if it has one. */
  netns?: string;
  processes: SupervisedState[];
  podRoutes: PodRoute[];
  cniConfigured: boolean;
  /** The process that holds the machine's namespaces. */
  holderPid?: number;
  /** How often the machine was replaced because its holder died. */
  replaced: number;
  /** The NetworkPolicy enforcer, once it runs. */
  networkPolicies?: EnforcerStatus;
}

/** What the parts of a machine share of it. */
export interface MachineContext {
  readonly opts: MachineOptions;
  /** The machine's own network namespace; undefined when it uses the one it runs in. */
  readonly netns: string | undefined;
  /** The machine's root as seen from here (through its namespace holder); throws while it is not deployed. */
  readonly rootDir: string;
  /** Logs a line about the machine: `machine <name>: <line>`. */
  log(line: string): void;
}

/** The machine's addresses without their prefix lengths, primary first: the Node's InternalIPs. */
export function nodeIPsOf(opts: MachineOptions): string[] {
  return opts.addresses.map((a) => a.split('/')[0]!);
}
