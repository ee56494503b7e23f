/**
 * A supervised child process, as a kubelet keeps a static pod running: started once, restarted with exponential
 * backoff whenever it exits, stopped on request. Its state (running, restarts, last exit) is what health checks and
 * conditions report; every change is announced so a controller can react at once instead of polling.
 */
import { Backoff, type BackoffOptions } from '../runtime/backoff.js';
import { describeExit, startProcess, type ManagedProcess, type ProcessExit, type StartOptions } from './process.js';

export interface SupervisedState {
  readonly name: string;
  readonly running: boolean;
  readonly pid: number | undefined;
  /** How often the process was started again after it exited. */
  readonly restarts: number;
  /** How the last run ended, if one did. */
  readonly lastExit: string | undefined;
  /** When the current run started (ms since epoch), or when the process went down. */
  readonly since: number;
}

export interface SupervisorOptions {
  /** Restart delays: doubling from `baseDelayMs` to `maxDelayMs`. */
  readonly backoff?: BackoffOptions;
  /** A run this long counts as stable: the next crash restarts after the base delay again. @default 60 s */
  readonly stableAfterMs?: number;
  /** Called on every start and exit. */
  readonly onChange?: (state: SupervisedState) => void;
}

export class SupervisedProcess {
  private current: ManagedProcess | undefined;
  private restarts = 0;
  private lastExit: ProcessExit | undefined;
  private since = Date.now();
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly backoff: Backoff;

  constructor(
    private readonly spec: StartOptions,
    private readonly options: SupervisorOptions = {},
  ) {
    this.backoff = new Backoff(options.backoff);
  }

  get name(): string {
    return this.spec.name;
  }

  /** The running process, if any (between a crash and its restart there is none). */
  get process(): ManagedProcess | undefined {
    return this.current?.exit() === undefined ? this.current : undefined;
  }

  start(): void {
    if (this.stopped || this.current !== undefined) return;
    this.run();
  }

  private run(): void {
    const proc = startProcess(this.spec);
    this.current = proc;
    this.since = Date.now();
    this.options.onChange?.(this.state());
    void proc.exited.then((exit) => {
      if (this.current !== proc) return;
      this.lastExit = exit;
      this.since = Date.now();
      this.options.onChange?.(this.state());
      if (this.stopped) return;
      if (Date.now() - proc.startedAt >= (this.options.stableAfterMs ?? 60_000)) this.backoff.reset();
      this.timer = setTimeout(() => {
        this.timer = undefined;
        if (this.stopped) return;
        this.restarts++;
        this.run();
      }, this.backoff.next());
    });
  }

  state(): SupervisedState {
    const running = this.process !== undefined;
    return {
      name: this.spec.name,
      running,
      pid: running ? this.current?.pid : undefined,
      restarts: this.restarts,
      lastExit: this.lastExit === undefined ? undefined : describeExit(this.lastExit),
      since: this.since,
    };
  }

  /** The end of the process's log, for messages. */
  tail(lines = 20): string {
    return this.current?.tail(lines) ?? '';
  }

  /**
   * Stops the running process (SIGTERM, SIGKILL after `graceMs`) and starts it again at once, without the crash
   * backoff: what a node agent does to `systemctl restart` a unit whose configuration changed. Counts as a restart.
   */
  async restart(graceMs = 10_000): Promise<void> {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    const previous = this.current;
    // Its exit is ours, not a crash: the exit handler ignores a process that is no longer the current one.
    this.current = undefined;
    await previous?.stop(graceMs);
    if (previous !== undefined) this.lastExit = previous.exit();
    if (this.stopped) return;
    this.restarts++;
    this.backoff.reset();
    this.run();
  }

  /** Stops supervising and the process (SIGTERM, SIGKILL after `graceMs`). Idempotent. */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.current?.stop(graceMs);
  }

  /** SIGKILL without waiting, for exit handlers. */
  killNow(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.current?.killNow();
  }
}
