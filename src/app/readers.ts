/**
 * The caches the components of one process share: one list+watch and one reader per kind, whoever reads it (the
 * admission webhook, the gardenlet, the scheduler). The runtime composition creates them once and passes them on.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { Refs } from '../gardenlet/resources.js';
import { CachedReader } from '../runtime/cached-reader.js';
import type { Manager } from '../runtime/manager.js';

/** Seeds from the shared cache, read from the API server only on a miss. */
export type SeedReader = CachedReader<KubernetesObject>;

export interface SharedReaders {
  readonly seeds: SeedReader;
}

/**
 * Readers on the manager's informers: they start, sync (before the manager reports ready) and stop with the
 * manager, and their hits and misses count in its metrics. Each is created on first use, before `manager.start()`:
 * a process whose components don't read a kind neither watches it nor needs the permission to.
 */
export function sharedReaders(manager: Manager): SharedReaders {
  let seeds: SeedReader | undefined;
  return {
    get seeds() {
      seeds ??= new CachedReader({
        informer: manager.informer(Refs.seed),
        client: manager.client,
        ref: Refs.seed,
        reads: manager.metrics.cachedReads,
      });
      return seeds;
    },
  };
}
