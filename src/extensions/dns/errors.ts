/** Errors of the `local` DNS extension that the reconciler turns into Gardener error codes. */

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
