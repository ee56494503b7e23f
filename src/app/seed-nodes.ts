/**
 * The seed's Nodes in `up`. As in Gardener's local setup, the garden cluster doubles as the seed (garden runtime =
 * seed): its API server is the seed's, and these machines are the seed cluster's Nodes, so that workloads on the
 * seed run somewhere. Each is a machine of provider-local's kind (network and mount namespaces, containerd, runc,
 * kubelet, kube-proxy, CNI) on a bridge of the seed's node network, joined with a `system:node:<name>` certificate
 * of the garden's CA.
 *
 * Addresses come from the Seed's `spec.networks`: the bridge holds the first address of the node range of each
 * family (the API server listens there), node i gets address 10 + i; kube-controller-manager gives each Node a
 * `/64` (IPv6) or `/24` (IPv4) of the seed's pod range; kube-proxy serves the seed's service range, where CoreDNS
 * takes the tenth address as in every cluster of this project.
 *
 * `SeedNodeNetwork` is created before the control plane (the API server binds its gateway); `SeedNodes` after it.
 */
import { readFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Seed } from '../apis/core/v1beta1/seed.js';
import { clusterDNSAddress } from '../apis/core/v1beta1/networks.js';
import { issueClientCertificate, type Certificates } from '../localenv/certs.js';
import type { ControlPlane, ControlPlaneNodesOptions } from '../localenv/control-plane.js';
import { adminGet } from '../localenv/kube-apiserver.js';
import { formatIP, parseCIDR, type IPFamily } from '../net/cidr.js';
import type { ResourceClient } from '../runtime/client.js';
import { bridgeName, deleteLink, ensureBridge } from '../system/network.js';
import { coreDNSReady, deployCoreDNS } from '../gardenlet/shoot/components/coredns.js';
import { networkPolicyEnforcerRBAC } from '../gardenlet/shoot/components/machine-bootstrap.js';
import { describeNode, nodeReady, type NodeInfo } from '../extensions/provider-local/machine/api-client.js';
import { Machine } from '../extensions/provider-local/machine/machine.js';
import { describePodCheck, podToPodCheck } from '../extensions/provider-local/worker/pod-check.js';
import { Refs } from '../apis/refs.js';
import { KUBELET_CONFIG_FILE_PATH, SEED_POD_PIDS_LIMIT } from '../apis/provider-local/v1alpha1/kubelet.js';
import { cleanupOrphanedMachines } from '../extensions/provider-local/machine/janitor.js';
import type { BuiltImage } from '../extensions/provider-local/machine/image-archive.js';
import { removeOrphans } from '../system/network.js';
import { machineAddresses, nodeNetwork, type NodeNetwork } from '../extensions/provider-local/worker/node-addresses.js';

/** What machines are made of: the node binaries and the images imported into their containerd. */
export interface MachinesOptions {
  /** The folder with the node binaries (kubelet, containerd, ...). */
  readonly binDir: string;
  /** The machines' images (pause, test image, CoreDNS, and on seed Nodes the control plane's), built once. */
  readonly images: () => Promise<BuiltImage[]>;
}

/** How many Nodes the seed of `up` gets by default. */
export const DEFAULT_SEED_NODES = 2;
/** How long the seed's Nodes and its CoreDNS may take to become ready. */
export const SEED_NODES_READY_TIMEOUT_MS = 180_000;
const POLL_INTERVAL_MS = 500;

/** The parts of a Seed's `spec.networks` its Nodes are made from. */
export interface SeedNetworks {
  /** Primary first. */
  readonly families: readonly IPFamily[];
  /** One per family, in the order of `families`. */
  readonly nodes: readonly string[];
  readonly pods: readonly string[];
  readonly services: readonly string[];
}

/**
 * A Seed's `spec.networks` as the seed's Nodes use it: one range per family, primary first. Dual-stack ranges may be
 * comma-separated; a Seed with one range per field takes its other family's from `secondary` (the environment's, as
 * a dual-stack kind cluster's configuration holds them).
 */
export function seedNetworks(
  seed: Pick<Seed, 'spec'>,
  secondary?: { readonly nodes: string; readonly pods: string; readonly services: string },
): SeedNetworks {
  const networks = seed.spec.networks;
  const families = (networks?.ipFamilies ?? ['IPv4']) as IPFamily[];
  const byFamily = (field: 'nodes' | 'pods' | 'services'): string[] => {
    const cidrs = [networks?.[field] ?? '', secondary?.[field] ?? '']
      .flatMap((list) => list.split(','))
      .map((c) => c.trim())
      .filter(Boolean);
    return families.map((family) => {
      const cidr = cidrs.find((c) => parseCIDR(c)?.family === family);
      if (cidr === undefined) throw new Error(`the seed has no ${family} range in spec.networks.${field}`);
      return cidr;
    });
  };
  return { families, nodes: byFamily('nodes'), pods: byFamily('pods'), services: byFamily('services') };
}

/** The seed's node network: a bridge of this namespace with the gateway address of each family. */
export class SeedNodeNetwork {
  readonly bridge: string;
  readonly network: NodeNetwork;

  constructor(
    readonly networks: SeedNetworks,
    tag = 'seed',
  ) {
    this.bridge = bridgeName(tag);
    this.network = nodeNetwork(networks.families, networks.nodes);
  }

  /** The gateway of the primary family: where the API server listens for the Nodes. */
  get primaryGateway(): string {
    return this.network.ranges[this.networks.families[0]!]!.gateway;
  }

  /**
   * What the garden's control plane needs to serve these Nodes (startControlPlane's options): the seed's service
   * ranges, and listening on the primary gateway with node IPAM from the seed's pod ranges.
   */
  controlPlaneOptions(): { serviceCIDR: string; secondaryServiceCIDR?: string; nodes: ControlPlaneNodesOptions } {
    const [serviceCIDR, secondaryServiceCIDR] = this.networks.services;
    return {
      serviceCIDR: serviceCIDR!,
      ...(secondaryServiceCIDR !== undefined ? { secondaryServiceCIDR } : {}),
      nodes: { listenAddress: this.primaryGateway, podCIDRs: this.networks.pods },
    };
  }

  get gateways(): string[] {
    return this.networks.families.map((f) => this.network.ranges[f]!.gateway);
  }

  deploy(): void {
    ensureBridge(
      this.bridge,
      this.networks.families.map((f) => `${this.network.ranges[f]!.gateway}/${this.network.ranges[f]!.prefix}`),
    );
  }

  destroy(): void {
    deleteLink(this.bridge);
  }
}

export interface SeedNodesOptions {
  readonly count: number;
  /** The Nodes are `<namePrefix>-0`, `<namePrefix>-1`, ...: unique on the host (machine ids derive from them). @default seed */
  readonly namePrefix?: string;
  readonly network: SeedNodeNetwork;
  /** The garden API server (the seed's): its URL and CA. */
  readonly apiServer: { readonly url: string; readonly caPEM: string };
  /** The garden's certificates folder: the node and kube-proxy certificates are issued by its CA. */
  readonly certs: Pick<Certificates, 'dir'>;
  /** The machines' files, one folder each. */
  readonly stateDir: string;
  readonly machines: MachinesOptions;
  /** An admin client of the garden API server (CoreDNS, the Nodes). */
  readonly client: ResourceClient;
  /**
   * The environment's DNS servers (BIND9 of `up`): the Nodes' upstream resolvers and where the seed's CoreDNS sends
   * names outside the cluster, so that pods on the seed (the shoots' machines among them) resolve the shoots' API
   * server names. @default none (such names get NXDOMAIN)
   */
  readonly upstreamDNS?: readonly string[];
  readonly log?: (line: string) => void;
}

export interface SeedNodeSummary {
  readonly name: string;
  readonly ready: boolean;
  readonly internalIPs: string[];
  readonly podCIDRs: string[];
}

/** `seed-0`, `seed-1`, ...: the seed's Node names. */
export function seedNodeNames(count: number, prefix = 'seed'): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
}

export class SeedNodes {
  private readonly machines: Machine[] = [];

  constructor(private readonly opts: SeedNodesOptions) {}

  /**
   * The Nodes of a seed cluster's control plane (the garden's, when it doubles as the seed) started with
   * `network.controlPlaneOptions()`; state below its folder.
   */
  static forCluster(
    cluster: Pick<ControlPlane, 'server' | 'certs' | 'dir'>,
    opts: Pick<SeedNodesOptions, 'count' | 'namePrefix' | 'network' | 'machines' | 'client' | 'upstreamDNS' | 'log'>,
  ): SeedNodes {
    return new SeedNodes({
      ...opts,
      apiServer: { url: cluster.server, caPEM: readFileSync(cluster.certs.caCert, 'utf8') },
      certs: cluster.certs,
      stateDir: join(cluster.dir, 'seed-nodes'),
    });
  }

  /** Creates the machines (their processes run when this resolves) and the seed's CoreDNS. */
  async deploy(): Promise<void> {
    const { network, count } = this.opts;
    const { families, pods, services } = network.networks;
    // What a run that was killed left (machines, their namespaces and links) goes before this one makes its own.
    cleanupOrphanedMachines();
    removeOrphans();
    await mkdir(this.opts.stateDir, { recursive: true });
    // The seed's NetworkPolicies are in force on its Nodes as on a shoot's: each Node's enforcer reads them.
    for (const { ref, object } of networkPolicyEnforcerRBAC()) {
      await this.opts.client.apply(ref, object, { fieldManager: 'gardener-ipv6-seed-nodes', force: true });
    }
    const kubeProxy = await issueClientCertificate(this.opts.certs, {
      file: 'seed-kube-proxy',
      commonName: 'system:kube-proxy',
    });
    const images = await this.opts.machines.images();
    const clusterDNS = services.map((c) => formatIP(clusterDNSAddress(parseCIDR(c)!)));
    await Promise.all(
      seedNodeNames(count, this.opts.namePrefix).map(async (name, index) => {
        const credentials = await issueClientCertificate(this.opts.certs, {
          file: `seed-node-${name}`,
          commonName: `system:node:${name}`,
          organizations: ['system:nodes'],
        });
        const machine = new Machine({
          name,
          stateDir: join(this.opts.stateDir, name),
          binDir: this.opts.machines.binDir,
          attachment: { bridge: network.bridge, gateways: network.gateways },
          addresses: machineAddresses(network.network, families, index),
          families: [...families],
          apiServer: this.opts.apiServer,
          join: { credentials, kubeProxyCredentials: kubeProxy },
          clusterDNS: clusterDNS[0]!,
          podCIDRs: [...pods],
          serviceCIDRs: [...services],
          upstreamDNS: [...(this.opts.upstreamDNS ?? [])],
          operatingSystemConfig: { spec: { files: [seedKubeletConfigFile()] } },
          images,
          // Machine pods run in user namespaces of their own (worker/machine-pods.ts).
          delegateCgroupsToUserNamespaces: true,
          ...(this.opts.log ? { log: this.opts.log } : {}),
        });
        this.machines.push(machine);
        await machine.deploy();
      }),
    );
    await deployCoreDNS(this.opts.client, {
      clusterIPs: clusterDNS,
      families: [...families],
      replicas: Math.min(2, Math.max(1, count)),
      ...(this.opts.upstreamDNS?.length ? { upstreams: [...this.opts.upstreamDNS] } : {}),
    });
  }

  /** Resolves when every Node is Ready and CoreDNS is available; fails at the deadline naming what was missing. */
  async wait(timeoutMs = SEED_NODES_READY_TIMEOUT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let missing = 'nothing checked yet';
    for (;;) {
      const summary = await this.summary().catch((e: Error) => e);
      if (summary instanceof Error) {
        missing = summary.message;
      } else {
        const notReady = this.names().filter((n) => !summary.some((s) => s.name === n && s.ready));
        if (notReady.length > 0) missing = `Nodes not Ready: ${notReady.join(', ')}`;
        else if (!(await coreDNSReady(this.opts.client))) missing = 'the seed CoreDNS is not available';
        else return;
      }
      if (Date.now() > deadline) throw new Error(`the seed's Nodes are not ready in ${timeoutMs} ms: ${missing}`);
      await new Promise((r) => setTimeout(r, POLL_INTERVAL_MS));
    }
  }

  get families(): readonly IPFamily[] {
    return this.opts.network.networks.families;
  }

  names(): string[] {
    return this.machines.map((m) => m.opts.name);
  }

  machineList(): readonly Machine[] {
    return this.machines;
  }

  /** The seed's Nodes as the API server lists them. */
  async summary(): Promise<SeedNodeSummary[]> {
    const nodes = (await this.opts.client.list<NodeInfo & KubernetesObject>(Refs.node, {})).items;
    return nodes.map((node) => ({
      name: node.metadata?.name ?? '',
      ready: nodeReady(node),
      internalIPs: (node.status?.addresses ?? []).filter((a) => a.type === 'InternalIP').map((a) => a.address),
      podCIDRs: node.spec?.podCIDRs ?? [],
    }));
  }

  /** Stops and removes the machines and their files; the Node objects go with the garden. */
  async destroy(opts: { deadline?: number } = {}): Promise<void> {
    const all = this.machines.splice(0);
    await Promise.all(all.map((m) => m.destroy(opts)));
    await rm(this.opts.stateDir, { recursive: true, force: true });
  }
}

/**
 * The lines `up` prints about the seed: its Nodes as the API server lists them and a pod-to-pod check between the
 * first and the last Node over the seed's primary family.
 */
export async function seedSummary(
  nodes: SeedNodes,
  client: ResourceClient,
  garden: { server: string; certs: Certificates },
  title = `seed cluster (the garden's API server ${garden.server}):`,
): Promise<string[]> {
  const lines = [title];
  const nodeList = (await client.list<NodeInfo & KubernetesObject>(Refs.node, {})).items;
  lines.push(...nodeList.map(describeNode));
  const family = nodes.families[0]!;
  lines.push(
    await describePodCheck(family, () =>
      podToPodCheck(
        client,
        async (path) => {
          const res = await adminGet(garden.server, garden.certs, path, 10_000);
          if (res.status !== 200) throw new Error(`GET ${path}: HTTP ${res.status} ${res.body.slice(0, 200)}`);
          return res.body;
        },
        family,
        60_000,
      ),
    ),
  );
  return lines;
}

/** The seed Nodes' kubelet settings beside the machines' defaults, as a worker's OperatingSystemConfig carries them. */
export function seedKubeletConfigFile(): { path: string; content: { inline: { encoding: string; data: string } } } {
  const config = {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    podPidsLimit: SEED_POD_PIDS_LIMIT,
  };
  return { path: KUBELET_CONFIG_FILE_PATH, content: { inline: { encoding: '', data: JSON.stringify(config) } } };
}
