/**
 * The caches the components of one process share: one list+watch and one reader per kind, whoever reads it (the
 * admission webhook, the gardenlet, the scheduler). The runtime composition creates them once and passes them on.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { Refs, type ResourceRef } from '../apis/refs.js';
import { CachedReader } from '../runtime/cached-reader.js';
import type { Manager } from '../runtime/manager.js';

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
 * Readers on the manager's informers: they start, sync (before the manager reports ready) and stop with the
 * manager, and their hits and misses count in its metrics. Each is created on first use, before `manager.start()`:
 * a process whose components don't read a kind neither watches it nor needs the permission to.
 */
export function sharedReaders(manager: Manager): SharedReaders {
  const reader = (ref: ResourceRef) =>
    new CachedReader({
      informer: manager.informer(ref),
      client: manager.client,
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
