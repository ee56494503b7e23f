/**
 * provider-local's room: the load-balancer address pools, and the shoot control planes it runs as processes.
 * One instance per gardenlet; `stop()` ends every process and namespace it started (the data stays in the state
 * folder for the next start), and an exit handler does the same if the process ends without it. Leftovers of a
 * previous run that was killed are removed when an instance is created.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { onEmergencyExit } from '../../localenv/cleanup.js';
import type { IPFamily } from '../../net/cidr.js';
import type { ResourceClient } from '../../runtime/client.js';
import type { PodCheckResult } from './worker/pod-check.js';
import { removeOrphans } from '../../system/network.js';
import type { SupervisedState } from '../../system/supervisor.js';
import type { ControlPlaneSpec } from '../../gardenlet/shoot/components/controlplane/args.js';
import {
  LocalControlPlane,
  type ControlPlaneBinaries,
  type ControlPlaneSecrets,
  type LoadBalancerAttachment,
} from './controlplane/control-plane.js';
import { LocalWorkers, type MachinesOptions, type WorkersHealth, type WorkersSpec } from './worker/workers.js';
import type { Machine } from './machine/machine.js';
import { cleanupOrphanedMachines } from './machine/machine.js';
import { AddressPool, DEFAULT_LOAD_BALANCER_NETWORKS, type LoadBalancerNetworks } from './loadbalancer/pool.js';
import { formatIP, nthAddress } from '../../net/cidr.js';
import type { ControlPlaneHealth } from '../../gardenlet/shoot/care/health.js';

export interface LocalProviderOptions {
  /** Persistent state: one folder per shoot control plane (etcd data, certificates, logs). */
  readonly stateDir: string;
  /** The bridge in our network namespace that carries the load-balancer networks (made by the environment). */
  readonly bridge: string;
  /** @default DEFAULT_LOAD_BALANCER_NETWORKS */
  readonly networks?: LoadBalancerNetworks;
  readonly binaries: ControlPlaneBinaries;
  /** Restart backoff of crashed processes. @default 0.5 s doubling to 30 s */
  readonly restartBackoff?: { initialMs?: number; maxMs?: number };
  /** Machines for the shoots' worker pools; without it shoots get control planes only. */
  readonly machines?: MachinesOptions;
}

export type { ControlPlaneHealth };

/** A leader Lease renewed longer ago than this means its holder is not working. */
const LEASE_STALE_MS = 30_000;

export class LocalProvider {
  readonly pool: AddressPool;
  private readonly lb: LoadBalancerAttachment;
  private readonly controlPlanes = new Map<string, { instance: LocalControlPlane; hash: string }>();
  private readonly workers = new Map<string, LocalWorkers>();
  private readonly listeners = new Set<(name: string) => void>();
  private readonly unregister: () => void;

  constructor(private readonly options: LocalProviderOptions) {
    const networks = options.networks ?? DEFAULT_LOAD_BALANCER_NETWORKS;
    this.pool = new AddressPool(networks);
    const lbNetworks: Partial<Record<IPFamily, { prefixLength: number; gateway: string }>> = {};
    for (const family of ['IPv4', 'IPv6'] as const) {
      const network = this.pool.network(family);
      if (network) lbNetworks[family] = { prefixLength: network.prefix, gateway: formatIP(nthAddress(network, 1)!) };
    }
    this.lb = { bridge: options.bridge, networks: lbNetworks };
    cleanupOrphanedMachines();
    removeOrphans();
    this.unregister = onEmergencyExit(
      () => {
        for (const { instance } of this.controlPlanes.values()) instance.killNow();
      },
      { signals: false },
    );
  }

  /** Called with the control plane's name (the seed namespace) whenever one of its processes starts or exits. */
  onChange(listener: (name: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private dir(name: string): string {
    return join(this.options.stateDir, name);
  }

  /**
   * Starts the control plane, or leaves it running when nothing changed; a changed spec or CA restarts it on the
   * same data.
   */
  async deployControlPlane(spec: ControlPlaneSpec, secrets: ControlPlaneSecrets): Promise<LocalControlPlane> {
    const hash = JSON.stringify([spec, secrets.ca.certPEM, secrets.serviceAccount.publicPEM, this.options.binaries]);
    const existing = this.controlPlanes.get(spec.name);
    if (existing?.hash === hash) return existing.instance;
    if (existing) {
      // The machines hang off the control plane's namespace: they go with it and come back with the next deploy.
      await this.destroyWorkers(spec.name);
      this.controlPlanes.delete(spec.name);
      await existing.instance.stop();
    }
    const instance = new LocalControlPlane(spec, secrets, this.dir(spec.name), this.options.binaries, {
      ...(this.options.restartBackoff ? { backoff: this.options.restartBackoff } : {}),
      onChange: () => this.listeners.forEach((l) => l(spec.name)),
    });
    this.controlPlanes.set(spec.name, { instance, hash });
    try {
      await instance.start(this.lb);
    } catch (e) {
      this.controlPlanes.delete(spec.name);
      await instance.stop();
      throw e;
    }
    return instance;
  }

  controlPlane(name: string): LocalControlPlane | undefined {
    return this.controlPlanes.get(name)?.instance;
  }

  /** Whether this provider runs machines. */
  get runsMachines(): boolean {
    return this.options.machines !== undefined;
  }

  /** Brings the shoot's machines to its worker pools' minimum (needs its control plane running). */
  async deployWorkers(spec: WorkersSpec): Promise<void> {
    const machines = this.options.machines;
    if (machines === undefined) return;
    const controlPlane = this.controlPlane(spec.name);
    if (controlPlane === undefined) throw new Error(`the control plane of ${spec.name} is not running`);
    let workers = this.workers.get(spec.name);
    if (workers === undefined) {
      workers = new LocalWorkers(controlPlane, join(this.dir(spec.name), 'machines'), machines);
      this.workers.set(spec.name, workers);
    }
    await workers.deploy(spec);
  }

  /** What the shoot's machines still lack, or undefined when its Nodes are Ready (and CoreDNS runs). */
  async workersNotReady(name: string): Promise<string | undefined> {
    const workers = this.workers.get(name);
    return workers === undefined ? 'no machines yet' : workers.notReady();
  }

  /** The shoot's Nodes and system components, or undefined when it has no machines. */
  async workersHealth(name: string): Promise<WorkersHealth | undefined> {
    const workers = this.workers.get(name);
    if (workers === undefined) return undefined;
    try {
      return await workers.health();
    } catch (e) {
      const failed = { ok: false, reason: 'HealthCheckFailed', message: (e as Error).message };
      return { nodes: failed, system: failed };
    }
  }

  /** A pod-to-pod check across the shoot's machines over `family`. */
  async podCheck(name: string, family: IPFamily, timeoutMs?: number): Promise<PodCheckResult> {
    const workers = this.workers.get(name);
    if (workers === undefined) throw new Error(`${name} has no machines`);
    return workers.podCheck(family, timeoutMs);
  }

  /** An admin client of the shoot's API server (the caller closes it), while it has machines. */
  async shootClient(name: string): Promise<ResourceClient | undefined> {
    return this.workers.get(name)?.shootClient();
  }

  machines(name: string): Machine[] {
    return this.workers.get(name)?.machineList() ?? [];
  }

  async destroyWorkers(name: string, opts: { deadline?: number } = {}): Promise<void> {
    const workers = this.workers.get(name);
    this.workers.delete(name);
    await workers?.destroy(opts);
  }

  /** Stops the control plane's processes, deletes its namespace and its data. */
  async destroyControlPlane(name: string): Promise<void> {
    await this.destroyWorkers(name);
    const existing = this.controlPlanes.get(name);
    this.controlPlanes.delete(name);
    await existing?.instance.stop();
    await rm(this.dir(name), { recursive: true, force: true });
  }

  /** Probes the API server's /readyz and looks at the processes and the controllers' leader Leases. */
  async health(name: string): Promise<ControlPlaneHealth | undefined> {
    const instance = this.controlPlane(name);
    if (instance === undefined) return undefined;
    const states = instance.states();
    const state = (n: string) => states.find((s) => s.name === n);
    const apiServer = await probeAPIServer(instance, state('kube-apiserver'));
    const down = states.filter((s) => !s.running);
    if (down.length > 0) {
      return {
        apiServer,
        controlPlane: {
          ok: false,
          reason: 'ProcessDown',
          message: down.map(describeDown).join('; '),
        },
      };
    }
    if (!apiServer.ok) {
      return {
        apiServer,
        controlPlane: { ok: false, reason: 'APIServerUnavailable', message: 'the API server is not available' },
      };
    }
    const stale: string[] = [];
    for (const lease of ['kube-controller-manager', 'kube-scheduler']) {
      const problem = await leaseProblem(instance, lease);
      if (problem !== undefined) stale.push(problem);
    }
    if (stale.length > 0) {
      return { apiServer, controlPlane: { ok: false, reason: 'LeaderLeaseStale', message: stale.join('; ') } };
    }
    const restarts = states.filter((s) => s.restarts > 0);
    return {
      apiServer,
      controlPlane: {
        ok: true,
        reason: 'ControlPlaneRunning',
        message:
          'etcd, kube-apiserver, kube-controller-manager and kube-scheduler are running' +
          (restarts.length > 0 ? ` (restarts: ${restarts.map((s) => `${s.name} ${s.restarts}`).join(', ')})` : '.'),
      },
    };
  }

  /**
   * Stops every control plane (their data stays) and ends the exit handler. With a `deadline` (ms since epoch),
   * what still runs then is killed.
   */
  async stop(opts: { deadline?: number } = {}): Promise<void> {
    await Promise.all([...this.workers.keys()].map((name) => this.destroyWorkers(name, opts)));
    const all = [...this.controlPlanes.values()];
    this.controlPlanes.clear();
    await Promise.all(all.map(({ instance }) => instance.stop(opts)));
    this.unregister();
  }
}

function describeDown(state: SupervisedState): string {
  return `${state.name} is not running (${state.lastExit ?? 'not started yet'}; restarts: ${state.restarts})`;
}

async function probeAPIServer(
  instance: LocalControlPlane,
  state: SupervisedState | undefined,
): Promise<ControlPlaneHealth['apiServer']> {
  if (state !== undefined && !state.running) {
    return {
      ok: false,
      reason: 'APIServerDown',
      message: `kube-apiserver is not running (${state.lastExit ?? 'not started'}); restarting with backoff (restarts: ${state.restarts})`,
    };
  }
  try {
    const probe = await instance.get('/readyz?verbose');
    if (probe.status === 200) {
      return { ok: true, reason: 'HealthzRequestSucceeded', message: `API server at ${instance.url} is ready.` };
    }
    const failed = probe.body
      .split('\n')
      .filter((l) => l.includes('failed'))
      .join('; ');
    return {
      ok: false,
      reason: 'HealthzRequestFailed',
      message: `API server at ${instance.url} answered /readyz with HTTP ${probe.status}${failed ? `: ${failed}` : ''}`,
    };
  } catch (e) {
    return {
      ok: false,
      reason: 'HealthzRequestFailed',
      message: `API server at ${instance.url} did not answer /readyz: ${(e as Error).message}`,
    };
  }
}

/** Why a controller's leader Lease shows it is not working, or undefined when it was renewed recently. */
async function leaseProblem(instance: LocalControlPlane, name: string): Promise<string | undefined> {
  try {
    const res = await instance.get(`/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/${name}`);
    if (res.status === 404) return `${name} holds no leader Lease yet`;
    if (res.status !== 200) return `reading the ${name} Lease: HTTP ${res.status}`;
    const renew = (JSON.parse(res.body) as { spec?: { renewTime?: string } }).spec?.renewTime;
    const age = renew === undefined ? Infinity : Date.now() - Date.parse(renew);
    return age > LEASE_STALE_MS ? `${name} last renewed its leader Lease ${Math.round(age / 1000)} s ago` : undefined;
  } catch (e) {
    return `reading the ${name} Lease: ${(e as Error).message}`;
  }
}
