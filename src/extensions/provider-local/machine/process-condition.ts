/**
 * A Node condition of the machine's own, as node-problem-detector sets its conditions: whether one of the machine's
 * processes (containerd, the kubelet, kube-proxy) keeps exiting. Before the Node was first Ready such a process fails
 * the machine (start-failure.ts); afterwards a kubelet that keeps exiting only leaves the Node NotReady ("Kubelet
 * stopped posting node status"), which says nothing of why. The condition does, on the Node, where the gardenlet's
 * care controller reads it into `EveryNodeReady`'s message.
 *
 * Like the Node's other conditions besides Ready (MemoryPressure, node-problem-detector's FrequentKubeletRestart),
 * `True` is the problem: `MachineProcessCrashLooping=True`, reason `ProcessKeepsExiting`, message `kubelet keeps
 * exiting (5 times), last exited with code 1: <its log's last error>`; `False` (`ProcessesRunning`) once every
 * process ran for a minute again. The machine writes it with the node's own identity (the Node authorizer and the
 * NodeRestriction admission let `system:node:<name>` patch its own Node's status), only when it changes.
 */
import type { SupervisedState } from '../../../system/supervisor.js';
import type { APIServerAccess, ClientCredentials, NodeInfo } from './api-client.js';
import { requestJSON } from './api-client.js';
import { metav1Time } from '../../../apis/meta/time.js';

export const PROCESS_CRASH_LOOP_CONDITION = 'MachineProcessCrashLooping';
/** This many exits in a row, each after a run shorter than STABLE_RUN_MS, make a process crash-looping. */
export const CRASH_LOOP_EXITS = 3;
/** A run this long ends a crash loop (the supervisor's backoff resets after it too). */
export const STABLE_RUN_MS = 60_000;

export interface NodeCondition {
  readonly type: string;
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
}

/** Per process, its exits in a row after short runs and the last one's cause. */
export class CrashLoopTracker {
  private readonly started = new Map<string, number>();
  private readonly streaks = new Map<string, { count: number; cause: string }>();

  /** A process started (`state.running`) or exited, with the cause of its exit. */
  observe(state: SupervisedState, cause = state.lastExit ?? 'stopped'): void {
    if (state.running) {
      this.started.set(state.name, state.since);
      return;
    }
    const ran = state.since - (this.started.get(state.name) ?? state.since);
    const before = ran >= STABLE_RUN_MS ? 0 : (this.streaks.get(state.name)?.count ?? 0);
    this.streaks.set(state.name, { count: before + 1, cause });
  }

  /** The condition now, from the processes' states. */
  condition(states: readonly SupervisedState[], now: number): NodeCondition {
    return crashLoopCondition(
      states.map((s) => ({
        name: s.name,
        exits: this.streaks.get(s.name)?.count ?? 0,
        cause: this.streaks.get(s.name)?.cause ?? '',
        stable: s.running && now - s.since >= STABLE_RUN_MS,
      })),
    );
  }
}

/**
 * The condition from each process's exits in a row and whether it runs stably now: `True` for every process with
 * CRASH_LOOP_EXITS or more that does not run stably, `False` otherwise.
 */
export function crashLoopCondition(
  processes: readonly { name: string; exits: number; cause: string; stable: boolean }[],
): NodeCondition {
  const looping = processes.filter((p) => !p.stable && p.exits >= CRASH_LOOP_EXITS);
  if (looping.length === 0) {
    return {
      type: PROCESS_CRASH_LOOP_CONDITION,
      status: 'False',
      reason: 'ProcessesRunning',
      message: `${processes.map((p) => p.name).join(', ') || 'no process'} running`,
    };
  }
  return {
    type: PROCESS_CRASH_LOOP_CONDITION,
    status: 'True',
    reason: 'ProcessKeepsExiting',
    message: looping.map((p) => `${p.name} keeps exiting (${p.exits} times), last ${p.cause}`).join('; '),
  };
}

/** What a condition says (type, status, reason, message), times left out: equal keys need no write. */
export function conditionKey(c: { type: string; status: string; reason?: string; message?: string }): string {
  return JSON.stringify([c.type, c.status, c.reason, c.message]);
}

/** The status patch that sets `want` on a Node that has `node`'s conditions; undefined when it has it already. */
export function conditionPatch(node: NodeInfo, want: NodeCondition, now: number): object | undefined {
  const current = node.status?.conditions?.find((c) => c.type === want.type);
  if (current !== undefined && conditionKey(current) === conditionKey(want)) return undefined;
  const time = metav1Time(now);
  const transition = current?.status === want.status ? {} : { lastTransitionTime: time };
  // A strategic merge patch: conditions merge by type, the kubelet's stay as they are.
  return { status: { conditions: [{ ...want, lastHeartbeatTime: time, ...transition }] } };
}

/** Sets the condition on the machine's Node when it changed; true when it wrote it. */
export async function publishCondition(
  apiServer: APIServerAccess,
  credentials: ClientCredentials,
  node: NodeInfo,
  want: NodeCondition,
  now = Date.now(),
): Promise<boolean> {
  const patch = conditionPatch(node, want, now);
  if (patch === undefined) return false;
  await requestJSON(
    apiServer,
    credentials,
    'PATCH',
    `/api/v1/nodes/${node.metadata.name}/status`,
    patch,
    5_000,
    'application/strategic-merge-patch+json',
  );
  return true;
}
