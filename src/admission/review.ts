/**
 * What the gardener-apiserver's admission does for our kinds, as `admission.k8s.io/v1` AdmissionReview handling:
 * the validating webhook answers with the same 422 Status `gardener-ipv6 validate` prints, the mutating webhook
 * with a JSON patch to the defaulted object. Pure apart from the seed lookup, which the caller provides.
 */
import { validateShootExtensionTypes, type RegisteredExtensionTypes } from './extensions.js';
import type { Shoot } from '../apis/core/v1beta1/shoot.js';
import {
  admit,
  decodeSeed,
  defaultObject,
  UnknownKindError,
  type AdmissionInput,
  type AdmissionResult,
  type ExtensionAdmission,
} from '../apis/admission.js';
import type { Seed } from '../apis/core/v1beta1/seed.js';
import { failureStatus, FieldPath, invalid, invalidStatus, type FieldError, type Status } from '../apis/field/index.js';
import { copyWith } from '../apis/meta/copy.js';
import { deepEqual } from '../apis/meta/objects.js';
import { withoutNulls } from '../apis/meta/nulls.js';
import { isPlainJSON } from '../apis/meta/plain-json.js';
import { CloudProfiles, DNSRecords, lookupKind, Networks, Seeds, Shoots, type KindInfo } from '../apis/registry.js';
import { cloudProfileReference } from '../apis/core/v1beta1/helpers.js';
import type { FeatureGates } from '../featuregate/featuregate.js';
import { AllowedResponse, PatchedResponse } from './answer-json.js';
import { defaultingPatch } from './defaulting-patch.js';
import { seedRestriction } from './seed-restriction.js';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';

/** `seed-restriction`: what a gardenlet's garden credentials may write (seed-restriction.ts). */
export type AdmissionMode = 'validate' | 'mutate' | 'seed-restriction';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

/** `admission.k8s.io/v1` AdmissionRequest (the fields this webhook reads, plus the ones worth logging). */
export interface AdmissionRequest {
  uid: string;
  kind?: GroupVersionKind;
  resource?: GroupVersionResource;
  subResource?: string;
  name?: string;
  namespace?: string;
  operation?: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  userInfo?: { username?: string; uid?: string; groups?: string[] };
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  /** Why the request was denied; the API server passes it on to the client (after `admission webhook … denied`). */
  status?: Status;
  /** Base64 of a JSON patch (RFC 6902). */
  patch?: string;
  patchType?: 'JSONPatch';
}

export interface AdmissionReview {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: 'AdmissionReview';
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

export interface AdmissionReviewResponse {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: 'AdmissionReview';
  response: AdmissionResponse;
}

/** A value, or a promise of it when it takes I/O. */
export type MaybePromise<T> = T | Promise<T>;

export interface AdmissionContext {
  readonly gates: FeatureGates;
  /**
   * The Seed of that name as the API server has it, or undefined when there is none; throws (or rejects) on other
   * errors. A value returned as such (a cache hit) lets the review be answered without leaving the current turn.
   */
  lookupSeed(name: string): MaybePromise<unknown>;
  /** Told about unexpected errors, which the answer only summarizes (to log them with their stack and review uid). */
  onInternalError?(error: unknown, uid: string): void;
  /** The extension types this installation runs; a Shoot using another is refused. Unchecked when unset. */
  readonly extensions?: RegisteredExtensionTypes;
  /** What the extensions' admission adds. None when unset. */
  readonly extensionAdmission?: ExtensionAdmission;
  /**
   * The CloudProfile of that name as the API server has it, or undefined when there is none; throws (or rejects) on
   * other errors, and a value returned as such (a cache hit) keeps the review in the current turn, as for Seeds. A
   * Shoot is defaulted from and checked against the profile it names, and refused when there is none of that name.
   * Unset: CloudProfiles are not looked at.
   */
  lookupCloudProfile?(name: string): MaybePromise<unknown>;
  /**
   * The Shoot of that namespace and name (the cache), for the seed restriction's Secrets and ConfigMaps. Unset: a
   * gardenlet's writes of those are refused.
   */
  lookupShoot?(namespace: string, name: string): MaybePromise<unknown>;
}

/** The kinds this webhook admits; anything else is not ours and is allowed as is. */
export const ADMITTED_KINDS: readonly KindInfo<unknown>[] = [Shoots, Seeds, CloudProfiles, Networks, DNSRecords];

/**
 * Answers an AdmissionReview. Never throws: an unexpected error becomes a denial with code 500 (with
 * `failurePolicy: Fail` the API server refuses the request either way, and this way the client sees why).
 */
export async function handleAdmissionReview(
  review: AdmissionReview,
  ctx: AdmissionContext,
  mode: AdmissionMode,
): Promise<AdmissionReviewResponse> {
  return answerAdmissionReview(review, ctx, mode);
}

/**
 * {@link handleAdmissionReview}, answered synchronously when the seed lookup is (the steady state: the Seed comes
 * from the informer cache), so that the webhook answers a review in one go; a promise only when it waits for I/O.
 */
export function answerAdmissionReview(
  review: AdmissionReview,
  ctx: AdmissionContext,
  mode: AdmissionMode,
): MaybePromise<AdmissionReviewResponse> {
  const request = review.request;
  const uid = typeof request?.uid === 'string' ? request.uid : '';
  const failed = (e: unknown): AdmissionReviewResponse => {
    ctx.onInternalError?.(e, uid);
    return reviewResponse({ uid, allowed: false, status: internalErrorStatus(e) });
  };
  let response: MaybePromise<AdmissionResponse>;
  try {
    if (!request || uid === '') throw new Error('the AdmissionReview has no request with a uid');
    response =
      mode === 'validate'
        ? validateRequest(request, ctx)
        : mode === 'mutate'
          ? mutateRequest(request, ctx)
          : seedRestriction(request, { shoot: (namespace, name) => ctx.lookupShoot?.(namespace, name) });
  } catch (e) {
    return failed(e);
  }
  return response instanceof Promise ? response.then(reviewResponse, failed) : reviewResponse(response);
}

function reviewResponse(response: AdmissionResponse): AdmissionReviewResponse {
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response };
}

/**
 * `next(value)`, now when `value` is at hand, else once it is. Any thenable (the seed lookup is the caller's) becomes
 * a native promise here, so that everything after it tells the two apart with `instanceof Promise`.
 */
function then<T, R>(value: MaybePromise<T>, next: (value: T) => R): MaybePromise<R> {
  const thenable = typeof (value as { then?: unknown } | null)?.then === 'function';
  return thenable ? Promise.resolve(value).then(next) : next(value as T);
}

/** The kind of the request's object when it is one we admit on this operation. */
function admittedKind(request: AdmissionRequest): KindInfo<unknown> | undefined {
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return undefined;
  // Main resources only: a status update must not be judged by spec rules.
  if (request.subResource) return undefined;
  const kind = lookupKind(request.object);
  return kind && ADMITTED_KINDS.includes(kind) ? kind : undefined;
}

function validateRequest(request: AdmissionRequest, ctx: AdmissionContext): MaybePromise<AdmissionResponse> {
  const kind = admittedKind(request);
  if (!kind) return new AllowedResponse(request.uid);
  // An update that leaves the spec alone (finalizers, labels, annotations) is always admitted: otherwise an object
  // that became invalid under newer rules, or whose seed is gone, could never lose its finalizer.
  if (request.operation === 'UPDATE' && specUnchanged(request.object, request.oldObject)) {
    return new AllowedResponse(request.uid);
  }

  return shootContext(kind, request.object, ctx, (context) => validateWith(request, ctx, kind, context));
}

function validateWith(
  request: AdmissionRequest,
  ctx: AdmissionContext,
  kind: KindInfo<unknown>,
  context: ShootContext,
): AdmissionResponse {
  const { seed } = context;
  const result = withStoredObject(request, admissionInput(request, ctx, context, true), admit);
  const errors: FieldError[] = [...result.errors, ...(seed.error ? [seed.error] : [])];
  if (kind === Shoots && ctx.extensions && result.object !== undefined) {
    errors.push(...validateShootExtensionTypes(result.object as Shoot, ctx.extensions));
  }
  if (errors.length === 0) return new AllowedResponse(request.uid);
  return { uid: request.uid, allowed: false, status: invalidStatus(result.id, errors) };
}

/**
 * `step` with the request's stored object on an update. A stored object that does not decode (written before this
 * webhook was registered) is left out: the new object still gets every create rule, but refusing every update for the
 * old one's sake would leave the object stuck.
 */
function withStoredObject(
  request: AdmissionRequest,
  input: AdmissionInput,
  step: (input: AdmissionInput) => AdmissionResult,
): AdmissionResult {
  if (request.operation !== 'UPDATE') return step(input);
  try {
    return step(copyWith<AdmissionInput>(input, { oldObject: request.oldObject }));
  } catch (e) {
    if (!(e instanceof UnknownKindError)) throw e;
    return step(input);
  }
}

function specUnchanged(object: unknown, oldObject: unknown): boolean {
  // The spec of an object the webhook decoded holds no null (it is marked plain): no walk to drop them.
  const spec = (o: unknown) => {
    const value = typeof o === 'object' && o !== null ? (o as { spec?: unknown }).spec : undefined;
    return isPlainJSON(o) ? value : withoutNulls(value);
  };
  return oldObject !== undefined && deepEqual(spec(object), spec(oldObject));
}

function mutateRequest(request: AdmissionRequest, ctx: AdmissionContext): MaybePromise<AdmissionResponse> {
  const kind = admittedKind(request);
  if (!kind) return new AllowedResponse(request.uid);
  return shootContext(kind, request.object, ctx, (context) => mutateWith(request, ctx, context));
}

function mutateWith(request: AdmissionRequest, ctx: AdmissionContext, context: ShootContext): AdmissionResponse {
  // Defaults only: validating is the validating webhook's job. On an update of a Shoot with a CloudProfile, the stored
  // object keeps what the new one leaves to defaulting (a worker pool's machine image); nothing else needs it decoded.
  const input = admissionInput(request, ctx, context, false);
  const result = context.cloudProfile ? withStoredObject(request, input, defaultObject) : defaultObject(input);
  // Malformed: nothing to default; the validating webhook tells the client what is wrong.
  if (result.object === undefined) return new AllowedResponse(request.uid);

  const patch = defaultingPatch(request.object, result.object);
  if (patch.length === 0) return new AllowedResponse(request.uid);
  return new PatchedResponse(request.uid, patch);
}

interface SeedContext {
  /** The usable Seed the shoot names, as the lookup returned it and decoded. */
  seed?: { object: unknown; decoded: Seed };
  /** Why the named seed can't be used, on `spec.seedName`. */
  error?: FieldError;
}

/** What a Shoot is admitted against: its seed, and its CloudProfile as the lookup found it (or found none). */
interface ShootContext {
  readonly seed: SeedContext;
  /** The lookup's answer for the name the Shoot gives; unset when CloudProfiles are not looked at. */
  readonly cloudProfile?: { readonly name: string; readonly object: unknown };
}

/**
 * What the pipeline gets for a review: always the same keys, in the same order, unset ones undefined (spreads of
 * optional parts made a new hidden class per review), and the extensions' admission only for validating.
 */
function admissionInput(
  request: AdmissionRequest,
  ctx: AdmissionContext,
  context: ShootContext,
  validating: boolean,
): AdmissionInput {
  const { seed, cloudProfile } = context;
  return {
    object: request.object,
    oldObject: undefined,
    seed: seed.seed?.object,
    decodedSeed: seed.seed?.decoded,
    gates: ctx.gates,
    extensionAdmission: validating ? ctx.extensionAdmission : undefined,
    cloudProfiles: cloudProfile
      ? (name: string) => (name === cloudProfile.name ? cloudProfile.object : undefined)
      : undefined,
    now: undefined,
  };
}

/**
 * `next` with the Shoot's context: its seed, then its CloudProfile, each from the caller's lookup (one after the
 * other: a rejected lookup leaves no other one unobserved). Other kinds have none.
 */
function shootContext<R>(
  kind: KindInfo<unknown>,
  object: unknown,
  ctx: AdmissionContext,
  next: (context: ShootContext) => R,
): MaybePromise<R> {
  if (kind !== Shoots) return next({ seed: {} });
  // A promise of a promise is one promise: the nested lookup flattens into the outer one.
  return then(seedContext(object, ctx), (seed) => {
    const name = ctx.lookupCloudProfile ? cloudProfileReference(object)?.name : undefined;
    if (name === undefined) return next({ seed });
    return then(ctx.lookupCloudProfile!(name), (found) => next({ seed, cloudProfile: { name, object: found } }));
  }) as MaybePromise<R>;
}

/**
 * Decoded seeds (or why they can't be used) by the object the lookup returned: the shared cache hands out the same
 * object until the Seed changes, so each version of a Seed is decoded once, not twice per review.
 */
const decodedSeeds = new WeakMap<object, { decoded: Seed } | { unusable: string }>();

function decodeSeedOnce(seed: unknown): { decoded: Seed } | { unusable: string } {
  const key = typeof seed === 'object' && seed !== null ? seed : undefined;
  const known = key && decodedSeeds.get(key);
  if (known) return known;
  let outcome: { decoded: Seed } | { unusable: string };
  try {
    outcome = { decoded: decodeSeed(seed) };
  } catch (e) {
    if (!(e instanceof UnknownKindError)) throw e;
    outcome = { unusable: e.message };
  }
  if (key) decodedSeeds.set(key, outcome);
  return outcome;
}

/** The Seed of a Shoot's `spec.seedName`, when it names one (an unscheduled shoot has no seed context). */
function seedContext(shoot: unknown, ctx: AdmissionContext): MaybePromise<SeedContext> {
  const name = (shoot as { spec?: { seedName?: unknown } }).spec?.seedName;
  if (typeof name !== 'string' || name === '') return {};
  return then(ctx.lookupSeed(name), (seed) => seedContextOf(name, seed));
}

function seedContextOf(name: string, seed: unknown): SeedContext {
  const path = FieldPath.root('spec', 'seedName');
  if (seed === undefined) return { error: invalid(path, name, `seed ${JSON.stringify(name)} not found`) };
  const outcome = decodeSeedOnce(seed);
  if ('unusable' in outcome) {
    return { error: invalid(path, name, `seed ${JSON.stringify(name)} cannot be used: ${outcome.unusable}`) };
  }
  return { seed: { object: seed, decoded: outcome.decoded } };
}

function internalErrorStatus(e: unknown): Status {
  const message = e instanceof Error ? e.message : String(e);
  return failureStatus(500, 'InternalError', `internal error of the gardener-ipv6 admission webhook: ${message}`);
}
