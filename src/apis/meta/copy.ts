/**
 * Shallow copies for defaulting, which copies only the objects on the paths it writes.
 *
 * Not `{ ...object }`: V8 (Node 20) gives a spread's copy a map of its own, and adding a key the source lacks (a
 * default) then makes a new map on every call. Each review then leaves maps behind that only a full collection
 * frees (the scavenger keeps what they point to, so every minor collection copies and promotes it), and every
 * property access that later sees those objects goes megamorphic. `Object.assign` onto `{}` takes the ordinary
 * transitions: the same shape on every call.
 */
export function copyWith<T extends object>(object: T | undefined, fields?: Partial<T>): T {
  return Object.assign({}, object, fields) as T;
}
