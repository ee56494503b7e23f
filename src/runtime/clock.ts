/**
 * Time as a dependency: everything in the runtime that waits (queue delays, backoff, watchdogs, leases) asks a
 * Clock, so tests swap in a {@link FakeClock} instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /**
   * Resolves after `ms` milliseconds, or as soon as `signal` aborts. Never rejects: callers check
   * `signal.aborted` afterwards when they need to know which happened.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const realClock: Clock = {
  now: () => Date.now(),
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) {
        resolve();
        return;
      }
      const onAbort = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(
        () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        Math.max(0, ms),
      );
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  },
};

interface FakeTimer {
  at: number;
  seq: number;
  resolve: () => void;
}

/**
 * A clock that only moves when told to. `advance` fires due timers in time order and lets the promise chains they
 * start run (including sleeps they schedule within the advanced window) before moving on.
 */
export class FakeClock implements Clock {
  /** Guards against code that keeps scheduling zero-length sleeps. */
  static maxTimersPerAdvance = 10_000;
  private t: number;
  private seq = 0;
  private timers: FakeTimer[] = [];

  constructor(start = Date.UTC(2026, 10, 21, 20, 0, 0)) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) {
        resolve();
        return;
      }
      const timer: FakeTimer = {
        at: this.t + Math.max(0, ms),
        seq: this.seq++,
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = (): void => {
        this.timers = this.timers.filter((x) => x !== timer);
        resolve();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.timers.push(timer);
    });
  }

  /** Number of sleeps waiting for the clock to move. */
  pendingTimers(): number {
    return this.timers.length;
  }

  /** When the earliest pending sleep ends, or undefined. */
  nextTimerAt(): number | undefined {
    return this.earliest()?.at;
  }

  /** Moves time forward by `ms`, firing every sleep that ends on the way. */
  async advance(ms: number): Promise<void> {
    const target = this.t + ms;
    for (let fired = 0; ; fired++) {
      await settle();
      const next = this.earliest();
      if (!next || next.at > target) break;
      if (fired >= FakeClock.maxTimersPerAdvance) {
        throw new Error(`FakeClock: more than ${FakeClock.maxTimersPerAdvance} timers in one advance (a sleep loop?)`);
      }
      this.timers = this.timers.filter((x) => x !== next);
      this.t = Math.max(this.t, next.at);
      next.resolve();
    }
    this.t = target;
    await settle();
  }

  /** Moves time to the end of the earliest pending sleep (no-op when none). */
  async advanceToNext(): Promise<void> {
    const next = this.earliest();
    if (next) await this.advance(Math.max(0, next.at - this.t));
    else await settle();
  }

  private earliest(): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const x of this.timers) {
      if (!best || x.at < best.at || (x.at === best.at && x.seq < best.seq)) best = x;
    }
    return best;
  }
}

/** Lets pending promise callbacks run (everything queued before the next turn of the event loop). */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
