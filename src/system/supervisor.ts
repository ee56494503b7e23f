/**
 * A supervised child process: started once, restarted with capped exponential backoff whenever it exits, stopped
 * on request. A run that lasted `stableAfterMs` counts as healthy, so the next crash restarts after the shortest
 * delay again.
 *
 * (Same interface as the control plane's supervisor of issue 10; whichever lands first is the one to keep.)
 */
import { Backoff } from '../runtime/backoff.js';
import {
  describeExit,
  startProcess,
  type ManagedProcess,
  type ProcessExit,
  type StartOptions,
} from '../localenv/process.js';

export interface SupervisedState {
  readonly name: string;
  readonly running: boolean;
  readonly pid: number | undefined;
  /** How often the process was started again after it exited. */
  readonly restarts: number;
  /** How the last run ended, if one did. */
  readonly lastExit: string | undefined;
}

export interface SupervisorOptions {
  readonly backoff?: { initialMs?: number; maxMs?: number; jitter?: number };
  /** @default 60_000 */
  readonly stableAfterMs?: number;
  /** Called on every start and exit. */
  readonly onChange?: (state: SupervisedState) => void;
}

export class SupervisedProcess {
  private current: ManagedProcess | undefined;
  private startedAt = 0;
  private restarts = 0;
  private lastExit: ProcessExit | undefined;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly backoff: Backoff;

  constructor(
    private readonly spec: StartOptions,
    private readonly options: SupervisorOptions = {},
  ) {
    this.backoff = new Backoff({ initialMs: 500, maxMs: 15_000, ...options.backoff });
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
    this.startedAt = Date.now();
    this.options.onChange?.(this.state());
    void proc.exited.then((exit) => {
      if (this.current !== proc) return;
      this.lastExit = exit;
      this.options.onChange?.(this.state());
      if (this.stopped) return;
      if (Date.now() - this.startedAt >= (this.options.stableAfterMs ?? 60_000)) this.backoff.reset();
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
    };
  }

  /** The end of the process's log (of the current or last run), for messages. */
  tail(lines = 20): string {
    return this.current?.tail(lines) ?? '';
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
