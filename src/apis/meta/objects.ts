/**
 * Compare decoded documents (plain objects, arrays, primitives). Iterative, unlike `structuredClone`,
 * `JSON.stringify` and `util.isDeepStrictEqual`, so a deeply nested unknown field can't overflow the stack.
 */

/**
 * Semantic equality of decoded documents, as Go's `apiequality.Semantic.DeepEqual` sees them: key order doesn't
 * matter, and a key whose value is `undefined` is the same as a missing key.
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  const stack: [unknown, unknown][] = [[a, b]];
  while (stack.length > 0) {
    const [x, y] = stack.pop()!;
    if (Object.is(x, y) || x === y) continue;
    if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
    if (Array.isArray(x) !== Array.isArray(y)) return false;
    const xKeys = definedKeys(x);
    const yKeys = definedKeys(y);
    if (xKeys.length !== yKeys.length) return false;
    for (const key of xKeys) {
      if (!Object.prototype.hasOwnProperty.call(y, key)) return false;
      stack.push([(x as Record<string, unknown>)[key], (y as Record<string, unknown>)[key]]);
    }
  }
  return true;
}

function definedKeys(value: object): string[] {
  return Object.keys(value).filter((key) => (value as Record<string, unknown>)[key] !== undefined);
}
