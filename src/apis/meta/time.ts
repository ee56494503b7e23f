/**
 * Times as Kubernetes writes `metav1.Time`: RFC 3339 in UTC with whole seconds (`2026-11-21T20:00:00Z`).
 */

/** `ms` since the epoch as a `metav1.Time`. */
export function metav1Time(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** `ms` since the epoch as a `metav1.MicroTime` (a Lease's times): six fractional digits. */
export function metav1MicroTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
