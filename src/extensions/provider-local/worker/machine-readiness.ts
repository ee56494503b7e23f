/**
 * Whether a Worker's machines are ready, and what its last operation says while they are not: as Gardener's worker
 * actuators, it succeeds once every pool has its machines ready (a machine pod is ready when its Node is), and names
 * each machine that is not with its cause, `machine <name>: <cause>`, from its pod's status or, for one on its way,
 * from what its agent logged of why its kubelet has not joined (machine-problems.ts). A machine that can't come up by
 * waiting makes it an Error with `lastError`, which the gardenlet reports on the Shoot; it is looked at again all the
 * same: a machine that recovers turns it back to Processing and Succeeded.
 */
import type { KubernetesObject, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { Refs } from '../../../apis/refs.js';
import type { ResourceClient } from '../../../runtime/client.js';
import type { Clock } from '../../../runtime/clock.js';
import type { ReconcileContext } from '../../../runtime/controller.js';
import type { ActuatorOutcome } from '../../common/reconciler.js';
import { JOIN_PROBLEM_REPEAT_MS } from '../machine/join-problem.js';
import { machineStatefulSetName } from './machine-pods.js';
import { MACHINE_LABELS } from '../machine-contract.js';
import {
  describeMachineProblems,
  joinProblemFromLog,
  machinePodProblem,
  mayHaveJoinProblem,
  type MachineProblem,
} from './machine-problems.js';
import type { PoolMachines } from './pool-plan.js';

/** How often a Worker whose machines are not ready (or are going away) is looked at again, besides watch events. */
export const WORKER_POLL_MS = 5_000;
/** How long a machine pod's join problem read from its log is reused (its agent says it once a minute). */
export const JOIN_PROBLEM_CACHE_MS = 30_000;

/** The ready machines of a pool whose StatefulSet is `set`, and whether they are all it should have. */
export function poolReadiness(
  wanted: number,
  set: V1StatefulSet | undefined,
): { readonly ready: number; readonly done: boolean } {
  const ready = set?.status?.readyReplicas ?? 0;
  const updated = (set?.status?.observedGeneration ?? 0) >= (set?.metadata?.generation ?? 1);
  return { ready, done: updated && ready === wanted && (set?.status?.replicas ?? 0) === wanted };
}

/**
 * The outcome while pools are `waiting` (their lines) with the machine `problems` found: Error when one of them can't
 * come up by waiting, else Processing; `bounded` when machines start a few at a time (`atOnce`).
 */
export function waitingOutcome(
  waiting: readonly string[],
  problems: readonly MachineProblem[],
  bounded: boolean,
  atOnce: number,
): ActuatorOutcome {
  const starting = bounded ? ` (machines start at most ${atOnce} at a time per pool)` : '';
  const causes = problems.length > 0 ? `; ${describeMachineProblems(problems)}` : '';
  const description = `${waiting.join(', ')}${starting}${causes}`;
  const codes = [...new Set(problems.flatMap((p) => (p.failing && p.code ? [p.code] : [])))];
  return problems.some((p) => p.failing)
    ? { state: 'Error', description, ...(codes.length > 0 ? { codes } : {}), requeueAfter: WORKER_POLL_MS }
    : { state: 'Processing', progress: 50, description, requeueAfter: WORKER_POLL_MS };
}

export interface MachineReadinessOptions {
  readonly client: ResourceClient;
  readonly clock: Clock;
  /** The pool's StatefulSet, from a cache. */
  readonly statefulSet?: (name: string, namespace: string) => V1StatefulSet | undefined;
  /**
   * The recent end of a machine pod's log (where its agent says why its kubelet has not joined); undefined when it
   * can't be read. @default the seed's `pods/<name>/log` of the last JOIN_PROBLEM_REPEAT_MS and a half
   */
  readonly podLog?: (namespace: string, name: string, signal: AbortSignal) => Promise<string | undefined>;
}

/** Looks at the machines of a Worker's pools; keeps what it read of machine pods' logs for a while. */
export class MachineReadiness {
  /** Per machine pod (uid), its join problem as last read and when: not a log read per pod every WORKER_POLL_MS. */
  private readonly joinProblems = new Map<string, { at: number; problem: MachineProblem | undefined }>();

  constructor(private readonly opts: MachineReadinessOptions) {}

  /** Succeeded once every pool in `pools` has its machines ready; `starting` pools start theirs `atOnce`. */
  async outcome(
    ctx: ReconcileContext,
    namespace: string,
    pools: readonly PoolMachines[],
    starting: boolean,
    atOnce: number,
    machinePods: readonly V1Pod[],
  ): Promise<ActuatorOutcome> {
    const waiting: string[] = [];
    const problems: MachineProblem[] = [];
    for (const pool of pools) {
      const set = await this.statefulSet(machineStatefulSetName(pool.pool), namespace, ctx);
      const { ready, done } = poolReadiness(pool.wanted, set);
      if (done) continue;
      waiting.push(`pool ${pool.pool}: ${ready}/${pool.wanted} machines ready`);
      for (const pod of machinePods) {
        if (pod.metadata?.labels?.[MACHINE_LABELS.pool] !== pool.pool) continue;
        const problem = machinePodProblem(pod) ?? (await this.joinProblem(pod, ctx));
        if (problem !== undefined) problems.push(problem);
      }
    }
    if (waiting.length > 0) return waitingOutcome(waiting, problems, starting, atOnce);
    const total = pools.reduce((n, p) => n + p.wanted, 0);
    return { state: 'Succeeded', description: `${total} machines of ${pools.length} pools are ready` };
  }

  private statefulSet(name: string, namespace: string, ctx: ReconcileContext): Promise<V1StatefulSet | undefined> {
    const cached = this.opts.statefulSet?.(name, namespace);
    if (cached) return Promise.resolve(cached);
    return this.opts.client.get<V1StatefulSet & KubernetesObject>(Refs.statefulSet, name, namespace, {
      signal: ctx.signal,
    });
  }

  /** What the agent of a machine pod on its way said last of why its kubelet has not joined (join-problem.ts). */
  private async joinProblem(pod: V1Pod, ctx: ReconcileContext): Promise<MachineProblem | undefined> {
    const now = this.opts.clock.now();
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
        this.opts.client.getText(
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
}
