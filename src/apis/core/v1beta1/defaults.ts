/**
 * Defaulting for Shoot and Seed, run before validation as an API server does. Pure: returns a new object that
 * shares unchanged subtrees with the input and copies only the objects on the paths it writes (so it is cheap, and
 * deeply nested unknown fields are never walked).
 */
import { isIPv6SingleStack } from '../../validation/ip-families.js';
import { parseCIDR } from '../../../net/cidr.js';
import { copyWith } from '../../meta/copy.js';
import { hasWorkers, highestMaxPods } from './helpers.js';
import type { Seed } from './seed.js';
import type { Shoot } from './shoot.js';

/** The IPv6 node mask kube-controller-manager gets unless the user chose one: one /64 per node. */
export const DEFAULT_NODE_CIDR_MASK_SIZE_IPV6 = 64;

export function defaultShoot(input: Shoot): Shoot {
  const networking = copyWith(input.spec.networking);
  if (!networking.ipFamilies || networking.ipFamilies.length === 0) networking.ipFamilies = ['IPv4'];
  const shoot: Shoot = copyWith(input, { spec: copyWith(input.spec, { networking }) });
  if (hasWorkers(shoot)) {
    const kubernetes = copyWith(shoot.spec.kubernetes);
    kubernetes.kubeControllerManager = copyWith(kubernetes.kubeControllerManager);
    shoot.spec.kubernetes = kubernetes;
    defaultKubeControllerManager(shoot, networking.ipFamilies);
  }
  return shoot;
}

/** 32 − ceil(log2(2 × maxPods)): room for twice the pods of a node, so addresses can be reused after a restart. */
export function ipv4NodeCIDRMaskSize(maxPods: number): number | undefined {
  if (!Number.isInteger(maxPods) || maxPods < 1) return undefined;
  const bitsForPods = (2 * maxPods - 1).toString(2).length;
  return 32 - bitsForPods;
}

function defaultKubeControllerManager(shoot: Shoot, ipFamilies: readonly string[]): void {
  const kubernetes = (shoot.spec.kubernetes ??= {});
  const kcm = (kubernetes.kubeControllerManager ??= {});
  if (isIPv6SingleStack(ipFamilies)) {
    if (kcm.nodeCIDRMaskSize === undefined && kcm.nodeCIDRMaskSizeIPv6 === undefined) {
      kcm.nodeCIDRMaskSize = DEFAULT_NODE_CIDR_MASK_SIZE_IPV6;
    }
    return;
  }
  if (kcm.nodeCIDRMaskSize === undefined) {
    const mask = ipv4NodeCIDRMaskSize(highestMaxPods(shoot));
    if (mask !== undefined) kcm.nodeCIDRMaskSize = mask;
  }
  if (ipFamilies.length > 1 && kcm.nodeCIDRMaskSizeIPv6 === undefined) {
    kcm.nodeCIDRMaskSizeIPv6 = DEFAULT_NODE_CIDR_MASK_SIZE_IPV6;
  }
}

export function defaultSeed(input: Seed): Seed {
  const networks = copyWith(input.spec.networks);
  const seed: Seed = copyWith(input, { spec: copyWith(input.spec, { networks }) });
  if (!networks.ipFamilies || networks.ipFamilies.length === 0) networks.ipFamilies = ['IPv4'];
  return seed;
}

/**
 * The mutating admission step for a shoot on a seed: missing pods/services come from the seed's shoot defaults,
 * when the default is of the shoot's primary family. Workerless shoots get no pods: they must not have any.
 */
export function applySeedShootDefaults(input: Shoot, seed: Seed): Shoot {
  const defaults = seed.spec.networks?.shootDefaults;
  if (!input.spec.networking || !defaults) return input;
  const networking = copyWith(input.spec.networking);
  const shoot: Shoot = copyWith(input, { spec: copyWith(input.spec, { networking }) });
  const primary = networking.ipFamilies?.[0] ?? 'IPv4';
  const ofPrimaryFamily = (value: string | undefined) => {
    const cidr = value === undefined ? undefined : parseCIDR(value);
    return cidr !== undefined && cidr.family === primary;
  };
  const workers = hasWorkers(shoot);
  if (workers && networking.pods === undefined && ofPrimaryFamily(defaults.pods)) networking.pods = defaults.pods;
  if (networking.services === undefined && ofPrimaryFamily(defaults.services)) networking.services = defaults.services;
  return shoot;
}
