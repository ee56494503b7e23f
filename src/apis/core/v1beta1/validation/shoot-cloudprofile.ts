/**
 * A Shoot against the CloudProfile it names, as Gardener's admission (`plugin/pkg/shoot/validator`) checks it after
 * defaulting (applyCloudProfileDefaults): the provider type, the region, the Kubernetes versions, and each worker
 * pool's machine type and image. On an update only what changed is checked, so that a Shoot stays updatable after
 * its profile dropped what it uses.
 */
import { FieldPath, invalid, notSupported, type ErrorList } from '../../../field/index.js';
import type { CloudProfile, ExpirableVersion, MachineImage, MachineType, Region } from '../cloudprofile.js';
import { DEFAULT_ARCHITECTURE } from '../defaults.js';
import type { Shoot, Worker } from '../shoot.js';
import { compareSemVer, isExpired, isPreview, parseSemVer, partialVersion } from '../versions.js';

/** The CPU architectures Gardener knows (`v1beta1constants.ValidArchitectures`). */
export const VALID_ARCHITECTURES = ['amd64', 'arm64'] as const;

const SPEC = FieldPath.root('spec');
const WORKERS = SPEC.child('provider', 'workers');

export interface CloudProfileContext {
  /** The stored Shoot, for an update. */
  readonly old?: Shoot;
  /** What expiration dates are compared with. */
  readonly now: Date;
}

export function validateShootAgainstCloudProfile(
  shoot: Shoot,
  profile: CloudProfile,
  ctx: CloudProfileContext,
): ErrorList {
  const { old } = ctx;
  const versions = profile.spec.kubernetes?.versions ?? [];
  const errors: ErrorList = [
    ...validateKubernetesVersion(versions, shoot.spec.kubernetes?.version, old?.spec.kubernetes?.version, {
      path: SPEC.child('kubernetes', 'version'),
      expiredAllowed: old !== undefined,
      now: ctx.now,
    }),
  ];
  const region = shoot.spec.region;
  if (region !== undefined && region !== old?.spec.region) {
    const regions = profile.spec.regions ?? [];
    if (!regions.some((r) => r.name === region)) {
      errors.push(
        notSupported(
          SPEC.child('region'),
          region,
          regions.map((r) => r.name),
        ),
      );
    }
  }
  const type = shoot.spec.provider?.type;
  if (type !== profile.spec.type) {
    // Every other check of the pools would be about the wrong provider.
    const detail =
      'provider type in shoot must equal provider type of referenced CloudProfile: ' +
      JSON.stringify(profile.spec.type ?? '');
    return [...errors, invalid(SPEC.child('provider', 'type'), type ?? '', detail)];
  }
  const shootRegion = profile.spec.regions?.find((r) => r.name === region);
  (shoot.spec.provider?.workers ?? []).forEach((worker, i) => {
    const oldWorker = old?.spec.provider?.workers?.find((w) => w.name === worker.name);
    errors.push(...validateWorker(worker, oldWorker, i, profile, ctx));
    errors.push(...validateZones(worker, oldWorker, i, shootRegion));
    const poolVersion = worker.kubernetes?.version;
    if (poolVersion !== undefined) {
      const oldPoolVersion = oldWorker?.kubernetes?.version ?? old?.spec.kubernetes?.version;
      errors.push(
        ...validateKubernetesVersion(versions, poolVersion, oldPoolVersion, {
          path: WORKERS.index(i).child('kubernetes', 'version'),
          expiredAllowed: oldWorker !== undefined,
          now: ctx.now,
        }),
      );
    }
  });
  return errors;
}

/**
 * A Kubernetes version against the profile's: still partial after defaulting means nothing fits; otherwise it must
 * be listed (and not expired, unless `expiredAllowed`: an existing Shoot or pool may be moved onto an expired version
 * by maintenance). An unchanged version is not checked.
 */
function validateKubernetesVersion(
  versions: readonly ExpirableVersion[],
  version: string | undefined,
  oldVersion: string | undefined,
  opts: { path: FieldPath; expiredAllowed: boolean; now: Date },
): ErrorList {
  const value = version ?? '';
  const partial = partialVersion(value);
  if (partial !== undefined) {
    if ('invalid' in partial) return [invalid(opts.path, partial.invalid, 'must be a semantic version')];
    return [
      invalid(
        opts.path,
        value,
        `couldn't find a suitable version for ${value}. Suitable versions have a non-expired expiration date and ` +
          "are no 'preview' versions. 'Preview'-classified versions have to be selected explicitly",
      ),
    ];
  }
  if (value === oldVersion) return [];
  // The list of the usable ones only for the error that names them.
  if (versions.some((v) => v.version === value && (opts.expiredAllowed || !isExpired(v, opts.now)))) return [];
  const usable = versions.filter((v) => opts.expiredAllowed || !isExpired(v, opts.now));
  if (usable.some((v) => v.version === value)) return [];
  return [
    notSupported(
      opts.path,
      value,
      usable.map((v) => (isPreview(v) ? `${v.version} (preview)` : v.version)),
    ),
  ];
}

function validateWorker(
  worker: Worker,
  old: Worker | undefined,
  i: number,
  profile: CloudProfile,
  ctx: CloudProfileContext,
): ErrorList {
  const machinePath = WORKERS.index(i).child('machine');
  const architecture = worker.machine?.architecture;
  if (architecture !== undefined && !(VALID_ARCHITECTURES as readonly string[]).includes(architecture)) {
    return [notSupported(machinePath.child('architecture'), architecture, VALID_ARCHITECTURES)];
  }
  const sameArchitecture = architecture === old?.machine?.architecture;
  const errors: ErrorList = [];
  if (old === undefined || !sameArchitecture || worker.machine?.type !== old.machine?.type) {
    errors.push(...validateMachineType(worker, machinePath.child('type'), profile.spec.machineTypes ?? []));
  }
  const image = worker.machine?.image;
  const oldImage = old?.machine?.image;
  if (
    old === undefined ||
    !sameArchitecture ||
    image?.name !== oldImage?.name ||
    image?.version !== oldImage?.version
  ) {
    errors.push(
      ...validateMachineImage(worker, old, machinePath.child('image'), profile.spec.machineImages ?? [], ctx),
    );
  }
  return errors;
}

/**
 * A pool's zones are the region's (a zone the pool had already may stay after the profile dropped it). Without a
 * region of the profile's, the region's own error says enough.
 */
function validateZones(worker: Worker, old: Worker | undefined, i: number, region: Region | undefined): ErrorList {
  const zones = worker.zones ?? [];
  if (region === undefined || zones.length === 0) return [];
  const known = (region.zones ?? []).map((z) => z.name);
  // Sets: the lists come from the request, and a long one must not cost its square.
  const allowed = new Set([...known, ...(old?.zones ?? [])]);
  const errors: ErrorList = [];
  zones.forEach((zone, j) => {
    if (!allowed.has(zone)) errors.push(notSupported(WORKERS.index(i).child('zones').index(j), zone, known));
  });
  return errors;
}

/** The profile's machine type of that name, usable and of the pool's architecture (amd64 unless it says). */
function validateMachineType(worker: Worker, path: FieldPath, types: readonly MachineType[]): ErrorList {
  const name = worker.machine?.type ?? '';
  const architecture = worker.machine?.architecture ?? DEFAULT_ARCHITECTURE;
  const fits = (t: MachineType) => t.usable !== false && (t.architecture ?? DEFAULT_ARCHITECTURE) === architecture;
  const type = types.find((t) => t.name === name);
  // The supported types only for the error that names them.
  if (type !== undefined && fits(type)) return [];
  const supported = types
    .filter(fits)
    .map((t) => t.name)
    .sort();
  if (type === undefined) return [notSupported(path, name, supported)];
  const problems = [
    ...(type.usable === false ? ['is unusable'] : []),
    ...((type.architecture ?? DEFAULT_ARCHITECTURE) !== architecture
      ? [`does not support CPU architecture ${JSON.stringify(architecture)}`]
      : []),
  ];
  const detail =
    `machine type ${JSON.stringify(name)} ${problems.join(', ')}, ` + `supported types are [${supported.join(' ')}]`;
  return [invalid(path, name, detail)];
}

/**
 * The profile's image version of that name and version (as `name:version`), of the pool's architecture and not
 * expired; an existing pool may move to an expired version that is not older than its own (maintenance does).
 */
function validateMachineImage(
  worker: Worker,
  old: Worker | undefined,
  path: FieldPath,
  images: readonly MachineImage[],
  ctx: CloudProfileContext,
): ErrorList {
  const architecture = worker.machine?.architecture ?? DEFAULT_ARCHITECTURE;
  const oldVersion = parseSemVer(old?.machine?.image?.version ?? '');
  const active = (version: string, expired: boolean): boolean => {
    if (!expired) return true;
    if (old === undefined || oldVersion === undefined) return false;
    const semver = parseSemVer(version);
    return semver !== undefined && compareSemVer(semver, oldVersion) >= 0;
  };
  const image = worker.machine?.image;
  // The version the pool names, looked up without the list of every supported one, which only an error names.
  const named = image?.version ? imageVersion(images, image.name ?? '', image.version) : undefined;
  if (
    named !== undefined &&
    active(named.version, isExpired(named, ctx.now)) &&
    (named.architectures ?? []).includes(architecture)
  ) {
    return [];
  }
  const all = new Map<string, { active: boolean; architecture: boolean }>();
  for (const image of images) {
    for (const version of image.versions) {
      all.set(`${image.name}:${version.version}`, {
        active: active(version.version, isExpired(version, ctx.now)),
        architecture: (version.architectures ?? []).includes(architecture),
      });
    }
  }
  const valid = [...all]
    .filter(([, v]) => v.active && v.architecture)
    .map(([key]) => key)
    .sort();
  const supported = `supported machine image versions are: [${valid.join(' ')}]`;
  const found = image?.version ? all.get(`${image.name ?? ''}:${image.version}`) : undefined;
  if (found === undefined)
    return [invalid(path, image ?? null, `machine image version is not supported, ${supported}`)];
  if (found.active && found.architecture) return [];
  const problems = [
    ...(found.architecture ? [] : [`does not support CPU architecture ${JSON.stringify(architecture)}`]),
    ...(found.active ? [] : ['is expired']),
  ];
  return [
    invalid(
      path,
      image,
      `machine image version '${image!.name}:${image!.version}' ${problems.join(', ')}, ${supported}`,
    ),
  ];
}

/**
 * The last version of `images` whose `name:version` is `name:version` (the key validateMachineImage's map is read
 * with, the last of equal keys winning), compared without making the keys.
 */
function imageVersion(
  images: readonly MachineImage[],
  name: string,
  version: string,
): MachineImage['versions'][number] | undefined {
  const key = `${name}:${version}`;
  let found: MachineImage['versions'][number] | undefined;
  for (const image of images) {
    if (!key.startsWith(image.name) || key.charCodeAt(image.name.length) !== 0x3a) continue;
    const length = key.length - image.name.length - 1;
    for (const candidate of image.versions) {
      if (candidate.version.length === length && key.endsWith(candidate.version)) found = candidate;
    }
  }
  return found;
}
