/**
 * The long-running commands' stop: SIGTERM (a pod being stopped) or SIGINT (Ctrl-C) aborts what runs, which then
 * stops what it started before the command returns. A second signal exits at once: the process's exit handlers then
 * kill its children and remove their files (src/system/cleanup.ts), where the signal's default action would skip them.
 */

const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

export interface StopSignalOptions {
  /** Told of the first signal (a log line), before the stop's signal aborts. */
  readonly onSignal?: (signal: NodeJS.Signals) => void;
  /** Where the exit on a second signal is said. @default stderr */
  readonly err?: (text: string) => void;
  /**
   * A second signal within this time of the first is the same one: one Ctrl-C under npx arrives twice (the terminal
   * signals the whole process group and npm passes its own on). @default 0
   */
  readonly repeatWindowMs?: number;
  /** The exit status on a second signal. @default 1 */
  readonly exitCode?: number;
}

/** Listens for SIGINT and SIGTERM from its construction until {@link dispose}. */
export class StopSignals {
  private readonly controller = new AbortController();
  private first: { readonly signal: NodeJS.Signals; readonly at: number } | undefined;

  constructor(private readonly opts: StopSignalOptions = {}) {
    for (const s of STOP_SIGNALS) process.on(s, this.onSignal);
  }

  /** Aborts at the first signal (or {@link stop}), its reason an Error named after the signal. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The signal the stop was asked for with; undefined while none was. */
  get received(): NodeJS.Signals | undefined {
    return this.first?.signal;
  }

  /** Asks for the stop as `signal` would (say, the parent going away), unless one was asked for already. */
  stop(signal: NodeJS.Signals): void {
    if (this.first !== undefined) return;
    this.first = { signal, at: Date.now() };
    this.controller.abort(new Error(signal));
  }

  /** Aborts the stop's signal with `reason` without a signal (a part that died): {@link received} stays unset. */
  abort(reason: Error): void {
    this.controller.abort(reason);
  }

  dispose(): void {
    for (const s of STOP_SIGNALS) process.off(s, this.onSignal);
  }

  private readonly onSignal = (signal: NodeJS.Signals): void => {
    if (this.first === undefined) {
      this.opts.onSignal?.(signal);
      return this.stop(signal);
    }
    if (Date.now() - this.first.at < (this.opts.repeatWindowMs ?? 0)) return;
    (this.opts.err ?? ((text: string) => process.stderr.write(text)))(
      `${signal} again: exiting without a graceful stop\n`,
    );
    process.exit(this.opts.exitCode ?? 1);
  };
}

/** Runs `work` with a signal that aborts on SIGTERM or SIGINT; the handlers go when it returns. */
export async function untilSignalled<T>(
  work: (signal: AbortSignal) => Promise<T>,
  opts: StopSignalOptions = {},
): Promise<T> {
  const stops = new StopSignals(opts);
  try {
    return await work(stops.signal);
  } finally {
    stops.dispose();
  }
}

/** A log line with a timestamp, on stderr (a pod's log). */
export function timestamped(err: (text: string) => void): (line: string) => void {
  return (line) => err(`${new Date().toISOString()} ${line}\n`);
}
