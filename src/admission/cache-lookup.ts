/**
 * Seeds and CloudProfiles for the webhook as Gardener's admission plugins read them from their listers: a map read on
 * the informer's cache, and once the cache has synced, a name it doesn't hold is an object that isn't there, answered
 * at once. Only before the first list is in the cache does a lookup ask the API server (`beforeSync`, the cached
 * reader's live read), and the webhook answers `/readyz` with 503 until then anyway.
 */
import type { MaybePromise } from './review.js';

/** An informer's cache (src/runtime/informer.ts), or anything that reads like one. */
export interface SyncedCache<T> {
  get(name: string): T | undefined;
  hasSynced(): boolean;
}

/**
 * The object of that name from `cache`; undefined when it has none once synced. Before that, `beforeSync` answers
 * (unset: undefined, as after).
 */
export function cacheLookup<T>(
  cache: SyncedCache<T>,
  beforeSync?: (name: string) => MaybePromise<T | undefined>,
): (name: string) => MaybePromise<T | undefined> {
  return (name) => {
    const cached = cache.get(name);
    if (cached !== undefined || beforeSync === undefined || cache.hasSynced()) return cached;
    return beforeSync(name);
  };
}
