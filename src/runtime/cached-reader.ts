import type { KubernetesObject } from '@kubernetes/client-node';
import type { ResourceClient } from './client.js';
import type { ResourceRef } from '../apis/refs.js';
import { objectKey, type Informer } from './informer.js';

/** A live read on a cache miss must leave a caller (e.g. a webhook within the API server's 10 s) time to answer. */
export const DEFAULT_LIVE_READ_TIMEOUT_MS = 5_000;

/** Reads objects of one kind by name. */
export interface ObjectReader<T extends KubernetesObject = KubernetesObject> {
  /** The object, or undefined when there is none. Throws when the server can't say. */
  get(name: string, namespace?: string): Promise<T | undefined>;
}

export interface CachedReaderOptions<T extends KubernetesObject> {
  /** The cache; shared with the controllers that watch the kind (one list+watch per process). */
  readonly informer: Informer<T>;
  /** For the live read on a cache miss. */
  readonly client: Pick<ResourceClient, 'get'>;
  readonly ref: ResourceRef;
  /** @default DEFAULT_LIVE_READ_TIMEOUT_MS */
  readonly liveReadTimeoutMs?: number;
  /** Counts reads as `{resource, result: hit|miss}`. */
  readonly reads?: ReadMetrics;
}

/**
 * Where a reader's counts go. A miss is counted at once; hits are added when the metrics are scraped, from the
 * reader's own tally: prom-client hashes the labels on every `inc`, and the webhook, which reads a Seed per review
 * with its code out of cache, paid for that in each.
 */
export interface ReadMetrics {
  countMiss(resource: string): void;
  /** `takeHits` returns the hits since it was last called, and starts again from 0. */
  reportHits(resource: string, takeHits: () => number): void;
}

/**
 * Reads from an informer's cache, as controller-runtime's cached client and the gardener-apiserver's listers do, so
 * that steady-state reads cost the API server nothing. On a miss (an object created a moment ago that the watch has
 * not delivered yet, or a cache that has not synced) it asks the server: one GET per name at a time, however many
 * callers miss at once. What the GET finds is not kept: the watch brings it.
 *
 * Objects from the cache are shared: callers must not modify them.
 */
export class CachedReader<T extends KubernetesObject = KubernetesObject> implements ObjectReader<T> {
  readonly informer: Informer<T>;
  private readonly client: Pick<ResourceClient, 'get'>;
  private readonly ref: ResourceRef;
  private readonly liveReadTimeoutMs: number;
  /** Hits since the counter was last read (see the constructor). */
  private unreportedHits = 0;
  private readonly countMiss?: () => void;
  private readonly inFlight = new Map<string, Promise<T | undefined>>();
  /** Callers of `arrival` by key, answered by the informer's add events (followed from the first call on). */
  private readonly arrivals = new Map<string, Array<(obj: T) => void>>();
  private arrivalsFollowed = false;

  constructor(opts: CachedReaderOptions<T>) {
    this.informer = opts.informer;
    this.client = opts.client;
    this.ref = opts.ref;
    this.liveReadTimeoutMs = opts.liveReadTimeoutMs ?? DEFAULT_LIVE_READ_TIMEOUT_MS;
    const resource = opts.ref.group ? `${opts.ref.plural}.${opts.ref.group}` : opts.ref.plural;
    const { reads } = opts;
    if (reads) {
      this.countMiss = () => reads.countMiss(resource);
      reads.reportHits(resource, () => {
        const hits = this.unreportedHits;
        this.unreportedHits = 0;
        return hits;
      });
    }
  }

  get(name: string, namespace?: string): Promise<T | undefined> {
    // A native promise (a miss) is handed back as is.
    return Promise.resolve(this.read(name, namespace));
  }

  /**
   * {@link get}, with a cache hit as the object itself rather than a promise of it: a caller on a hot path (the
   * webhook) goes on in the same turn. Only a miss, which reads from the server, is a promise.
   */
  read(name: string, namespace?: string): T | Promise<T | undefined> {
    const cached = this.informer.get(name, namespace);
    if (cached !== undefined) {
      this.unreportedHits++;
      return cached;
    }
    this.countMiss?.();
    const key = namespace && this.ref.namespaced ? `${namespace}/${name}` : name;
    let read = this.inFlight.get(key);
    if (!read) {
      read = this.client
        .get<T>(this.ref, name, this.ref.namespaced ? namespace : undefined, {
          signal: AbortSignal.timeout(this.liveReadTimeoutMs),
        })
        .finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, read);
    }
    return read;
  }

  /**
   * The cache alone, never an API call: the object, or undefined when the cache lacks it. Counted as a hit when the
   * cache answered, that is when it holds the object or has synced (a synced cache's word that there is none, as
   * src/admission/cache-lookup.ts takes it); before that a lacking object is left uncounted for the live read
   * (`read`) that answers instead.
   */
  cached(name: string, namespace?: string): T | undefined {
    const cached = this.informer.get(name, namespace);
    if (cached !== undefined || this.informer.hasSynced()) this.unreportedHits++;
    return cached;
  }

  /**
   * The object once the cache holds it, or undefined after `timeoutMs`: for an object created a moment ago that the
   * watch has not delivered yet. Waits on the watch alone, never an API call.
   */
  arrival(name: string, namespace: string | undefined, timeoutMs: number): Promise<T | undefined> {
    const cached = this.informer.get(name, namespace);
    if (cached !== undefined) return Promise.resolve(cached);
    if (!this.arrivalsFollowed) {
      this.arrivalsFollowed = true;
      this.informer.onAdd((obj) => {
        const waiting = this.arrivals.get(objectKey(obj));
        if (waiting === undefined) return;
        this.arrivals.delete(objectKey(obj));
        for (const arrived of waiting) arrived(obj);
      });
    }
    const key = namespace && this.ref.namespaced ? `${namespace}/${name}` : name;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        const waiting = this.arrivals.get(key);
        const rest = waiting?.filter((w) => w !== arrived) ?? [];
        if (rest.length > 0) this.arrivals.set(key, rest);
        else this.arrivals.delete(key);
        resolve(undefined);
      }, timeoutMs);
      const arrived = (obj: T) => {
        clearTimeout(timer);
        resolve(obj);
      };
      this.arrivals.set(key, [...(this.arrivals.get(key) ?? []), arrived]);
    });
  }

  /** Every cached object (empty until synced). */
  list(): T[] {
    return this.informer.list();
  }

  /** The cache holds the first list: readiness of whoever reads through it. */
  hasSynced(): boolean {
    return this.informer.hasSynced();
  }
}
