import { randomUUID } from 'node:crypto';
import type { KubernetesObject } from '@kubernetes/client-node';
import { realClock, type Clock } from './clock.js';
import type { Informer } from './informer.js';
import type { Logger } from './log.js';
import type { Metrics } from './metrics.js';
import { WorkQueue } from './queue.js';
import { isConflict } from './errors.js';

/** Which object to reconcile. */
export interface Request {
  namespace?: string;
  name: string;
}

export interface Result {
  /** Reconcile again after this many milliseconds (and reset the error backoff). */
  requeueAfter?: number;
  /** Reconcile again after the key's backoff, without logging an error. */
  requeue?: boolean;
}

export interface ReconcileContext {
  /** Aborts when the reconcile times out; pass it to every call that can wait. */
  signal: AbortSignal;
  /**
   * Aborts when the controller stops taking work (`stop()` began): a reconcile that waits in place (a flow task
   * looking again) stops waiting and returns, as controller-runtime's reconcilers see their context cancelled at
   * shutdown; the calls it makes meanwhile go on until `signal` aborts. Unset: never.
   */
  stopping?: AbortSignal;
  /** Carries controller, namespace, name and reconcileID. */
  logger: Logger;
}

export interface Reconciler {
  reconcile(req: Request, ctx: ReconcileContext): Promise<Result | void>;
}

/** Thrown by a reconciler for an error that retrying cannot fix: logged and counted, not requeued. */
/** Whether an error or one of its causes is a conflict (HTTP 409 other than AlreadyExists). */
export function causedByConflict(e: unknown): boolean {
  for (let cause: unknown = e, depth = 0; cause !== undefined && depth < 10; depth++) {
    if (isConflict(cause)) return true;
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return false;
}

export class TerminalError extends Error {
  override readonly name = 'TerminalError';
}

export const DEFAULT_WORKERS = 2;
export const DEFAULT_RECONCILE_TIMEOUT_MS = 3 * 60_000;

export interface ControllerOptions {
  readonly name: string;
  readonly reconciler: Reconciler;
  /** Reconciles running at once (never two for one key). @default DEFAULT_WORKERS */
  readonly workers?: number;
  /** After this long the reconcile's signal aborts. @default DEFAULT_RECONCILE_TIMEOUT_MS */
  readonly reconcileTimeoutMs?: number;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly clock?: Clock;
  /** Per-key error backoff of the queue. @default 100 ms doubling to 60 s (see DEFAULT_QUEUE_BACKOFF) */
  readonly backoff?: { baseDelayMs?: number; maxDelayMs?: number };
}

/** The queue key of a request: `namespace/name`, or `name` when cluster-scoped. */
export function requestKey(req: Request): string {
  return req.namespace ? `${req.namespace}/${req.name}` : req.name;
}

export function parseRequestKey(key: string): Request {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** The object's own request. */
export function requestFor(obj: KubernetesObject): Request {
  const ns = obj.metadata?.namespace;
  return ns ? { namespace: ns, name: obj.metadata?.name ?? '' } : { name: obj.metadata?.name ?? '' };
}

/**
 * Wires informer events to a work queue and runs the reconciler on its keys with bounded concurrency.
 * Outcomes: thrown error → logged, rate-limited requeue (TerminalError: no requeue); `requeueAfter` → forget the
 * backoff, requeue after that time; `requeue` → rate-limited requeue; otherwise → forget the backoff.
 */
export class Controller {
  readonly name: string;
  private readonly reconciler: Reconciler;
  private readonly workers: number;
  private readonly reconcileTimeoutMs: number;
  private readonly logger: Logger;
  private readonly metrics: Metrics;
  private readonly clock: Clock;
  private readonly queue: WorkQueue;
  private running: Promise<void>[] = [];
  private active = 0;
  /** The signals of the reconciles in flight, aborted when stop() stops waiting for them. */
  private readonly inFlightAborts = new Set<AbortController>();
  /** Aborted when stop() begins (ReconcileContext.stopping). */
  private readonly stopping = new AbortController();
  private state: 'new' | 'started' | 'stopped' = 'new';

  constructor(opts: ControllerOptions) {
    this.name = opts.name;
    this.reconciler = opts.reconciler;
    this.workers = Math.max(1, opts.workers ?? DEFAULT_WORKERS);
    this.reconcileTimeoutMs = opts.reconcileTimeoutMs ?? DEFAULT_RECONCILE_TIMEOUT_MS;
    this.logger = opts.logger.child({ controller: opts.name });
    this.metrics = opts.metrics;
    this.clock = opts.clock ?? realClock;
    this.queue = new WorkQueue({
      name: opts.name,
      clock: this.clock,
      ...opts.backoff,
      hooks: {
        onAdd: () => this.metrics.workqueueAdds.inc({ name: this.name }),
        onRetry: () => this.metrics.workqueueRetries.inc({ name: this.name }),
      },
    });
    this.metrics.registerQueue(opts.name, () => this.queue.len());
    this.metrics.maxConcurrentReconciles.set({ controller: opts.name }, this.workers);
    this.metrics.activeWorkers.set({ controller: opts.name }, 0);
  }

  /**
   * Enqueues the requests `map` derives from every added, updated and deleted object (on update, from the new
   * and the old object, unless `updated(obj, old)` says the update doesn't matter to this controller, as
   * controller-runtime's predicates do). @default map: the object's own request
   */
  watch<T extends KubernetesObject>(
    informer: Informer<T>,
    map: (obj: T) => Request[] = (o) => [requestFor(o)],
    updated: (obj: T, old: T) => boolean = () => true,
  ): this {
    const enqueueAll = (obj: T): void => {
      for (const req of map(obj)) this.enqueue(req);
    };
    informer.onAdd(enqueueAll);
    informer.onUpdate((obj, old) => {
      if (!updated(obj, old)) return;
      enqueueAll(obj);
      enqueueAll(old);
    });
    informer.onDelete(enqueueAll);
    return this;
  }

  enqueue(req: Request): void {
    this.queue.add(requestKey(req));
  }

  /** Enqueues `req` after `ms`. */
  enqueueAfter(req: Request, ms: number): void {
    this.queue.addAfter(requestKey(req), ms);
  }

  /** Starts the workers and returns; reconciles run until `stop()`. */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error(`controller ${this.name} was already ${this.state}`);
    this.state = 'started';
    this.logger.info({ workers: this.workers }, 'starting workers');
    for (let i = 0; i < this.workers; i++) this.running.push(this.work());
  }

  /**
   * Stops taking work (queued keys are dropped), tells the reconciles in flight (their `stopping` signal: one waiting
   * in place returns) and waits for them; after `timeoutMs` it aborts their signals (their API calls fail at once,
   * e.g. against an API server whose etcd died) and returns.
   */
  async stop(opts: { timeoutMs?: number } = {}): Promise<void> {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    this.stopping.abort(new Error(`controller ${this.name} stopping`));
    this.queue.shutdown();
    const all = Promise.all(this.running).then(() => true);
    if (opts.timeoutMs === undefined) {
      await all;
    } else {
      const abort = new AbortController();
      const done = await Promise.race([all, this.clock.sleep(opts.timeoutMs, abort.signal).then(() => false)]);
      abort.abort();
      if (!done) {
        this.logger.warn({ inFlight: this.active }, 'stopped without waiting for reconciles in flight');
        for (const inFlight of this.inFlightAborts) inFlight.abort(new Error(`controller ${this.name} stopped`));
      }
    }
    this.logger.info('stopped');
  }

  /** Keys waiting in the queue (for tests and diagnostics). */
  queueLength(): number {
    return this.queue.len();
  }

  /** Reconciles running now. */
  inFlight(): number {
    return this.active;
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        await this.process(key);
      } finally {
        this.queue.done(key);
      }
    }
  }

  private async process(key: string): Promise<void> {
    const req = parseRequestKey(key);
    const logger = this.logger.child({ ...req, reconcileID: randomUUID() });
    const abort = new AbortController();
    const timer = new AbortController();
    void this.clock.sleep(this.reconcileTimeoutMs, timer.signal).then(() => {
      if (!timer.signal.aborted) abort.abort(new Error(`reconcile timed out after ${this.reconcileTimeoutMs} ms`));
    });
    const labels = { controller: this.name };
    const start = this.clock.now();
    this.inFlightAborts.add(abort);
    this.active++;
    this.metrics.activeWorkers.set(labels, this.active);
    try {
      const result =
        (await this.reconciler.reconcile(req, {
          signal: abort.signal,
          stopping: this.stopping.signal,
          logger,
        })) ?? {};
      if (result.requeueAfter !== undefined && result.requeueAfter > 0) {
        this.queue.forget(key);
        this.queue.addAfter(key, result.requeueAfter);
        this.metrics.reconcileTotal.inc({ ...labels, result: 'requeue_after' });
      } else if (result.requeue) {
        this.queue.addRateLimited(key);
        this.metrics.reconcileTotal.inc({ ...labels, result: 'requeue' });
      } else {
        this.queue.forget(key);
        this.metrics.reconcileTotal.inc({ ...labels, result: 'success' });
      }
    } catch (e) {
      this.metrics.reconcileErrors.inc(labels);
      this.metrics.reconcileTotal.inc({ ...labels, result: 'error' });
      if (e instanceof TerminalError) {
        this.queue.forget(key);
        logger.error({ err: e }, 'reconcile failed terminally, not retrying');
      } else {
        const retryInMs = this.queue.backoffFor(key);
        this.queue.addRateLimited(key);
        // An object that changed under us (optimistic concurrency) is routine: the retry reads it anew.
        if (causedByConflict(e)) logger.debug({ reason: (e as Error).message, retryInMs }, 'reconcile retried');
        else logger.error({ err: e, retryInMs }, 'reconcile failed');
      }
    } finally {
      timer.abort();
      this.inFlightAborts.delete(abort);
      this.active--;
      this.metrics.activeWorkers.set(labels, this.active);
      this.metrics.reconcileTime.observe(labels, (this.clock.now() - start) / 1000);
    }
  }
}
