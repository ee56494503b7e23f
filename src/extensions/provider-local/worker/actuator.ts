/**
 * provider-local's Worker actuator on a real seed: a Worker of type `local` becomes one StatefulSet of machine pods
 * per pool (machine-pods.ts), laid out and planned as pool-plan.ts decides: node addresses from the shoot's node
 * ranges as the namespace's Cluster holds them, sizes from its CloudProfile, no machines for a hibernated shoot.
 * StatefulSets of pools that are gone are deleted. A pool's user data checksum on the Worker is copied onto its
 * machine pods (pool-networks.ts), so a changed kernel setting reaches the machines in seconds. Machines of an
 * outdated template are replaced one at a time, drained first, each with a new Node (machine-rollout.ts). It reports
 * `status.machineDeployments` and, once nothing is drained or stopping, how ready the machines are
 * (machine-readiness.ts). Deletion deletes them all and succeeds only once their pods are gone: the machines stop
 * before the shoot's control plane does. The generic part (finalizer, status, retries) is the extension reconciler's
 * (src/extensions/common/reconciler.ts).
 *
 * A machine that goes (a pool scaled down, a pool removed, hibernation, deletion) is drained first (drain.ts), as
 * machine-controller-manager does, through the shoot's API server (shoot-access.ts): a StatefulSet's replicas are
 * lowered (or it is deleted) only past machines whose Node is drained or whose drain timed out, and the Node of a
 * machine that is gone is deleted. Without a running API server or its `gardener` Secret there is nothing to drain.
 * Nothing waits in a reconcile: it looks again after WORKER_POLL_MS.
 */
import type { KubernetesObject, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { clusterShoot, type Cluster } from '../../../apis/extensions/v1alpha1/cluster.js';
import type { Worker } from '../../../apis/extensions/v1alpha1/worker.js';
import { Refs } from '../../../apis/refs.js';
import type { ResourceClient } from '../../../runtime/client.js';
import { realClock, type Clock } from '../../../runtime/clock.js';
import { TerminalError, type ReconcileContext } from '../../../runtime/controller.js';
import type { Actuator, ActuatorError, ActuatorOutcome } from '../../common/reconciler.js';
import { ERR_CONFIGURATION_PROBLEM } from '../../common/status.js';
import { procHostKernel, type HostKernel } from '../machine/kubelet-host.js';
import {
  DEFAULT_DRAIN_TIMEOUT_MS,
  MachineDrainer,
  drainDescription,
  drainTimeoutMs,
  nodesOfGoneMachines,
  ordinalsToDrain,
  type DrainState,
  type MachineToDrain,
} from './drain.js';
import {
  MACHINE_POLICY_NAMES,
  MACHINES_STARTING_AT_ONCE,
  desiredMachineStatefulSet,
  machinePodNetworkPolicies,
  machineStatefulSetName,
  namedPools,
  userDataOf,
} from './machine-pods.js';
import { MACHINE_LABELS } from '../machine-contract.js';
import { MachineReadiness, WORKER_POLL_MS, type MachineReadinessOptions } from './machine-readiness.js';
import { invalidOvercommit, type MachineOvercommit } from './machine-resources.js';
import {
  machineDeployments,
  machineLayout,
  poolMachines,
  poolReplicas,
  poolSpecProblems,
  type MachineLayout,
} from './pool-plan.js';
import { openShootClient } from './shoot-access.js';
import { announceUserData, workerMachineNetworks } from './pool-networks.js';
import {
  currentRevision,
  machinePodState,
  poolRollout,
  replaceMachine,
  rolloutCalls,
  rolloutDescription,
  type PoolRollout,
} from './machine-rollout.js';

export const WORKER_FIELD_MANAGER = 'provider-local-worker';

export interface WorkerActuatorOptions extends Omit<MachineReadinessOptions, 'clock'> {
  readonly client: ResourceClient;
  readonly clock?: Clock;
  /** The machine image, when not the image vector's. */
  readonly image?: string;
  /** How many machines of a pool start at once. @default MACHINES_STARTING_AT_ONCE */
  readonly machinesStartingAtOnce?: number;
  /** The kernel the machines share, as their kubelets check it. @default this host's /proc */
  readonly hostKernel?: HostKernel;
  /**
   * How long a machine that goes is drained at most, unless its pool's `machineControllerManager.machineDrainTimeout`
   * says. @default DEFAULT_DRAIN_TIMEOUT_MS
   */
  readonly drainTimeoutMs?: number;
  /** Machine pods in user namespaces of their own (machine-pods.ts). @default true */
  readonly machineUserNamespaces?: boolean;
  /** What the seed reserves for a machine: its type's figures divided by these. @default DEFAULT_MACHINE_OVERCOMMIT */
  readonly machineOvercommit?: MachineOvercommit;
}

type NamedPool = ReturnType<typeof namedPools>[number];

/** Machine StatefulSets that go, with their machines. */
interface Surplus {
  readonly sets: string[];
  readonly machines: (MachineToDrain & { readonly set: string })[];
}

const MACHINE_SELECTOR = `${MACHINE_LABELS.app}=${MACHINE_LABELS.role}`;

/** A problem only a change of the Worker (or its shoot) fixes: reported, not retried. */
function configurationProblem(description: string): ActuatorError {
  return {
    state: 'Error',
    description,
    codes: [ERR_CONFIGURATION_PROBLEM],
    error: new TerminalError(description),
  };
}

export class WorkerActuator implements Actuator<Worker> {
  private readonly client: ResourceClient;
  private readonly clock: Clock;
  private readonly readiness: MachineReadiness;

  constructor(private readonly opts: WorkerActuatorOptions) {
    const invalid = opts.machineOvercommit && invalidOvercommit(opts.machineOvercommit);
    if (invalid) throw new Error(`machineOvercommit: ${invalid}`);
    this.client = opts.client;
    this.clock = opts.clock ?? realClock;
    this.readiness = new MachineReadiness({ ...opts, clock: this.clock });
  }

  async reconcile(ctx: ReconcileContext, worker: Worker): Promise<ActuatorOutcome> {
    const namespace = worker.metadata.namespace ?? '';
    const problems = poolSpecProblems(worker, this.opts.hostKernel ?? procHostKernel);
    if (problems.length > 0) return configurationProblem(problems.join('; '));
    // The machines' node addresses come from the shoot's node ranges, which the namespace's Cluster carries.
    const cluster = await this.client.get<Cluster & KubernetesObject>(Refs.cluster, namespace, undefined, {
      signal: ctx.signal,
    });
    if (!cluster || clusterShoot(cluster) === undefined) {
      const description = `waiting for the Cluster ${namespace}`;
      return { state: 'Processing', progress: 10, description, requeueAfter: WORKER_POLL_MS };
    }
    const layout = machineLayout(cluster, namedPools(worker), this.opts.machineOvercommit);
    if ('problem' in layout) return configurationProblem(layout.problem);
    // Before the machines: under the namespace's deny-all they would not reach each other or their API server.
    for (const policy of machinePodNetworkPolicies(namespace)) {
      await this.client.apply(Refs.networkPolicy, policy as KubernetesObject, this.applyOptions(ctx));
    }
    const shootClient = await openShootClient(this.client, namespace, ctx.signal);
    try {
      const drainer = shootClient && new MachineDrainer(shootClient, ctx.logger, () => this.clock.now());
      return await this.reconcileMachines(ctx, worker, layout, drainer);
    } finally {
      shootClient?.close();
    }
  }

  /** Deletes every machine (drained first) and provider-local's NetworkPolicies; done once no machine pod is left. */
  async delete(ctx: ReconcileContext, worker: Worker): Promise<ActuatorOutcome> {
    const namespace = worker.metadata.namespace ?? '';
    const shootClient = await openShootClient(this.client, namespace, ctx.signal);
    try {
      const drainer = shootClient && new MachineDrainer(shootClient, ctx.logger, () => this.clock.now());
      // As Gardener marks every machine for forceful deletion when the Worker goes.
      const surplus = await this.surplusMachines(worker, new Set(), true, ctx);
      const drains = await this.drain(drainer, surplus.machines, ctx);
      const left = await this.deleteDrained(namespace, surplus, new Map(drains.map((d) => [d.machine, d.done])), ctx);
      const pods = await this.machinePods(namespace, ctx);
      if (drainer) await this.tidyNodes(drainer, namespace, new Set(), new Set(), ctx);
      if (left.length > 0 || pods.length > 0 || surplus.sets.length > 0) {
        const draining = drainDescription(drains);
        const stopping = `waiting for ${pods.length} machine ${pods.length === 1 ? 'pod' : 'pods'} to stop`;
        const description = draining !== '' ? draining : stopping;
        return { state: 'Processing', progress: 50, description, requeueAfter: WORKER_POLL_MS };
      }
    } finally {
      shootClient?.close();
    }
    await Promise.all(
      Object.values(MACHINE_POLICY_NAMES).map((name) =>
        this.client.delete(Refs.networkPolicy, name, namespace, { signal: ctx.signal }),
      ),
    );
    return { state: 'Succeeded', description: 'machines and their NetworkPolicies removed' };
  }

  /** `status.machineDeployments`, with every outcome. */
  statusFields(worker: Worker): Record<string, unknown> {
    return { machineDeployments: machineDeployments(worker) };
  }

  /** The pools' StatefulSets as planned, machines that go drained first, then how ready the machines are. */
  private async reconcileMachines(
    ctx: ReconcileContext,
    worker: Worker,
    layout: MachineLayout,
    drainer: MachineDrainer | undefined,
  ): Promise<ActuatorOutcome> {
    const namespace = worker.metadata.namespace ?? '';
    const pools = namedPools(worker);
    const atOnce = this.opts.machinesStartingAtOnce ?? MACHINES_STARTING_AT_ONCE;
    const currents = await this.currentReplicas(namespace, pools, ctx);
    const plans = pools.map((pool, i) => poolMachines(pool, currents[i]!.replicas, layout.hibernated));
    // Every machine that goes, of a pool scaled down or of one removed, drained in one step.
    const going = pools.flatMap((pool, i) =>
      plans[i]!.going.map((name) => ({
        name,
        timeoutMs: this.drainTimeout(pool),
        // As Gardener marks every machine for forceful deletion when the shoot hibernates.
        force: layout.hibernated,
      })),
    );
    const keep = new Set(pools.map((p) => machineStatefulSetName(p.name)));
    const surplus = await this.surplusMachines(worker, keep, layout.hibernated, ctx);
    const drains = await this.drain(drainer, [...going, ...surplus.machines], ctx);
    const drained = new Map(drains.map((d) => [d.machine, d.done]));

    const replicas = plans.map((plan, i) => poolReplicas(plan, currents[i]!, drained, atOnce));
    const revisions: (string | undefined)[] = [];
    for (const [i, pool] of pools.entries()) {
      const networks = workerMachineNetworks(worker, layout);
      const statefulSet = this.machineStatefulSet(namespace, pool, layout, networks, replicas[i]!, worker.spec.region);
      const applied = await this.client.apply(
        Refs.statefulSet,
        statefulSet as KubernetesObject,
        this.applyOptions(ctx),
      );
      revisions.push(currentRevision(applied as V1StatefulSet));
    }
    const starting = plans.some((plan, i) => replicas[i]! < plan.wanted);
    await this.deleteDrained(namespace, surplus, drained, ctx);
    const machinePods = await this.machinePods(namespace, ctx);
    await announceUserData(this.client, worker, machinePods, ctx.signal);
    // Outdated machines replaced one at a time per pool, while nothing scales or hibernates.
    const rollouts = pools.map((pool, i) => {
      const steady = !layout.hibernated && replicas[i] === plans[i]!.wanted && plans[i]!.going.length === 0;
      const pods = machinePods.filter((p) => p.metadata?.labels?.[MACHINE_LABELS.pool] === pool.name);
      const none: PoolRollout = { outdated: [], replace: undefined };
      const rollout = steady ? poolRollout(plans[i]!.kept, pods.map(machinePodState), revisions[i]) : none;
      return { pool: pool.name, rollout, timeoutMs: this.drainTimeout(pool), step: undefined as string | undefined };
    });
    const calls = rolloutCalls(this.client, namespace, drainer, ctx.signal);
    for (const r of rollouts) {
      if (r.rollout.replace !== undefined) r.step = await replaceMachine(r.rollout.replace, r.timeoutMs, calls);
    }
    const replacing = new Set(rollouts.flatMap((r) => (r.rollout.replace ? [r.rollout.replace] : [])));
    const stopping = drainer
      ? await this.tidyNodes(drainer, namespace, new Set(plans.flatMap((p) => p.kept)), replacing, ctx)
      : [];

    const draining = drainDescription(drains);
    if (draining !== '')
      return { state: 'Processing', progress: 40, description: draining, requeueAfter: WORKER_POLL_MS };
    // Not done while a machine that goes has a Node: it goes once its pod is gone (a hibernation included).
    if (stopping.length > 0) {
      const description = `waiting for machines to stop before their Nodes go: ${stopping.join(', ')}`;
      return { state: 'Processing', progress: 45, description, requeueAfter: WORKER_POLL_MS };
    }
    const readiness = await this.readiness.outcome(ctx, namespace, plans, starting, atOnce, machinePods);
    const rolling = rolloutDescription(rollouts);
    if (rolling === '') return readiness;
    // Not done while a machine of an outdated template is left; a machine that can't start stays an Error.
    if (readiness.state === 'Succeeded')
      return { state: 'Processing', progress: 60, description: rolling, requeueAfter: WORKER_POLL_MS };
    return { ...readiness, description: `${readiness.description}; ${rolling}` };
  }

  /** The replicas and ready machines of each pool's StatefulSet now. */
  private async currentReplicas(
    namespace: string,
    pools: readonly NamedPool[],
    ctx: ReconcileContext,
  ): Promise<{ replicas: number; ready: number }[]> {
    const currents: { replicas: number; ready: number }[] = [];
    for (const pool of pools) {
      // From the API server, not the cache: a stale count would scale machines that are starting away.
      const current = await this.client.get<V1StatefulSet & KubernetesObject>(
        Refs.statefulSet,
        machineStatefulSetName(pool.name),
        namespace,
        { signal: ctx.signal },
      );
      currents.push({ replicas: current?.spec?.replicas ?? 0, ready: current?.status?.readyReplicas ?? 0 });
    }
    return currents;
  }

  /** A pool's StatefulSet of machine pods, with `replicas` of them for now. */
  private machineStatefulSet(
    namespace: string,
    pool: NamedPool,
    layout: MachineLayout,
    networks: { nodeCIDRs: readonly string[]; podCIDRs: readonly string[] },
    replicas: number,
    region: string | undefined,
  ) {
    return desiredMachineStatefulSet({
      namespace,
      pool,
      userData: userDataOf(pool) as { name: string; key: string },
      nodeCIDRs: networks.nodeCIDRs,
      firstMachine: layout.offsets.get(pool.name) ?? 0,
      ...(region ? { region } : {}),
      replicas,
      ...(this.opts.image ? { image: this.opts.image } : {}),
      ...(this.opts.machineUserNamespaces === false ? { userNamespace: false } : {}),
      podCIDRs: networks.podCIDRs,
      resources: layout.resources.get(pool.name)!,
    });
  }

  private applyOptions(ctx: ReconcileContext) {
    return { fieldManager: WORKER_FIELD_MANAGER, force: true, signal: ctx.signal };
  }

  private async machinePods(namespace: string, ctx: ReconcileContext): Promise<(V1Pod & KubernetesObject)[]> {
    const pods = await this.client.list<V1Pod & KubernetesObject>(Refs.pod, {
      namespace,
      labelSelector: MACHINE_SELECTOR,
      signal: ctx.signal,
    });
    return pods.items;
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
      labelSelector: MACHINE_SELECTOR,
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
    replacing: ReadonlySet<string>,
    ctx: ReconcileContext,
  ): Promise<string[]> {
    const [nodes, pods] = await Promise.all([drainer.nodes(ctx.signal), this.machinePods(namespace, ctx)]);
    for (const node of nodes) {
      const name = node.metadata?.name ?? '';
      if (keep.has(name) && !replacing.has(name)) await drainer.release(node, ctx.signal);
    }
    const machinePods = new Set(pods.map((p) => p.metadata?.name ?? ''));
    const names = nodes.map((n) => n.metadata?.name ?? '');
    for (const node of nodesOfGoneMachines(names, keep, machinePods)) await drainer.remove(node, ctx.signal);
    return names.filter((n) => /^machine-/.test(n) && !keep.has(n) && machinePods.has(n));
  }
}
