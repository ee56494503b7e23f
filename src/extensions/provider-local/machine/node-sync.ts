/**
 * A machine's node sync: a loop that reads the Nodes with an identity that may list them (kube-proxy's, or the
 * kubelet's once it was issued one), and with it starts kube-proxy and the NetworkPolicy enforcer, writes the CNI
 * config once our Node has podCIDRs, publishes our Node's annotations and keeps the overlay and the pod network
 * (machine-network.ts) to the other Nodes. It checks every NODE_SYNC_INTERVAL_MS, but reads from the API server
 * only when something it acts on changed (resource-changes.ts: watches of the Nodes and the peers' Leases), when
 * its own condition or user data is not published yet, or RESYNC_MS after its last read.
 */
import { readFile, readlink } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import { NODE_APPLIED_USER_DATA_ANNOTATION } from '../../../apis/provider-local/v1alpha1/machine-user-data.js';
import { requestJSON, watchJSON, type ClientCredentials, type NodeInfo, type WatchEvent } from './api-client.js';
import { CNI_BRIDGE, MACHINE_PATHS, cniConfig } from './config.js';
import { writeFileInside } from './holder.js';
import type { MachineNetwork } from './machine-network.js';
import type { MachineContext } from './machine-options.js';
import {
  NETWORK_POLICY_CNI_PLUGIN,
  NETWORK_POLICY_SOCKET,
  networkPolicyCNIPluginScript,
  serveNetworkPolicyHook,
} from './network-policy/cni-hook.js';
import { NetworkPolicyEnforcer, type EnforcerStatus } from './network-policy/enforcer.js';
import { CONTROL_PLANE_PEER_LABEL, OVERLAY_UNDERLAY_ANNOTATION, type PeerLease } from './overlay.js';
import { conditionKey, publishCondition, type NodeCondition } from './process-condition.js';
import { RESYNC_MS, ResourceChanges, relevantNode, relevantPeerLease, watchPath } from './resource-changes.js';

/** How often a machine checks whether it must read the Nodes (its podCIDRs, the other machines' routes). */
export const NODE_SYNC_INTERVAL_MS = 2_000;

const NODES_PATH = '/api/v1/nodes';
const PEER_LEASES_PATH = `/apis/coordination.k8s.io/v1/namespaces/kube-system/leases?labelSelector=${encodeURIComponent(
  CONTROL_PLANE_PEER_LABEL,
)}`;

/**
 * The credentials that may list the Nodes: kube-proxy's, or the kubelet's once it was issued one (undefined
 * until then). The Node authorizer lets a node read only its own Node; `system:node-proxier` may list them all,
 * as calico-node's ServiceAccount may.
 */
export async function nodeListCredentials(machine: MachineContext): Promise<ClientCredentials | undefined> {
  if ('kubeProxyCredentials' in machine.opts.join) return machine.opts.join.kubeProxyCredentials;
  let pem: string;
  try {
    // The kubelet links `-current` to the file it was issued, by absolute path inside the machine: resolve it
    // there, not in our own mount namespace.
    const link = join(machine.rootDir, MACHINE_PATHS.kubeletClientCertificate);
    const target = await readlink(link).catch(() => undefined);
    const file =
      target === undefined ? link : isAbsolute(target) ? join(machine.rootDir, target) : join(dirname(link), target);
    pem = (await readFile(file)).toString();
  } catch {
    return undefined;
  }
  const cert = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/.exec(pem)?.[0];
  const key = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+?-----END [A-Z ]*PRIVATE KEY-----\n?/.exec(pem)?.[0];
  return cert && key ? { certPEM: cert, keyPEM: key } : undefined;
}

export class NodeSync {
  private timer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> | undefined;
  private cniWritten: string | undefined;
  private lastSyncError: string | undefined;
  private lastPeerLeaseError: string | undefined;
  /** The checksum of the user data applied last, published on our Node. */
  private appliedUserData: string | undefined;
  /** The labels the user data gives our Node, published on it: a Node registered before has none of them. */
  private nodeLabels: Readonly<Record<string, string>> = {};
  private enforcer: NetworkPolicyEnforcer | undefined;
  /** Closes the enforcer's CNI hook socket; set while the hook serves (and the CNI config chains it). */
  private closeNetworkPolicyHook: (() => Promise<void>) | undefined;
  /** The credentials of the last pass: the watches use them. */
  private credentials: ClientCredentials | undefined;
  private readonly nodes: ResourceChanges<NodeInfo>;
  private readonly peerLeases: ResourceChanges<PeerLease>;
  /** When the last pass that read everything succeeded; 0 until one did, or when one is asked for. */
  private readAt = 0;
  /** What the last pass published: the condition (as compared), the user data checksum and the labels. */
  private published:
    { condition: string; userData: string | undefined; labels: Readonly<Record<string, string>> } | undefined;

  /**
   * @param startKubeProxy starts kube-proxy, once: the first sync that has credentials calls it
   * @param crashLoopCondition the machine's own Node condition now (process-condition.ts)
   */
  constructor(
    private readonly machine: MachineContext,
    private readonly network: MachineNetwork,
    private readonly startKubeProxy: () => void,
    private readonly crashLoopCondition: () => NodeCondition,
  ) {
    const watch =
      <T>(path: string) =>
      (resourceVersion: string, onEvent: (event: WatchEvent<T>) => void, signal: AbortSignal) => {
        const credentials = this.credentials;
        if (credentials === undefined) return Promise.reject(new Error('no credentials yet'));
        return watchJSON(this.opts.apiServer, credentials, watchPath(path, resourceVersion), onEvent, signal);
      };
    const log = (line: string) => this.machine.log(line);
    this.nodes = new ResourceChanges<NodeInfo>('Nodes', relevantNode, watch(NODES_PATH), log);
    this.peerLeases = new ResourceChanges<PeerLease>(
      'control plane peers',
      relevantPeerLease,
      watch(PEER_LEASES_PATH),
      log,
    );
  }

  private get opts() {
    return this.machine.opts;
  }

  get cniConfigured(): boolean {
    return this.cniWritten !== undefined;
  }

  /** The NetworkPolicy enforcer's status, once it runs. */
  get networkPolicies(): EnforcerStatus | undefined {
    return this.enforcer ? { ...this.enforcer.status } : undefined;
  }

  /** Records the checksum of the user data now applied; the next Node sync publishes it. */
  userDataApplied(checksum: string): void {
    this.appliedUserData = checksum;
  }

  /** Records the labels the user data gives our Node; the next Node sync sets those it lacks. */
  labelsApplied(labels: Readonly<Record<string, string>>): void {
    this.nodeLabels = labels;
  }

  /** The next check reads everything again (the pod network's settings changed). */
  resync(): void {
    this.readAt = 0;
  }

  /** Whether a pass would change nothing: nothing it acts on changed since the last one, which was recent. */
  private upToDate(): boolean {
    if (this.readAt === 0 || Date.now() - this.readAt >= RESYNC_MS) return false;
    if (this.cniWritten === undefined || this.nodes.hasChanged) return false;
    if (this.network.overlay !== undefined && this.peerLeases.hasChanged) return false;
    return (
      this.published?.condition === conditionKey(this.crashLoopCondition()) &&
      this.published.userData === this.appliedUserData &&
      this.published.labels === this.nodeLabels
    );
  }

  /** Starts the loop: a check now, then one every NODE_SYNC_INTERVAL_MS after the previous one ended. */
  start(): void {
    const tick = () => {
      this.syncing = (this.upToDate() ? Promise.resolve() : this.sync())
        .catch((e: Error) => {
          if (this.lastSyncError !== e.message) this.machine.log(`node sync: ${e.message}`);
          this.lastSyncError = e.message;
        })
        .finally(() => {
          if (this.timer !== undefined) this.timer = setTimeout(tick, NODE_SYNC_INTERVAL_MS);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  /** Ends the loop without waiting for a pass under way; synchronous, for exit handlers. */
  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.nodes.stop();
    this.peerLeases.stop();
  }

  /** Ends the loop after the pass under way, then the NetworkPolicy enforcer and its CNI hook. */
  async stop(): Promise<void> {
    this.cancel();
    await this.syncing;
    // The enforcer first: it fails the hook's waiting requests, so the socket's server can close.
    await this.enforcer?.destroy();
    this.enforcer = undefined;
    await this.closeNetworkPolicyHook?.().catch(() => {});
    this.closeNetworkPolicyHook = undefined;
  }

  /** Forgets the CNI config written: the next deploy writes it again. */
  reset(): void {
    this.cniWritten = undefined;
    this.readAt = 0;
  }

  /** One pass: the CNI config from our Node's podCIDRs, the routes to the other Nodes' podCIDRs. */
  async sync(): Promise<void> {
    this.readAt = 0;
    const credentials = await nodeListCredentials(this.machine);
    if (credentials === undefined) return;
    this.credentials = credentials;
    this.startKubeProxy();
    await this.startNetworkPolicyEnforcer(credentials);
    // What this pass publishes, as it is now: what changes meanwhile is the next pass's.
    const publishing = {
      condition: this.crashLoopCondition(),
      userData: this.appliedUserData,
      labels: this.nodeLabels,
    };
    const nodes = await this.nodes.list(() => this.getList<NodeInfo>(NODES_PATH, credentials));
    this.lastSyncError = undefined;
    const self = nodes.find((n) => n.metadata.name === this.opts.name);
    const podCIDRs = self?.spec?.podCIDRs ?? [];
    if (podCIDRs.length > 0) {
      const mtu = this.network.podMTU();
      const hook = this.closeNetworkPolicyHook !== undefined;
      // Fail-closed only with the hook: it makes a new pod's addresses known before its containers run.
      if (hook) this.enforcer?.setNodePodCIDRs(podCIDRs);
      const config = cniConfig({ podCIDRs, networkPolicyHook: hook, ...(mtu !== undefined ? { mtu } : {}) });
      if (config !== this.cniWritten) {
        await writeFileInside(this.machine.rootDir, MACHINE_PATHS.cniConfig, config);
        this.cniWritten = config;
        this.machine.log(`CNI configured for ${podCIDRs.join(', ')}`);
      }
    }
    if (self !== undefined) await this.publishMetadata(self, credentials, publishing);
    if (this.network.overlay !== undefined) {
      this.network.overlay.sync(nodes, await this.controlPlanePeerLeases(credentials));
    }
    this.network.syncPodNetwork(nodes);
    // With the node's own identity: only it may write its Node's status.
    const own = 'credentials' in this.opts.join ? this.opts.join.credentials : credentials;
    const { condition } = publishing;
    if (self !== undefined && (await publishCondition(this.opts.apiServer, own, self, condition))) {
      this.machine.log(`${condition.type}=${condition.status}: ${condition.message}`);
    }
    if (self !== undefined) {
      this.published = { ...publishing, condition: conditionKey(condition) };
      this.readAt = Date.now();
    }
  }

  /** A list of `path` with the resourceVersion to watch it from. */
  private async getList<T>(
    path: string,
    credentials: ClientCredentials,
  ): Promise<{ items: T[]; resourceVersion?: string }> {
    type List = { items: T[]; metadata?: { resourceVersion?: string } };
    const list = await requestJSON<List>(this.opts.apiServer, credentials, 'GET', path);
    return {
      items: list.items,
      ...(list.metadata?.resourceVersion ? { resourceVersion: list.metadata.resourceVersion } : {}),
    };
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
      ...(this.machine.netns !== undefined ? { netns: this.machine.netns } : {}),
      podBridge: CNI_BRIDGE,
      // The CNI hook tells each pod's port on the bridge: held to the pod's addresses from its first frame.
      antiSpoofing: true,
      log: (line) => this.machine.log(line),
    });
    this.enforcer = enforcer;
    enforcer.deploy().catch((e: Error) => this.machine.log(`network policies: ${e.message}`));
    try {
      // A machine image has the plugin in its read-only CNI folder.
      if (this.opts.cniBinDir === undefined) {
        await writeFileInside(
          this.machine.rootDir,
          join(MACHINE_PATHS.cniBinDir, NETWORK_POLICY_CNI_PLUGIN),
          networkPolicyCNIPluginScript(process.execPath),
          0o755,
        );
      }
      this.closeNetworkPolicyHook = await serveNetworkPolicyHook(
        join(this.machine.rootDir, NETWORK_POLICY_SOCKET),
        enforcer,
        (line) => this.machine.log(line),
      );
    } catch (e) {
      // Without the hook the pods still get their policies, only later: from their status, as the enforcer sees it.
      this.machine.log(`network policies: no CNI hook: ${(e as Error).message}`);
    }
  }

  /**
   * The Leases of the control plane peers (overlay.ts); undefined when they can't be read (before the RBAC that lets
   * Nodes read them exists, or a failed request): the peers programmed so far stay.
   */
  private async controlPlanePeerLeases(credentials: ClientCredentials): Promise<PeerLease[] | undefined> {
    try {
      return await this.peerLeases.list(() => this.getList<PeerLease>(PEER_LEASES_PATH, credentials));
    } catch (e) {
      const message = (e as Error).message;
      if (message !== this.lastPeerLeaseError) this.machine.log(`control plane peers: ${message}`);
      this.lastPeerLeaseError = message;
      return undefined;
    }
  }

  /**
   * Says on our Node what the others and the gardenlet read there: the address our overlay runs over (where the
   * other machines' overlays look for it), the checksum of the user data applied last (as gardener-node-agent says
   * which configuration it applied), and the user data's labels (the kubelet sets them when it registers the Node;
   * a Node registered before they were asked for gets them here).
   */
  private async publishMetadata(
    self: NodeInfo,
    credentials: ClientCredentials,
    { userData, labels }: { userData: string | undefined; labels: Readonly<Record<string, string>> },
  ): Promise<void> {
    const want: Record<string, string> = {};
    if (this.network.overlay !== undefined && this.opts.underlay !== undefined) {
      want[OVERLAY_UNDERLAY_ANNOTATION] = this.opts.underlay;
    }
    if (userData !== undefined) want[NODE_APPLIED_USER_DATA_ANNOTATION] = userData;
    const annotations = Object.entries(want).filter(([k, v]) => self.metadata.annotations?.[k] !== v);
    const missingLabels = Object.entries(labels).filter(([k, v]) => self.metadata.labels?.[k] !== v);
    if (annotations.length === 0 && missingLabels.length === 0) return;
    const metadata = {
      ...(annotations.length > 0 ? { annotations: Object.fromEntries(annotations) } : {}),
      ...(missingLabels.length > 0 ? { labels: Object.fromEntries(missingLabels) } : {}),
    };
    await requestJSON(
      this.opts.apiServer,
      credentials,
      'PATCH',
      `/api/v1/nodes/${this.opts.name}`,
      { metadata },
      5_000,
      'application/merge-patch+json',
    );
    this.machine.log(`published ${[...annotations, ...missingLabels].map(([k, v]) => `${k}=${v}`).join(', ')}`);
  }
}
