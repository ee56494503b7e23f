/**
 * The versions a CloudProfile lists (Kubernetes versions, machine image versions): parsing and ordering them as
 * Gardener does (Masterminds' semver), and which of them a Shoot may be defaulted to.
 */
import { VersionClassification, type ExpirableVersion } from './cloudprofile.js';

export interface SemVer {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  /** The pre-release (`rc.1` of `1.2.3-rc.1`), which sorts before the release. */
  readonly prerelease?: string;
}

/** Three parts with two dots and no more: what {@link partialVersion} leaves alone. */
const FULL_VERSION = /^[^.]*\.[^.]*\.[^.]*$/;
const SEMVER = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

/**
 * Parsed versions by their text: admission parses the same CloudProfile versions (and the shoot's) at every review.
 * Bounded (cleared when full); the versions are frozen, so sharing them is safe.
 */
const parsedVersions = new Map<string, SemVer | null>();
const PARSED_VERSIONS_MAX = 4096;
const VERSION_TEXT_MAX = 128;

/** A version as Masterminds' `semver.NewVersion` reads it (`v` prefix and missing minor or patch allowed). */
export function parseSemVer(text: string): SemVer | undefined {
  if (text.length > VERSION_TEXT_MAX) return parseSemVerText(text);
  const known = parsedVersions.get(text);
  if (known !== undefined) return known ?? undefined;
  const parsed = parseSemVerText(text);
  if (parsedVersions.size >= PARSED_VERSIONS_MAX) parsedVersions.clear();
  parsedVersions.set(text, parsed === undefined ? null : Object.freeze(parsed));
  return parsed;
}

function parseSemVerText(text: string): SemVer | undefined {
  const m = SEMVER.exec(text);
  if (!m) return undefined;
  const [major, minor, patch] = [m[1], m[2], m[3]].map((part) => Number(part ?? 0)) as [number, number, number];
  if (![major, minor, patch].every(Number.isSafeInteger)) return undefined;
  return m[4] === undefined ? { major, minor, patch } : { major, minor, patch, prerelease: m[4] };
}

/** Negative when `a` is older than `b`, positive when newer, 0 when the same. */
export function compareSemVer(a: SemVer, b: SemVer): number {
  if (a.major !== b.major) return a.major - b.major;
  if (a.minor !== b.minor) return a.minor - b.minor;
  if (a.patch !== b.patch) return a.patch - b.patch;
  if (a.prerelease === b.prerelease) return 0;
  if (a.prerelease === undefined) return 1;
  if (b.prerelease === undefined) return -1;
  return a.prerelease < b.prerelease ? -1 : 1;
}

/** Whether `version`'s expiration date has passed at `now`. */
export function isExpired(version: Pick<ExpirableVersion, 'expirationDate'>, now: Date): boolean {
  if (version.expirationDate === undefined) return false;
  const expires = Date.parse(version.expirationDate);
  return !Number.isNaN(expires) && expires < now.getTime();
}

export function isPreview(version: Pick<ExpirableVersion, 'classification'>): boolean {
  return version.classification === VersionClassification.Preview;
}

/**
 * The newest of `versions` a Shoot is defaulted to, as Gardener's admission picks it: not expired, not `preview`
 * (a preview version is only used when asked for by its full name), and of `major` (and `minor`) when given. With
 * `previewIfNoOther` (machine images), the newest preview version when there is nothing else.
 */
export function latestDefaultableVersion<T extends ExpirableVersion>(
  versions: readonly T[],
  now: Date,
  within: { major?: number; minor?: number } = {},
  opts: { previewIfNoOther?: boolean } = {},
): T | undefined {
  let latest: { version: T; semver: SemVer } | undefined;
  let latestPreview: { version: T; semver: SemVer } | undefined;
  for (const version of versions) {
    if (isExpired(version, now)) continue;
    const semver = parseSemVer(version.version);
    if (semver === undefined) continue;
    if (within.major !== undefined && semver.major !== within.major) continue;
    if (within.minor !== undefined && semver.minor !== within.minor) continue;
    const newest = isPreview(version) ? latestPreview : latest;
    if (newest !== undefined && compareSemVer(semver, newest.semver) <= 0) continue;
    if (isPreview(version)) latestPreview = { version, semver };
    else latest = { version, semver };
  }
  return (latest ?? (opts.previewIfNoOther ? latestPreview : undefined))?.version;
}

/**
 * What a Shoot's partial Kubernetes version (`""`, `1`, `1.37`) asks for: the major and minor it fixes. A full
 * `major.minor.patch` version asks for nothing to be defaulted (undefined); `invalid` is the part that is no number.
 */
export function partialVersion(version: string): { major?: number; minor?: number } | { invalid: string } | undefined {
  // The usual case, a full version, without splitting it.
  if (FULL_VERSION.test(version)) return undefined;
  const parts = version.split('.');
  const numbers: number[] = [];
  for (const part of parts.slice(0, 2)) {
    if (part === '') break;
    if (!/^\d+$/.test(part)) return { invalid: part };
    numbers.push(Number(part));
  }
  return {
    ...(numbers[0] !== undefined ? { major: numbers[0] } : {}),
    ...(numbers[1] !== undefined ? { minor: numbers[1] } : {}),
  };
}
