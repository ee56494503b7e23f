/**
 * The NetworkPolicy enforcer of one machine: informers on the shoot's Pods, Namespaces and NetworkPolicies, and the
 * nftables table of rules.ts in the machine's network namespace, replaced in one transaction whenever what it
 * renders changes (at most every `debounceMs`). Every `resyncMs` the table is checked and written again when
 * something removed or changed it. A failed write is retried with growing delays.
 *
 * On a machine it reads with the machine's node identity (kube-proxy's certificate, or the kubelet's), bound in the
 * shoot to the ClusterRole `gardener-ipv6:network-policy-enforcer` (gardenlet's machine-bootstrap component). On a
 * seed Node of a cluster (kind) it runs as the chart's DaemonSet (`gardener-ipv6 network-policy-enforcer`, in the
 * Node's network namespace) with its ServiceAccount.
 *
 * The table outlives the enforcer: a stop leaves the last ruleset in force, and the next enforcer replaces it in one
 * transaction once its informers have listed, so neither a crash nor a restart or rollout opens a window in which
 * isolated pods are reachable. `removeRules` takes the table away, for an uninstall.
 */
import { Writable } from 'node:stream';
import { KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { ResourceClient } from '../../../../runtime/client.js';
import { Refs, type ResourceRef } from '../../../../apis/refs.js';
import { Informer } from '../../../../runtime/informer.js';
import { newLogger } from '../../../../runtime/log.js';
import { runNft } from '../nft.js';
import { ip } from '../../../../system/netns.js';
import { AntiSpoofing, allowedSourcePrefixes, type BridgePort, type PodPort } from './anti-spoofing.js';
import type { APIServerAccess, ClientCredentials } from '../api-client.js';
import {
  NETWORK_POLICY_TABLE,
  renderNetworkPolicyRules,
  type NamespaceInfo,
  type NetworkPolicyInfo,
  type PodInfo,
} from './rules.js';

export const POD: ResourceRef = { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true };
export const NETWORK_POLICY: ResourceRef = {
  group: 'networking.k8s.io',
  version: 'v1',
  plural: 'networkpolicies',
  kind: 'NetworkPolicy',
  namespaced: true,
};

/** Where the enforcer reads: the API server with a client certificate (a machine's), or a whole kubeconfig. */
export type EnforcerAccess =
  { apiServer: APIServerAccess; credentials: ClientCredentials } | { kubeConfig: KubeConfig };

export type EnforcerOptions = EnforcerAccess & {
  nodeName: string;
  /** The machine's named network namespace; the caller's when unset. */
  netns?: string;
  /** The bridge of the Node's pods (rules.ts: their link-local packets to the Node are dropped there). */
  podBridge?: string;
  /**
   * Hold each announced pod's port on the bridge to its addresses (anti-spoofing.ts): for a Node whose CNI hook
   * tells the ports.
   */
  antiSpoofing?: boolean;
  log: (line: string) => void;
  /** @default 50 */
  debounceMs?: number;
  /** @default 30_000 */
  resyncMs?: number;
};

export interface EnforcerStatus {
  /** Applied rulesets since the start. */
  applied: number;
  /** When the rules last changed in the kernel (ms since the epoch). */
  lastAppliedAt: number | undefined;
  lastError: string | undefined;
}

function enforcerKubeConfig(access: EnforcerAccess): KubeConfig {
  if ('kubeConfig' in access) return access.kubeConfig;
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: 'shoot',
        server: access.apiServer.url,
        caData: b64(access.apiServer.caPEM),
        ...(access.apiServer.tlsServerName ? { tlsServerName: access.apiServer.tlsServerName } : {}),
      },
    ],
    users: [{ name: 'node', certData: b64(access.credentials.certPEM), keyData: b64(access.credentials.keyPEM) }],
    contexts: [{ name: 'shoot', cluster: 'shoot', user: 'node' }],
    currentContext: 'shoot',
  });
  return kc;
}

export class NetworkPolicyEnforcer {
  private readonly client: ResourceClient;
  private readonly pods: Informer<KubernetesObject & PodInfo>;
  private readonly namespaces: Informer<KubernetesObject & NamespaceInfo>;
  private readonly policies: Informer<KubernetesObject & NetworkPolicyInfo>;
  private timer: NodeJS.Timeout | undefined;
  private resyncTimer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private started = false;
  private written: string | undefined;
  private failures = 0;
  private firstApplied: () => void = () => {};
  /** Addresses the CNI hook announced, by `namespace/name`. */
  private readonly announced = new Map<string, readonly string[]>();
  private nodePodCIDRs: readonly string[] = [];
  /** Announcements waiting for a ruleset with their pod in force. */
  private waiters: { key: string; ips: readonly string[]; resolve: () => void; reject: (e: Error) => void }[] = [];
  private readonly applied: Promise<void>;
  private readonly antiSpoofing: AntiSpoofing | undefined;
  /** Each announced pod's port, by `namespace/name`: what a DEL without its port removes, what a sync updates. */
  private readonly ports = new Map<string, PodPort>();
  readonly status: EnforcerStatus = { applied: 0, lastAppliedAt: undefined, lastError: undefined };

  constructor(private readonly opts: EnforcerOptions) {
    this.client = new ResourceClient(enforcerKubeConfig(opts), { requestTimeoutMs: 15_000 });
    const logger = newLogger({
      level: 'warn',
      destination: new Writable({
        write: (chunk: Buffer, _encoding, done) => {
          opts.log(`network policies: ${lineOf(chunk.toString())}`);
          done();
        },
      }),
    });
    const informer = <T extends KubernetesObject>(ref: ResourceRef) => {
      const i = new Informer<T>({ client: this.client, ref, logger });
      const changed = () => this.schedule();
      i.onAdd(changed);
      i.onUpdate(changed);
      i.onDelete(changed);
      return i;
    };
    this.pods = informer(POD);
    this.pods.onDelete((pod) => {
      const key = `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
      this.announced.delete(key);
      this.waiters = this.waiters.filter((w) => w.key !== key || (w.reject(new Error('the pod is gone')), false));
    });
    this.namespaces = informer(Refs.namespace);
    this.policies = informer(NETWORK_POLICY);
    this.applied = new Promise((resolve) => (this.firstApplied = resolve));
    this.antiSpoofing = opts.antiSpoofing === true ? new AntiSpoofing(opts.netns) : undefined;
  }

  /** Starts the informers; the first ruleset is written once all three have listed. */
  async deploy(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await Promise.all([this.pods.start(), this.namespaces.start(), this.policies.start()]);
    if (this.stopped) return;
    this.schedule(0);
    const resyncMs = this.opts.resyncMs ?? 30_000;
    const resync = () => {
      this.resyncTimer = setTimeout(() => {
        void this.verify().finally(() => {
          if (!this.stopped) resync();
        });
      }, resyncMs);
    };
    resync();
  }

  /** Resolves once the first ruleset is in the kernel. */
  wait(): Promise<void> {
    return this.applied;
  }

  /**
   * The CNI hook's announcement of a new pod's addresses: resolves once a ruleset treating the pod with them is in
   * the kernel (the pod known to the informer, its policies applied), so its containers start with them in force.
   */
  async announce(namespace: string, name: string, ips: readonly string[], port?: BridgePort): Promise<void> {
    const key = `${namespace}/${name}`;
    if (this.stopped) throw new Error('the enforcer is stopping');
    if (this.antiSpoofing !== undefined && port !== undefined) {
      const previous = this.ports.get(key);
      if (previous !== undefined && previous.hostInterface !== port.hostInterface) {
        await this.antiSpoofing.remove(previous.hostInterface);
      }
      const held = { ...port, ips, allowedSourcePrefixes: this.allowedSourcePrefixesOf(namespace, name) };
      await this.antiSpoofing.add(held);
      this.ports.set(key, held);
    }
    this.announced.set(key, ips);
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ key, ips, resolve, reject }));
    this.schedule(0);
    return done;
  }

  /** The CNI hook's word that a pod's sandbox is gone: its announced addresses no longer count, nor its port. */
  forget(namespace: string, name: string, port?: BridgePort): void {
    const key = `${namespace}/${name}`;
    const hostInterface = port?.hostInterface ?? this.ports.get(key)?.hostInterface;
    this.ports.delete(key);
    if (this.antiSpoofing !== undefined && hostInterface !== undefined) {
      this.antiSpoofing
        .remove(hostInterface)
        .catch((e: Error) => this.opts.log(`network policies: port ${hostInterface}: ${e.message}`));
    }
    if (this.announced.delete(key)) this.schedule(0);
  }

  /** The Node's pod ranges: from now on, traffic of their addresses that no known pod holds is dropped. */
  setNodePodCIDRs(cidrs: readonly string[]): void {
    if (cidrs.join(',') === this.nodePodCIDRs.join(',')) return;
    this.nodePodCIDRs = [...cidrs];
    this.schedule(0);
  }

  /** Stops the informers; the table stays, with the last ruleset in force (fail-closed across restarts). */
  async destroy(): Promise<void> {
    this.stopped = true;
    for (const w of this.waiters.splice(0)) w.reject(new Error('the enforcer is stopping'));
    clearTimeout(this.timer);
    clearTimeout(this.resyncTimer);
    for (const i of [this.pods, this.namespaces, this.policies]) i.stop();
    await this.running?.catch(() => {});
    await Promise.all([this.pods.stopped(), this.namespaces.stopped(), this.policies.stopped()]);
    this.client.close();
    this.written = undefined;
  }

  /**
   * Removes the policies' table and the ports' (anti-spoofing.ts) from the network namespace, those there are: every
   * pod's traffic passes again. Whether there was any.
   */
  static async removeRules(netns?: string): Promise<boolean> {
    const present = await tablePresent(netns);
    if (present) await runNft(`delete table inet ${NETWORK_POLICY_TABLE}\n`, ['-f', '-'], netns);
    return (await AntiSpoofing.removeTable(netns)) || present;
  }

  /** The script for what the informers hold now. */
  render(): string {
    return renderNetworkPolicyRules(this.input(this.pods.list()));
  }

  private input(pods: readonly PodInfo[], announced: ReadonlyMap<string, readonly string[]> = this.announced) {
    return {
      nodeName: this.opts.nodeName,
      pods,
      namespaces: this.namespaces.list(),
      policies: this.policies.list(),
      announced,
      nodePodCIDRs: this.nodePodCIDRs,
      ...(this.opts.podBridge !== undefined ? { podBridge: this.opts.podBridge } : {}),
    };
  }

  /**
   * Resolves the announcements whose pod the applied ruleset held with the announced addresses: `pods` and `announced`
   * are what the ruleset was rendered from. An announcement that came while it was written waits for the next one.
   */
  private settle(pods: readonly PodInfo[], announced: ReadonlyMap<string, readonly string[]>): void {
    if (this.waiters.length === 0) return;
    const present = new Set(pods.map((p) => `${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''}`));
    const current = (key: string, ips: readonly string[]) =>
      announced.get(key) === ips && this.announced.get(key) === ips;
    this.waiters = this.waiters.filter((w) => {
      if (!present.has(w.key) || !current(w.key, w.ips)) return true;
      w.resolve();
      return false;
    });
  }

  private schedule(delayMs = this.opts.debounceMs ?? 50): void {
    if (this.stopped || !this.synced()) return;
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.sync().finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.schedule();
        }
      });
    }, delayMs);
  }

  private synced(): boolean {
    return this.pods.hasSynced() && this.namespaces.hasSynced() && this.policies.hasSynced();
  }

  private async sync(): Promise<void> {
    await this.updatePorts();
    const pods = this.pods.list();
    // What this ruleset is rendered from: announcements that come while it is written wait for the next one.
    const announced = new Map(this.announced);
    const script = renderNetworkPolicyRules(this.input(pods, announced));
    if (script === this.written) {
      this.settle(pods, announced);
      return;
    }
    try {
      await runNft(script, ['-f', '-'], this.opts.netns);
      this.written = script;
      this.settle(pods, announced);
      this.failures = 0;
      this.status.applied++;
      this.status.lastAppliedAt = Date.now();
      if (this.status.lastError !== undefined) this.opts.log('network policies: rules written again');
      this.status.lastError = undefined;
      this.firstApplied();
    } catch (e) {
      const message = (e as Error).message;
      if (message !== this.status.lastError) this.opts.log(`network policies: ${message}`);
      this.status.lastError = message;
      this.failures++;
      clearTimeout(this.timer);
      this.timer = setTimeout(
        () => {
          this.timer = undefined;
          this.schedule(0);
        },
        Math.min(30_000, 250 * 2 ** Math.min(this.failures, 7)),
      );
    }
  }

  /** The further sources a pod may send from, as its annotation in the cache says. */
  private allowedSourcePrefixesOf(namespace: string, name: string): string[] {
    return allowedSourcePrefixes(this.pods.get(name, namespace)?.metadata?.annotations);
  }

  /** Writes again the ports whose pod's allowed sources changed (or reached the cache after the announcement). */
  private async updatePorts(): Promise<void> {
    if (this.antiSpoofing === undefined) return;
    for (const [key, port] of this.ports) {
      const [namespace, name] = [key.slice(0, key.indexOf('/')), key.slice(key.indexOf('/') + 1)];
      const wanted = this.allowedSourcePrefixesOf(namespace, name);
      if (wanted.join(',') === (port.allowedSourcePrefixes ?? []).join(',')) continue;
      const held = { ...port, allowedSourcePrefixes: wanted };
      try {
        await this.antiSpoofing.add(held);
        this.ports.set(key, held);
      } catch (e) {
        this.opts.log(`network policies: port ${port.hostInterface}: ${(e as Error).message}`);
      }
    }
  }

  /** Removes the anti-spoofing ports whose veth is gone: sandboxes removed while no enforcer listened. */
  private async collectPorts(): Promise<void> {
    if (this.antiSpoofing === undefined) return;
    try {
      const existing = interfacesIn(this.opts.netns);
      const gone = await this.antiSpoofing.collect((name) => existing.has(name));
      if (gone.length > 0) this.opts.log(`network policies: ports of removed pods: ${gone.join(', ')}`);
    } catch (e) {
      this.opts.log(`network policies: ports: ${(e as Error).message}`);
    }
  }

  /** Writes the table again when it is gone or differs from what was written (someone flushed it). */
  private async verify(): Promise<void> {
    await this.collectPorts();
    if (this.written === undefined || this.running !== undefined) return;
    if (!(await tablePresent(this.opts.netns))) {
      this.opts.log(`network policies: table ${NETWORK_POLICY_TABLE} is gone; writing it again`);
      this.written = undefined;
      this.schedule(0);
    }
  }
}

/** Whether the enforcer's table is in the network namespace (the caller's when unset). */
function tablePresent(netns: string | undefined): Promise<boolean> {
  return runNft('', ['list', 'table', 'inet', NETWORK_POLICY_TABLE], netns).then(
    () => true,
    () => false,
  );
}

/** The interfaces of a network namespace (the caller's when unset). */
function interfacesIn(netns: string | undefined): Set<string> {
  const out = ip([...(netns !== undefined ? ['-n', netns] : []), '-j', 'link', 'show']);
  return new Set((JSON.parse(out) as { ifname: string }[]).map((l) => l.ifname));
}

/** The message of a pino JSON line, with its error's. */
function lineOf(text: string): string {
  try {
    const line = JSON.parse(text) as { msg?: string; err?: { message?: string }; informer?: string };
    return [line.informer, line.msg, line.err?.message].filter(Boolean).join(': ');
  } catch {
    return text.trim();
  }
}
