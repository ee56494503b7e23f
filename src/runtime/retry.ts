/** Re-running a call that failed with a retriable error, as client-go's `retry` package. */
import { Backoff } from './backoff.js';
import { realClock, type Clock } from './clock.js';
import { isConflict } from './errors.js';

export interface RetryOptions {
  /** Attempts in all, the first included. @default 5 */
  steps?: number;
  /** @default 10 */
  initialMs?: number;
  /** @default 2 */
  factor?: number;
  /** @default 1000 */
  maxMs?: number;
  clock?: Clock;
  signal?: AbortSignal;
}

/**
 * Runs `fn` and re-runs it while it fails with an error `retriable` accepts, with a short backoff, like
 * client-go's `retry.OnError`. The last error is thrown when the attempts are used up or `signal` aborts.
 */
export async function retryOnError<T>(
  retriable: (e: unknown) => boolean,
  fn: () => Promise<T>,
  opts: RetryOptions = {},
): Promise<T> {
  const clock = opts.clock ?? realClock;
  const steps = Math.max(1, opts.steps ?? 5);
  const backoff = new Backoff({
    initialMs: opts.initialMs ?? 10,
    factor: opts.factor ?? 2,
    maxMs: opts.maxMs ?? 1000,
    jitter: 0.1,
  });
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (attempt >= steps || !retriable(e) || opts.signal?.aborted) throw e;
    }
    await clock.sleep(backoff.next(), opts.signal);
  }
}

/**
 * Like client-go's `retry.RetryOnConflict`: `fn` must read the object fresh and write it; it is re-run on 409
 * Conflict (5 attempts, 10 ms doubling, by default).
 */
export function retryOnConflict<T>(fn: () => Promise<T>, opts?: RetryOptions): Promise<T> {
  return retryOnError(isConflict, fn, opts);
}
