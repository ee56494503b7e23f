/**
 * A shoot's machines, as provider-local's Worker: `minimum` machines per worker pool on a node network of the
 * shoot's own. The node network is a bridge inside the shoot's control plane namespace, which routes between the
 * machines and its API server (like a VPC with the control plane at its edge): every shoot's node ranges are its
 * own, two shoots may use the same ones, and nothing of them reaches the environment's namespace.
 *
 * Node addresses: the gateway is the first address of each family's node range, machine i gets address 10 + i.
 * A family the shoot has no node range for (the second family of a dual-stack shoot) takes a local default.
 */
import { KubeConfig } from '@kubernetes/client-node';
import type { File } from '../../../apis/extensions/v1alpha1/operatingsystemconfig.js';
import { ip } from '../../../localenv/netns.js';
import { shortHash } from '../../../system/network.js';
import type { IPFamily } from '../../../net/cidr.js';
import { machineAddresses, nodeNetwork, type NodeNetwork } from './node-addresses.js';
export { DEFAULT_NODE_RANGES, machineAddresses, nodeNetwork, type NodeNetwork } from './node-addresses.js';
import { issueCertificate, type CertificatePair } from '../../../pki/certificates.js';
import { ResourceClient } from '../../../runtime/client.js';
import { coreDNSReady, deployCoreDNS } from '../../../gardenlet/shoot/components/coredns.js';
import type { LocalControlPlane } from '../controlplane/control-plane.js';
import { nodeReady, type NodeInfo } from '../machine/api-client.js';
import type { BuiltImage } from '../machine/images.js';
import { Machine } from '../machine/machine.js';
import { podToPodCheck, type PodCheckResult } from './pod-check.js';
import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import type { HealthCheck, WorkersHealth } from '../../../gardenlet/shoot/care/health.js';

/** The node bridge's name inside the control plane namespace. */
export const NODE_BRIDGE = 'br-nodes';
const CERT_VALIDITY_MS = 365 * 24 * 3600_000;

export interface WorkerPoolSpec {
  readonly name: string;
  readonly minimum: number;
  /** The pool's kernel settings, over the OperatingSystemConfig's. */
  readonly sysctls?: Readonly<Record<string, string>>;
}

export interface WorkersSpec {
  /** The seed namespace: names the instance. */
  readonly name: string;
  readonly families: readonly IPFamily[];
  /** The shoot's node ranges (any family may be missing). */
  readonly nodeCIDRs: readonly string[];
  /** In family order. */
  readonly podCIDRs: readonly string[];
  readonly serviceCIDRs: readonly string[];
  /** The cluster DNS address of each service range, primary first. */
  readonly clusterDNS: readonly string[];
  readonly pools: readonly WorkerPoolSpec[];
  readonly operatingSystemConfig: { readonly spec: { readonly files?: File[] } };
  readonly ca: CertificatePair;
}

/**
 * `machine-<shoot hash>-<pool>-<i>` for every machine the pools want, in a stable order: unique per shoot, as
 * Gardener's machine names carry the shoot's namespace.
 */
export function desiredMachineNames(
  shoot: string,
  pools: readonly WorkerPoolSpec[],
): { name: string; pool: WorkerPoolSpec }[] {
  const tag = shortHash(shoot, 5);
  return pools.flatMap((pool) =>
    Array.from({ length: Math.max(0, pool.minimum) }, (_, i) => ({ name: `machine-${tag}-${pool.name}-${i}`, pool })),
  );
}

export type { HealthCheck, WorkersHealth };

export interface MachinesOptions {
  /** The folder with the node binaries (kubelet, containerd, ...). */
  readonly binDir: string;
  /** The machines' images (pause, test image, CoreDNS), built once per environment. */
  readonly images: () => Promise<BuiltImage[]>;
}

/** The machines of one shoot, in its control plane's namespace. */
export class LocalWorkers {
  private readonly machines = new Map<string, { machine: Machine; hash: string }>();
  private kubeProxy: CertificatePair | undefined;
  private bridgeReady = false;

  constructor(
    private readonly controlPlane: LocalControlPlane,
    private readonly dir: string,
    private readonly options: MachinesOptions,
  ) {}

  /** The admin client of the shoot (CoreDNS, Nodes); the caller closes it. */
  async shootClient(): Promise<ResourceClient> {
    const admin = this.controlPlane.adminCredentials();
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'shoot', server: this.controlPlane.url, caData: b64(this.controlPlane.secrets.ca.certPEM) }],
      users: [{ name: 'admin', certData: b64(admin.certPEM), keyData: b64(admin.keyPEM) }],
      contexts: [{ name: 'shoot', cluster: 'shoot', user: 'admin' }],
      currentContext: 'shoot',
    });
    return new ResourceClient(kc);
  }

  /** The node bridge with the gateways, and forwarding on, in the control plane's namespace. */
  private ensureBridge(network: NodeNetwork): void {
    if (this.bridgeReady) return;
    const ns = this.controlPlane.netns;
    try {
      ip(['-n', ns, 'link', 'add', 'name', NODE_BRIDGE, 'type', 'bridge']);
    } catch {
      // Exists already.
    }
    for (const [family, range] of Object.entries(network.ranges)) {
      if (range === undefined) continue;
      ip([
        '-n',
        ns,
        'addr',
        'replace',
        `${range.gateway}/${range.prefix}`,
        'dev',
        NODE_BRIDGE,
        ...(family === 'IPv6' ? ['nodad'] : []),
      ]);
    }
    ip(['-n', ns, 'link', 'set', 'dev', NODE_BRIDGE, 'up']);
    // The control plane namespace routes between the machines and the API server: a per-namespace setting.
    ip(['netns', 'exec', ns, 'sysctl', '-qw', 'net.ipv6.conf.all.forwarding=1', 'net.ipv4.ip_forward=1']);
    this.bridgeReady = true;
  }

  /** Brings the machines to the pools' minimum: new ones created, surplus ones destroyed, changed ones replaced. */
  async deploy(spec: WorkersSpec): Promise<void> {
    const network = nodeNetwork(spec.families, spec.nodeCIDRs);
    this.ensureBridge(network);
    const desired = desiredMachineNames(spec.name, spec.pools);
    const names = new Set(desired.map((d) => d.name));
    const surplus = [...this.machines.entries()].filter(([name]) => !names.has(name));
    for (const [name, { machine }] of surplus) {
      this.machines.delete(name);
      await machine.destroy();
    }
    if (surplus.length > 0) {
      // Drain-free scale-down: the machine is gone, so is its Node (a kubelet never deletes its own).
      const client = await this.shootClient();
      try {
        await Promise.all(surplus.map(([name]) => client.delete(NODES, name)));
      } finally {
        client.close();
      }
    }
    this.kubeProxy ??= await issueCertificate(spec.ca, {
      commonName: 'system:kube-proxy',
      usages: ['client'],
      notAfter: new Date(Date.now() + CERT_VALIDITY_MS),
    });
    const images = await this.options.images();
    await Promise.all(
      desired.map(async ({ name, pool }, index) => {
        const addresses = machineAddresses(network, spec.families, index);
        const hash = JSON.stringify([addresses, spec.podCIDRs, spec.serviceCIDRs, spec.clusterDNS[0]]);
        const existing = this.machines.get(name);
        const osc = { spec: { files: [...(spec.operatingSystemConfig.spec.files ?? [])] } };
        if (existing?.hash === hash) {
          // As gardener-node-agent: a changed OperatingSystemConfig or pool sysctls are applied in place.
          await existing.machine.applyOperatingSystemConfig(osc, pool.sysctls ? { ...pool.sysctls } : undefined);
          return;
        }
        if (existing) {
          this.machines.delete(name);
          await existing.machine.destroy();
        }
        const credentials = await issueCertificate(spec.ca, {
          commonName: `system:node:${name}`,
          organizations: ['system:nodes'],
          usages: ['client'],
          notAfter: new Date(Date.now() + CERT_VALIDITY_MS),
        });
        const machine = new Machine({
          name,
          stateDir: join(this.dir, name),
          binDir: this.options.binDir,
          attachment: {
            bridge: NODE_BRIDGE,
            bridgeNetns: this.controlPlane.netns,
            gateways: spec.families.map((f) => network.ranges[f]!.gateway),
          },
          addresses,
          families: [...spec.families],
          apiServer: { url: this.controlPlane.url, caPEM: spec.ca.certPEM },
          join: { credentials, kubeProxyCredentials: this.kubeProxy! },
          clusterDNS: spec.clusterDNS[0]!,
          podCIDRs: [...spec.podCIDRs],
          serviceCIDRs: [...spec.serviceCIDRs],
          operatingSystemConfig: { spec: { files: [...(spec.operatingSystemConfig.spec.files ?? [])] } },
          ...(pool.sysctls ? { sysctls: { ...pool.sysctls } } : {}),
          images,
        });
        this.machines.set(name, { machine, hash });
        try {
          await machine.deploy();
        } catch (e) {
          this.machines.delete(name);
          throw e;
        }
      }),
    );
    const client = await this.shootClient();
    try {
      await deployCoreDNS(client, {
        // Every family's cluster DNS address, so kube-dns serves all of them.
        clusterIPs: [...spec.clusterDNS],
        families: [...spec.families],
        replicas: Math.min(2, Math.max(1, desired.length)),
      });
    } finally {
      client.close();
    }
  }

  /** What is not ready yet, or undefined when every machine's Node is Ready and CoreDNS is available. */
  async notReady(): Promise<string | undefined> {
    const client = await this.shootClient();
    try {
      const nodes = (await client.list<NodeInfo & { metadata?: { name?: string } }>(NODES, {})).items;
      const ready = new Set(nodes.filter((n) => nodeReady(n)).map((n) => n.metadata?.name));
      const waiting = [...this.machines.keys()].filter((name) => !ready.has(name));
      if (waiting.length > 0) return `Nodes not Ready yet: ${waiting.join(', ')}`;
      if (!(await coreDNSReady(client))) return 'CoreDNS is not available yet';
      return undefined;
    } finally {
      client.close();
    }
  }

  /** EveryNodeReady and SystemComponentsHealthy, as the care controller reports them. */
  async health(): Promise<WorkersHealth> {
    const client = await this.shootClient();
    try {
      const nodes = (await client.list<NodeInfo & { metadata?: { name?: string } }>(NODES, {})).items;
      const byName = new Map(nodes.map((n) => [n.metadata?.name, n]));
      const missing = [...this.machines.keys()].filter((name) => !byName.has(name));
      const unhealthy = nodes.filter((n) => !nodeReady(n)).map((n) => n.metadata?.name ?? '');
      const nodesHealth =
        missing.length > 0
          ? { ok: false, reason: 'MissingNodes', message: `machines without a Node: ${missing.join(', ')}` }
          : unhealthy.length > 0
            ? { ok: false, reason: 'NodeUnhealthy', message: `Nodes not Ready: ${unhealthy.join(', ')}` }
            : { ok: true, reason: 'EveryNodeReady', message: `All ${nodes.length} Nodes are Ready.` };
      const down = this.machineList().flatMap((m) =>
        m
          .status()
          .processes.filter((p) => !p.running)
          .map((p) => `${p.name} on ${m.opts.name} (${p.lastExit ?? 'not started'})`),
      );
      const system =
        down.length > 0
          ? { ok: false, reason: 'ProcessDown', message: `not running: ${down.join(', ')}` }
          : !(await coreDNSReady(client))
            ? { ok: false, reason: 'DeploymentUnhealthy', message: 'Deployment kube-system/coredns is not available' }
            : {
                ok: true,
                reason: 'SystemComponentsRunning',
                message: 'CoreDNS is available; containerd, kubelet and kube-proxy run on every machine.',
              };
      return { nodes: nodesHealth, system };
    } finally {
      client.close();
    }
  }

  /** A pod-to-pod check over `family` between the first and the last machine. */
  async podCheck(family: IPFamily, timeoutMs?: number): Promise<PodCheckResult> {
    const client = await this.shootClient();
    try {
      return await podToPodCheck(
        client,
        async (path) => {
          const res = await this.controlPlane.get(path, 10_000);
          if (res.status !== 200) throw new Error(`GET ${path}: HTTP ${res.status} ${res.body.slice(0, 200)}`);
          return res.body;
        },
        family,
        timeoutMs,
      );
    } finally {
      client.close();
    }
  }

  machineList(): Machine[] {
    return [...this.machines.values()].map((m) => m.machine);
  }

  /** Stops and removes every machine (drain-free: the shoot goes away with them) and their files. */
  async destroy(opts: { deadline?: number } = {}): Promise<void> {
    const all = [...this.machines.values()];
    this.machines.clear();
    await Promise.all(all.map(({ machine }) => machine.destroy(opts)));
    this.bridgeReady = false;
    await rm(this.dir, { recursive: true, force: true });
  }
}

const NODES = { group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false } as const;
const b64 = (text: string) => Buffer.from(text).toString('base64');
