/**
 * Gardener's `AdminKubeconfigRequest` (`authentication.gardener.cloud/v1alpha1`): what a client sends to a shoot's
 * `adminkubeconfig` subresource and gets back with the kubeconfig, and its validation. The bounds of
 * `spec.expirationSeconds` are the issuer's: a client can't ask for a certificate that lives longer.
 */
import { FieldPath, invalid, type ErrorList } from '../../field/index.js';

export const GROUP = 'authentication.gardener.cloud';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'AdminKubeconfigRequest';

/** Gardener's default: one hour. */
export const DEFAULT_EXPIRATION_SECONDS = 3_600;
/** Gardener's minimum: ten minutes. */
export const MIN_EXPIRATION_SECONDS = 600;
/** Gardener's default maximum (`--shoot-admin-kubeconfig-max-expiration`): one day. */
export const MAX_EXPIRATION_SECONDS = 86_400;

export interface AdminKubeconfigRequest {
  apiVersion: typeof API_VERSION;
  kind: typeof KIND;
  metadata?: { name?: string; namespace?: string; creationTimestamp?: string | null };
  spec: {
    /** How long the client certificate is valid, in seconds. @default DEFAULT_EXPIRATION_SECONDS */
    expirationSeconds?: number;
  };
  status?: {
    /** The kubeconfig, base64 (a `[]byte` in Go). */
    kubeconfig: string;
    /** RFC 3339, seconds: when the client certificate expires. */
    expirationTimestamp: string;
  };
}

const SPEC = FieldPath.root('spec');

/**
 * The request's `spec.expirationSeconds` (defaulted) and its field errors: a missing or empty body asks for the
 * default, as in Gardener; anything else must be an AdminKubeconfigRequest of this version.
 */
export function validateAdminKubeconfigRequest(body: unknown): { expirationSeconds: number; errors: ErrorList } {
  const errors: ErrorList = [];
  if (body === undefined) return { expirationSeconds: DEFAULT_EXPIRATION_SECONDS, errors };
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return {
      expirationSeconds: DEFAULT_EXPIRATION_SECONDS,
      errors: [invalid(FieldPath.root(''), body, `must be an ${KIND} object`)],
    };
  }
  const o = body as { apiVersion?: unknown; kind?: unknown; spec?: unknown };
  if (o.apiVersion !== undefined && o.apiVersion !== API_VERSION) {
    errors.push(invalid(FieldPath.root('apiVersion'), o.apiVersion, `must be ${API_VERSION}`));
  }
  if (o.kind !== undefined && o.kind !== KIND) errors.push(invalid(FieldPath.root('kind'), o.kind, `must be ${KIND}`));
  let expirationSeconds = DEFAULT_EXPIRATION_SECONDS;
  if (o.spec !== undefined && o.spec !== null) {
    if (typeof o.spec !== 'object' || Array.isArray(o.spec)) {
      errors.push(invalid(SPEC, o.spec, 'must be an object'));
    } else {
      const value = (o.spec as { expirationSeconds?: unknown }).expirationSeconds;
      const path = SPEC.child('expirationSeconds');
      if (value !== undefined && value !== null) {
        if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
          errors.push(invalid(path, value, 'must be an integer number of seconds'));
        } else if (value < MIN_EXPIRATION_SECONDS) {
          errors.push(invalid(path, value, 'may not specify a duration less than 10 minutes'));
        } else if (value > MAX_EXPIRATION_SECONDS) {
          errors.push(invalid(path, value, 'may not specify a duration longer than 24 hours'));
        } else {
          expirationSeconds = value;
        }
      }
    }
  }
  return { expirationSeconds, errors };
}
