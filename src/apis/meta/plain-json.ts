/**
 * Decoded JSON known to hold no `null`-valued object key and no own `__proto__` key. Decoding walks every input for
 * both (withoutNulls, droppedProtoKeys); the webhook already walks each body it decodes once, to count its keys
 * against the pre-scan's (duplicate keys), learns both there and marks the review's objects, and decoding skips its
 * two walks for them. A marked value must not be modified afterwards: decoding and defaulting never modify their input.
 */
const plain = new WeakSet<object>();

/** Marks `value` (decoded JSON) as holding no null-valued object key and no own `__proto__` key, at any depth. */
export function markPlainJSON(value: object): void {
  plain.add(value);
}

/** Whether `value` was marked by {@link markPlainJSON}. */
export function isPlainJSON(value: unknown): boolean {
  return typeof value === 'object' && value !== null && plain.has(value);
}
