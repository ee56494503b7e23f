/**
 * The caches the components of one process share: one list+watch and one reader per kind, whoever reads it (the
 * admission webhook, the gardenlet, the scheduler). The runtime composition creates them once and passes them on.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { cacheLookup } from '../admission/cache-lookup.js';
import type { MaybePromise } from '../admission/review.js';
import { Refs, type ResourceRef } from '../apis/refs.js';
import { CachedReader } from '../runtime/cached-reader.js';
import type { ClusterAccess, Manager } from '../runtime/manager.js';

/** Seeds from the shared cache, read from the API server only on a miss. */
export type SeedReader = CachedReader<KubernetesObject>;

/** CloudProfiles from the shared cache (the webhook's), read from the API server only on a miss. */
export type CloudProfileReader = CachedReader<KubernetesObject>;

/**
 * Shoots from the shared cache: the webhook counts the installation's machines over them; the gardenlet, in the same
 * process, watches them anyway.
 */
export type ShootReader = CachedReader<KubernetesObject>;

export interface SharedReaders {
  readonly seeds: SeedReader;
  readonly cloudProfiles: CloudProfileReader;
  readonly shoots: ShootReader;
}

/**
 * Readers on the manager's informers of the garden (the manager's own cluster unless given): they start, sync
 * (before the manager reports ready) and stop with the manager, and their hits and misses count in its metrics. Each
 * is created on first use, before `manager.start()`: a process whose components don't read a kind neither watches it
 * nor needs the permission to.
 */
export function sharedReaders(manager: Manager, garden: ClusterAccess = manager): SharedReaders {
  const reader = (ref: ResourceRef) =>
    new CachedReader({
      informer: garden.informer(ref),
      client: garden.client,
      ref,
      reads: manager.metrics.cachedReads,
    });
  let seeds: SeedReader | undefined;
  let cloudProfiles: CloudProfileReader | undefined;
  let shoots: ShootReader | undefined;
  return {
    get seeds() {
      return (seeds ??= reader(Refs.seed));
    },
    get cloudProfiles() {
      return (cloudProfiles ??= reader(Refs.cloudProfile));
    },
    get shoots() {
      return (shoots ??= reader(Refs.shoot));
    },
  };
}

/**
 * How long the webhook waits for a Seed or CloudProfile that its synced cache lacks: the watch's delivery of one
 * created a moment before the Shoot that names it (`up` and `kubectl apply -f` create them back to back).
 */
export const ARRIVAL_GRACE_MS = 2_000;

/**
 * The webhook's lookup through `reader`, as Gardener's admission plugins read their listers: from the cache, with no
 * API call per review (a hit in the reader's metrics: the cache answered). Once it has synced, a name it lacks is
 * waited for on the watch for up to `graceMs`, then none. Only before the first list does a lookup read from the API
 * server (a miss).
 */
export function syncedLookup<T extends KubernetesObject>(
  reader: CachedReader<T>,
  graceMs = ARRIVAL_GRACE_MS,
): (name: string) => MaybePromise<T | undefined> {
  return cacheLookup(
    { get: (name) => reader.cached(name), hasSynced: () => reader.hasSynced() },
    (name) => reader.read(name),
    (name) => reader.arrival(name, undefined, graceMs),
  );
}
