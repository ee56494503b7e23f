/**
 * Why a machine pod is not ready, from its status alone, as machine-controller-manager puts a machine's trouble into
 * `Machine.status.lastOperation.description` for the worker actuator to report: the seed can't schedule it, can't
 * pull or create its container, or its agent keeps failing (the agent's last words are the container's termination
 * message, see pod-agent.ts). A pod merely on its way (being created, its Node not Ready yet) has no problem, unless
 * its agent said in its log why its kubelet has not joined (join-problem.ts): progress, not a failure.
 */
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { MACHINE_AGENT_EXIT } from '../machine-contract.js';
import { JOIN_PROBLEM_AFTER_MS, JOIN_PROBLEM_MARK } from '../machine/join-problem.js';

/** Gardener's error codes (`gardencorev1beta1.ErrorCode`) a machine's problem can carry. */
export const MACHINE_ERROR_CODES = {
  configuration: 'ERR_CONFIGURATION_PROBLEM',
  resourcesDepleted: 'ERR_INFRA_RESOURCES_DEPLETED',
} as const;

export interface MachineProblem {
  /** The machine pod's name: its Node's. */
  readonly machine: string;
  /** One line: what is wrong, in the words of whoever knows (the scheduler, the seed's kubelet, the agent). */
  readonly cause: string;
  /** The machine can't come up by waiting: the Worker reports an error, not progress. */
  readonly failing: boolean;
  readonly code?: string;
}

/** How long a cause may be in a status line: the first line of a termination message, a scheduler message. */
export const MAX_CAUSE_LENGTH = 400;

/** Waiting reasons of the seed's kubelet that do not pass without a change (a pull it retries included). */
const IMAGE_REASONS = new Set(['ImagePullBackOff', 'ErrImagePull', 'InvalidImageName', 'ErrImageNeverPull']);
const CREATE_REASONS = new Set(['CreateContainerConfigError', 'CreateContainerError', 'RunContainerError']);
/** From this many restarts on a crashing agent is a failing machine, not one that had a bad moment. */
export const FAILING_AFTER_RESTARTS = 2;

/**
 * The line of a message that says most: the last one. The agent's own termination message is one line; a message
 * the seed's kubelet took from the end of the log (`FallbackToLogsOnError`) ends with the agent's `error:` line, or
 * with a crash's error before Node.js's version trailer.
 */
function oneLine(text: string | undefined, without = ''): string {
  const last = (text ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^Node\.js v\d/.test(l))
    .at(-1);
  if (last === undefined) return '';
  const line = without !== '' && last.startsWith(without) ? last.slice(without.length) : last;
  return line.length > MAX_CAUSE_LENGTH ? `${line.slice(0, MAX_CAUSE_LENGTH - 1)}…` : line;
}

/**
 * What ended the agent's last run: its termination message (without the machine's name, which the description
 * gives), else the exit code and the kubelet's reason.
 */
function lastRun(machine: string, status: V1ContainerStatus): { text: string; exitCode: number } | undefined {
  const terminated = status.state?.terminated ?? status.lastState?.terminated;
  if (terminated === undefined || terminated.exitCode === 0) return undefined;
  const message = oneLine(terminated.message, `machine ${machine}: `);
  const exit = `exited with code ${terminated.exitCode}${terminated.reason ? ` (${terminated.reason})` : ''}`;
  return { text: message !== '' ? message : exit, exitCode: terminated.exitCode };
}

/** The problem of a machine pod that is not ready, or undefined when it is ready or just on its way. */
export function machinePodProblem(pod: V1Pod): MachineProblem | undefined {
  const machine = pod.metadata?.name ?? '?';
  if (pod.metadata?.deletionTimestamp) return undefined;
  const conditions = pod.status?.conditions ?? [];
  if (conditions.some((c) => c.type === 'Ready' && c.status === 'True')) return undefined;
  if (pod.status?.phase === 'Failed') {
    const reason = pod.status.reason ? `${pod.status.reason}: ` : '';
    return { machine, cause: `the machine pod failed: ${reason}${oneLine(pod.status.message)}`, failing: false };
  }
  const scheduled = conditions.find((c) => c.type === 'PodScheduled');
  if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable') {
    return {
      machine,
      cause: `the seed can't schedule its pod: ${oneLine(scheduled.message)}`,
      failing: true,
      code: MACHINE_ERROR_CODES.resourcesDepleted,
    };
  }
  const status = pod.status?.containerStatuses?.[0];
  if (status === undefined) return undefined;
  const waiting = status.state?.waiting;
  if (waiting?.reason !== undefined && IMAGE_REASONS.has(waiting.reason)) {
    return {
      machine,
      cause: `the machine image ${status.image || '?'} can't be pulled (${waiting.reason}): ${oneLine(waiting.message)}`,
      failing: true,
    };
  }
  if (waiting?.reason !== undefined && CREATE_REASONS.has(waiting.reason)) {
    return {
      machine,
      cause: `its container can't be started (${waiting.reason}): ${oneLine(waiting.message)}`,
      failing: true,
    };
  }
  const run = lastRun(machine, status);
  if (run === undefined) return undefined;
  const restarts = status.restartCount ?? 0;
  const configuration = run.exitCode === MACHINE_AGENT_EXIT.configuration;
  return {
    machine,
    cause: restarts > 0 ? `${run.text} (restarted ${restarts} ${restarts === 1 ? 'time' : 'times'})` : run.text,
    failing: configuration || restarts >= FAILING_AFTER_RESTARTS,
    ...(configuration ? { code: MACHINE_ERROR_CODES.configuration } : {}),
  };
}

/**
 * Whether a machine pod's agent may have said why its kubelet has not joined (join-problem.ts): its pod is not ready,
 * and its container has been running for JOIN_PROBLEM_AFTER_MS at `now`. Only then is its log worth reading.
 */
export function mayHaveJoinProblem(pod: V1Pod, now: number): boolean {
  if (pod.metadata?.deletionTimestamp) return false;
  if (pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) return false;
  const started = pod.status?.containerStatuses?.[0]?.state?.running?.startedAt;
  if (started === undefined) return false;
  return now - new Date(started).getTime() >= JOIN_PROBLEM_AFTER_MS;
}

/**
 * The problem the agent said last in (a recent part of) its log, `<time> machine <name>: not joined: <cause>`: a
 * machine on its way that can't join yet (its kubelet can't reach the API server), progress and not an error;
 * undefined when the log has no such line.
 */
export function joinProblemFromLog(machine: string, log: string): MachineProblem | undefined {
  const mark = `machine ${machine}: ${JOIN_PROBLEM_MARK}`;
  const line = log
    .split('\n')
    .filter((l) => l.includes(mark))
    .at(-1);
  if (line === undefined) return undefined;
  const cause = oneLine(line.slice(line.indexOf(mark) + mark.length));
  return cause === '' ? undefined : { machine, cause, failing: false };
}

/**
 * The Worker's description of machines that are not ready: one `machine <name>: <cause>` per machine with a
 * problem, by name.
 */
export function describeMachineProblems(problems: readonly MachineProblem[]): string {
  return [...problems]
    .sort((a, b) => a.machine.localeCompare(b.machine, 'en', { numeric: true }))
    .map((p) => `machine ${p.machine}: ${p.cause}`)
    .join('; ');
}
