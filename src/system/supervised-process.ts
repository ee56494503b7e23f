/**
 * A process that is started again when it exits, with capped exponential backoff: the supervision of a machine's
 * containerd, kubelet and kube-proxy (and of anything else that must stay up). A process that ran for a while
 * before it crashed starts over at the shortest delay.
 */
import { Backoff, type BackoffOptions } from '../runtime/backoff.js';
import { describeExit, type ManagedProcess, type ProcessExit } from '../localenv/process.js';

/** A run that lasted this long counts as healthy: the next crash restarts after the shortest delay. */
export const STABLE_RUN_MS = 60_000;

export interface SupervisedProcessOptions {
  name: string;
  start: () => ManagedProcess;
  backoff?: BackoffOptions;
  /** Called on every unexpected exit, before the restart delay. */
  onExit?: (exit: ProcessExit, restartInMs: number) => void;
  now?: () => number;
}

export class SupervisedProcess {
  private current: ManagedProcess | undefined;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly backoff: Backoff;
  private readonly now: () => number;
  /** How often the process was restarted after an exit. */
  restarts = 0;
  lastExit: string | undefined;

  constructor(private readonly opts: SupervisedProcessOptions) {
    this.backoff = new Backoff({ initialMs: 500, maxMs: 15_000, ...opts.backoff });
    this.now = opts.now ?? Date.now;
  }

  get process(): ManagedProcess | undefined {
    return this.current;
  }

  /** Whether the process runs right now. */
  get running(): boolean {
    return this.current !== undefined && this.current.exit() === undefined;
  }

  start(): void {
    this.stopped = false;
    this.launch();
  }

  private launch(): void {
    if (this.stopped) return;
    const started = this.now();
    const proc = this.opts.start();
    this.current = proc;
    void proc.exited.then((exit) => {
      if (this.stopped || this.current !== proc) return;
      if (this.now() - started >= STABLE_RUN_MS) this.backoff.reset();
      const delay = this.backoff.next();
      this.lastExit = `${this.opts.name} ${describeExit(exit)}`;
      this.opts.onExit?.(exit, delay);
      this.timer = setTimeout(() => {
        this.restarts++;
        this.launch();
      }, delay);
      this.timer.unref();
    });
  }

  /** Stops the process (SIGTERM, then SIGKILL after graceMs) and does not restart it. */
  async stop(graceMs?: number): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.current?.stop(graceMs);
  }

  /** For exit handlers. */
  killNow(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.current?.killNow();
  }
}
