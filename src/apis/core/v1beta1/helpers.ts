import type { Shoot } from './shoot.js';

export const DEFAULT_MAX_PODS = 110;

export function hasWorkers(shoot: Shoot): boolean {
  return (shoot.spec.provider?.workers?.length ?? 0) > 0;
}

/**
 * The highest maxPods of the shoot's kubelet and its worker pools, as Gardener computes it: the shoot kubelet's
 * setting (default 110), raised by any worker pool that sets a higher one.
 */
export function highestMaxPods(shoot: Shoot): number {
  let maxPods = shoot.spec.kubernetes?.kubelet?.maxPods ?? DEFAULT_MAX_PODS;
  for (const worker of shoot.spec.provider?.workers ?? []) {
    const workerMaxPods = worker.kubernetes?.kubelet?.maxPods;
    if (workerMaxPods !== undefined && workerMaxPods > maxPods) maxPods = workerMaxPods;
  }
  return maxPods;
}

/** Shoot IP families after defaulting (`[IPv4]` when empty). */
export function shootIPFamilies(shoot: Shoot): string[] {
  const families = shoot.spec.networking?.ipFamilies ?? [];
  return families.length > 0 ? [...families] : ['IPv4'];
}
