/** The API server's error answers, as client-go's `apierrors`: the Status they carry and what kind of error it is. */
import http from 'node:http';
import type { V1Status } from '@kubernetes/client-node';

/** An error answer of the API server, carrying its Status (`reason`, `message`, `details`). */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  /** HTTP status code. */
  readonly code: number;
  readonly status?: V1Status;
  /** The request that failed, e.g. `PUT /api/v1/namespaces/x/configmaps/y`. */
  readonly request?: string;

  constructor(code: number, message: string, opts: { status?: V1Status; request?: string; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    if (opts.status) this.status = opts.status;
    if (opts.request) this.request = opts.request;
  }

  /** `Conflict`, `NotFound`, `AlreadyExists`, … when the server said so. */
  get reason(): string | undefined {
    return this.status?.reason;
  }

  /** Builds the error from a response body, using the server's Status message when the body is one. */
  static fromResponse(code: number, body: string, request?: string): ApiError {
    const status = parseStatus(body);
    const message = status?.message || http.STATUS_CODES[code] || `HTTP ${code}`;
    return new ApiError(code, message, { ...(status ? { status } : {}), ...(request ? { request } : {}) });
  }
}

/** The Status a body (JSON text or parsed) is, if it is one. */
export function parseStatus(body: unknown): V1Status | undefined {
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  if (value && typeof value === 'object' && (value as { kind?: unknown }).kind === 'Status') return value as V1Status;
  return undefined;
}

/**
 * Converts what a Kubernetes call threw into an ApiError when it is one: our own errors, and the `ApiException`
 * of `@kubernetes/client-node` (whose `.body` is the Status as a JSON string). Anything else (network errors) is
 * returned undefined.
 */
export function asApiError(e: unknown): ApiError | undefined {
  if (e instanceof ApiError) return e;
  if (e instanceof Error && typeof (e as { code?: unknown }).code === 'number' && 'body' in e) {
    const code = (e as unknown as { code: number }).code;
    const status = parseStatus((e as { body: unknown }).body);
    return new ApiError(code, status?.message || http.STATUS_CODES[code] || `HTTP ${code}`, {
      ...(status ? { status } : {}),
      cause: e,
    });
  }
  return undefined;
}

function hasCode(e: unknown, code: number, reason?: string): boolean {
  const err = asApiError(e);
  if (!err) return false;
  return err.code === code || (reason !== undefined && err.reason === reason);
}

export const isNotFound = (e: unknown): boolean => hasCode(e, 404, 'NotFound');
/** 410: the resourceVersion (of a watch, or a list's continue token) is too old. */
export const isGone = (e: unknown): boolean => hasCode(e, 410, 'Expired');
export const isForbidden = (e: unknown): boolean => hasCode(e, 403, 'Forbidden');
export const isInvalid = (e: unknown): boolean => hasCode(e, 422, 'Invalid');
export const isTooManyRequests = (e: unknown): boolean => hasCode(e, 429, 'TooManyRequests');
/** 409 because of a stale resourceVersion (not because the object already exists). */
export function isConflict(e: unknown): boolean {
  const err = asApiError(e);
  return err !== undefined && err.code === 409 && err.reason !== 'AlreadyExists';
}
export function isAlreadyExists(e: unknown): boolean {
  const err = asApiError(e);
  return err !== undefined && err.code === 409 && err.reason === 'AlreadyExists';
}
