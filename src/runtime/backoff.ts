/**
 * Capped exponential backoff with "equal jitter": the n-th delay (from 0) is drawn from [d/2, d] where
 * d = min(maxMs, initialMs * factor^n). The jitter spreads out many clients restarting at once; the lower bound
 * keeps the growth real.
 */
export interface BackoffOptions {
  /** @default 500 */
  readonly initialMs?: number;
  /** @default 30_000 */
  readonly maxMs?: number;
  /** @default 2 */
  readonly factor?: number;
  /** Fraction of the delay that is random (0 = none, 1 = anywhere in [0, d]). @default 0.5 */
  readonly jitter?: number;
  /** Random source in [0, 1); injectable for deterministic tests. @default Math.random */
  readonly random?: () => number;
}

export const DEFAULT_BACKOFF = { initialMs: 500, maxMs: 30_000, factor: 2, jitter: 0.5 } as const;

export class Backoff {
  private attempt = 0;
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly factor: number;
  private readonly jitter: number;
  private readonly random: () => number;

  constructor(opts: BackoffOptions = {}) {
    this.initialMs = opts.initialMs ?? DEFAULT_BACKOFF.initialMs;
    this.maxMs = opts.maxMs ?? DEFAULT_BACKOFF.maxMs;
    this.factor = opts.factor ?? DEFAULT_BACKOFF.factor;
    this.jitter = Math.min(1, Math.max(0, opts.jitter ?? DEFAULT_BACKOFF.jitter));
    this.random = opts.random ?? Math.random;
  }

  /** The delay before the next attempt; each call grows the following one. */
  next(): number {
    const d = Math.min(this.maxMs, this.initialMs * Math.pow(this.factor, this.attempt));
    if (d < this.maxMs) this.attempt++;
    return Math.round(d * (1 - this.jitter) + d * this.jitter * this.random());
  }

  /** Number of delays handed out since the last reset (stops counting at the cap). */
  get attempts(): number {
    return this.attempt;
  }

  reset(): void {
    this.attempt = 0;
  }
}
