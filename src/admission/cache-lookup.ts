/**
 * Seeds and CloudProfiles for the webhook as Gardener's admission plugins read them from their listers: a map read on
 * the informer's cache, and once the cache has synced, a name it doesn't hold is an object that isn't there. Only
 * before the first list is in the cache does a lookup ask the API server (`beforeSync`, the cached reader's live
 * read), and the webhook answers `/readyz` with 503 until then anyway.
 *
 * Unlike a lister, a lookup can give a name the synced cache lacks a moment to arrive (`arrival`): a client that
 * creates a CloudProfile, a Seed and a Shoot one after the other (`up`, `kubectl apply -f` of a folder) has its Shoot
 * reviewed before the watch may have delivered the other two. Waiting on the watch costs the API server nothing.
 */
import type { MaybePromise } from './review.js';

/** An informer's cache (src/runtime/informer.ts), or anything that reads like one. */
export interface SyncedCache<T> {
  get(name: string): T | undefined;
  hasSynced(): boolean;
}

/**
 * The object of that name from `cache`. Once synced, a name it lacks is `arrival`'s answer (the object if the watch
 * brings it in time), or undefined; before that, `beforeSync` answers (unset: as after).
 */
export function cacheLookup<T>(
  cache: SyncedCache<T>,
  beforeSync?: (name: string) => MaybePromise<T | undefined>,
  arrival?: (name: string) => Promise<T | undefined>,
): (name: string) => MaybePromise<T | undefined> {
  return (name) => {
    const cached = cache.get(name);
    if (cached !== undefined) return cached;
    if (beforeSync !== undefined && !cache.hasSynced()) return beforeSync(name);
    return arrival === undefined ? undefined : arrival(name);
  };
}
