import { FieldPath } from '../../field/index.js';
import { isIPv6SingleStack } from '../../validation/ip-families.js';
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

/** The CloudProfile a Shoot names, and the field that names it. */
export interface CloudProfileReference {
  readonly name: string;
  readonly path: FieldPath;
  /** `spec.cloudProfile.kind` as given (`CloudProfile` when unset; Gardener also knows `NamespacedCloudProfile`). */
  readonly kind: string;
}

/**
 * `spec.cloudProfile.name`, else the older `spec.cloudProfileName`; undefined when neither names one. Reads the object
 * as sent (the webhook looks the profile up before decoding the Shoot).
 */
export function cloudProfileReference(shoot: unknown): CloudProfileReference | undefined {
  const spec = (shoot as { spec?: { cloudProfile?: { name?: unknown; kind?: unknown }; cloudProfileName?: unknown } })
    ?.spec;
  const kind =
    typeof spec?.cloudProfile?.kind === 'string' && spec.cloudProfile.kind ? spec.cloudProfile.kind : 'CloudProfile';
  if (typeof spec?.cloudProfile?.name === 'string' && spec.cloudProfile.name !== '') {
    return { name: spec.cloudProfile.name, path: FieldPath.root('spec', 'cloudProfile', 'name'), kind };
  }
  if (typeof spec?.cloudProfileName === 'string' && spec.cloudProfileName !== '') {
    return { name: spec.cloudProfileName, path: FieldPath.root('spec', 'cloudProfileName'), kind: 'CloudProfile' };
  }
  return undefined;
}

/** The IPv6 node mask of an IPv6 single-stack shoot: `nodeCIDRMaskSizeIPv6`, else `nodeCIDRMaskSize` (defaulted). */
export function ipv6SingleStackNodeMask(shoot: Shoot): number | undefined {
  const kcm = shoot.spec.kubernetes?.kubeControllerManager;
  return kcm?.nodeCIDRMaskSizeIPv6 ?? kcm?.nodeCIDRMaskSize;
}

/**
 * Whether the update makes an IPv6 single-stack shoot [IPv6, IPv4]: the one change where its IPv6 node mask moves
 * from `nodeCIDRMaskSize` to `nodeCIDRMaskSizeIPv6` (defaulting and update validation both ask).
 */
export function ipv6ShootGainsIPv4(next: Shoot, prev: Shoot): boolean {
  const families = next.spec.networking?.ipFamilies ?? [];
  return (
    isIPv6SingleStack(prev.spec.networking?.ipFamilies) &&
    families.length === 2 &&
    families[0] === 'IPv6' &&
    families[1] === 'IPv4'
  );
}
