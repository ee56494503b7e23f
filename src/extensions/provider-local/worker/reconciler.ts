/**
 * provider-local's Worker controller on a real seed: a Worker of type `local` becomes one StatefulSet of machine
 * pods per pool (machine-pods.ts), their node addresses from the shoot's node ranges as the namespace's Cluster
 * holds them (node-addresses.ts), and reports, as Gardener's worker actuators do, `status.machineDeployments` and a
 * last operation that succeeds once every pool has its machines ready (a machine pod is ready when its Node is).
 * StatefulSets of pools that are gone are deleted; a hibernated shoot (its Cluster says so) has no machines. A
 * pool's user data checksum on the Worker is copied onto its machine pods: the pod update makes the seed's kubelet
 * refresh the mounted user data at once, so a changed kernel setting reaches the machines in seconds, not at the
 * kubelet's next periodic sync (a minute by default). Deletion deletes them all and waits until their pods are gone
 * before the finalizer goes: the machines stop before the shoot's control plane does.
 *
 * A machine that is not ready has its cause in the last operation, `machine <name>: <cause>` from its pod's status
 * (machine-problems.ts), as Gardener's worker actuators copy machine-controller-manager's machine descriptions; a
 * machine that can't come up by waiting (a crashing agent, a pod the seed can't schedule or start) makes it an
 * Error with `lastError`, which the gardenlet reports on the Shoot. The controller keeps looking: a machine that
 * recovers turns it back to Processing and Succeeded.
 */
import type { KubernetesObject, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { clusterHibernationEnabled, clusterShoot, type Cluster } from '../../../apis/extensions/v1alpha1/cluster.js';
import type { Worker } from '../../../apis/extensions/v1alpha1/worker.js';
import {
  MACHINE_POD_USER_DATA_ANNOTATION,
  workerUserDataAnnotation,
} from '../../../apis/provider-local/v1alpha1/machine-user-data.js';
import { isIPFamily } from '../../../apis/validation/ip-families.js';
import { nodeCIDRsOf, nodeNetwork, poolMachineOffsets } from './node-addresses.js';
import { kubeletHostProblems, procHostKernel, type HostKernel } from '../machine/kubelet-host.js';
import { Refs } from '../../../apis/refs.js';
import { type ResourceClient } from '../../../runtime/client.js';
import { isNotFound } from '../../../runtime/errors.js';
import { realClock, type Clock } from '../../../runtime/clock.js';
import {
  TerminalError,
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
} from '../../../runtime/controller.js';
import { addFinalizer, hasFinalizer, removeFinalizer } from '../../../runtime/finalizers.js';
import { patchStatusIfChanged } from '../../../runtime/status.js';
import {
  MACHINE_LABELS,
  MACHINE_POLICY_NAMES,
  MACHINES_STARTING_AT_ONCE,
  boundedReplicas,
  WORKER_TYPE,
  machinePodNetworkPolicies,
  desiredMachineStatefulSet,
  machineStatefulSetName,
  namedPools,
  userDataOf,
} from './machine-pods.js';
import { describeMachineProblems, machinePodProblem, type MachineProblem } from './machine-problems.js';

export const WORKER_FINALIZER = 'extensions.gardener.cloud/provider-local';
export const WORKER_FIELD_MANAGER = 'provider-local-worker';
/** How often a Worker whose machines are not ready (or are going away) is looked at again, besides watch events. */
export const WORKER_POLL_MS = 5_000;
const ERR_CONFIGURATION_PROBLEM = 'ERR_CONFIGURATION_PROBLEM';

export function isLocalWorker(worker: object): boolean {
  return (worker as { spec?: { type?: unknown } }).spec?.type === WORKER_TYPE;
}

type Outcome =
  | { state: 'Succeeded'; description: string }
  | { state: 'Processing'; description: string; progress: number }
  | { state: 'Error'; description: string; codes?: string[] };

export interface WorkerReconcilerOptions {
  readonly client: ResourceClient;
  readonly clock?: Clock;
  /** The machine image, when not the image vector's. */
  readonly image?: string;
  /** How many machines of a pool start at once. @default MACHINES_STARTING_AT_ONCE */
  readonly machinesStartingAtOnce?: number;
  /** The kernel the machines share, as their kubelets check it. @default this host's /proc */
  readonly hostKernel?: HostKernel;
  /** The pool's StatefulSet, from a cache. */
  readonly statefulSet?: (name: string, namespace: string) => V1StatefulSet | undefined;
}

export class WorkerReconciler implements Reconciler {
  private readonly client: ResourceClient;
  private readonly clock: Clock;

  constructor(private readonly opts: WorkerReconcilerOptions) {
    this.client = opts.client;
    this.clock = opts.clock ?? realClock;
  }

  async reconcile(req: Request, ctx: ReconcileContext): Promise<Result | void> {
    const worker = await this.client.get<Worker & KubernetesObject>(Refs.worker, req.name, req.namespace, {
      signal: ctx.signal,
    });
    if (!worker || !isLocalWorker(worker)) return;
    if (worker.metadata.deletionTimestamp) return this.delete(worker, ctx);
    await addFinalizer(this.client, Refs.worker, worker, WORKER_FINALIZER, { signal: ctx.signal });

    const namespace = worker.metadata.namespace ?? '';
    const pools = namedPools(worker);
    const problems = pools.map(userDataOf).filter((p): p is string => typeof p === 'string');
    // The machines share this host's kernel: kubelet settings that need what it lacks are an error of the Worker
    // (and so of the Shoot), never a kubelet that silently fails to start.
    const host = this.opts.hostKernel ?? procHostKernel;
    (worker.spec.pools ?? []).forEach((pool, i) => {
      const field = `spec.pools[${i}].kubeletConfig`;
      for (const problem of kubeletHostProblems(pool.kubeletConfig, host, field)) {
        problems.push(`pool ${pool.name ?? '?'}: ${problem}`);
      }
    });
    if (problems.length > 0) {
      await this.writeStatus(
        worker,
        { state: 'Error', description: problems.join('; '), codes: [ERR_CONFIGURATION_PROBLEM] },
        ctx,
      );
      throw new TerminalError(problems.join('; '));
    }
    // The machines' node addresses come from the shoot's node ranges, which the namespace's Cluster carries.
    const cluster = await this.client.get<Cluster & KubernetesObject>(Refs.cluster, namespace, undefined, {
      signal: ctx.signal,
    });
    const shoot = cluster ? clusterShoot(cluster) : undefined;
    if (shoot === undefined) {
      await this.writeStatus(
        worker,
        { state: 'Processing', progress: 10, description: `waiting for the Cluster ${namespace}` },
        ctx,
      );
      return { requeueAfter: WORKER_POLL_MS };
    }
    // As Gardener's worker actuators: a hibernated shoot's pools have no machines, whatever their minimum.
    const hibernated = clusterHibernationEnabled(cluster!);
    const wanted = (pool: { minimum?: number }) => (hibernated ? 0 : Math.max(0, pool.minimum ?? 0));
    const families = (shoot.spec?.networking?.ipFamilies ?? ['IPv4']).filter(isIPFamily);
    const nodeCIDRs = nodeCIDRsOf(families, shoot.spec?.networking?.nodes);
    let offsets: Map<string, number>;
    try {
      offsets = poolMachineOffsets(pools, nodeNetwork(families, nodeCIDRs), families);
    } catch (e) {
      const description = `the shoot's node ranges: ${(e as Error).message}`;
      await this.writeStatus(worker, { state: 'Error', description, codes: [ERR_CONFIGURATION_PROBLEM] }, ctx);
      throw new TerminalError(description);
    }
    const opts = { fieldManager: WORKER_FIELD_MANAGER, force: true, signal: ctx.signal };
    // Before the machines: under the namespace's deny-all they would not reach each other or their API server.
    for (const policy of machinePodNetworkPolicies(namespace)) {
      await this.client.apply(Refs.networkPolicy, policy as KubernetesObject, opts);
    }
    const atOnce = this.opts.machinesStartingAtOnce ?? MACHINES_STARTING_AT_ONCE;
    const starting: string[] = [];
    for (const pool of pools) {
      const userData = userDataOf(pool) as { name: string; key: string };
      const want = wanted(pool);
      // From the API server, not the cache: a stale count would scale machines that are starting away.
      const current = await this.client.get<V1StatefulSet & KubernetesObject>(
        Refs.statefulSet,
        machineStatefulSetName(pool.name),
        namespace,
        { signal: ctx.signal },
      );
      const replicas = boundedReplicas(
        want,
        { replicas: current?.spec?.replicas ?? 0, ready: current?.status?.readyReplicas ?? 0 },
        atOnce,
      );
      if (replicas < want) starting.push(pool.name);
      const statefulSet = desiredMachineStatefulSet({
        namespace,
        pool,
        userData,
        nodeCIDRs,
        firstMachine: offsets.get(pool.name) ?? 0,
        replicas,
        ...(this.opts.image ? { image: this.opts.image } : {}),
      });
      await this.client.apply(Refs.statefulSet, statefulSet as KubernetesObject, opts);
    }
    await this.deleteSurplus(worker, new Set(pools.map((p) => machineStatefulSetName(p.name))), ctx);
    const machinePods = await this.client.list<V1Pod & KubernetesObject>(Refs.pod, {
      namespace,
      labelSelector: `${MACHINE_LABELS.app}=${MACHINE_LABELS.role}`,
      signal: ctx.signal,
    });
    await this.announceUserData(worker, machinePods.items, ctx);

    const waiting: string[] = [];
    const machineProblems: MachineProblem[] = [];
    for (const pool of pools) {
      const name = machineStatefulSetName(pool.name);
      const current = await this.statefulSet(name, namespace, ctx);
      const want = wanted(pool);
      const ready = current?.status?.readyReplicas ?? 0;
      const updated = (current?.status?.observedGeneration ?? 0) >= (current?.metadata?.generation ?? 1);
      if (!updated || ready !== want || (current?.status?.replicas ?? 0) !== want) {
        waiting.push(`pool ${pool.name}: ${ready}/${want} machines ready`);
        for (const pod of machinePods.items) {
          if (pod.metadata?.labels?.[MACHINE_LABELS.pool] !== pool.name) continue;
          const problem = machinePodProblem(pod);
          if (problem !== undefined) machineProblems.push(problem);
        }
      }
    }
    if (waiting.length > 0) {
      const bounded = starting.length > 0 ? ` (machines start at most ${atOnce} at a time per pool)` : '';
      const causes = machineProblems.length > 0 ? `; ${describeMachineProblems(machineProblems)}` : '';
      const description = `${waiting.join(', ')}${bounded}${causes}`;
      const codes = [...new Set(machineProblems.flatMap((p) => (p.failing && p.code ? [p.code] : [])))];
      await this.writeStatus(
        worker,
        machineProblems.some((p) => p.failing)
          ? { state: 'Error', description, ...(codes.length > 0 ? { codes } : {}) }
          : { state: 'Processing', progress: 50, description },
        ctx,
      );
      return { requeueAfter: WORKER_POLL_MS };
    }
    const total = pools.reduce((n, p) => n + wanted(p), 0);
    await this.writeStatus(
      worker,
      { state: 'Succeeded', description: `${total} machines of ${pools.length} pools are ready` },
      ctx,
    );
  }

  /** Writes each pool's user data checksum (the Worker's annotation) onto its machine pods that lack it. */
  private async announceUserData(
    worker: Worker,
    pods: readonly KubernetesObject[],
    ctx: ReconcileContext,
  ): Promise<void> {
    const annotations = worker.metadata.annotations ?? {};
    for (const pod of pods) {
      const pool = pod.metadata?.labels?.[MACHINE_LABELS.pool];
      const want = pool === undefined ? undefined : annotations[workerUserDataAnnotation(pool)];
      if (want === undefined || pod.metadata?.annotations?.[MACHINE_POD_USER_DATA_ANNOTATION] === want) continue;
      try {
        await this.client.mergePatch(
          Refs.pod,
          pod.metadata?.name ?? '',
          worker.metadata.namespace ?? '',
          { metadata: { annotations: { [MACHINE_POD_USER_DATA_ANNOTATION]: want } } },
          { signal: ctx.signal },
        );
      } catch (e) {
        // A pod deleted meanwhile is replaced by one that mounts the current user data.
        if (!isNotFound(e)) throw e;
      }
    }
  }

  private statefulSet(name: string, namespace: string, ctx: ReconcileContext): Promise<V1StatefulSet | undefined> {
    const cached = this.opts.statefulSet?.(name, namespace);
    if (cached) return Promise.resolve(cached);
    return this.client.get<V1StatefulSet & KubernetesObject>(Refs.statefulSet, name, namespace, { signal: ctx.signal });
  }

  /** Deletes the StatefulSets of machines whose pool is no longer wanted (all of them with an empty set). */
  private async deleteSurplus(worker: Worker, keep: ReadonlySet<string>, ctx: ReconcileContext): Promise<string[]> {
    const namespace = worker.metadata.namespace ?? '';
    const existing = await this.client.list<V1StatefulSet & KubernetesObject>(Refs.statefulSet, {
      namespace,
      labelSelector: `${MACHINE_LABELS.app}=${MACHINE_LABELS.role}`,
      signal: ctx.signal,
    });
    const surplus = existing.items.map((s) => s.metadata?.name ?? '').filter((name) => !keep.has(name));
    await Promise.all(
      surplus.map((name) => this.client.delete(Refs.statefulSet, name, namespace, { signal: ctx.signal })),
    );
    return existing.items.map((s) => s.metadata?.name ?? '');
  }

  private async delete(worker: Worker, ctx: ReconcileContext): Promise<Result | void> {
    if (!hasFinalizer(worker, WORKER_FINALIZER)) return;
    const namespace = worker.metadata.namespace ?? '';
    const remaining = await this.deleteSurplus(worker, new Set(), ctx);
    const pods = await this.client.list<KubernetesObject>(Refs.pod, {
      namespace,
      labelSelector: `${MACHINE_LABELS.app}=${MACHINE_LABELS.role}`,
      signal: ctx.signal,
    });
    if (remaining.length > 0 || pods.items.length > 0) {
      await this.writeStatus(
        worker,
        { state: 'Processing', progress: 50, description: `waiting for ${pods.items.length} machine pods to stop` },
        ctx,
      );
      return { requeueAfter: WORKER_POLL_MS };
    }
    await Promise.all(
      Object.values(MACHINE_POLICY_NAMES).map((name) =>
        this.client.delete(Refs.networkPolicy, name, namespace, { signal: ctx.signal }),
      ),
    );
    await removeFinalizer(this.client, Refs.worker, worker, WORKER_FINALIZER, { signal: ctx.signal });
  }

  private async writeStatus(worker: Worker, outcome: Outcome, ctx: ReconcileContext): Promise<void> {
    const now = new Date(this.clock.now()).toISOString().replace(/\.\d+Z$/, 'Z');
    const last = worker.status?.lastOperation;
    const type = worker.metadata.deletionTimestamp
      ? 'Delete'
      : !last || (last.type === 'Create' && last.state !== 'Succeeded')
        ? 'Create'
        : 'Reconcile';
    const progress = outcome.state === 'Succeeded' ? 100 : outcome.state === 'Processing' ? outcome.progress : 50;
    const status: Record<string, unknown> = {
      lastOperation: { type, state: outcome.state, progress, description: outcome.description, lastUpdateTime: now },
      observedGeneration: worker.metadata.generation,
      machineDeployments: namedPools(worker).map((p) => ({
        name: machineStatefulSetName(p.name),
        minimum: p.minimum ?? 0,
        maximum: p.maximum ?? p.minimum ?? 0,
      })),
      lastError:
        outcome.state === 'Error'
          ? {
              description: outcome.description,
              ...(outcome.codes ? { codes: outcome.codes } : {}),
              lastUpdateTime: now,
            }
          : null,
    };
    try {
      await patchStatusIfChanged(this.client, Refs.worker, worker, status, { signal: ctx.signal });
    } catch (e) {
      if (outcome.state !== 'Error') throw e;
      ctx.logger.warn({ err: e }, 'cannot write the error to the Worker status');
    }
  }
}
