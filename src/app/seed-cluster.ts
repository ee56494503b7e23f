/**
 * A seed cluster of its own beside the garden, as `up --seeds` brings up each seed after the first: its own API
 * server (etcd, kube-apiserver, kube-controller-manager and, with Nodes, kube-scheduler) on its own node network,
 * its own Nodes (machines of provider-local's kind), its own load-balancer network routed to them, and its own
 * gardenlet with the network and DNS extensions, running against the seed cluster and reaching the garden with a
 * kubeconfig of its own: a client certificate of `gardener.cloud:system:seed:<name>` issued by the garden's CA, the
 * credentials the garden's seed restriction holds to this seed. The shoots' DNS records go to the garden's BIND9.
 *
 * deploy() starts it all (the Nodes' processes run when it resolves), wait() until the Nodes are Ready, destroy()
 * stops and removes everything it started.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import type { FeatureGates } from '../featuregate/featuregate.js';
import type { Bind9 } from '../localenv/bind9.js';
import { issueClientCertificate } from '../localenv/certs.js';
import { startControlPlane, type ControlPlane } from '../localenv/control-plane.js';
import { ResourceClient } from '../runtime/client.js';
import type { Logger } from '../runtime/log.js';
import { startLocalServices, type LocalServices } from './local-environment.js';
import type { LocalSeed } from './local-seeds.js';
import { deploySeedAccess, seedSubject, writeSeedKubeconfig } from './seed-access.js';
import { SeedNodeNetwork, SeedNodes, seedSummary, type MachinesOptions } from './seed-nodes.js';

export interface SeedClusterOptions {
  readonly seed: LocalSeed;
  /** The garden's control plane: its URL and CA for the gardenlet's kubeconfig, its CA to issue the certificate. */
  readonly garden: Pick<ControlPlane, 'server' | 'certs' | 'kubeConfig'>;
  /** The garden's BIND9: the shoots' DNS records and the Nodes' upstream resolver. */
  readonly bind: Bind9;
  readonly gates: FeatureGates;
  readonly logger: Logger;
  /** Nodes of the seed cluster; 0: no Nodes, its shoots are objects only. */
  readonly nodeCount: number;
  /** What the Nodes are made of (with Nodes only). */
  readonly machines?: () => Promise<MachinesOptions>;
  /** How long stopping its gardenlet may take. */
  readonly shutdownTimeoutMs?: number;
  /** How often its gardenlet renews the Seed's Lease; the gardenlet's default when unset. */
  readonly seedLeaseResyncMs?: number;
  readonly log?: (line: string) => void;
}

export class SeedCluster {
  private network: SeedNodeNetwork | undefined;
  private cp: ControlPlane | undefined;
  private services: LocalServices | undefined;
  private nodes: SeedNodes | undefined;
  private client: ResourceClient | undefined;

  constructor(private readonly opts: SeedClusterOptions) {}

  get name(): string {
    return this.opts.seed.seed.metadata?.name ?? '';
  }

  /** The seed cluster's control plane (after deploy()). */
  get controlPlane(): ControlPlane {
    if (this.cp === undefined) throw new Error(`seed cluster ${this.name} is not deployed`);
    return this.cp;
  }

  /** Where the gardenlet's garden kubeconfig is (after deploy()). */
  get gardenKubeconfigPath(): string {
    return join(this.controlPlane.dir, 'garden.kubeconfig');
  }

  async deploy(): Promise<void> {
    const { seed, nodeCount } = this.opts;
    const withNodes = nodeCount > 0;
    if (withNodes) {
      this.network = new SeedNodeNetwork(seed.networks, seed.tag);
      this.network.deploy();
    }
    this.cp = await startControlPlane({
      handleSignals: false,
      ...(this.opts.log ? { log: (line: string) => this.opts.log!(`[seed ${this.name}] ${line}`) } : {}),
      ...(this.network !== undefined ? this.network.controlPlaneOptions() : {}),
    });
    this.client = new ResourceClient(this.cp.kubeConfig());
    const garden = new ResourceClient(this.opts.garden.kubeConfig());
    let gardenKubeConfig: KubeConfig;
    try {
      await deploySeedAccess(garden);
      const credentials = await issueClientCertificate(this.opts.garden.certs, {
        file: `seed-${this.name}`,
        ...seedSubject(this.name),
      });
      gardenKubeConfig = await writeSeedKubeconfig(this.gardenKubeconfigPath, {
        server: this.opts.garden.server,
        caPEM: readFileSync(this.opts.garden.certs.caCert, 'utf8'),
        seedName: this.name,
        ...credentials,
      });
    } finally {
      garden.close();
    }
    this.services = await startLocalServices(this.cp, this.opts.gates, this.opts.logger, {
      garden: { kubeConfig: gardenKubeConfig, bind: this.opts.bind },
      seedName: this.name,
      loadBalancerNetworks: seed.loadBalancerNetworks,
      tag: `lb${seed.tag}`,
      ...(withNodes ? { controlPlaneWorkloads: true } : {}),
      ...(this.opts.shutdownTimeoutMs !== undefined ? { shutdownTimeoutMs: this.opts.shutdownTimeoutMs } : {}),
      ...(this.opts.seedLeaseResyncMs !== undefined ? { seedLeaseResyncMs: this.opts.seedLeaseResyncMs } : {}),
    });
    if (!withNodes) return;
    if (this.opts.machines === undefined) throw new Error(`seed cluster ${this.name}: Nodes need machines`);
    this.nodes = SeedNodes.forCluster(this.cp, {
      count: nodeCount,
      namePrefix: seed.nodeNamePrefix,
      network: this.network!,
      machines: await this.opts.machines(),
      client: this.client,
      ...(this.opts.bind.port === 53 ? { upstreamDNS: [this.opts.bind.address] } : {}),
      ...(this.opts.log ? { log: this.opts.log } : {}),
    });
    await this.nodes.deploy();
  }

  /** Stops its gardenlet and extensions (the Nodes and what runs on them stay): its Lease is no longer renewed. */
  async stopGardenlet(): Promise<void> {
    await this.services?.stopGardenlet();
  }

  /** Starts its gardenlet and extensions again on the same state. */
  async startGardenlet(): Promise<void> {
    await this.services?.startGardenlet();
  }

  /** Resolves when the Nodes are Ready and the seed's CoreDNS is available (at once without Nodes). */
  async wait(): Promise<void> {
    await this.nodes?.wait();
  }

  /** What `up` prints about the seed cluster: its API server, kubeconfig, and Nodes with a pod-to-pod check. */
  async summary(): Promise<string[]> {
    const cp = this.controlPlane;
    const title = `seed cluster ${this.name} (its API server ${cp.server}, kubeconfig ${cp.kubeconfigPath}):`;
    if (this.nodes === undefined || this.client === undefined)
      return [title, '  no Nodes: its shoots are objects only'];
    return seedSummary(this.nodes, this.client, cp, title);
  }

  /** Stops the gardenlet, the Nodes and the control plane, and removes their networks and files. */
  async destroy(opts: { deadline?: number } = {}): Promise<void> {
    const loadBalancerNetwork = this.services?.loadBalancerNetwork;
    await Promise.all([this.services?.stop({ ...opts, keepLoadBalancerNetwork: true }), this.nodes?.destroy(opts)]);
    this.services = undefined;
    this.nodes = undefined;
    this.client?.close();
    this.client = undefined;
    await this.cp?.stop(opts);
    this.cp = undefined;
    // After its API server: see LocalServices.stop.
    loadBalancerNetwork?.destroy();
    this.network?.destroy();
    this.network = undefined;
  }
}
