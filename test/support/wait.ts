/**
 * Waiting on conditions with a deadline instead of sleeping: tests are as fast as the server and fail with what
 * they were waiting for.
 */

export interface WaitOptions {
  /** Give up after this long; default 10s. */
  timeoutMs?: number;
  /** Poll interval; default 50ms. */
  intervalMs?: number;
  /** What we wait for, for the error message. */
  message?: string;
}

/**
 * Calls `condition` until it returns a value other than undefined/false and returns that value. Errors thrown by
 * `condition` count as "not yet"; the last one is reported at the deadline.
 */
export async function waitFor<T>(
  condition: () => T | undefined | false | Promise<T | undefined | false>,
  opts: WaitOptions = {},
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value !== undefined && value !== false) return value;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > deadline) {
      const last = lastError instanceof Error ? `; last error: ${lastError.message}` : '';
      throw new Error(`timed out after ${timeoutMs}ms waiting for ${opts.message ?? 'a condition'}${last}`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 50));
  }
}
