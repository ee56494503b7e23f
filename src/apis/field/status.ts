import { errorBody, errorString, type FieldError } from './errors.js';

/** A `v1` `Status` cause. */
export interface StatusCause {
  reason: string;
  message: string;
  field: string;
}

/** The `meta/v1` `Status` an API server answers a create or update with. */
export interface Status {
  apiVersion: 'v1';
  kind: 'Status';
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** apimachinery's `StatusDetails`: which object, why, and when to try again. */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/**
 * A `Failure` Status as apimachinery's `StatusError`s carry it: its code, reason (`NotFound`, `Forbidden`, ...) and
 * message, with details when there are any. Every error this project answers with is one of these.
 */
export function failureStatus(code: number, reason: string, message: string, details?: StatusDetails): Status {
  return details === undefined
    ? { apiVersion: 'v1', kind: 'Status', metadata: {}, status: 'Failure', message, reason, code }
    : { apiVersion: 'v1', kind: 'Status', metadata: {}, status: 'Failure', message, reason, details, code };
}

export interface ObjectIdentity {
  group: string;
  kind: string;
  name?: string;
}

/** The Status for a valid object. */
export function successStatus(id: ObjectIdentity): Status {
  return {
    apiVersion: 'v1',
    kind: 'Status',
    metadata: {},
    status: 'Success',
    details: details(id),
    code: 200,
  };
}

/**
 * Most field errors a Status names. An object of 98,000 unknown keys (1 MB) has as many errors, whose Status would be
 * 20 MB of JSON: built, encoded and sent by a webhook with 256 MiB, for a client that reads the first few anyway.
 */
export const MAX_STATUS_CAUSES = 100;

/**
 * The 422 Invalid Status apimachinery's `NewInvalid` builds: one cause per field error, and a message that lists them;
 * past {@link MAX_STATUS_CAUSES} errors, the first ones and how many more there are.
 */
export function invalidStatus(id: ObjectIdentity, allErrors: readonly FieldError[]): Status {
  const qualified = id.group ? `${id.kind}.${id.group}` : id.kind;
  const errors = allErrors.length > MAX_STATUS_CAUSES ? allErrors.slice(0, MAX_STATUS_CAUSES) : allErrors;
  const list = errors.map(errorString);
  if (allErrors.length > errors.length) list.push(`and ${allErrors.length - errors.length} more errors`);
  const joined = list.length === 1 ? list[0] : `[${list.join(', ')}]`;
  return {
    apiVersion: 'v1',
    kind: 'Status',
    metadata: {},
    status: 'Failure',
    message: `${qualified} ${JSON.stringify(id.name ?? '')} is invalid: ${joined}`,
    reason: 'Invalid',
    details: details(
      id,
      errors.map((e) => ({ reason: e.type, message: errorBody(e), field: e.field })),
    ),
    code: 422,
  };
}

export function statusFor(id: ObjectIdentity, errors: readonly FieldError[]): Status {
  return errors.length === 0 ? successStatus(id) : invalidStatus(id, errors);
}

/**
 * `details`, name first as apimachinery writes it. Literals, not a spread of an optional name: a spread's copy gets
 * a map of its own, and the keys added after it a new one on every call (see `copyWith`).
 */
function details(id: ObjectIdentity, causes?: StatusCause[]): NonNullable<Status['details']> {
  const { group, kind, name } = id;
  if (name === undefined) return causes ? { group, kind, causes } : { group, kind };
  return causes ? { name, group, kind, causes } : { name, group, kind };
}
