/**
 * CloudProfile validation, in the words of Gardener's (`pkg/apis/core/validation/cloudprofile.go`): the provider
 * type, at least one of each list, versions Gardener can order, names that are unique, quantities that are not
 * negative, and no version created already expired.
 */
import { X509Certificate } from 'node:crypto';
import {
  duplicate,
  FieldPath,
  forbidden,
  invalid,
  notSupported,
  required,
  type ErrorList,
} from '../../../field/index.js';
import { QUANTITY_DETAIL, quantitySign } from '../../../validation/quantity.js';
import {
  MachineImageUpdateStrategy,
  VersionClassification,
  type CloudProfile,
  type ExpirableVersion,
} from '../cloudprofile.js';
import { compareSemVer, isExpired, parseSemVer } from '../versions.js';

const SPEC = FieldPath.root('spec');
const KUBERNETES_VERSION = /^([0-9]+\.){2}[0-9]+$/;
const CLASSIFICATIONS: readonly string[] = Object.values(VersionClassification).sort();
const UPDATE_STRATEGIES: readonly string[] = Object.values(MachineImageUpdateStrategy).sort();
/** The container runtimes a machine image version may offer (Gardener's `availableWorkerCRINames`). */
export const CRI_NAMES = ['containerd'] as const;

export function validateCloudProfile(profile: CloudProfile, now: Date = new Date()): ErrorList {
  return [...validateCloudProfileSpec(profile), ...validateNoExpiredVersions(profile, undefined, now)];
}

/** On an update, versions that were there may have expired meanwhile; only added ones must not be. */
export function validateCloudProfileUpdate(next: CloudProfile, prev: CloudProfile, now: Date = new Date()): ErrorList {
  return [...validateCloudProfileSpec(next), ...validateNoExpiredVersions(next, prev, now)];
}

function validateCloudProfileSpec(profile: CloudProfile): ErrorList {
  const spec = profile.spec;
  const errors: ErrorList = [];
  if (!spec.type) errors.push(required(SPEC.child('type'), 'must provide a provider type'));
  errors.push(
    ...validateKubernetesVersions(spec.kubernetes?.versions ?? []),
    ...validateMachineImages(profile),
    ...validateMachineTypes(profile),
    ...validateVolumeTypes(profile),
    ...validateRegions(profile),
  );
  if (spec.caBundle !== undefined && !isCertificate(spec.caBundle)) {
    errors.push(invalid(SPEC.child('caBundle'), spec.caBundle, 'caBundle is not a valid PEM-encoded certificate'));
  }
  return errors;
}

function validateKubernetesVersions(versions: readonly ExpirableVersion[]): ErrorList {
  const path = SPEC.child('kubernetes', 'versions');
  if (versions.length === 0) return [required(path, 'must provide at least one Kubernetes version')];
  const errors: ErrorList = [];
  const seen = new Set<string>();
  versions.forEach((version, i) => {
    const versionPath = path.index(i).child('version');
    if (!KUBERNETES_VERSION.test(version.version)) {
      errors.push(
        invalid(
          versionPath,
          version.version,
          `all Kubernetes versions must match the regex ${KUBERNETES_VERSION.source}`,
        ),
      );
    } else if (seen.has(version.version)) {
      errors.push(duplicate(versionPath, version.version));
    }
    seen.add(version.version);
    errors.push(...validateExpirableVersion(version, versions, path.index(i)));
  });
  const latest = latestListed(versions);
  if (latest?.expirationDate !== undefined) {
    errors.push(
      invalid(
        path.index(versions.indexOf(latest)).child('expirationDate'),
        latest.expirationDate,
        `expiration date of latest kubernetes version ('${latest.version}') must not be set`,
      ),
    );
  }
  return errors;
}

/** The newest version of a list (Gardener lets the newest Kubernetes version never expire). */
function latestListed(versions: readonly ExpirableVersion[]): ExpirableVersion | undefined {
  let latest: ExpirableVersion | undefined;
  for (const version of versions) {
    const semver = parseSemVer(version.version);
    if (semver === undefined) continue;
    if (latest === undefined || compareSemVer(semver, parseSemVer(latest.version)!) > 0) latest = version;
  }
  return latest;
}

/** Classification known, an RFC 3339 expiration date, at most one `supported` version per minor. */
function validateExpirableVersion(
  version: ExpirableVersion,
  all: readonly ExpirableVersion[],
  path: FieldPath,
): ErrorList {
  const errors: ErrorList = [];
  if (version.classification !== undefined && !CLASSIFICATIONS.includes(version.classification)) {
    errors.push(notSupported(path.child('classification'), version.classification, CLASSIFICATIONS));
  }
  if (version.expirationDate !== undefined && !isRFC3339(version.expirationDate)) {
    errors.push(invalid(path.child('expirationDate'), version.expirationDate, 'must be an RFC 3339 date-time'));
  }
  if (version.classification === VersionClassification.Supported) {
    const semver = parseSemVer(version.version);
    const sameMinor = all.filter((other) => {
      if (other === version || other.classification !== VersionClassification.Supported) return false;
      const o = parseSemVer(other.version);
      return semver !== undefined && o !== undefined && o.major === semver.major && o.minor === semver.minor;
    });
    // Reported on the later ones: the first supported version of a minor is the one that stays.
    if (sameMinor.some((other) => all.indexOf(other) < all.indexOf(version))) {
      errors.push(
        forbidden(
          path,
          `unable to add version ${JSON.stringify(version.version)} with classification "supported". Only one ` +
            '"supported" version is allowed per minor version',
        ),
      );
    }
  }
  return errors;
}

function validateMachineImages(profile: CloudProfile): ErrorList {
  const path = SPEC.child('machineImages');
  const images = profile.spec.machineImages ?? [];
  if (images.length === 0) return [required(path, 'must provide at least one machine image')];
  const errors: ErrorList = [];
  const names = new Set<string>();
  images.forEach((image, i) => {
    const imagePath = path.index(i);
    errors.push(...validateName(image.name, names, imagePath.child('name'), 'machine image name must not be empty'));
    if (image.updateStrategy !== undefined && !UPDATE_STRATEGIES.includes(image.updateStrategy)) {
      errors.push(notSupported(imagePath.child('updateStrategy'), image.updateStrategy, UPDATE_STRATEGIES));
    }
    if (image.versions.length === 0) {
      const detail = `must provide at least one version for the machine image '${image.name}'`;
      errors.push(required(imagePath.child('versions'), detail));
    }
    const versions = new Set<string>();
    image.versions.forEach((version, j) => {
      const versionPath = imagePath.child('versions').index(j);
      if (!version.version) {
        errors.push(required(versionPath.child('version'), 'must provide a version'));
      } else if (parseSemVer(version.version) === undefined) {
        errors.push(
          invalid(
            versionPath.child('version'),
            version.version,
            'could not parse version. Use a semantic version. In case there is no semantic version for this image ' +
              'use the extensibility provider (define mapping in the CloudProfile) to map to the actual non ' +
              'semantic version',
          ),
        );
      } else if (versions.has(version.version)) {
        errors.push(duplicate(versionPath.child('version'), version.version));
      }
      versions.add(version.version);
      errors.push(...validateExpirableVersion(version, image.versions, versionPath));
      const cris = new Set<string>();
      (version.cri ?? []).forEach((cri, k) => {
        const criPath = versionPath.child('cri').index(k).child('name');
        if (cris.has(cri.name)) errors.push(duplicate(criPath, cri.name));
        else if (!(CRI_NAMES as readonly string[]).includes(cri.name))
          errors.push(notSupported(criPath, cri.name, CRI_NAMES));
        cris.add(cri.name);
      });
    });
  });
  return errors;
}

function validateMachineTypes(profile: CloudProfile): ErrorList {
  const path = SPEC.child('machineTypes');
  const types = profile.spec.machineTypes ?? [];
  if (types.length === 0) return [required(path, 'must provide at least one machine type')];
  const errors: ErrorList = [];
  const names = new Set<string>();
  types.forEach((type, i) => {
    const typePath = path.index(i);
    errors.push(...validateName(type.name, names, typePath.child('name')));
    for (const [key, value] of [
      ['cpu', type.cpu],
      ['gpu', type.gpu],
      ['memory', type.memory],
      ['storage.size', type.storage?.size],
      ['storage.minSize', type.storage?.minSize],
    ] as const) {
      const valuePath = key.split('.').reduce((p, segment) => p.child(segment), typePath);
      errors.push(...validateQuantity(key, value, valuePath));
    }
    if (type.storage && (type.storage.size === undefined) === (type.storage.minSize === undefined)) {
      const detail =
        type.storage.size === undefined
          ? 'must either configure "size" or "minSize"'
          : 'not allowed to configure both "size" and "minSize"';
      errors.push(invalid(typePath.child('storage'), type.storage, detail));
    }
  });
  return errors;
}

function validateVolumeTypes(profile: CloudProfile): ErrorList {
  const errors: ErrorList = [];
  const names = new Set<string>();
  (profile.spec.volumeTypes ?? []).forEach((type, i) => {
    const typePath = SPEC.child('volumeTypes').index(i);
    errors.push(...validateName(type.name, names, typePath.child('name')));
    if (!type.class) errors.push(required(typePath.child('class'), 'must provide a class'));
    errors.push(...validateQuantity('minSize', type.minSize, typePath.child('minSize')));
  });
  return errors;
}

function validateRegions(profile: CloudProfile): ErrorList {
  const path = SPEC.child('regions');
  const regions = profile.spec.regions ?? [];
  if (regions.length === 0) return [required(path, 'must provide at least one region')];
  const errors: ErrorList = [];
  const names = new Set<string>();
  regions.forEach((region, i) => {
    const regionPath = path.index(i);
    errors.push(...validateName(region.name, names, regionPath.child('name'), 'must provide a region name'));
    const zones = new Set<string>();
    (region.zones ?? []).forEach((zone, j) => {
      const zonePath = regionPath.child('zones').index(j).child('name');
      errors.push(...validateName(zone.name, zones, zonePath, 'zone name cannot be empty'));
    });
  });
  return errors;
}

/** A name that is given (`detail` says so otherwise) and not in `seen`, which it joins. */
function validateName(name: string, seen: Set<string>, path: FieldPath, detail = 'must provide a name'): ErrorList {
  const errors: ErrorList = [];
  if (!name) errors.push(required(path, detail));
  else if (seen.has(name)) errors.push(duplicate(path, name));
  seen.add(name);
  return errors;
}

function validateQuantity(key: string, value: string | number | undefined, path: FieldPath): ErrorList {
  if (value === undefined) return [];
  const sign = quantitySign(value);
  if (sign === undefined) return [invalid(path, value, QUANTITY_DETAIL)];
  return sign < 0 ? [invalid(path, String(value), `${key.split('.').pop()} value must not be negative`)] : [];
}

/**
 * Gardener refuses to create a version that has expired already: on create every version is new, on an update the
 * ones `prev` did not list.
 */
function validateNoExpiredVersions(profile: CloudProfile, prev: CloudProfile | undefined, now: Date): ErrorList {
  const errors: ErrorList = [];
  const check = (versions: readonly ExpirableVersion[], known: readonly ExpirableVersion[], path: FieldPath) => {
    versions.forEach((version, i) => {
      if (known.some((k) => k.version === version.version) || !isExpired(version, now)) return;
      errors.push(
        forbidden(
          path.index(i),
          `unable to create version ${JSON.stringify(version.version)}. Creating a version with expiration date in ` +
            'the past is not allowed',
        ),
      );
    });
  };
  check(
    profile.spec.kubernetes?.versions ?? [],
    prev?.spec.kubernetes?.versions ?? [],
    SPEC.child('kubernetes', 'versions'),
  );
  (profile.spec.machineImages ?? []).forEach((image, i) => {
    const known = prev?.spec.machineImages?.find((p) => p.name === image.name)?.versions ?? [];
    check(image.versions, known, SPEC.child('machineImages').index(i).child('versions'));
  });
  return errors;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function isRFC3339(value: string): boolean {
  return RFC3339.test(value) && !Number.isNaN(Date.parse(value));
}

function isCertificate(pem: string): boolean {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g);
  if (!blocks) return false;
  try {
    for (const block of blocks) new X509Certificate(block);
    return true;
  } catch {
    return false;
  }
}
