/**
 * Defaulting for Shoot, Seed and CloudProfile, run before validation as an API server does. Pure: returns a new
 * object that shares unchanged subtrees with the input and copies only the objects on the paths it writes (so it is
 * cheap, and deeply nested unknown fields are never walked).
 */
import { isIPv6SingleStack } from '../../validation/ip-families.js';
import { parseCIDR } from '../../../net/cidr.js';
import { copyWith } from '../../meta/copy.js';
import { hasWorkers, highestMaxPods, ipv6ShootGainsIPv4 } from './helpers.js';
import { MachineImageUpdateStrategy, type CloudProfile, type MachineImage } from './cloudprofile.js';
import { latestDefaultableVersion, partialVersion } from './versions.js';
import type { Seed } from './seed.js';
import type { Shoot, Worker } from './shoot.js';

/** The IPv6 node mask kube-controller-manager gets unless the user chose one: one /64 per node. */
export const DEFAULT_NODE_CIDR_MASK_SIZE_IPV6 = 64;

/**
 * The defaulted Shoot: a copy, and so are its `spec` and `spec.networking` (the steps below may write into them, given
 * `owned`).
 */
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

/**
 * Defaulting on update, before {@link defaultShoot}: an IPv6 single-stack shoot that becomes [IPv6, IPv4] keeps its
 * IPv6 node mask, which `nodeCIDRMaskSize` held and `nodeCIDRMaskSizeIPv6` holds on a dual-stack shoot (where
 * `nodeCIDRMaskSize` is the IPv4 one, defaulted then). Only when the update leaves both fields as they were stored;
 * returns `next` itself otherwise, else a copy of the path it writes.
 */
export function defaultShootUpdate(next: Shoot, prev: Shoot): Shoot {
  if (!ipv6ShootGainsIPv4(next, prev)) return next;
  const kcm = next.spec.kubernetes?.kubeControllerManager;
  const prevKCM = prev.spec.kubernetes?.kubeControllerManager;
  if (kcm?.nodeCIDRMaskSize === undefined || kcm.nodeCIDRMaskSizeIPv6 !== undefined) return next;
  if (kcm.nodeCIDRMaskSize !== prevKCM?.nodeCIDRMaskSize) return next;
  const moved = copyWith(kcm, { nodeCIDRMaskSizeIPv6: kcm.nodeCIDRMaskSize });
  delete moved.nodeCIDRMaskSize;
  const kubernetes = copyWith(next.spec.kubernetes, { kubeControllerManager: moved });
  return copyWith(next, { spec: copyWith(next.spec, { kubernetes }) });
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
 * `owned`: `input`, its `spec` and `spec.networking` are the caller's own copies ({@link defaultShoot}'s), written
 * into rather than copied once more.
 */
export function applySeedShootDefaults(input: Shoot, seed: Seed, owned = false): Shoot {
  const defaults = seed.spec.networks?.shootDefaults;
  if (!input.spec.networking || !defaults) return input;
  const networking = owned ? input.spec.networking : copyWith(input.spec.networking);
  const shoot: Shoot = owned ? input : copyWith(input, { spec: copyWith(input.spec, { networking }) });
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

/** The CPU architecture Gardener assumes where a CloudProfile names none. */
export const DEFAULT_ARCHITECTURE = 'amd64';
/** The container runtime of a machine image version that names none. */
export const DEFAULT_CRI_NAME = 'containerd';

/**
 * Gardener's CloudProfile defaults: a machine type or volume type is usable, a machine image updates to the newest
 * version (`major`), an image version runs containerd, and without `machineCapabilities` machine types and image
 * versions are amd64.
 */
export function defaultCloudProfile(input: CloudProfile): CloudProfile {
  const spec = copyWith(input.spec);
  const architectures = (spec.machineCapabilities?.length ?? 0) === 0;
  if (spec.machineImages) {
    spec.machineImages = spec.machineImages.map((image) =>
      copyWith(image, {
        updateStrategy: image.updateStrategy ?? MachineImageUpdateStrategy.Major,
        versions: image.versions.map((version) => {
          const defaulted = copyWith(version);
          if ((version.cri?.length ?? 0) === 0) defaulted.cri = [{ name: DEFAULT_CRI_NAME }];
          if (architectures && (version.architectures?.length ?? 0) === 0) {
            defaulted.architectures = [DEFAULT_ARCHITECTURE];
          }
          return defaulted;
        }),
      }),
    );
  }
  if (spec.machineTypes) {
    spec.machineTypes = spec.machineTypes.map((type) => {
      const defaulted = copyWith(type, { usable: type.usable ?? true });
      if (architectures && type.architecture === undefined) defaulted.architecture = DEFAULT_ARCHITECTURE;
      return defaulted;
    });
  }
  if (spec.volumeTypes) {
    spec.volumeTypes = spec.volumeTypes.map((type) => copyWith(type, { usable: type.usable ?? true }));
  }
  return copyWith(input, { spec });
}

/**
 * The mutating admission step for a Shoot whose CloudProfile exists, as Gardener's admission defaults it:
 * - a missing or partial Kubernetes version (`1.37`) becomes the newest the profile lists that is neither preview
 *   nor expired (of that minor); so does a worker pool's partial version;
 * - a worker pool without a machine image gets the profile's first image (its newest such version), one with an
 *   image name only that image's newest version; a pool of `old` keeps its image when the new one names none, or
 *   names the same image without a version.
 * What can't be defaulted stays as it is, for validation to refuse (validateShootAgainstCloudProfile). `owned`: as
 * for {@link applySeedShootDefaults}.
 */
export function applyCloudProfileDefaults(
  input: Shoot,
  profile: CloudProfile,
  opts: { old?: Shoot; now: Date; owned?: boolean },
): Shoot {
  const versions = profile.spec.kubernetes?.versions ?? [];
  const expand = (version: string | undefined): string | undefined => {
    const partial = partialVersion(version ?? '');
    if (partial === undefined || 'invalid' in partial) return undefined;
    return latestDefaultableVersion(versions, opts.now, partial)?.version;
  };
  let shoot = input;
  const version = expand(input.spec.kubernetes?.version);
  if (version !== undefined) {
    const kubernetes = copyWith(input.spec.kubernetes, { version });
    if (opts.owned) input.spec.kubernetes = kubernetes;
    else shoot = copyWith(input, { spec: copyWith(input.spec, { kubernetes }) });
  }
  const workers = input.spec.provider?.workers;
  if (!workers?.length) return shoot;
  const oldWorkers = opts.old?.spec.provider?.workers ?? [];
  let changed = false;
  const defaulted = workers.map((worker) => {
    let result = worker;
    const poolVersion = worker.kubernetes?.version === undefined ? undefined : expand(worker.kubernetes.version);
    if (poolVersion !== undefined) {
      result = copyWith(result, { kubernetes: copyWith(worker.kubernetes, { version: poolVersion }) });
    }
    const image = defaultMachineImage(
      worker,
      oldWorkers.find((w) => w.name === worker.name),
      profile.spec.machineImages ?? [],
      opts.now,
    );
    if (image !== undefined) result = copyWith(result, { machine: copyWith(worker.machine, { image }) });
    changed ||= result !== worker;
    return result;
  });
  if (!changed) return shoot;
  const provider = copyWith(shoot.spec.provider, { workers: defaulted });
  if (!opts.owned) return copyWith(shoot, { spec: copyWith(shoot.spec, { provider }) });
  shoot.spec.provider = provider;
  return shoot;
}

type ShootMachineImage = NonNullable<NonNullable<Worker['machine']>['image']>;

/** The image a pool gets (see {@link applyCloudProfileDefaults}); undefined when it keeps its own. */
function defaultMachineImage(
  worker: Worker,
  old: Worker | undefined,
  images: readonly MachineImage[],
  now: Date,
): ShootMachineImage | undefined {
  const image = worker.machine?.image;
  if (image?.version) return undefined;
  const oldImage = old?.machine?.image;
  if (oldImage !== undefined && (image === undefined || image.name === oldImage.name)) {
    return image === undefined ? oldImage : copyWith(image, { version: oldImage.version });
  }
  const architecture = worker.machine?.architecture ?? DEFAULT_ARCHITECTURE;
  const candidates = image?.name ? images.filter((i) => i.name === image.name) : images;
  for (const candidate of candidates) {
    const versions = candidate.versions.filter((v) => (v.architectures ?? []).includes(architecture));
    const latest = latestDefaultableVersion(versions, now, {}, { previewIfNoOther: true });
    if (latest !== undefined) return copyWith(image, { name: candidate.name, version: latest.version });
  }
  return undefined;
}
