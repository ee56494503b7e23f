/**
 * A machine of the local provider: a worker node without a VM or Docker.
 *
 *   network   a named network namespace (`gv6-<owner pid>-machine-<name>`) with `eth0`, one end of a veth whose other
 *             end is a port of the caller's node bridge; the caller's addresses (one per family) and a default
 *             route per family via the bridge's gateway addresses.
 *   mounts    a private mount namespace, anchored by a `pause` process (the holder): a fresh sysfs of the machine's
 *             network namespace, the cgroup hierarchies of the machine's cgroup namespace, `/etc` as an overlay of
 *             the host's with the machine's changes in `<stateDir>/etc`, `/var` and `/opt` from the state dir,
 *             `/run` a fresh tmpfs. The machine's files survive a restart; nothing is mounted in the caller's view.
 *   cgroups   a subtree of the same name below the caller's cgroup in every cgroup v1 hierarchy, and a
 *             cgroup namespace rooted there: the kubelet's `cgroupRoot: /` is the machine's subtree, so several
 *             kubelets coexist, and every process of the machine (containers and shims included) is found there.
 *   processes containerd, then (after the OperatingSystemConfig is applied by the node agent) kubelet and
 *             kube-proxy, each entered into the machine's namespaces and restarted with backoff when they exit.
 *   node      a loop that reads the Nodes (with kube-proxy's identity: the Node authorizer lets a node read only its
 *             own Node): writes the CNI config once the machine's Node has spec.podCIDRs, and keeps the pod
 *             network to every other Node's podCIDRs as calico's pools of the shoot decide it (pod-network.ts:
 *             calico's VXLAN device per family, or routes via the InternalIPs). Pod traffic leaving the cluster's
 *             ranges is masqueraded to the machine's address per family (calico's `natOutgoing`), so hosts without
 *             routes to the pods answer; traffic to the API server always is.
 *
 * Lifecycle: `deploy()` creates all of that and returns once the processes run; `wait()` resolves when the Node is
 * Ready; `stop()` shuts the machine down and keeps its state dir (`deploy()` brings the same node back);
 * `destroy()` also removes the state dir. Neither deletes the Node object: the caller does, when it scales down.
 * A machine whose namespace holder dies is replaced on its own: stopped and deployed again on its state dir.
 * `cleanupOrphanedMachines()` removes what a previous run left when it died (its owner pid is gone).
 *
 * What the caller provides: the node bridge with the gateway addresses (in its network namespace, where the API
 * server's load-balancer address must be reachable too), a node client certificate (CN=system:node:<name>,
 * O=system:nodes) and kube-proxy's (CN=system:kube-proxy), an API server with `--authorization-mode=Node,RBAC` that
 * publishes its address in the `kubernetes` endpoints (in-cluster clients such as CoreDNS use that Service), and
 * kube-controller-manager with node IPAM. The images (buildMachineImages) are imported before the kubelet starts.
 *
 * Needs root, `nft` and `sysctl`, and a cgroup v1 host (see cgroups.ts).
 */
import { execFileSync, spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { parse as parseYAML } from 'yaml';
import { closeSync, existsSync, openSync, readFileSync, readdirSync } from 'node:fs';
import { lstat, mkdir, readFile, readlink, rm, symlink } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import type { File } from '../../../apis/extensions/v1alpha1/operatingsystemconfig.js';
import { NODE_APPLIED_USER_DATA_ANNOTATION } from '../../../apis/provider-local/v1alpha1/machine-user-data.js';
import { KUBELET_CONFIG_FILE_PATH } from '../../../apis/provider-local/v1alpha1/kubelet.js';
import { formatIP, parseIP, type IPFamily } from '../../../net/cidr.js';
import { deleteNetns, ip, netnsExists } from '../../../system/netns.js';
import { hostVethName, pidAlive } from '../../../system/network.js';
import {
  graceBefore,
  startProcess,
  which,
  type ManagedProcess,
  type ProcessExit,
  type StartOptions,
} from '../../../system/process.js';
import { onEmergencyExit } from '../../../system/cleanup.js';
import {
  NETWORK_POLICY_CNI_PLUGIN,
  NETWORK_POLICY_SOCKET,
  networkPolicyCNIPluginScript,
  serveNetworkPolicyHook,
} from './network-policy/cni-hook.js';
import { CgroupSubtree, listSubtrees, mountedCgroupV1Hierarchies } from '../../../system/cgroups.js';
import { SupervisedProcess, type SupervisedState } from '../../../system/supervisor.js';
import {
  applyOperatingSystemConfig,
  decodeFiles,
  directoryTarget,
  OperatingSystemConfigError,
  type ApplyResult,
  type NodeAgentTarget,
} from '../node-agent/node-agent.js';
import { nodeReady, requestJSON, type APIServerAccess, type ClientCredentials, type NodeInfo } from './api-client.js';
import {
  CNI_PLUGINS,
  MACHINE_PATHS,
  cniConfig,
  containerdConfig,
  defaultRegistryHostsToml,
  familyOf,
  kubeProxyConfig,
  kubeconfig,
  kubeletArgs,
  kubeletConfig,
  machineResolvConf,
  natOutgoingRules,
  parseOSCKubeletConfig,
  type KubeletConfigOptions,
} from './config.js';
import { kubeletHostProblems, procHostKernel, type HostKernel } from './kubelet-host.js';
import type { BuiltImage } from './images.js';
import { importArgs, linkBlobs, linkedImportCalls } from './content-store.js';
import {
  EMPTY_POD_NETWORK,
  podNetworkCommands,
  podNetworkMTU,
  podNetworkPlan,
  tunnelDevices,
  type PodNetworkPlan,
  type PodRoute,
} from './pod-network.js';
import type { PodNetworkPool } from '../../../apis/provider-local/v1alpha1/machine-user-data.js';
import { NetworkPolicyEnforcer, type EnforcerStatus } from './network-policy/enforcer.js';
import { runNft } from './nft.js';
import {
  CONTROL_PLANE_PEER_LABEL,
  OVERLAY_DEVICE,
  OVERLAY_OVERHEAD,
  OVERLAY_UNDERLAY_ANNOTATION,
  VXLANOverlay,
  linkMTUOf,
  run,
  stableMAC,
  type PeerLease,
} from './overlay.js';

/**
 * Names of a machine's network namespace and cgroup: `gv6-<owner pid>-machine-<name>`, the scheme of the local
 * provider's other namespaces (src/system/network.ts of the control planes), so one janitor finds them all.
 */
export const MACHINE_PREFIX = 'gv6-';
const MACHINE_KIND = 'machine';
export const DEFAULT_READY_TIMEOUT_MS = 120_000;
/** How often a machine reads the Nodes (its podCIDRs, the other machines' routes). */
export const NODE_SYNC_INTERVAL_MS = 2_000;

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
  /** Image archives imported into containerd before the kubelet starts (pause, test, CoreDNS images). */
  images: BuiltImage[];
  /** The host's kernel, as the kubelet checks it (kubelet-host.ts). @default this host's /proc */
  hostKernel?: HostKernel;
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

/** `gv6-<pid>-machine-<name>`, the name of the machine's network namespace and cgroup. */
export function machineID(name: string, ownerPid = process.pid): string {
  return `${MACHINE_PREFIX}${ownerPid}-${MACHINE_KIND}-${name}`;
}

/** A locally administered unicast MAC address, stable for a machine's name and addresses. */
export function machineMAC(name: string, addresses: readonly string[]): string {
  return stableMAC(`${name}\n${addresses.join(',')}`);
}

/** The host end of a machine's veth: named after its namespace, as the control planes' (src/system/network.ts). */
export { hostVethName };

/** Writes its pid into the cgroup.procs files in $GIPV6_CGROUP_PROCS, then execs the rest of the command line. */
const MOVE_INTO_CGROUP = [
  '/bin/sh',
  '-c',
  'for f in $GIPV6_CGROUP_PROCS; do echo $$ > "$f"; done; unset GIPV6_CGROUP_PROCS; exec "$@"',
  'cgroup-move',
];

/**
 * The holder's setup, run inside the new mount and cgroup namespaces (and the machine's network namespace), then
 * `exec pause`. $1 is the state dir, $2 the pause binary, $3 `fresh` for a sysfs of the machine's own network
 * namespace (a machine pod keeps the one of its pod's), the rest `dir:options` of the cgroup hierarchies.
 * Order matters when the state dir lies below one of the folders mounted over: /var and /run come last.
 */
const HOLDER_SETUP = `set -e
state="$1"; pause="$2"; sysfs="$3"; shift 3
if [ "$sysfs" = fresh ]; then mount -t sysfs sysfs /sys; fi
mount -t tmpfs -o mode=755 cgroup /sys/fs/cgroup
for h in "$@"; do
  dir="\${h%%:*}"; opts="\${h#*:}"
  mkdir -p "/sys/fs/cgroup/$dir"
  mount -t cgroup -o "$opts" cgroup "/sys/fs/cgroup/$dir"
done
mkdir -p /opt /var /run
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$state/etc,workdir=$state/.etc-work" /etc
mount --bind "$state/opt" /opt
mount --bind "$state/var" /var
mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /run/lock /run/netns
touch /run/.gardener-ipv6-machine-ready
exec "$pause"
`;

/**
 * What the machine's configuration asks and can't be had: a file or kubelet setting it can't use, a kernel parameter
 * the kernel refuses. Another try of the same configuration fails the same way.
 */
export class MachineConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MachineConfigurationError';
  }
}

/** How often a process of the machine may exit before its Node was first Ready until the machine counts as failed. */
export const START_FAILURE_LIMIT = 4;

/**
 * The line of a process's log that says why it stopped: the last error of klog (`E…`/`F…`) or logrus
 * (`level=error|fatal`), without its time and source, else the last line; empty for an empty log.
 */
export function lastErrorLine(log: string, maxLength = 300): string {
  const lines = log
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const klog = /^[EF]\d{4} [\d:.]+\s+\d+ [^\]]+\] ?/;
  const logrus = /level=(error|fatal)\b/;
  const line = lines.filter((l) => klog.test(l) || logrus.test(l)).at(-1) ?? lines.at(-1) ?? '';
  const text = line.replace(klog, '').replace(/^time="[^"]*"\s*/, '');
  return text.length > maxLength ? `${text.slice(0, maxLength - 1)}…` : text;
}

export class Machine {
  readonly id: string;
  /** The machine's own network namespace; undefined when it uses the one it runs in. */
  readonly netns: string | undefined;
  private readonly vethName: string;
  private readonly cgroup: CgroupSubtree;
  private holder: ManagedProcess | undefined;
  private readonly supervised: SupervisedProcess[] = [];
  private syncTimer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> | undefined;
  private podNetwork: PodNetworkPlan = EMPTY_POD_NETWORK;
  private overlay: VXLANOverlay | undefined;
  private lastPeerLeaseError: string | undefined;
  /** The checksum of the user data applied last, published on our Node. */
  private appliedUserData: string | undefined;
  private kubeProxyStarted = false;
  /** Set while a machine whose holder died is replaced. */
  private replacing: Promise<void> | undefined;
  private replaced = 0;
  private enforcer: NetworkPolicyEnforcer | undefined;
  /** Closes the enforcer's CNI hook socket; set while the hook serves (and the CNI config chains it). */
  private closeNetworkPolicyHook: (() => Promise<void>) | undefined;
  private deployedAt = 0;
  private cniWritten: string | undefined;
  private lastSyncError: string | undefined;
  /** Per process, its failed runs and the last one's cause, since the deploy. */
  private readonly exits = new Map<string, { count: number; cause: string }>();
  private destroying = false;
  private unregisterEmergency: (() => void) | undefined;
  private readonly log: (line: string) => void;

  constructor(readonly opts: MachineOptions) {
    if (!/^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$/.test(opts.name)) {
      throw new Error(`machine name ${JSON.stringify(opts.name)}: lowercase letters, digits and '-', at most 40`);
    }
    if (opts.addresses.length !== opts.families.length) {
      throw new Error(
        `machine ${opts.name}: one address per family (${opts.families.join(', ')}), got ${opts.addresses.join(', ')}`,
      );
    }
    opts.addresses.forEach((a, i) => {
      if (!a.includes('/')) throw new Error(`machine ${opts.name}: addresses[${i}] needs a prefix length: ${a}`);
      if (familyOf(a) !== opts.families[i])
        throw new Error(`machine ${opts.name}: addresses[${i}] ${a} is not ${opts.families[i]}`);
    });
    this.id = machineID(opts.name);
    this.netns = opts.attachment ? this.id : undefined;
    this.vethName = hostVethName(this.id);
    this.cgroup = new CgroupSubtree(this.id);
    this.log = opts.log ?? (() => {});
  }

  /** The machine's root as seen from here (through the holder's mount namespace). */
  get rootDir(): string {
    if (this.holder === undefined) throw new Error(`machine ${this.opts.name} is not deployed`);
    return `/proc/${this.holder.pid}/root`;
  }

  private get nodeIPs(): string[] {
    return this.opts.addresses.map((a) => a.split('/')[0]!);
  }

  private env(): NodeJS.ProcessEnv {
    return {
      PATH: `${this.opts.binDir}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
      HOME: '/root',
    };
  }

  /** The command prefix that enters the machine's mount, network and cgroup namespaces (through the holder). */
  private enterMachine(): string[] {
    if (this.holder === undefined) throw new Error(`machine ${this.opts.name} is not deployed`);
    return [which('nsenter') ?? 'nsenter', `--target=${this.holder.pid}`, '--mount', '--net', '--cgroup', '--'];
  }

  /** How to start a command inside the machine, in the cgroup `system` of the machine. */
  private insideSpec(name: string, command: string, args: string[]): StartOptions {
    if (this.holder === undefined) throw new Error(`machine ${this.opts.name} is not deployed`);
    return {
      name,
      command,
      args,
      logFile: join(this.opts.stateDir, 'logs', `${name}.log`),
      wrap: [...MOVE_INTO_CGROUP, ...this.enterMachine()],
      env: { ...this.env(), GIPV6_CGROUP_PROCS: this.cgroup.procsFiles('system').join(' ') },
    };
  }

  /** Runs a command inside the machine to completion; stdin from a file when given. */
  private execInside(command: string, args: string[], stdinFile?: string, timeoutMs = 120_000): Promise<string> {
    if (this.holder === undefined) throw new Error(`machine ${this.opts.name} is not deployed`);
    const argv = [...this.enterMachine(), command, ...args];
    return new Promise((resolve, reject) => {
      // The file itself as stdin, not a pipe: ctr seeks past content it has.
      const stdin = stdinFile !== undefined ? openSync(stdinFile, 'r') : 'ignore';
      let child: ChildProcessByStdio<null, Readable, Readable>;
      try {
        child = spawn(argv[0]!, argv.slice(1), {
          env: this.env(),
          stdio: [stdin, 'pipe', 'pipe'],
        }) as ChildProcessByStdio<null, Readable, Readable>;
      } finally {
        if (typeof stdin === 'number') closeSync(stdin);
      }
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (out += c.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        if (code === 0) resolve(out);
        else
          reject(
            new Error(`${command} ${args.join(' ')} in machine ${this.opts.name} failed (${code}): ${out.trim()}`),
          );
      });
    });
  }

  async deploy(): Promise<void> {
    if (this.holder !== undefined) throw new Error(`machine ${this.opts.name} is deployed already`);
    const started = Date.now();
    this.deployedAt = started;
    this.exits.clear();
    checkRuncSeccomp(join(this.opts.binDir, 'runc'));
    if ((this.netns !== undefined && netnsExists(this.netns)) || this.cgroup.exists()) {
      removeMachineResources(this.id, this.vethName);
    }
    this.unregisterEmergency = onEmergencyExit(() => this.destroySync(), { signals: false });
    try {
      await this.prepareStateDir();
      if (this.opts.attachment) this.createNetwork(this.opts.attachment);
      else this.createOverlay();
      await this.programNATOutgoing();
      this.cgroup.create('system');
      await this.startHolder();
      await this.writeConfigs();
      await this.applyOperatingSystemConfig(this.opts.operatingSystemConfig, this.opts.sysctls);
      this.supervise('containerd', join(this.opts.binDir, 'containerd'), ['--config', MACHINE_PATHS.containerdConfig]);
      await this.waitForContainerd(started + 60_000);
      await this.importImages();
      this.supervise(
        'kubelet',
        join(this.opts.binDir, 'kubelet'),
        kubeletArgs({ nodeName: this.opts.name, nodeIPs: this.nodeIPs, bootstrap: 'bootstrapToken' in this.opts.join }),
      );
      // With a bootstrap token, kube-proxy waits for the kubelet's certificate (the node sync starts it).
      if ('credentials' in this.opts.join) this.startKubeProxy();
      this.startNodeSync();
      this.log(`machine ${this.opts.name}: processes started in ${Date.now() - started}ms`);
    } catch (e) {
      await this.destroy().catch(() => {});
      throw e;
    }
  }

  /**
   * The images into containerd: by linking their blobs where the archives are on this filesystem (content-store.ts),
   * else by importing the whole archive.
   */
  private async importImages(): Promise<void> {
    const ctr = join(this.opts.binDir, 'ctr');
    const global = ['--address', MACHINE_PATHS.containerdSocket, '-n', 'k8s.io'];
    const root = join(this.opts.stateDir, MACHINE_PATHS.containerdRoot.slice(1));
    for (const image of this.opts.images) {
      const calls =
        image.content !== undefined && (await linkBlobs(image.content, root))
          ? linkedImportCalls(image.content, 'overlayfs')
          : [{ args: importArgs('overlayfs'), stdin: image.archive }];
      for (const call of calls) await this.execInside(ctr, [...global, ...call.args], call.stdin);
    }
  }

  private async prepareStateDir(): Promise<void> {
    const s = this.opts.stateDir;
    for (const dir of [
      'etc',
      '.etc-work',
      'opt/cni/bin',
      'var/lib/kubelet',
      'var/lib/containerd',
      'var/log',
      'var/tmp',
      'logs',
    ]) {
      await mkdir(join(s, dir), { recursive: true });
    }
    for (const [link, target] of [
      ['var/run', '/run'],
      ['var/lock', '/run/lock'],
    ] as const) {
      // lstat, not exists: the link dangles where the caller has no such folder (a machine image without /run).
      const present = await lstat(join(s, link)).then(
        () => true,
        () => false,
      );
      if (!present) await symlink(target, join(s, link));
    }
  }

  private startKubeProxy(): void {
    if (this.kubeProxyStarted) return;
    this.kubeProxyStarted = true;
    this.supervise('kube-proxy', join(this.opts.binDir, 'kube-proxy'), [
      `--config=${MACHINE_PATHS.kubeProxyConfig}`,
      '--v=1',
    ]);
  }

  /**
   * The node's NetworkPolicy enforcer (network-policy/enforcer.ts), with the identity that lists the Nodes, and its
   * CNI hook (network-policy/cni-hook.ts): the plugin in the machine's CNI bin dir, the socket in its `/run`.
   */
  private async startNetworkPolicyEnforcer(credentials: ClientCredentials): Promise<void> {
    if (this.enforcer !== undefined || this.opts.networkPolicies === false) return;
    const enforcer = new NetworkPolicyEnforcer({
      nodeName: this.opts.name,
      apiServer: this.opts.apiServer,
      credentials,
      ...(this.netns !== undefined ? { netns: this.netns } : {}),
      log: (line) => this.log(`machine ${this.opts.name}: ${line}`),
    });
    this.enforcer = enforcer;
    enforcer.deploy().catch((e: Error) => this.log(`machine ${this.opts.name}: network policies: ${e.message}`));
    try {
      await this.writeFileInside(
        join(MACHINE_PATHS.cniBinDir, NETWORK_POLICY_CNI_PLUGIN),
        networkPolicyCNIPluginScript(process.execPath),
        0o755,
      );
      this.closeNetworkPolicyHook = await serveNetworkPolicyHook(
        join(this.rootDir, NETWORK_POLICY_SOCKET),
        enforcer,
        (line) => this.log(`machine ${this.opts.name}: ${line}`),
      );
    } catch (e) {
      // Without the hook the pods still get their policies, only later: from their status, as the enforcer sees it.
      this.log(`machine ${this.opts.name}: network policies: no CNI hook: ${(e as Error).message}`);
    }
  }

  /**
   * The VXLAN device to the other machines, over the underlay address of the network namespace we run in; with an
   * underlay of its own, the device holds the Node's addresses (before the kubelet starts: it checks its node IPs).
   */
  private createOverlay(): void {
    const overlay = new VXLANOverlay(
      this.opts.name,
      this.underlayIP,
      (line) => this.log(`machine ${this.opts.name}: ${line}`),
      false,
    );
    overlay.ensureDevice(this.linkMTU());
    overlay.ensureControlPlanePeerRules();
    if (this.opts.underlay !== undefined) overlay.addAddresses(this.opts.addresses);
    this.overlay = overlay;
  }

  /** What the overlay runs over: the given underlay, else the Node's primary address. */
  private get underlayIP(): string {
    return this.opts.underlay ?? this.nodeIPs[0]!;
  }

  /** The MTU of the device that holds the underlay address (a machine pod's eth0). */
  private linkMTU(): number {
    return linkMTUOf(this.underlayIP);
  }

  /** The device of the node network: the overlay's, or eth0 on the bridge. */
  private get nodeDevice(): string {
    return this.overlay ? OVERLAY_DEVICE : 'eth0';
  }

  /** The node network's MTU: the overlay device's, or eth0's. */
  private nodeMTU(): number {
    if (this.overlay) return this.linkMTU() - OVERLAY_OVERHEAD[this.overlay.underlay];
    const out = execFileSync(which('ip') ?? 'ip', ['-n', this.netns!, '-o', 'link', 'show', 'eth0'], {
      encoding: 'utf8',
    });
    return Number(/\bmtu (\d+)/.exec(out)?.[1] ?? 1500);
  }

  /**
   * The pods' MTU: what is left inside the overlay and calico's tunnels of the pools; unset (the CNI's default) on
   * a bridge without tunnels.
   */
  private podMTU(): number | undefined {
    const devices = tunnelDevices(this.opts.name, this.nodeIPs, this.opts.pools ?? [], this.nodeMTU());
    if (this.overlay === undefined && devices.length === 0) return undefined;
    return podNetworkMTU(devices, this.nodeMTU());
  }

  private createNetwork(attachment: BridgeAttachment): void {
    const ns = this.id;
    ip(['netns', 'add', ns]);
    ip(['-n', ns, 'link', 'set', 'lo', 'up']);
    // Loopback keeps 127.0.0.1 even on IPv6-only machines, as on a real IPv6-only node: without it Go programs
    // (kubelet, kube-proxy) listening on `::` fall back to an IPv4-only socket (Go's net package binds 0.0.0.0
    // when IPv4-mapped addresses don't work), and the kubelet would not answer on its IPv6 node address.
    // A MAC address of its own for good: the other machines' neighbor caches stay right when it comes back after a
    // restart (a new random MAC would leave them sending to the old one until their entries expire, ~30 s).
    const mac = machineMAC(this.opts.name, this.opts.addresses);
    // The bridge may live in another namespace (the shoot's control plane namespace, its network's router).
    const at = attachment.bridgeNetns !== undefined ? ['-n', attachment.bridgeNetns] : [];
    ip([...at, 'link', 'add', this.vethName, 'type', 'veth', 'peer', 'name', 'eth0', 'address', mac, 'netns', ns]);
    ip([...at, 'link', 'set', this.vethName, 'master', attachment.bridge]);
    ip([...at, 'link', 'set', this.vethName, 'up']);
    for (const address of this.opts.addresses) ip(['-n', ns, 'addr', 'add', address, 'dev', 'eth0', 'nodad']);
    ip(['-n', ns, 'link', 'set', 'eth0', 'up']);
    for (const family of this.opts.families) {
      const gateway = attachment.gateways.find((g) => familyOf(g) === family);
      if (gateway === undefined)
        throw new Error(`machine ${this.opts.name}: no ${family} gateway in ${attachment.gateways.join(', ')}`);
      ip([
        '-n',
        ns,
        family === 'IPv6' ? '-6' : '-4',
        'route',
        'add',
        'default',
        'via',
        gateway.split('/')[0]!,
        'dev',
        'eth0',
      ]);
    }
  }

  /** The API server's address, when its URL names one. */
  private apiServerAddresses(): string[] {
    const host = new URL(this.opts.apiServer.url).hostname.replace(/^\[|\]$/g, '');
    const address = parseIP(host);
    return address !== undefined ? [formatIP(address)] : [];
  }

  /** Outgoing NAT of pod traffic leaving the cluster's ranges (see natOutgoingRules). */
  private async programNATOutgoing(): Promise<void> {
    try {
      await runNft(
        natOutgoingRules({
          podCIDRs: this.opts.podCIDRs,
          serviceCIDRs: this.opts.serviceCIDRs,
          nodeCIDRs: this.opts.nodeCIDRs ?? [],
          withoutNAT: (this.opts.pools ?? []).filter((p) => !p.natOutgoing).map((p) => p.family),
          apiServerAddresses: this.apiServerAddresses(),
          snatToUpstreamDNS: this.opts.snatToUpstreamDNS === true ? (this.opts.upstreamDNS ?? []) : [],
        }),
        ['-f', '-'],
        this.netns,
      );
    } catch (e) {
      throw new Error(`machine ${this.opts.name}: ${(e as Error).message}`);
    }
  }

  private async startHolder(): Promise<void> {
    const hierarchies = mountedCgroupV1Hierarchies().map((h) => `${h.mountPoint.split('/').pop()}:${h.options}`);
    const holder = startProcess({
      name: 'holder',
      command: '/bin/sh',
      args: [
        '-c',
        HOLDER_SETUP,
        'machine-holder',
        this.opts.stateDir,
        join(this.opts.binDir, 'pause'),
        this.netns !== undefined ? 'fresh' : 'keep',
        ...hierarchies,
      ],
      logFile: join(this.opts.stateDir, 'logs', 'holder.log'),
      wrap: [
        ...MOVE_INTO_CGROUP,
        ...(this.netns !== undefined ? [which('nsenter') ?? 'nsenter', `--net=/run/netns/${this.netns}`, '--'] : []),
        which('unshare') ?? 'unshare',
        '--cgroup',
        '--mount',
        '--propagation',
        'private',
        '--',
      ],
      env: { ...this.env(), GIPV6_CGROUP_PROCS: this.cgroup.procsFiles().join(' ') },
    });
    this.holder = holder;
    const deadline = Date.now() + 10_000;
    while (!existsSync(`/proc/${holder.pid}/root/run/.gardener-ipv6-machine-ready`)) {
      if (holder.exit() !== undefined || Date.now() > deadline) {
        throw new Error(`machine ${this.opts.name}: namespace setup failed:\n${holder.tail()}`);
      }
      await sleep(20);
    }
    void holder.exited.then((exit) => this.holderExited(holder, exit));
  }

  /**
   * The holder anchors the machine's mount and cgroup namespaces: without it no process can enter the machine
   * again (a restarted kubelet fails for good). A holder that dies on its own makes the machine a dead one, which is
   * replaced, as machine-controller-manager replaces a failed machine: stopped and deployed again on its state dir.
   */
  private holderExited(holder: ManagedProcess, exit: ProcessExit): void {
    if (this.holder !== holder || this.destroying || this.replacing !== undefined) return;
    const how = exit.signal ?? `code ${exit.code}`;
    this.log(`machine ${this.opts.name}: its namespace holder exited (${how}); replacing the machine`);
    this.replacing = (async () => {
      try {
        await this.stopMachine({ deadline: Date.now() + 30_000 });
        this.replaced++;
        await this.deploy();
        this.log(`machine ${this.opts.name}: replaced`);
      } catch (e) {
        this.log(`machine ${this.opts.name}: replacing failed: ${(e as Error).message}`);
      } finally {
        this.replacing = undefined;
      }
    })();
  }

  private async writeFileInside(path: string, content: string, mode = 0o644): Promise<void> {
    await directoryTarget({ rootDir: this.rootDir }).writeFile(path, Buffer.from(content), mode);
  }

  private async writeConfigs(): Promise<void> {
    const o = this.opts;
    const server = {
      server: o.apiServer.url,
      caPEM: o.apiServer.caPEM,
      ...(o.apiServer.tlsServerName ? { tlsServerName: o.apiServer.tlsServerName } : {}),
    };
    await this.writeFileInside(
      MACHINE_PATHS.containerdConfig,
      containerdConfig({ runcBinary: join(o.binDir, 'runc') }),
    );
    await this.writeFileInside(MACHINE_PATHS.caFile, o.apiServer.caPEM);
    await this.writeFileInside(MACHINE_PATHS.resolvConf, machineResolvConf(o.upstreamDNS));
    await this.writeFileInside(MACHINE_PATHS.defaultRegistryHosts, defaultRegistryHostsToml());
    if ('credentials' in o.join) {
      const { credentials, kubeProxyCredentials } = o.join;
      await this.writeFileInside(
        MACHINE_PATHS.kubeletKubeconfig,
        kubeconfig({ ...server, ...credentials, user: `system:node:${o.name}` }),
        0o600,
      );
      await this.writeFileInside(
        MACHINE_PATHS.kubeProxyKubeconfig,
        kubeconfig({ ...server, ...kubeProxyCredentials, user: 'system:kube-proxy' }),
        0o600,
      );
    } else {
      await this.writeFileInside(
        MACHINE_PATHS.kubeletBootstrapKubeconfig,
        kubeconfig({ ...server, token: o.join.bootstrapToken, user: 'kubelet-bootstrap' }),
        0o600,
      );
      const issued = MACHINE_PATHS.kubeletClientCertificate;
      await this.writeFileInside(
        MACHINE_PATHS.kubeProxyKubeconfig,
        kubeconfig({ ...server, certFile: issued, keyFile: issued, user: `system:node:${o.name}` }),
        0o600,
      );
    }
    await this.writeFileInside(
      MACHINE_PATHS.kubeProxyConfig,
      kubeProxyConfig({ nodeName: o.name, clusterCIDRs: o.podCIDRs, primaryNodeIP: this.nodeIPs[0]! }),
    );
    // The CNI plugins under the names containerd looks for; the files stay in binDir.
    for (const plugin of CNI_PLUGINS) {
      const link = join(this.rootDir, MACHINE_PATHS.cniBinDir, plugin);
      await rm(link, { force: true });
      await symlink(join(o.binDir, `cni-${plugin}`), link);
    }
    await mkdir(join(this.rootDir, MACHINE_PATHS.cniConfDir), { recursive: true });
  }

  /**
   * The node agent's work: the OSC's files into the machine, its sysctls (with the worker's overrides) into the
   * machine's network namespace, and the kubelet's configuration from the OSC's kubelet file with what the machine
   * owns (config.ts). Called again when the OSC or the worker's sysctls change: a changed kubelet configuration is
   * written and the kubelet restarted, as gardener-node-agent restarts `kubelet.service`. A kubelet file the machine
   * can't use (not a KubeletConfiguration, or asking what this host lacks) fails it before anything is written.
   */
  async applyOperatingSystemConfig(
    osc: { spec: { files?: File[] } },
    sysctls: Record<string, string> = {},
  ): Promise<ApplyResult & { kubeletRestarted: boolean }> {
    const kubelet = this.kubeletConfigFor(osc);
    const target = directoryTarget({ rootDir: this.rootDir, netns: this.netns });
    // A kernel parameter's value the kernel refuses is the configuration's problem, as is a file it can't decode.
    const configured: NodeAgentTarget = {
      ...target,
      setSysctls: (values) =>
        target.setSysctls(values).catch((e: Error) => {
          throw new MachineConfigurationError(`machine ${this.opts.name}: ${e.message}`);
        }),
    };
    const result = await applyOperatingSystemConfig(osc, configured, sysctls).catch((e: Error) => {
      throw e instanceof OperatingSystemConfigError
        ? new MachineConfigurationError(`machine ${this.opts.name}: ${e.message}`)
        : e;
    });
    for (const s of result.sysctls.skipped) this.log(`machine ${this.opts.name}: sysctl ${s.key} skipped: ${s.reason}`);
    return { ...result, kubeletRestarted: await this.updateKubeletConfig(kubelet) };
  }

  /** The kubelet configuration for an OSC: its kubelet file's settings (if it has one) with the machine's own. */
  private kubeletConfigFor(osc: { spec: { files?: File[] } }): KubeletConfigOptions {
    const file = decodeFiles(osc.spec.files).files.find((f) => f.path === KUBELET_CONFIG_FILE_PATH);
    const fromOperatingSystemConfig = file ? parseOSCKubeletConfig(file.content.toString('utf8')) : undefined;
    const problems = kubeletHostProblems(
      fromOperatingSystemConfig,
      this.opts.hostKernel ?? procHostKernel,
      KUBELET_CONFIG_FILE_PATH,
    );
    if (problems.length > 0) throw new MachineConfigurationError(`machine ${this.opts.name}: ${problems.join('; ')}`);
    return {
      clusterDNS: [this.opts.clusterDNS],
      clusterDomain: this.opts.clusterDomain ?? 'cluster.local',
      ...(fromOperatingSystemConfig ? { fromOperatingSystemConfig } : {}),
    };
  }

  /**
   * Writes the kubelet's configuration if it changed, and restarts a running kubelet then. A changed CPU manager
   * policy also removes the policy's state file, which the kubelet would otherwise refuse to start with (as
   * gardener-node-agent does).
   */
  private async updateKubeletConfig(opts: KubeletConfigOptions): Promise<boolean> {
    const text = kubeletConfig(opts);
    const file = join(this.rootDir, MACHINE_PATHS.kubeletConfig);
    const previous = await readFile(file, 'utf8').catch(() => undefined);
    if (previous === text) return false;
    const policy = (yaml: string | undefined) =>
      (yaml ? (parseYAML(yaml) as { cpuManagerPolicy?: string }).cpuManagerPolicy : undefined) ?? 'none';
    if (previous !== undefined && policy(previous) !== policy(text)) {
      await rm(join(this.rootDir, MACHINE_PATHS.kubeletDir, 'cpu_manager_state'), { force: true });
    }
    await this.writeFileInside(MACHINE_PATHS.kubeletConfig, text);
    const kubelet = this.supervised.find((p) => p.name === 'kubelet');
    if (kubelet === undefined) return false;
    this.log(`machine ${this.opts.name}: kubelet configuration changed; restarting the kubelet`);
    await kubelet.restart(10_000);
    return true;
  }

  private supervise(name: string, command: string, args: string[]): void {
    const p: SupervisedProcess = new SupervisedProcess(this.insideSpec(name, command, args), {
      onChange: (state) => {
        if (!state.running && !this.destroying) {
          // The exited run's log is still the current one: the restart comes after the backoff.
          const why = lastErrorLine(p.tail(40));
          const exit = state.lastExit ?? 'stopped';
          this.exits.set(name, {
            count: (this.exits.get(name)?.count ?? 0) + 1,
            cause: why === '' ? exit : `${exit}: ${why}`,
          });
          this.log(`machine ${this.opts.name}: ${name} ${exit}; restarting`);
        }
      },
    });
    this.supervised.push(p);
    p.start();
  }

  private async waitForContainerd(deadline: number): Promise<void> {
    const ctr = join(this.opts.binDir, 'ctr');
    for (;;) {
      try {
        await this.execInside(ctr, ['--address', MACHINE_PATHS.containerdSocket, 'version'], undefined, 5_000);
        return;
      } catch (e) {
        if (Date.now() > deadline) {
          // The first line says why (what a status shows), the details follow.
          const log = this.supervised.find((p) => p.name === 'containerd')?.tail(40) ?? '';
          const why =
            this.exits.get('containerd')?.cause ?? (lastErrorLine(log) || lastErrorLine((e as Error).message));
          throw new Error(
            `machine ${this.opts.name}: containerd not up in time: ${why}\n${(e as Error).message}\n${log}`,
          );
        }
      }
      await sleep(200);
    }
  }

  private startNodeSync(): void {
    const tick = () => {
      this.syncing = this.syncNodes()
        .catch((e: Error) => {
          if (this.lastSyncError !== e.message) this.log(`machine ${this.opts.name}: node sync: ${e.message}`);
          this.lastSyncError = e.message;
        })
        .finally(() => {
          if (this.syncTimer !== undefined) this.syncTimer = setTimeout(tick, NODE_SYNC_INTERVAL_MS);
        });
    };
    this.syncTimer = setTimeout(tick, 0);
  }

  /**
   * The credentials that may list the Nodes: kube-proxy's, or the kubelet's once it was issued one (undefined
   * until then). The Node authorizer lets a node read only its own Node; `system:node-proxier` may list them all,
   * as calico-node's ServiceAccount may.
   */
  private async listCredentials(): Promise<ClientCredentials | undefined> {
    if ('kubeProxyCredentials' in this.opts.join) return this.opts.join.kubeProxyCredentials;
    let pem: string;
    try {
      // The kubelet links `-current` to the file it was issued, by absolute path inside the machine: resolve it
      // there, not in our own mount namespace.
      const link = join(this.rootDir, MACHINE_PATHS.kubeletClientCertificate);
      const target = await readlink(link).catch(() => undefined);
      const file =
        target === undefined ? link : isAbsolute(target) ? join(this.rootDir, target) : join(dirname(link), target);
      pem = (await readFile(file)).toString();
    } catch {
      return undefined;
    }
    const cert = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/.exec(pem)?.[0];
    const key = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+?-----END [A-Z ]*PRIVATE KEY-----\n?/.exec(pem)?.[0];
    return cert && key ? { certPEM: cert, keyPEM: key } : undefined;
  }

  /** One pass: the CNI config from our Node's podCIDRs, the routes to the other Nodes' podCIDRs. */
  async syncNodes(): Promise<void> {
    const credentials = await this.listCredentials();
    if (credentials === undefined) return;
    this.startKubeProxy();
    await this.startNetworkPolicyEnforcer(credentials);
    const list = await requestJSON<{ items: NodeInfo[] }>(this.opts.apiServer, credentials, 'GET', '/api/v1/nodes');
    this.lastSyncError = undefined;
    const self = list.items.find((n) => n.metadata.name === this.opts.name);
    const podCIDRs = self?.spec?.podCIDRs ?? [];
    if (podCIDRs.length > 0) {
      const mtu = this.podMTU();
      const hook = this.closeNetworkPolicyHook !== undefined;
      // Fail-closed only with the hook: it makes a new pod's addresses known before its containers run.
      if (hook) this.enforcer?.setNodePodCIDRs(podCIDRs);
      const config = cniConfig({ podCIDRs, networkPolicyHook: hook, ...(mtu !== undefined ? { mtu } : {}) });
      if (config !== this.cniWritten) {
        await this.writeFileInside(MACHINE_PATHS.cniConfig, config);
        this.cniWritten = config;
        this.log(`machine ${this.opts.name}: CNI configured for ${podCIDRs.join(', ')}`);
      }
    }
    if (self !== undefined) await this.publishAnnotations(self, credentials);
    if (this.overlay !== undefined) {
      this.overlay.sync(list.items, await this.controlPlanePeerLeases(credentials));
    }
    this.syncPodNetwork(list.items);
  }

  /** Programs what changed of the pod network to the other Nodes (pod-network.ts); failures are retried next time. */
  private syncPodNetwork(nodes: readonly NodeInfo[]): void {
    const desired = podNetworkPlan({
      self: this.opts.name,
      selfAddresses: this.nodeIPs,
      nodes,
      pools: this.opts.pools ?? [],
      nodeDevice: this.nodeDevice,
      nodeMTU: this.nodeMTU(),
      ...(this.opts.nodeCIDRs !== undefined ? { nodeCIDRs: this.opts.nodeCIDRs } : {}),
    });
    const commands = podNetworkCommands(this.podNetwork, desired);
    if (commands.length === 0) return;
    const inNetns = (argv: string[]) =>
      this.netns !== undefined ? [argv[0]!, '-n', this.netns, ...argv.slice(1)] : argv;
    for (const { argv, removal } of commands) run(inNetns(argv), removal);
    const was = new Set(this.podNetwork.devices.map((d) => d.name));
    for (const d of desired.devices.filter((d) => !was.has(d.name)))
      this.log(`machine ${this.opts.name}: ${d.name} up`);
    for (const d of this.podNetwork.devices.filter((d) => !desired.devices.some((x) => x.name === d.name)))
      this.log(`machine ${this.opts.name}: ${d.name} removed`);
    this.podNetwork = desired;
  }

  /**
   * Puts changed pod network settings in force in place: the outgoing NAT (upstream DNS included) now, the devices
   * and routes with the next node sync, the pods' MTU for pods created from then on.
   */
  async applyPodNetwork(settings: {
    readonly pools: readonly PodNetworkPool[];
    readonly snatToUpstreamDNS: boolean;
  }): Promise<boolean> {
    if (
      JSON.stringify(settings.pools) === JSON.stringify(this.opts.pools ?? []) &&
      settings.snatToUpstreamDNS === (this.opts.snatToUpstreamDNS === true)
    ) {
      return false;
    }
    this.opts.pools = [...settings.pools];
    this.opts.snatToUpstreamDNS = settings.snatToUpstreamDNS;
    await this.programNATOutgoing();
    return true;
  }

  /**
   * The Leases of the control plane peers (overlay.ts); undefined when they can't be read (before the RBAC that lets
   * Nodes read them exists, or a failed request): the peers programmed so far stay.
   */
  private async controlPlanePeerLeases(credentials: ClientCredentials): Promise<PeerLease[] | undefined> {
    const selector = encodeURIComponent(CONTROL_PLANE_PEER_LABEL);
    try {
      const list = await requestJSON<{ items: PeerLease[] }>(
        this.opts.apiServer,
        credentials,
        'GET',
        `/apis/coordination.k8s.io/v1/namespaces/kube-system/leases?labelSelector=${selector}`,
      );
      return list.items;
    } catch (e) {
      const message = (e as Error).message;
      if (message !== this.lastPeerLeaseError) this.log(`machine ${this.opts.name}: control plane peers: ${message}`);
      this.lastPeerLeaseError = message;
      return undefined;
    }
  }

  /**
   * Says on our Node what the others and the gardenlet read there: the address our overlay runs over (where the
   * other machines' overlays look for it) and the checksum of the user data applied last (as gardener-node-agent
   * says which configuration it applied).
   */
  private async publishAnnotations(self: NodeInfo, credentials: ClientCredentials): Promise<void> {
    const want: Record<string, string> = {};
    if (this.overlay !== undefined && this.opts.underlay !== undefined) {
      want[OVERLAY_UNDERLAY_ANNOTATION] = this.opts.underlay;
    }
    if (this.appliedUserData !== undefined) want[NODE_APPLIED_USER_DATA_ANNOTATION] = this.appliedUserData;
    const changed = Object.entries(want).filter(([k, v]) => self.metadata.annotations?.[k] !== v);
    if (changed.length === 0) return;
    await requestJSON(
      this.opts.apiServer,
      credentials,
      'PATCH',
      `/api/v1/nodes/${this.opts.name}`,
      { metadata: { annotations: Object.fromEntries(changed) } },
      5_000,
      'application/merge-patch+json',
    );
    this.log(`machine ${this.opts.name}: published ${changed.map(([k, v]) => `${k}=${v}`).join(', ')}`);
  }

  /** Records the checksum of the user data now applied; the next Node sync publishes it. */
  userDataApplied(checksum: string): void {
    this.appliedUserData = checksum;
  }

  /**
   * Resolves when the machine's Node is Ready as its kubelet of this deploy reported it (a heartbeat since then: a
   * Node of the same name may still say Ready from before); fails at the deadline with what was missing.
   */
  async wait(timeoutMs = DEFAULT_READY_TIMEOUT_MS, signal?: AbortSignal): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = 'no answer yet';
    for (;;) {
      // A caller that stopped waiting must not keep a process alive with our polling.
      if (signal?.aborted) throw new Error(`machine ${this.opts.name}: no longer waiting for its Node`);
      try {
        const credentials = 'credentials' in this.opts.join ? this.opts.join.credentials : await this.listCredentials();
        if (credentials === undefined) throw new Error('the kubelet has no client certificate yet');
        const node = await requestJSON<NodeInfo>(
          this.opts.apiServer,
          credentials,
          'GET',
          `/api/v1/nodes/${this.opts.name}`,
        );
        const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
        // Heartbeats have whole seconds.
        const fresh = Date.parse(ready?.lastHeartbeatTime ?? '') >= Math.floor(this.deployedAt / 1000) * 1000;
        if (nodeReady(node) && fresh) return;
        last = `Ready=${ready?.status ?? 'unknown'}: ${ready?.reason ?? ''} ${ready?.message ?? ''}`.trim();
      } catch (e) {
        last = (e as Error).message;
      }
      if (Date.now() > deadline) {
        const tails = this.supervised.map((p) => `--- ${p.name}:\n${p.tail(15)}`).join('\n');
        throw new Error(`machine ${this.opts.name}: Node not Ready in ${timeoutMs}ms (${last})\n${tails}`);
      }
      await sleep(500);
    }
  }

  /**
   * Why the machine can't start, once one of its processes exited `limit` times since the deploy (each time
   * restarted with backoff): the process and the cause of its last exit; undefined otherwise.
   */
  startFailure(limit = START_FAILURE_LIMIT): string | undefined {
    for (const [name, exits] of this.exits) {
      if (exits.count >= limit) return `${name} keeps exiting (${exits.count} times), last ${exits.cause}`;
    }
    return undefined;
  }

  status(): MachineStatus {
    return {
      name: this.opts.name,
      netns: this.netns,
      processes: this.supervised.map((p) => p.state()),
      podRoutes: [...this.podNetwork.routes],
      cniConfigured: this.cniWritten !== undefined,
      ...(this.holder !== undefined ? { holderPid: this.holder.pid } : {}),
      replaced: this.replaced,
      ...(this.enforcer ? { networkPolicies: { ...this.enforcer.status } } : {}),
    };
  }

  /** The pids of every process of the machine (its own, shims and containers). */
  pids(): number[] {
    return this.cgroup.pids();
  }

  /** Resident memory of all the machine's processes, in bytes. */
  rssBytes(): number {
    let total = 0;
    for (const pid of this.pids()) {
      try {
        const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
        if (m) total += Number(m[1]) * 1024;
      } catch {
        // Exited meanwhile.
      }
    }
    return total;
  }

  /** Stops the processes gracefully, then removes everything of the machine, its state dir included. */
  async destroy(opts: { deadline?: number } = {}): Promise<void> {
    await this.stop(opts);
    await rm(this.opts.stateDir, { recursive: true, force: true });
  }

  /**
   * Stops the machine like a shutdown: the processes (gracefully), its namespaces, cgroups and veth go, its files
   * in the state dir stay, so `deploy()` brings the same node back (a gardenlet restart, `up` run again). With a
   * `deadline` (ms since epoch), what still runs then is killed.
   */
  async stop(opts: { deadline?: number } = {}): Promise<void> {
    await this.replacing;
    await this.stopMachine(opts);
  }

  private async stopMachine(opts: { deadline?: number }): Promise<void> {
    this.destroying = true;
    clearTimeout(this.syncTimer);
    this.syncTimer = undefined;
    await this.syncing;
    // The enforcer first: it fails the hook's waiting requests, so the socket's server can close.
    await this.enforcer?.destroy();
    this.enforcer = undefined;
    await this.closeNetworkPolicyHook?.().catch(() => {});
    this.closeNetworkPolicyHook = undefined;
    // kube-proxy and kubelet first, containerd last; the pods die with the cgroup below.
    for (const p of [...this.supervised].reverse()) await p.stop(graceBefore(opts.deadline, 5_000));
    this.destroySync();
    this.supervised.length = 0;
    this.holder = undefined;
    this.cniWritten = undefined;
    this.kubeProxyStarted = false;
    this.destroying = false;
  }

  /** Kills and removes everything but the state dir; synchronous, for exit handlers. */
  private destroySync(): void {
    clearTimeout(this.syncTimer);
    this.syncTimer = undefined;
    for (const p of this.supervised) p.killNow();
    this.holder?.killNow();
    removeMachineResources(this.id, this.vethName);
    this.podNetwork = EMPTY_POD_NETWORK;
    this.unregisterEmergency?.();
    this.unregisterEmergency = undefined;
  }
}

/** Kills every process of a machine and removes its cgroups, network namespace and veth. Never throws. */
function removeMachineResources(id: string, vethName: string): void {
  try {
    new CgroupSubtree(id).destroy();
  } catch {
    // Reported by the leak checks of the callers; keep cleaning.
  }
  deleteNetns(id);
  try {
    ip(['link', 'del', vethName]);
  } catch {
    // Went with the namespace.
  }
}

const runcChecked = new Set<string>();

/**
 * containerd gives every pod sandbox the RuntimeDefault seccomp profile when the kernel has seccomp, and a runc
 * built without seccomp then refuses to start any pod: say so before a machine is created.
 */
function checkRuncSeccomp(runc: string): void {
  if (runcChecked.has(runc)) return;
  let version: string;
  try {
    version = execFileSync(runc, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    throw new Error(`cannot run ${runc}: ${(e as Error).message}`);
  }
  if (!/^libseccomp:/m.test(version)) {
    throw new Error(
      `${runc} was built without seccomp; pods could not start (rebuild it: hack/ensure-binaries.sh runc)`,
    );
  }
  runcChecked.add(runc);
}

/**
 * Removes the machines of owners that are gone (a crashed gardenlet or test run): their network namespaces and
 * cgroups, and with them every process. Returns the ids removed.
 */
export function cleanupOrphanedMachines(): string[] {
  const pattern = new RegExp(`^${MACHINE_PREFIX}(\\d+)-${MACHINE_KIND}-`);
  const ids = new Set<string>();
  let netnsNames: string[] = [];
  try {
    netnsNames = readdirSync('/run/netns');
  } catch {
    // No namespaces.
  }
  for (const name of [...netnsNames, ...listSubtrees(pattern)]) {
    const m = pattern.exec(name);
    if (m && !pidAlive(Number(m[1]))) ids.add(name);
  }
  for (const id of ids) removeMachineResources(id, hostVethName(id));
  return [...ids];
}

/** Whether anything of a machine is left: for leak checks. */
export function machineLeftovers(id: string): string[] {
  const left: string[] = [];
  if (netnsExists(id)) left.push(`network namespace ${id}`);
  const cgroup = new CgroupSubtree(id);
  if (cgroup.exists()) left.push(`cgroup ${id} (pids: ${cgroup.pids().join(', ') || 'none'})`);
  try {
    ip(['link', 'show', hostVethName(id)]);
    left.push(`veth ${hostVethName(id)}`);
  } catch {
    // Gone, as it should be.
  }
  return left;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
