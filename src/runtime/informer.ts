import type { KubernetesObject } from '@kubernetes/client-node';
import { Backoff, type BackoffOptions } from './backoff.js';
import { type ResourceClient } from './client.js';
import { isGone } from './errors.js';
import { type ResourceRef } from '../apis/refs.js';
import { realClock, type Clock } from './clock.js';
import type { Logger } from './log.js';

/** A watch without any event or bookmark for this long is assumed hung and restarted. */
export const DEFAULT_WATCHDOG_MS = 5 * 60_000;
/** A watch that ran at least this long counts as healthy: when it ends, the next one starts without delay. */
export const DEFAULT_MIN_HEALTHY_WATCH_MS = 1_000;
/** Delays between failed lists / failed watches: 500 ms doubling to 30 s, jittered into [d/2, d]. */
export const DEFAULT_INFORMER_BACKOFF = { initialMs: 500, maxMs: 30_000, factor: 2, jitter: 0.5 } as const;

export interface InformerOptions {
  readonly client: ResourceClient;
  readonly ref: ResourceRef;
  /** Only this namespace; all namespaces when unset. */
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** @default DEFAULT_WATCHDOG_MS */
  readonly watchdogMs?: number;
  /** @default DEFAULT_INFORMER_BACKOFF */
  readonly backoff?: BackoffOptions;
  /**
   * Asks the server to end each watch after this long.
   * @default random between 50 % and 90 % of the watchdog, so a healthy server closes first
   */
  readonly timeoutSeconds?: number;
  /** @default DEFAULT_MIN_HEALTHY_WATCH_MS */
  readonly minHealthyWatchMs?: number;
}

type AddHandler<T> = (obj: T) => void;
type UpdateHandler<T> = (obj: T, old: T) => void;
type DeleteHandler<T> = (obj: T) => void;

interface WatchOutcome {
  /** The last resourceVersion seen: where to resume. */
  resourceVersion: string;
  err?: unknown;
}

/** `namespace/name`, or `name` for cluster-scoped objects: the key of the store and of work queues. */
export function objectKey(obj: KubernetesObject): string {
  const name = obj.metadata?.name ?? '';
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${name}` : name;
}

/**
 * A cache of one resource kept current by list + watch, with event handlers.
 *
 * - Lists, then watches from the list's resourceVersion with bookmarks, resuming each new watch where the last
 *   one ended.
 * - 410 Gone: lists again (at once; with backoff when 410s repeat) and reconciles the store, emitting deletes for
 *   objects that vanished in between, updates for changed ones and adds for new ones.
 * - Any other error or a dropped connection: retries forever with capped, jittered exponential backoff. A watch
 *   that ran at least `minHealthyWatchMs` restarts at once and resets the backoff; one that ends sooner waits, so a
 *   failing server is never flooded.
 * - Watchdog: a watch without events or bookmarks for `watchdogMs` is aborted and restarted.
 *
 * Handlers run synchronously in the informer's flow: they should only queue keys. A handler that throws is logged
 * and does not disturb the others.
 */
export class Informer<T extends KubernetesObject = KubernetesObject> {
  private readonly client: ResourceClient;
  private readonly ref: ResourceRef;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly watchdogMs: number;
  private readonly minHealthyWatchMs: number;
  private readonly backoff: Backoff;
  private store = new Map<string, T>();
  private readonly addHandlers: AddHandler<T>[] = [];
  private readonly updateHandlers: UpdateHandler<T>[] = [];
  private readonly deleteHandlers: DeleteHandler<T>[] = [];
  private readonly stopper = new AbortController();
  private synced = false;
  private started?: Promise<void>;
  private running?: Promise<void>;
  private markSynced: () => void = () => {};
  private lastResourceVersion = '';

  constructor(private readonly opts: InformerOptions) {
    this.client = opts.client;
    this.ref = opts.ref;
    this.clock = opts.clock ?? realClock;
    this.watchdogMs = opts.watchdogMs ?? DEFAULT_WATCHDOG_MS;
    this.minHealthyWatchMs = opts.minHealthyWatchMs ?? DEFAULT_MIN_HEALTHY_WATCH_MS;
    this.backoff = new Backoff({ ...DEFAULT_INFORMER_BACKOFF, ...opts.backoff });
    this.logger = opts.logger.child({
      informer: opts.ref.group ? `${opts.ref.plural}.${opts.ref.group}` : opts.ref.plural,
      ...(opts.namespace ? { namespace: opts.namespace } : {}),
    });
  }

  /** Starts listing and watching; resolves once the first list is in the store (or when stopped before). */
  start(): Promise<void> {
    if (!this.started) {
      this.started = new Promise<void>((resolve) => {
        this.markSynced = resolve;
        this.stopper.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      this.running = this.run().catch((e: unknown) => this.logger.error({ err: e }, 'informer loop failed'));
    }
    return this.started;
  }

  /** Stops for good; the store keeps its last content. */
  stop(): void {
    this.stopper.abort();
  }

  /** Resolves when the loop has ended after `stop()`. */
  async stopped(): Promise<void> {
    await this.running;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** The resourceVersion the next watch resumes from. */
  resourceVersion(): string {
    return this.lastResourceVersion;
  }

  list(): T[] {
    return [...this.store.values()];
  }

  get(name: string, namespace?: string): T | undefined {
    return this.store.get(namespace && this.ref.namespaced ? `${namespace}/${name}` : name);
  }

  /** Also called for the objects already in the store when added after the first list. */
  onAdd(handler: AddHandler<T>): void {
    this.addHandlers.push(handler);
    if (this.synced) for (const obj of this.store.values()) this.call('add', () => handler(obj));
  }

  onUpdate(handler: UpdateHandler<T>): void {
    this.updateHandlers.push(handler);
  }

  /** Gets the last known state of the object. */
  onDelete(handler: DeleteHandler<T>): void {
    this.deleteHandlers.push(handler);
  }

  private async run(): Promise<void> {
    const signal = this.stopper.signal;
    let resourceVersion: string | undefined;
    let goneInARow = 0;
    while (!signal.aborted) {
      if (resourceVersion === undefined) {
        try {
          resourceVersion = await this.relist();
        } catch (e) {
          if (signal.aborted) break;
          const delay = this.backoff.next();
          this.logger.warn({ err: e, retryInMs: delay }, 'list failed');
          await this.clock.sleep(delay, signal);
          continue;
        }
      }
      const startedAt = this.clock.now();
      const outcome = await this.watchOnce(resourceVersion);
      if (signal.aborted) break;
      resourceVersion = outcome.resourceVersion;
      const healthy = this.clock.now() - startedAt >= this.minHealthyWatchMs;
      if (isGone(outcome.err)) {
        this.logger.info({ resourceVersion }, 'watch expired (410 Gone), listing again');
        resourceVersion = undefined;
        // The first 410 in a row relists at once (the normal case after a long disconnection); repeated ones back off.
        goneInARow = healthy ? 0 : goneInARow + 1;
        if (goneInARow <= 1) {
          if (healthy) this.backoff.reset();
          continue;
        }
      } else {
        goneInARow = 0;
      }
      if (healthy) {
        this.backoff.reset();
        if (outcome.err && !isGone(outcome.err)) this.logger.info({ err: outcome.err }, 'watch ended, restarting');
      } else {
        const delay = this.backoff.next();
        this.logger.warn({ err: outcome.err, retryInMs: delay }, 'watch ended early, restarting after backoff');
        await this.clock.sleep(delay, signal);
      }
    }
  }

  /** Lists and replaces the store, emitting the difference; returns the list's resourceVersion. */
  private async relist(): Promise<string> {
    const { items, resourceVersion } = await this.client.list<T>(this.ref, {
      namespace: this.opts.namespace,
      labelSelector: this.opts.labelSelector,
      fieldSelector: this.opts.fieldSelector,
      signal: this.stopper.signal,
    });
    const previous = this.store;
    this.store = new Map(items.map((obj) => [objectKey(obj), obj]));
    this.lastResourceVersion = resourceVersion;
    for (const [key, old] of previous) {
      if (!this.store.has(key)) this.emitDelete(old);
    }
    for (const [key, obj] of this.store) {
      const old = previous.get(key);
      if (!old) this.emitAdd(obj);
      else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) this.emitUpdate(obj, old);
    }
    if (!this.synced) {
      this.synced = true;
      this.logger.debug({ count: items.length, resourceVersion }, 'synced');
      this.markSynced();
    }
    return resourceVersion;
  }

  /** One watch from `resourceVersion` until it ends, the watchdog fires, or the informer stops. */
  private watchOnce(resourceVersion: string): Promise<WatchOutcome> {
    return new Promise<WatchOutcome>((resolve) => {
      const local = new AbortController();
      const signal = local.signal;
      let current = resourceVersion;
      let lastActivity = this.clock.now();
      let handle: { abort(): void } | undefined;
      const onStop = (): void => end();
      const end = (err?: unknown): void => {
        if (signal.aborted) return;
        local.abort();
        this.stopper.signal.removeEventListener('abort', onStop);
        handle?.abort();
        resolve(err === undefined ? { resourceVersion: current } : { resourceVersion: current, err });
      };
      if (this.stopper.signal.aborted) {
        end();
        return;
      }
      this.stopper.signal.addEventListener('abort', onStop, { once: true });

      void (async () => {
        while (!signal.aborted) {
          await this.clock.sleep(lastActivity + this.watchdogMs - this.clock.now(), signal);
          if (signal.aborted) return;
          if (this.clock.now() - lastActivity >= this.watchdogMs) {
            end(new Error(`no watch events or bookmarks for ${this.watchdogMs} ms (watchdog)`));
          }
        }
      })();

      const onEvent = (type: string, obj: T): void => {
        if (signal.aborted) return;
        lastActivity = this.clock.now();
        const rv = obj.metadata?.resourceVersion;
        if (rv) {
          current = rv;
          this.lastResourceVersion = rv;
        }
        const key = objectKey(obj);
        const old = this.store.get(key);
        switch (type) {
          case 'ADDED':
          case 'MODIFIED':
            this.store.set(key, obj);
            if (old) this.emitUpdate(obj, old);
            else this.emitAdd(obj);
            break;
          case 'DELETED':
            this.store.delete(key);
            this.emitDelete(obj);
            break;
        }
      };

      this.client
        .watch<T>(
          this.ref,
          {
            namespace: this.opts.namespace,
            resourceVersion,
            labelSelector: this.opts.labelSelector,
            fieldSelector: this.opts.fieldSelector,
            allowWatchBookmarks: true,
            timeoutSeconds: this.opts.timeoutSeconds ?? this.randomTimeoutSeconds(),
          },
          onEvent,
          (err) => end(err),
        )
        .then(
          (h) => {
            handle = h;
            if (signal.aborted) h.abort();
          },
          (e: unknown) => end(e),
        );
    });
  }

  private randomTimeoutSeconds(): number {
    return Math.max(1, Math.floor((this.watchdogMs / 1000) * (0.5 + 0.4 * Math.random())));
  }

  private emitAdd(obj: T): void {
    for (const h of this.addHandlers) this.call('add', () => h(obj));
  }

  private emitUpdate(obj: T, old: T): void {
    for (const h of this.updateHandlers) this.call('update', () => h(obj, old));
  }

  private emitDelete(obj: T): void {
    for (const h of this.deleteHandlers) this.call('delete', () => h(obj));
  }

  private call(event: string, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.logger.error({ err: e, event }, 'informer event handler failed');
    }
  }
}
