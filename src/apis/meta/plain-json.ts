/**
 * Decoded JSON known to hold no `null`-valued object key and no own `__proto__` key. Decoding walks every input for
 * both (withoutNulls, droppedProtoKeys); the webhook already walks each body it decodes once, to count its keys
 * against the pre-scan's (duplicate keys), learns both there and marks the review's objects, and decoding skips its
 * two walks for them. A marked value must not be modified afterwards: decoding and defaulting never modify their input.
 *
 * The mark is a private field stamped onto the value (a base class whose constructor returns the value lets a
 * subclass's field initializer add its field to any object): invisible to keys, copies, JSON and equality, and about
 * 10 ns to add and to test, where a WeakSet took some 450 ns to add a review's object to (its ephemeron table, which
 * every garbage collection then walks too).
 */
class Stamped {
  constructor(value: object) {
    // The instance is `value`: the subclass's field is added to it.
    return value;
  }
}

class PlainJSON extends Stamped {
  readonly #plain = true;

  static has(value: object): boolean {
    return #plain in value;
  }
}

/** Marks `value` (decoded JSON) as holding no null-valued object key and no own `__proto__` key, at any depth. */
export function markPlainJSON(value: object): void {
  // A value that can't take the mark is decoded as any other (the mark only spares walks).
  if (PlainJSON.has(value) || !Object.isExtensible(value)) return;
  new PlainJSON(value);
}

/** Whether `value` was marked by {@link markPlainJSON}. */
export function isPlainJSON(value: unknown): boolean {
  return typeof value === 'object' && value !== null && PlainJSON.has(value);
}
