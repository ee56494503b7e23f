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
 * The files of a machine, by the part they hold:
 *
 *   machine.ts          the machine and its lifecycle (this file)
 *   machine-options.ts  its options and status, and what its parts share of it
 *   machine-network.ts  the network namespace and veth or the overlay, the outgoing NAT, the pod network
 *   holder.ts           the namespace holder and its mounts, commands and files inside the machine
 *   processes.ts        the supervised processes, their exits, when a machine counts as failed
 *   containerd.ts       runc's check, the wait for containerd, the images' import
 *   node-config.ts      the configuration files, the OperatingSystemConfig and the kubelet's configuration
 *   node-sync.ts        the loop over the Nodes: CNI config, kube-proxy, NetworkPolicies, annotations, pod network
 *   janitor.ts          the machine's host resources by name, their removal, the orphans' janitor
 *
 * Needs root, `nft` and `sysctl`, and a cgroup v1 host (see cgroups.ts).
 *
 * Kept as one file (over 400 lines): the machine's parts are made in one order and undone in the reverse one, which
 * reads as one sequence.
 */
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { File } from '../../../apis/extensions/v1alpha1/operatingsystemconfig.js';
import type { PodNetworkPool } from '../../../apis/provider-local/v1alpha1/machine-user-data.js';
import { CgroupSubtree } from '../../../system/cgroups.js';
import { onEmergencyExit } from '../../../system/cleanup.js';
import { netnsExists } from '../../../system/netns.js';
import { hostVethName } from '../../../system/network.js';
import type { ProcessExit } from '../../../system/process.js';
import type { ApplyResult } from '../node-agent/node-agent.js';
import { nodeReady, requestJSON, type NodeInfo } from './api-client.js';
import { MACHINE_PATHS, familyOf, kubeletArgs } from './config.js';
import { checkRuncSeccomp, importImages, waitForContainerd } from './containerd.js';
import { NamespaceHolder, prepareStateDir } from './holder.js';
import { machineID, removeMachineResources } from './janitor.js';
import { MachineNetwork } from './machine-network.js';
import { nodeIPsOf, type MachineContext, type MachineOptions, type MachineStatus } from './machine-options.js';
import { applyMachineOperatingSystemConfig, writeMachineConfigs } from './node-config.js';
import { NodeSync, nodeListCredentials } from './node-sync.js';
import { MachineProcesses } from './processes.js';

export const DEFAULT_READY_TIMEOUT_MS = 120_000;

export class Machine {
  readonly id: string;
  /** The machine's own network namespace; undefined when it uses the one it runs in. */
  readonly netns: string | undefined;
  private readonly vethName: string;
  private readonly cgroup: CgroupSubtree;
  private holder: NamespaceHolder | undefined;
  private readonly processes: MachineProcesses;
  private readonly network: MachineNetwork;
  private readonly nodeSync: NodeSync;
  private kubeProxyStarted = false;
  /** Set while a machine whose holder died is replaced. */
  private replacing: Promise<void> | undefined;
  private replaced = 0;
  private deployedAt = 0;
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
    const context = this.context();
    this.processes = new MachineProcesses(() => this.destroying, context.log);
    this.network = new MachineNetwork(context, this.id, this.vethName);
    this.nodeSync = new NodeSync(
      context,
      this.network,
      () => this.startKubeProxy(),
      () => this.processes.crashLoopCondition(),
    );
  }

  /** What the machine's parts share of it. */
  private context(): MachineContext {
    // Read when a part needs it: it throws while the machine is not deployed.
    const rootDir = () => this.rootDir;
    return {
      opts: this.opts,
      netns: this.netns,
      get rootDir() {
        return rootDir();
      },
      log: (line) => this.log(`machine ${this.opts.name}: ${line}`),
    };
  }

  /** The machine's root as seen from here (through the holder's mount namespace). */
  get rootDir(): string {
    return this.inside().rootDir;
  }

  /** The namespace holder, through which commands and files get into the machine. */
  private inside(): NamespaceHolder {
    if (this.holder === undefined) throw new Error(`machine ${this.opts.name} is not deployed`);
    return this.holder;
  }

  async deploy(): Promise<void> {
    if (this.holder !== undefined) throw new Error(`machine ${this.opts.name} is deployed already`);
    const started = Date.now();
    this.deployedAt = started;
    this.processes.clearExits();
    checkRuncSeccomp(join(this.opts.binDir, 'runc'));
    if ((this.netns !== undefined && netnsExists(this.netns)) || this.cgroup.exists()) {
      removeMachineResources(this.id, this.vethName);
    }
    this.unregisterEmergency = onEmergencyExit(() => this.destroySync(), { signals: false });
    const machine = {
      name: this.opts.name,
      binDir: this.opts.binDir,
      stateDir: this.opts.stateDir,
      inside: () => this.inside(),
      processes: this.processes,
    };
    try {
      await prepareStateDir(this.opts.stateDir);
      this.network.create();
      await this.network.programNATOutgoing();
      this.cgroup.create('system');
      await this.startHolder();
      await writeMachineConfigs(this.context());
      const { nodeLabels } = await this.applyOperatingSystemConfig(this.opts.operatingSystemConfig, this.opts.sysctls);
      this.supervise('containerd', join(this.opts.binDir, 'containerd'), ['--config', MACHINE_PATHS.containerdConfig]);
      await waitForContainerd(machine, started + 60_000);
      await importImages(machine, this.opts.images);
      this.supervise(
        'kubelet',
        join(this.opts.binDir, 'kubelet'),
        kubeletArgs({
          nodeName: this.opts.name,
          nodeIPs: nodeIPsOf(this.opts),
          bootstrap: 'bootstrapToken' in this.opts.join,
          nodeLabels,
        }),
      );
      // With a bootstrap token, kube-proxy waits for the kubelet's certificate (the node sync starts it).
      if ('credentials' in this.opts.join) this.startKubeProxy();
      this.nodeSync.start();
      this.log(`machine ${this.opts.name}: processes started in ${Date.now() - started}ms`);
    } catch (e) {
      await this.destroy().catch(() => {});
      throw e;
    }
  }

  private supervise(name: string, command: string, args: string[]): void {
    this.processes.supervise(this.inside().spec(name, command, args));
  }

  private startKubeProxy(): void {
    if (this.kubeProxyStarted) return;
    this.kubeProxyStarted = true;
    this.supervise('kube-proxy', join(this.opts.binDir, 'kube-proxy'), [
      `--config=${MACHINE_PATHS.kubeProxyConfig}`,
      '--v=1',
    ]);
  }

  private async startHolder(): Promise<void> {
    const holder = new NamespaceHolder({
      name: this.opts.name,
      stateDir: this.opts.stateDir,
      binDir: this.opts.binDir,
      netns: this.netns,
      cgroup: this.cgroup,
    });
    this.holder = holder;
    await holder.ready();
    void holder.process.exited.then((exit) => this.holderExited(holder, exit));
  }

  /**
   * The holder anchors the machine's mount and cgroup namespaces: without it no process can enter the machine
   * again (a restarted kubelet fails for good). A holder that dies on its own makes the machine a dead one, which is
   * replaced, as machine-controller-manager replaces a failed machine: stopped and deployed again on its state dir.
   */
  private holderExited(holder: NamespaceHolder, exit: ProcessExit): void {
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

  /**
   * The node agent's work (node-config.ts), at deploy and whenever the OSC or the worker's sysctls change; the node
   * sync then sets the labels it asks for on the Node.
   */
  async applyOperatingSystemConfig(
    osc: { spec: { files?: File[] } },
    sysctls: Record<string, string> = {},
  ): Promise<ApplyResult & { kubeletRestarted: boolean; nodeLabels: Record<string, string> }> {
    const kubelet = () => this.processes.find('kubelet');
    const applied = await applyMachineOperatingSystemConfig(this.context(), osc, sysctls, kubelet);
    const result = { ...applied, nodeLabels: { ...this.opts.nodeLabels, ...applied.nodeLabels } };
    this.nodeSync.labelsApplied(result.nodeLabels);
    return result;
  }

  /** One pass of the node sync (node-sync.ts). */
  async syncNodes(): Promise<void> {
    await this.nodeSync.sync();
  }

  /**
   * Puts changed pod network settings in force in place: the outgoing NAT (upstream DNS included, its flows tracked
   * so far forgotten) now, the devices and routes with the next node sync, the pods' MTU for pods created from then on.
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
    const dnsNATChanged = settings.snatToUpstreamDNS !== (this.opts.snatToUpstreamDNS === true);
    this.opts.pools = [...settings.pools];
    this.opts.snatToUpstreamDNS = settings.snatToUpstreamDNS;
    await this.network.programNATOutgoing();
    if (dnsNATChanged) this.network.forgetUpstreamDNSFlows();
    this.nodeSync.resync();
    return true;
  }

  /** Records the checksum of the user data now applied; the next Node sync publishes it. */
  userDataApplied(checksum: string): void {
    this.nodeSync.userDataApplied(checksum);
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
        const credentials =
          'credentials' in this.opts.join ? this.opts.join.credentials : await nodeListCredentials(this.context());
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
        const tails = this.processes.all.map((p) => `--- ${p.name}:\n${p.tail(15)}`).join('\n');
        throw new Error(`machine ${this.opts.name}: Node not Ready in ${timeoutMs}ms (${last})\n${tails}`);
      }
      await sleep(500);
    }
  }

  /** Why the machine can't start (processes.ts); undefined while it may still. */
  startFailure(limit?: number): string | undefined {
    return this.processes.startFailure(limit);
  }

  /** The end of a supervised process's log (its file in the state dir); empty for a process not started. */
  processLog(name: string, lines = 100): string {
    return this.processes.tail(name, lines);
  }

  status(): MachineStatus {
    const networkPolicies = this.nodeSync.networkPolicies;
    return {
      name: this.opts.name,
      netns: this.netns,
      processes: this.processes.states(),
      podRoutes: [...this.network.podRoutes],
      cniConfigured: this.nodeSync.cniConfigured,
      ...(this.holder !== undefined ? { holderPid: this.holder.pid } : {}),
      replaced: this.replaced,
      ...(networkPolicies ? { networkPolicies } : {}),
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
    await this.nodeSync.stop();
    // kube-proxy and kubelet first, containerd last; the pods die with the cgroup below.
    await this.processes.stop(opts.deadline);
    this.destroySync();
    this.processes.clear();
    this.holder = undefined;
    this.nodeSync.reset();
    this.kubeProxyStarted = false;
    this.destroying = false;
  }

  /** Kills and removes everything but the state dir; synchronous, for exit handlers. */
  private destroySync(): void {
    this.nodeSync.cancel();
    this.processes.killNow();
    this.holder?.process.killNow();
    removeMachineResources(this.id, this.vethName);
    this.network.reset();
    this.unregisterEmergency?.();
    this.unregisterEmergency = undefined;
  }
}
