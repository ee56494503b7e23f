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
 *
 * A machine that goes (a pool scaled down, a pool removed, hibernation, deletion) is drained first (drain.ts), as
 * machine-controller-manager does, through the shoot's API server (shoot-access.ts): a StatefulSet's replicas are
 * lowered (or it is deleted) only past machines whose Node is drained or whose drain timed out, and the Node of a
 * machine that is gone is deleted. Without a running API server or its `gardener` Secret there is nothing to drain.
 * Nothing waits in a reconcile: it looks again after WORKER_POLL_MS.
 *
 * Kept as one file (over 400 lines): the one reconciler of the Worker, whose steps (pools, drain, status) share a
 * reconcile's state; what they use stands alone in the files named above.
 */
import type { KubernetesObject, V1Pod, V1ResourceRequirements, V1StatefulSet } from '@kubernetes/client-node';
import { clusterHibernationEnabled, clusterShoot, type Cluster } from '../../../apis/extensions/v1alpha1/cluster.js';
import { shootNetworkingStatus } from '../../../apis/core/v1beta1/networks.js';
import type { Seed } from '../../../apis/core/v1beta1/seed.js';
import type { Shoot } from '../../../apis/core/v1beta1/shoot.js';
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
import {
  DEFAULT_DRAIN_TIMEOUT_MS,
  MachineDrainer,
  drainDescription,
  drainTimeoutMs,
  nodesOfGoneMachines,
  ordinalsToDrain,
  replicasAfterDrain,
  type DrainState,
  type MachineToDrain,
} from './drain.js';
import { openShootClient } from './shoot-access.js';
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
import {
  describeMachineProblems,
  joinProblemFromLog,
  machinePodProblem,
  mayHaveJoinProblem,
  type MachineProblem,
} from './machine-problems.js';
import { JOIN_PROBLEM_REPEAT_MS } from '../machine/join-problem.js';
import {
  clusterMachineType,
  invalidOvercommit,
  machineResources,
  type MachineOvercommit,
} from './machine-resources.js';
import { extensionStatusPatch, type ExtensionOutcome } from '../../common/status.js';

export const WORKER_FINALIZER = 'extensions.gardener.cloud/provider-local';
export const WORKER_FIELD_MANAGER = 'provider-local-worker';
/** How often a Worker whose machines are not ready (or are going away) is looked at again, besides watch events. */
export const WORKER_POLL_MS = 5_000;
const ERR_CONFIGURATION_PROBLEM = 'ERR_CONFIGURATION_PROBLEM';

export function isLocalWorker(worker: object): boolean {
  return (worker as { spec?: { type?: unknown } }).spec?.type === WORKER_TYPE;
}

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
  /**
   * How long a machine that goes is drained at most, unless its pool's `machineControllerManager.machineDrainTimeout`
   * says. @default DEFAULT_DRAIN_TIMEOUT_MS
   */
  readonly drainTimeoutMs?: number;
  /** Machine pods in user namespaces of their own (machine-pods.ts). @default true */
  readonly machineUserNamespaces?: boolean;
  /** What the seed reserves for a machine: its type's figures divided by these. @default DEFAULT_MACHINE_OVERCOMMIT */
  readonly machineOvercommit?: MachineOvercommit;
  /**
   * The recent end of a machine pod's log (where its agent says why its kubelet has not joined); undefined when it
   * can't be read. @default the seed's `pods/<name>/log` of the last JOIN_PROBLEM_REPEAT_MS and a half
   */
  readonly podLog?: (namespace: string, name: string, signal: AbortSignal) => Promise<string | undefined>;
}

/** Machine StatefulSets that go, with their machines. */
interface Surplus {
  readonly sets: string[];
  readonly machines: (MachineToDrain & { readonly set: string })[];
}

/** A machine of a pool: its pod's name, which is its Node's. */
function machineName(pool: string, ordinal: number): string {
  return `${machineStatefulSetName(pool)}-${ordinal}`;
}

/** How long a machine pod's join problem read from its log is reused (its agent says it once a minute). */
export const JOIN_PROBLEM_CACHE_MS = 30_000;

export class WorkerReconciler implements Reconciler {
  private readonly client: ResourceClient;
  private readonly clock: Clock;
  /** Per machine pod (uid), its join problem as last read and when: not a log read per pod every WORKER_POLL_MS. */
  private readonly joinProblems = new Map<string, { at: number; problem: MachineProblem | undefined }>();

  constructor(private readonly opts: WorkerReconcilerOptions) {
    const invalid = opts.machineOvercommit && invalidOvercommit(opts.machineOvercommit);
    if (invalid) throw new Error(`machineOvercommit: ${invalid}`);
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
    const podCIDRs = shootPodCIDRs(cluster!);
    // Each pool's machines sized by its machine type in the shoot's CloudProfile, as a VM is (machine-resources.ts).
    const resources = new Map<string, V1ResourceRequirements>();
    const typeProblems: string[] = [];
    pools.forEach((pool) => {
      const type = clusterMachineType(cluster!.spec.cloudProfile, pool.machineType);
      const sized = type
        ? machineResources(type, this.opts.machineOvercommit)
        : `machine type ${pool.machineType ?? '?'} is not in the shoot's CloudProfile ${cloudProfileName(cluster!)}`;
      if (typeof sized === 'string') typeProblems.push(`pool ${pool.name}: ${sized}`);
      else resources.set(pool.name, sized);
    });
    if (typeProblems.length > 0) {
      const description = typeProblems.join('; ');
      await this.writeStatus(worker, { state: 'Error', description, codes: [ERR_CONFIGURATION_PROBLEM] }, ctx);
      throw new TerminalError(description);
    }
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
    const shootClient = await openShootClient(this.client, namespace, ctx.signal);
    try {
      const drainer = shootClient && new MachineDrainer(shootClient, ctx.logger, () => this.clock.now());
      // From the API server, not the cache: a stale count would scale machines that are starting away.
      const currents = new Map<string, { replicas: number; ready: number }>();
      for (const pool of pools) {
        const current = await this.client.get<V1StatefulSet & KubernetesObject>(
          Refs.statefulSet,
          machineStatefulSetName(pool.name),
          namespace,
          { signal: ctx.signal },
        );
        currents.set(pool.name, { replicas: current?.spec?.replicas ?? 0, ready: current?.status?.readyReplicas ?? 0 });
      }
      // Every machine that goes, of a pool scaled down or of one removed, drained in one step.
      const going = pools.flatMap((pool) =>
        ordinalsToDrain(currents.get(pool.name)?.replicas ?? 0, wanted(pool)).map((i) => ({
          name: machineName(pool.name, i),
          timeoutMs: this.drainTimeout(pool),
          // As Gardener marks every machine for forceful deletion when the shoot hibernates.
          force: hibernated,
        })),
      );
      const surplus = await this.surplusMachines(
        worker,
        new Set(pools.map((p) => machineStatefulSetName(p.name))),
        hibernated,
        ctx,
      );
      const drains = await this.drain(drainer, [...going, ...surplus.machines], ctx);
      const drained = new Map(drains.map((d) => [d.machine, d.done]));

      const starting: string[] = [];
      for (const pool of pools) {
        const userData = userDataOf(pool) as { name: string; key: string };
        const want = wanted(pool);
        const current = currents.get(pool.name) ?? { replicas: 0, ready: 0 };
        const replicas =
          want < current.replicas
            ? replicasAfterDrain(current.replicas, want, (i) => drained.get(machineName(pool.name, i)) ?? true)
            : boundedReplicas(want, current, atOnce);
        if (replicas < want) starting.push(pool.name);
        const statefulSet = desiredMachineStatefulSet({
          namespace,
          pool,
          userData,
          nodeCIDRs,
          firstMachine: offsets.get(pool.name) ?? 0,
          replicas,
          ...(this.opts.image ? { image: this.opts.image } : {}),
          ...(this.opts.machineUserNamespaces === false ? { userNamespace: false } : {}),
          podCIDRs,
          resources: resources.get(pool.name)!,
        });
        await this.client.apply(Refs.statefulSet, statefulSet as KubernetesObject, opts);
      }
      await this.deleteDrained(namespace, surplus, drained, ctx);
      const machinePods = await this.client.list<V1Pod & KubernetesObject>(Refs.pod, {
        namespace,
        labelSelector: `${MACHINE_LABELS.app}=${MACHINE_LABELS.role}`,
        signal: ctx.signal,
      });
      await this.announceUserData(worker, machinePods.items, ctx);
      let stopping: string[] = [];
      if (drainer) {
        const keep = new Set(pools.flatMap((p) => Array.from({ length: wanted(p) }, (_, i) => machineName(p.name, i))));
        stopping = await this.tidyNodes(drainer, namespace, keep, ctx);
      }

      const draining = drainDescription(drains);
      if (draining !== '') {
        await this.writeStatus(worker, { state: 'Processing', progress: 40, description: draining }, ctx);
        return { requeueAfter: WORKER_POLL_MS };
      }
      // Not done while a machine that goes has a Node: it goes once its pod is gone (a hibernation included).
      if (stopping.length > 0) {
        const description = `waiting for machines to stop before their Nodes go: ${stopping.join(', ')}`;
        await this.writeStatus(worker, { state: 'Processing', progress: 45, description }, ctx);
        return { requeueAfter: WORKER_POLL_MS };
      }
      return await this.waitForMachines(worker, pools, wanted, starting, atOnce, machinePods.items, ctx);
    } finally {
      shootClient?.close();
    }
  }

  private async waitForMachines(
    worker: Worker,
    pools: ReturnType<typeof namedPools>,
    wanted: (pool: { minimum?: number }) => number,
    starting: readonly string[],
    atOnce: number,
    machinePods: readonly (V1Pod & KubernetesObject)[],
    ctx: ReconcileContext,
  ): Promise<Result | void> {
    const namespace = worker.metadata.namespace ?? '';
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
        for (const pod of machinePods) {
          if (pod.metadata?.labels?.[MACHINE_LABELS.pool] !== pool.name) continue;
          const problem = machinePodProblem(pod) ?? (await this.joinProblem(pod, ctx));
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

  /** What the agent of a machine pod on its way said last of why its kubelet has not joined (join-problem.ts). */
  private async joinProblem(pod: V1Pod, ctx: ReconcileContext): Promise<MachineProblem | undefined> {
    const now = this.clock.now();
    for (const [uid, read] of this.joinProblems)
      if (now - read.at >= JOIN_PROBLEM_CACHE_MS) this.joinProblems.delete(uid);
    if (!mayHaveJoinProblem(pod, now)) return undefined;
    const uid = pod.metadata?.uid ?? '';
    const cached = this.joinProblems.get(uid);
    if (cached !== undefined) return cached.problem;
    const problem = await this.readJoinProblem(pod, ctx);
    this.joinProblems.set(uid, { at: now, problem });
    return problem;
  }

  private async readJoinProblem(pod: V1Pod, ctx: ReconcileContext): Promise<MachineProblem | undefined> {
    const name = pod.metadata?.name ?? '';
    const namespace = pod.metadata?.namespace ?? '';
    const read =
      this.opts.podLog ??
      ((ns: string, pod: string, signal: AbortSignal) =>
        this.client.getText(
          Refs.pod,
          pod,
          ns,
          'log',
          { sinceSeconds: Math.ceil((JOIN_PROBLEM_REPEAT_MS * 1.5) / 1000) },
          { signal },
        ));
    try {
      const log = await read(namespace, name, ctx.signal);
      return log === undefined ? undefined : joinProblemFromLog(name, log);
    } catch (e) {
      // Only to say more: a log that can't be read leaves the machine without a cause, as before.
      ctx.logger.debug({ err: e, pod: name }, 'cannot read the log of a machine pod');
      return undefined;
    }
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

  private drainTimeout(pool: Parameters<typeof drainTimeoutMs>[0]): number {
    return drainTimeoutMs(pool, this.opts.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS);
  }

  /** One drain step for `machines`; without the shoot there is nothing to drain and every one may go. */
  private async drain(
    drainer: MachineDrainer | undefined,
    machines: readonly MachineToDrain[],
    ctx: ReconcileContext,
  ): Promise<DrainState[]> {
    if (machines.length === 0) return [];
    if (!drainer) return machines.map((m) => ({ machine: m.name, done: true, podsLeft: 0 }));
    return drainer.drain(machines, ctx.signal);
  }

  /** The machine StatefulSets not in `keep` (all of them with an empty set), and their machines, which all go. */
  private async surplusMachines(
    worker: Worker,
    keep: ReadonlySet<string>,
    force: boolean,
    ctx: ReconcileContext,
  ): Promise<Surplus> {
    const existing = await this.client.list<V1StatefulSet & KubernetesObject>(Refs.statefulSet, {
      namespace: worker.metadata.namespace ?? '',
      labelSelector: `${MACHINE_LABELS.app}=${MACHINE_LABELS.role}`,
      signal: ctx.signal,
    });
    const surplus = existing.items.filter((s) => !keep.has(s.metadata?.name ?? ''));
    // A pool still in the spec (the Worker is being deleted) keeps its drain timeout.
    const poolOf = (set: string) => namedPools(worker).find((p) => machineStatefulSetName(p.name) === set);
    const machines = surplus.flatMap((s) => {
      const set = s.metadata?.name ?? '';
      return ordinalsToDrain(s.spec?.replicas ?? 0, 0).map((i) => ({
        set,
        name: `${set}-${i}`,
        timeoutMs: this.drainTimeout(poolOf(set)),
        force,
      }));
    });
    return { sets: surplus.map((s) => s.metadata?.name ?? ''), machines };
  }

  /** Deletes the surplus StatefulSets whose machines are all drained; returns those left. */
  private async deleteDrained(
    namespace: string,
    surplus: Surplus,
    drained: ReadonlyMap<string, boolean>,
    ctx: ReconcileContext,
  ): Promise<string[]> {
    const undrained = new Set(surplus.machines.filter((m) => drained.get(m.name) === false).map((m) => m.set));
    const ready = surplus.sets.filter((s) => !undrained.has(s));
    await Promise.all(
      ready.map((name) => this.client.delete(Refs.statefulSet, name, namespace, { signal: ctx.signal })),
    );
    return surplus.sets.filter((s) => undrained.has(s));
  }

  /**
   * The shoot's machine Nodes: those of machines that are gone deleted (machine-controller-manager deletes the Node
   * of a machine it deleted; a kubelet never does, and the gardenlet leaves it to the provider), those of wanted
   * machines that a drain had cordoned released. Returns the machines that go whose Nodes wait for their pods to go.
   */
  private async tidyNodes(
    drainer: MachineDrainer,
    namespace: string,
    keep: ReadonlySet<string>,
    ctx: ReconcileContext,
  ): Promise<string[]> {
    const [nodes, pods] = await Promise.all([
      drainer.nodes(ctx.signal),
      this.client.list<KubernetesObject>(Refs.pod, {
        namespace,
        labelSelector: `${MACHINE_LABELS.app}=${MACHINE_LABELS.role}`,
        signal: ctx.signal,
      }),
    ]);
    for (const node of nodes) if (keep.has(node.metadata?.name ?? '')) await drainer.release(node, ctx.signal);
    const machinePods = new Set(pods.items.map((p) => p.metadata?.name ?? ''));
    const names = nodes.map((n) => n.metadata?.name ?? '');
    for (const node of nodesOfGoneMachines(names, keep, machinePods)) await drainer.remove(node, ctx.signal);
    return names.filter((n) => /^machine-/.test(n) && !keep.has(n) && machinePods.has(n));
  }

  private async delete(worker: Worker, ctx: ReconcileContext): Promise<Result | void> {
    if (!hasFinalizer(worker, WORKER_FINALIZER)) return;
    const namespace = worker.metadata.namespace ?? '';
    const shootClient = await openShootClient(this.client, namespace, ctx.signal);
    try {
      const drainer = shootClient && new MachineDrainer(shootClient, ctx.logger, () => this.clock.now());
      // As Gardener marks every machine for forceful deletion when the Worker goes.
      const surplus = await this.surplusMachines(worker, new Set(), true, ctx);
      const drains = await this.drain(drainer, surplus.machines, ctx);
      const left = await this.deleteDrained(namespace, surplus, new Map(drains.map((d) => [d.machine, d.done])), ctx);
      const pods = await this.client.list<KubernetesObject>(Refs.pod, {
        namespace,
        labelSelector: `${MACHINE_LABELS.app}=${MACHINE_LABELS.role}`,
        signal: ctx.signal,
      });
      if (drainer) await this.tidyNodes(drainer, namespace, new Set(), ctx);
      if (left.length > 0 || pods.items.length > 0 || surplus.sets.length > 0) {
        const draining = drainDescription(drains);
        const description = draining !== '' ? draining : `waiting for ${pods.items.length} machine pods to stop`;
        await this.writeStatus(worker, { state: 'Processing', progress: 50, description }, ctx);
        return { requeueAfter: WORKER_POLL_MS };
      }
    } finally {
      shootClient?.close();
    }
    await Promise.all(
      Object.values(MACHINE_POLICY_NAMES).map((name) =>
        this.client.delete(Refs.networkPolicy, name, namespace, { signal: ctx.signal }),
      ),
    );
    await removeFinalizer(this.client, Refs.worker, worker, WORKER_FINALIZER, { signal: ctx.signal });
  }

  private async writeStatus(worker: Worker, outcome: ExtensionOutcome, ctx: ReconcileContext): Promise<void> {
    const status = {
      ...extensionStatusPatch(worker, outcome, this.clock.now()),
      machineDeployments: namedPools(worker).map((p) => ({
        name: machineStatefulSetName(p.name),
        minimum: p.minimum ?? 0,
        maximum: p.maximum ?? p.minimum ?? 0,
      })),
    };
    try {
      await patchStatusIfChanged(this.client, Refs.worker, worker, status, { signal: ctx.signal });
    } catch (e) {
      if (outcome.state !== 'Error') throw e;
      ctx.logger.warn({ err: e }, 'cannot write the error to the Worker status');
    }
  }
}

/** The name of the CloudProfile a Cluster carries, for messages. */
function cloudProfileName(cluster: Cluster): string {
  const name = (cluster.spec.cloudProfile as { metadata?: { name?: unknown } } | undefined)?.metadata?.name;
  return typeof name === 'string' && name !== '' ? name : '(none in the Cluster)';
}

/** The shoot's pod ranges of every family, as the Cluster's shoot and seed give them; none when they can't tell. */
function shootPodCIDRs(cluster: Cluster): string[] {
  const shoot = clusterShoot(cluster) as Shoot | undefined;
  const seed = cluster.spec.seed as Seed | undefined;
  if (shoot?.spec === undefined || seed?.spec === undefined) return [];
  try {
    return shootNetworkingStatus(shoot, seed).pods ?? [];
  } catch {
    return [];
  }
}
