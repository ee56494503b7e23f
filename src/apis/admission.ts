/**
 * The admission pipeline an API server runs for our kinds, as pure functions: decode (schema), default, apply the
 * defaults of the Shoot's CloudProfile and seed, validate (against them too). The CLI and the webhook both call
 * `admit`.
 */
import type { z } from 'zod';
import {
  FieldPath,
  invalid,
  notFound,
  notSupported,
  type ErrorList,
  type FieldError,
  type ObjectIdentity,
} from './field/index.js';
import type { FeatureGates } from '../featuregate/featuregate.js';
import type { CloudProfile } from './core/v1beta1/cloudprofile.js';
import { applyCloudProfileDefaults, applySeedShootDefaults, defaultShootUpdate } from './core/v1beta1/defaults.js';
import { cloudProfileReference } from './core/v1beta1/helpers.js';
import type { Seed } from './core/v1beta1/seed.js';
import type { Shoot } from './core/v1beta1/shoot.js';
import { validateShootAgainstSeed } from './core/v1beta1/validation/shoot.js';
import { validateShootAgainstCloudProfile } from './core/v1beta1/validation/shoot-cloudprofile.js';
import { compiledParser, sharingParser, UNDECIDED } from './meta/compiled-parse.js';
import { isPlainJSON } from './meta/plain-json.js';
import { withoutNulls } from './meta/nulls.js';
import { issueFieldPath, unknownFieldErrors, valueAt } from './meta/zod-issues.js';
import { droppedProtoKeys } from './meta/proto-keys.js';
import { CloudProfiles, lookupKind, Seeds, Shoots, type KindInfo } from './registry.js';
import type { ObjectMeta } from './meta/schemas.js';
import { validateObjectMeta } from './validation/object-meta.js';

/** The input is not an object of a kind this project serves: the caller can't use it (exit 2, HTTP 400). */
export class UnknownKindError extends Error {}

export interface AdmissionInput {
  readonly object: unknown;
  /** The stored object, for an update. */
  readonly oldObject?: unknown;
  /** The seed the shoot is scheduled on, for the seed context. */
  readonly seed?: unknown;
  /** `seed` as {@link decodeSeed} returned it, when the caller has it already (the webhook decodes each Seed once). */
  readonly decodedSeed?: Seed;
  readonly gates: FeatureGates;
  /** What the extensions add (their field errors of the object). None when unset. */
  readonly extensionAdmission?: ExtensionAdmission;
  /**
   * The CloudProfiles the caller knows, by name (the objects as stored, or undefined for a name it doesn't know): a
   * Shoot is defaulted from and checked against the one it names, and refused when there is none of that name.
   * Unset when the caller knows no CloudProfiles (the CLI given none): Shoots are then neither defaulted from nor
   * checked against one.
   */
  readonly cloudProfiles?: (name: string) => unknown;
  /** What the CloudProfile's expiration dates are compared with. @default the current time */
  readonly now?: Date;
}

export interface AdmissionResult {
  readonly kind: KindInfo<unknown>;
  readonly id: ObjectIdentity;
  /** The object after defaulting (undefined when it could not be decoded). */
  readonly object: unknown;
  readonly errors: ErrorList;
}

export function identify(object: unknown): KindInfo<unknown> {
  const kind = lookupKind(object);
  if (kind) return kind;
  const o = (typeof object === 'object' && object !== null ? object : {}) as { apiVersion?: unknown; kind?: unknown };
  throw new UnknownKindError(
    `unknown kind ${JSON.stringify(o.kind ?? null)} of apiVersion ${JSON.stringify(o.apiVersion ?? null)}: ` +
      `expected Shoot, Seed or CloudProfile (core.gardener.cloud/v1beta1), Network, DNSRecord, ` +
      `OperatingSystemConfig or Worker (extensions.gardener.cloud/v1alpha1)`,
  );
}

export function identityOf(kind: KindInfo<unknown>, object: unknown): ObjectIdentity {
  const name = (object as { metadata?: { name?: unknown } } | undefined)?.metadata?.name;
  return { group: kind.group, kind: kind.kind, ...(typeof name === 'string' ? { name } : {}) };
}

/**
 * Decodes with the kind's schema; type errors become field errors with the path of the offending value, and so do
 * `__proto__` keys decoding would silently drop (see proto-keys.ts).
 */
export function decode<T>(kind: KindInfo<T>, object: unknown): { value?: T; errors: ErrorList } {
  const input = withoutNulls(object);
  // The compiled parser decides the valid case; zod decodes (and reports) the rest. The webhook's own review objects
  // (marked plain) are decoded into a value that shares what decoding leaves as it is with them.
  const parser = isPlainJSON(object) ? sharingParser : compiledParser;
  const fast = parser(kind.schema)(input);
  const parsed = fast !== UNDECIDED ? { success: true as const, data: fast as T } : kind.schema.safeParse(input);
  const dropped = droppedProtoKeys(kind.schema, input);
  if (parsed.success && dropped.length === 0) return { value: parsed.data, errors: [] };
  const typeErrors = parsed.success ? [] : parsed.error.issues.flatMap((issue) => issueToFieldErrors(issue, input));
  return { errors: [...typeErrors, ...dropped] };
}

function issueToFieldErrors(issue: z.core.$ZodIssue, root: unknown): ErrorList {
  if (issue.code === 'unrecognized_keys') return unknownFieldErrors(issue);
  const value = valueAt(root, issue.path);
  const detail = issue.message.replace(/^Invalid input: /, '');
  return [invalid(issue.path.length > 0 ? issueFieldPath(issue.path) : FieldPath.root('<root>'), value, detail)];
}

/** Default then validate `object` as the API server would on create (or update, with `oldObject`). */
export function admit(input: AdmissionInput): AdmissionResult {
  const { kind, id, object, errors: decodeErrors, seed, cloudProfile, old } = defaultObject(input);
  if (object === undefined) return { kind, id, object, errors: decodeErrors };

  // One list, each step's errors appended in the order they are reported (not a copy of the list per step).
  const metadata = (object as { metadata?: ObjectMeta }).metadata;
  const errors: FieldError[] = [];
  append(errors, validateObjectMeta(metadata, { namespaced: kind.scope === 'Namespaced', name: kind.nameRule }));
  append(
    errors,
    old !== undefined ? kind.validateUpdate(object, old, input.gates) : kind.validate(object, input.gates),
  );
  if (seed) append(errors, validateShootAgainstSeed(object as Shoot, seed));
  if (cloudProfile && 'error' in cloudProfile) errors.push(cloudProfile.error);
  if (cloudProfile && 'profile' in cloudProfile) {
    const context = { now: cloudProfile.now, ...(old !== undefined ? { old: old as Shoot } : {}) };
    append(errors, validateShootAgainstCloudProfile(object as Shoot, cloudProfile.profile, context));
  }
  if (input.extensionAdmission) append(errors, input.extensionAdmission(kind, object, old));
  return { kind, id, object, errors };
}

function append(errors: FieldError[], more: ErrorList): void {
  for (let i = 0; i < more.length; i++) errors.push(more[i]!);
}

/**
 * What the extensions' admission adds to an object's field errors, as their webhooks do in Gardener
 * (`admission-calico`, `admission-local`), given the object and, on an update, its stored version (both decoded and
 * defaulted). The app, which knows the extensions, gives it (src/app/extension-admission.ts).
 */
export type ExtensionAdmission = (kind: KindInfo<unknown>, object: unknown, old?: unknown) => ErrorList;

/**
 * A Shoot's CloudProfile as the caller's lookup found it, and the time its expiration dates are judged at (one for
 * defaulting and validating); or why it can't be used.
 */
type CloudProfileContext = { readonly profile: CloudProfile; readonly now: Date } | { readonly error: FieldError };

/**
 * What {@link defaultObject} returns: always every key, unset ones undefined (conditional spreads made a new object
 * per part and a shape per combination).
 */
export interface DefaultedObject extends AdmissionResult {
  readonly seed: Seed | undefined;
  readonly cloudProfile: CloudProfileContext | undefined;
  readonly old: unknown;
}

/**
 * Decode and default `object`, with the defaults of its seed and of its CloudProfile for a Shoot, without validating
 * it: the mutating webhook's step (`errors` are the decoding errors only). `old` is the stored object, decoded and
 * defaulted, for an update; throws UnknownKindError when it can't be.
 */
export function defaultObject(input: AdmissionInput): DefaultedObject {
  const kind = identify(input.object);
  const id = identityOf(kind, input.object);
  const decoded = decode(kind, input.object);
  if (decoded.value === undefined) {
    return {
      kind,
      id,
      object: undefined,
      errors: decoded.errors,
      seed: undefined,
      cloudProfile: undefined,
      old: undefined,
    };
  }
  const old = input.oldObject === undefined ? undefined : decodeOld(kind, input.oldObject);
  let object = kind.default(
    kind === Shoots && old !== undefined ? defaultShootUpdate(decoded.value as Shoot, old as Shoot) : decoded.value,
  );
  if (kind !== Shoots) return { kind, id, object, errors: [], seed: undefined, cloudProfile: undefined, old };

  const cloudProfile = input.cloudProfiles
    ? cloudProfileContext(input.object, input.cloudProfiles, input.now ?? new Date())
    : undefined;
  // The defaulted Shoot and its spec are defaultShoot's copies: the steps after it write into them.
  if (cloudProfile && 'profile' in cloudProfile) {
    const context = { now: cloudProfile.now, owned: true, ...(old !== undefined ? { old: old as Shoot } : {}) };
    object = applyCloudProfileDefaults(object as Shoot, cloudProfile.profile, context);
  }
  const seed = input.decodedSeed ?? (input.seed === undefined ? undefined : decodeSeed(input.seed));
  if (seed) object = applySeedShootDefaults(object as Shoot, seed, true);
  return { kind, id, object, errors: [], seed, cloudProfile, old };
}

/** The stored object of an update, decoded and defaulted; it must be of the same kind and decode. */
function decodeOld(kind: KindInfo<unknown>, oldObject: unknown): unknown {
  if (lookupKind(oldObject) !== kind) {
    throw new UnknownKindError(`the old object is not a ${kind.kind} of ${kind.group}/${kind.version}`);
  }
  const old = decode(kind, oldObject);
  if (old.value === undefined) {
    throw new UnknownKindError(
      `the old object is not a valid ${kind.kind}: ${old.errors.map((e) => e.field).join(', ')}`,
    );
  }
  return kind.default(old.value);
}

/** The seed context must itself be a usable Seed. */
export function decodeSeed(object: unknown): Seed {
  if (lookupKind(object) !== Seeds) throw new UnknownKindError('the seed is not a Seed of core.gardener.cloud/v1beta1');
  const decoded = decode(Seeds, object);
  if (decoded.value === undefined) {
    throw new UnknownKindError(`the seed is not a valid Seed: ${decoded.errors.map((e) => e.field).join(', ')}`);
  }
  return Seeds.default(decoded.value);
}

/**
 * Decoded CloudProfiles (or why one can't be used) by the object a lookup returned: the webhook's cache hands out the
 * same object until the CloudProfile changes, so each version of it is decoded once, not once per review.
 */
const decodedCloudProfiles = new WeakMap<object, CloudProfile | { unusable: string }>();

function decodeCloudProfileOnce(object: object): CloudProfile | { unusable: string } {
  const known = decodedCloudProfiles.get(object);
  if (known) return known;
  let outcome: CloudProfile | { unusable: string };
  if (lookupKind(object) !== CloudProfiles) {
    outcome = { unusable: 'not a CloudProfile of core.gardener.cloud/v1beta1' };
  } else {
    const decoded = decode(CloudProfiles, object);
    outcome =
      decoded.value === undefined
        ? { unusable: `not a valid CloudProfile: ${decoded.errors.map((e) => e.field).join(', ')}` }
        : CloudProfiles.default(decoded.value);
  }
  decodedCloudProfiles.set(object, outcome);
  return outcome;
}

/**
 * The CloudProfile the Shoot names, from `lookup`: a name the lookup doesn't know is not found. A Shoot that names
 * none gets no context (validation requires the name).
 */
function cloudProfileContext(
  shoot: unknown,
  lookup: (name: string) => unknown,
  now: Date,
): CloudProfileContext | undefined {
  const reference = cloudProfileReference(shoot);
  if (reference === undefined) return undefined;
  if (reference.kind !== CloudProfiles.kind) {
    const path = FieldPath.root('spec', 'cloudProfile', 'kind');
    return { error: notSupported(path, reference.kind, [CloudProfiles.kind]) };
  }
  const found = lookup(reference.name);
  if (typeof found !== 'object' || found === null) return { error: notFound(reference.path, reference.name) };
  const outcome = decodeCloudProfileOnce(found);
  if ('unusable' in outcome) {
    const detail = `cloud profile ${JSON.stringify(reference.name)} cannot be used: ${outcome.unusable}`;
    return { error: invalid(reference.path, reference.name, detail) };
  }
  return { profile: outcome, now };
}
