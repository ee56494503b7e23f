/**
 * A machine's processes (containerd, kubelet, kube-proxy): each supervised and restarted with backoff when it exits,
 * its exits since the deploy counted with their causes, which tell when the machine counts as failed.
 */
import { graceBefore, type StartOptions } from '../../../system/process.js';
import { SupervisedProcess, type SupervisedState } from '../../../system/supervisor.js';
import { procHostKernel } from './kubelet-host.js';
import { startFailureOf } from './start-failure.js';
import { CrashLoopTracker, type NodeCondition } from './process-condition.js';

/** How often a process of the machine may exit before its Node was first Ready until the machine counts as failed. */
export const START_FAILURE_LIMIT = 4;

/**
 * The line of a process's log that says why it stopped: the last error of klog (`E…`/`F…`) or logrus
 * (`level=error|fatal`), without its time and source, else the last line; empty for an empty log.
 */
export function lastErrorLine(log: string, maxLength = 300): string {
  const lines = log
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const klog = /^[EF]\d{4} [\d:.]+\s+\d+ [^\]]+\] ?/;
  const logrus = /level=(error|fatal)\b/;
  const line = lines.filter((l) => klog.test(l) || logrus.test(l)).at(-1) ?? lines.at(-1) ?? '';
  const text = line.replace(klog, '').replace(/^time="[^"]*"\s*/, '');
  return text.length > maxLength ? `${text.slice(0, maxLength - 1)}…` : text;
}

export class MachineProcesses {
  private readonly supervised: SupervisedProcess[] = [];
  /** Per process, its failed runs and the last one's cause, since the deploy. */
  private readonly exits = new Map<string, { count: number; cause: string }>();
  /** The processes' exits in a row, for the Node's crash-loop condition (process-condition.ts). */
  private crashLoops = new CrashLoopTracker();

  /**
   * @param stopping whether the machine is being stopped: exits then are no failures
   * @param log logs a line about the machine
   */
  constructor(
    private readonly stopping: () => boolean,
    private readonly log: (line: string) => void,
  ) {}

  /** Starts a process and keeps it running, restarting it with backoff. */
  supervise(spec: StartOptions): void {
    const name = spec.name;
    const p: SupervisedProcess = new SupervisedProcess(spec, {
      onChange: (state) => {
        if (!state.running && !this.stopping()) {
          // The exited run's log is still the current one: the restart comes after the backoff.
          const why = lastErrorLine(p.tail(40));
          const exit = state.lastExit ?? 'stopped';
          this.exits.set(name, {
            count: (this.exits.get(name)?.count ?? 0) + 1,
            cause: why === '' ? exit : `${exit}: ${why}`,
          });
          this.crashLoops.observe(state, this.exits.get(name)!.cause);
          this.log(`${name} ${exit}; restarting`);
        } else if (state.running) this.crashLoops.observe(state);
      },
    });
    this.supervised.push(p);
    p.start();
  }

  /** The processes in the order they were started. */
  get all(): readonly SupervisedProcess[] {
    return this.supervised;
  }

  find(name: string): SupervisedProcess | undefined {
    return this.supervised.find((p) => p.name === name);
  }

  states(): SupervisedState[] {
    return this.supervised.map((p) => p.state());
  }

  /** The cause of the last exit of a process since the deploy, if it exited. */
  exitCause(name: string): string | undefined {
    return this.exits.get(name)?.cause;
  }

  /** Forgets the exits: a deploy starts counting anew. */
  clearExits(): void {
    this.exits.clear();
    this.crashLoops = new CrashLoopTracker();
  }

  /** Whether a process keeps exiting now: the machine's own Node condition (process-condition.ts). */
  crashLoopCondition(now = Date.now()): NodeCondition {
    return this.crashLoops.condition(this.states(), now);
  }

  /**
   * Why the machine can't start, once one of its processes exited `limit` times since the deploy (each time
   * restarted with backoff): see startFailureOf (start-failure.ts); undefined otherwise.
   */
  startFailure(limit = START_FAILURE_LIMIT): string | undefined {
    return startFailureOf(this.exits, limit, () => this.tail('containerd', 5_000), procHostKernel);
  }

  /** The end of a supervised process's log (its file in the state dir); empty for a process not started. */
  tail(name: string, lines = 100): string {
    return this.find(name)?.tail(lines) ?? '';
  }

  /** Stops the processes gracefully, the last started first (kube-proxy and kubelet before containerd). */
  async stop(deadline: number | undefined): Promise<void> {
    for (const p of [...this.supervised].reverse()) await p.stop(graceBefore(deadline, 5_000));
  }

  /** Kills what still runs; synchronous, for exit handlers. */
  killNow(): void {
    for (const p of this.supervised) p.killNow();
  }

  /** Forgets the stopped processes. */
  clear(): void {
    this.supervised.length = 0;
  }
}
