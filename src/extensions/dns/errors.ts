/** Errors of the `local` DNS extension, and the Gardener error codes that describe them. */
import { ERR_CONFIGURATION_PROBLEM } from '../common/status.js';
import { DNSUpdateError } from './rfc2136.js';

/** A DNSRecord or its secret that cannot work as it is; fixing the object (not retrying) helps. */
export class ConfigurationError extends Error {
  override readonly name: string = 'ConfigurationError';
}

/** The DNS name (and record type) is owned by another DNSRecord; `owner` says which, for the message. */
export class OwnershipError extends ConfigurationError {
  override readonly name: string = 'OwnershipError';
  constructor(
    message: string,
    readonly owner: string,
  ) {
    super(message);
  }
}

/** Gardener's error codes (`gardencorev1beta1.ErrorCode`) for `status.lastError.codes`. */
export const ErrorCodes = {
  unauthenticated: 'ERR_INFRA_UNAUTHENTICATED',
  unauthorized: 'ERR_INFRA_UNAUTHORIZED',
  configuration: ERR_CONFIGURATION_PROBLEM,
  dependencies: 'ERR_RETRYABLE_INFRA_DEPENDENCIES',
} as const;

/** The Gardener error codes that describe `e`, for `status.lastError.codes`. */
export function errorCodes(e: unknown): string[] {
  if (e instanceof ConfigurationError) return [ErrorCodes.configuration];
  if (!(e instanceof DNSUpdateError)) return [];
  switch (e.reason) {
    case 'tsig':
      return [ErrorCodes.unauthenticated];
    case 'timeout':
    case 'unreachable':
      return [ErrorCodes.dependencies];
    case 'rcode':
      if (e.rcode === 'REFUSED' || e.rcode === 'NOTAUTH') return [ErrorCodes.unauthorized];
      if (e.rcode === 'NOTZONE') return [ErrorCodes.configuration];
      return [];
    default:
      return [];
  }
}
