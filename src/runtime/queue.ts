import { realClock, type Clock } from './clock.js';

/** Per-key backoff of {@link WorkQueue.addRateLimited}: 100 ms, doubling per consecutive failure, capped at 60 s. */
export const DEFAULT_QUEUE_BACKOFF = { baseDelayMs: 100, maxDelayMs: 60_000 } as const;

export interface WorkQueueOptions {
  /** Reported in metrics. */
  readonly name?: string;
  readonly clock?: Clock;
  /** Delay of the first rate-limited re-add of a key. @default 100 */
  readonly baseDelayMs?: number;
  /** Cap of the per-key delay. @default 60_000 */
  readonly maxDelayMs?: number;
  /** Called when a key really enters the queue (after dedup) and on each rate-limited re-add. */
  readonly hooks?: { onAdd?(key: string): void; onRetry?(key: string): void };
}

/**
 * A work queue with client-go's guarantees:
 * - a key is queued at most once however often it is added;
 * - a key is handed to at most one worker at a time; re-added while processing, it is queued again on `done`;
 * - `addRateLimited` delays a key by its own exponential backoff (base doubling up to the cap) until `forget`;
 * - `addAfter` delays a key; of several pending delays for one key the earliest wins.
 * After `shutdown`, `get` resolves undefined at once (queued keys are dropped) and adds are ignored.
 */
export class WorkQueue {
  private readonly clock: Clock;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly hooks: NonNullable<WorkQueueOptions['hooks']>;
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly waiting = new Map<string, { at: number; abort: AbortController }>();
  private readonly getters: Array<(key: string | undefined) => void> = [];
  private shuttingDown = false;
  readonly name: string;

  constructor(opts: WorkQueueOptions = {}) {
    this.name = opts.name ?? 'queue';
    this.clock = opts.clock ?? realClock;
    this.baseDelayMs = opts.baseDelayMs ?? DEFAULT_QUEUE_BACKOFF.baseDelayMs;
    this.maxDelayMs = opts.maxDelayMs ?? DEFAULT_QUEUE_BACKOFF.maxDelayMs;
    this.hooks = opts.hooks ?? {};
  }

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    this.hooks.onAdd?.(key);
    if (this.processing.has(key)) return;
    this.push(key);
  }

  /** Adds `key` after `ms` (immediately when `ms <= 0`). */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const at = this.clock.now() + ms;
    const pending = this.waiting.get(key);
    if (pending && pending.at <= at) return;
    pending?.abort.abort();
    const abort = new AbortController();
    const entry = { at, abort };
    this.waiting.set(key, entry);
    void this.clock.sleep(ms, abort.signal).then(() => {
      if (abort.signal.aborted) return;
      if (this.waiting.get(key) === entry) this.waiting.delete(key);
      this.add(key);
    });
  }

  /** Adds `key` after its backoff: base·2^failures, capped; counts a failure. */
  addRateLimited(key: string): void {
    if (this.shuttingDown) return;
    const delay = this.when(key);
    this.hooks.onRetry?.(key);
    this.addAfter(key, delay);
  }

  /** The delay the next `addRateLimited(key)` will use, without counting a failure. */
  backoffFor(key: string): number {
    const n = this.failures.get(key) ?? 0;
    return Math.min(this.maxDelayMs, this.baseDelayMs * Math.pow(2, n));
  }

  /** Consecutive rate-limited re-adds of `key` since its last `forget`. */
  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Clears the backoff of `key` (after a successful reconcile). Pending delayed adds stay. */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** The next key to process, waiting for one; undefined once shut down. Pair every key with `done(key)`. */
  get(): Promise<string | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    const key = this.queue.shift();
    if (key !== undefined) return Promise.resolve(this.take(key));
    return new Promise((resolve) => this.getters.push(resolve));
  }

  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key) && !this.shuttingDown) this.push(key);
  }

  /** Keys waiting to be processed (not those in progress or delayed). */
  len(): number {
    return this.queue.length;
  }

  /** Keys waiting for a delay (`addAfter`/`addRateLimited`) to end. */
  delayed(): number {
    return this.waiting.size;
  }

  /** Keys handed out and not yet `done`. */
  inFlight(): number {
    return this.processing.size;
  }

  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  shutdown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    for (const { abort } of this.waiting.values()) abort.abort();
    this.waiting.clear();
    this.queue.length = 0;
    for (const resolve of this.getters.splice(0)) resolve(undefined);
  }

  private when(key: string): number {
    const delay = this.backoffFor(key);
    this.failures.set(key, (this.failures.get(key) ?? 0) + 1);
    return delay;
  }

  private push(key: string): void {
    const getter = this.getters.shift();
    if (getter) getter(this.take(key));
    else this.queue.push(key);
  }

  private take(key: string): string {
    this.dirty.delete(key);
    this.processing.add(key);
    return key;
  }
}
