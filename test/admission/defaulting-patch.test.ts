/**
 * The defaulting patch of the mutating webhook (src/admission/defaulting-patch.ts): what it makes of pointer specials
 * and `__proto__` keys, and, as properties, that it turns the original into the defaulted object, as fast-json-patch's
 * `compare` would, leaving null-valued keys alone. The webhook's answers with it are review.test.ts's.
 */
import fc from 'fast-check';
import jsonpatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { defaultingPatch, type PatchOperation } from '../../src/admission/defaulting-patch.js';

type Json = Record<string, unknown>;

describe('defaultingPatch', () => {
  it('keys with JSON pointer specials are escaped', () => {
    const patch = defaultingPatch({ spec: {} }, { spec: { 'a/b~c': 1 } });
    expect(patch).toEqual([{ op: 'add', path: '/spec/a~1b~0c', value: 1 }]);
  });

  it('keeps a `__proto__` key of parsed JSON as a field', () => {
    const original = JSON.parse('{"spec": {"x": {"__proto__": {"a": 1}}, "y": [{"__proto__": 2}]}}') as Json;
    const defaulted = JSON.parse('{"spec": {"x": {"__proto__": {"a": 1}}, "y": [{"__proto__": 3}], "z": 1}}') as Json;
    const patch = defaultingPatch(original, defaulted);
    expect(patch).toEqual([
      { op: 'replace', path: '/spec/y/0/__proto__', value: 3 },
      { op: 'add', path: '/spec/z', value: 1 },
    ]);
  });

  it('turns the original into the defaulted object, and is empty when they are equal (property)', () => {
    // JSON without nulls (decoding drops them) under fixed apiVersion, kind and metadata.
    const withoutNull = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.filter((x) => x !== null).map(withoutNull);
      if (typeof v === 'object' && v !== null) {
        return Object.fromEntries(
          Object.entries(v)
            .filter(([, x]) => x !== null)
            .map(([k, x]) => [k, withoutNull(x)]),
        );
      }
      return v;
    };
    const spec = fc
      .dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 4 }), { maxKeys: 5 })
      // Through JSON, as the webhook gets objects: -0 becomes 0, which JSON can't tell apart.
      .map((d) => JSON.parse(JSON.stringify(withoutNull(d))) as Json);
    const head = { apiVersion: 'v1', kind: 'Thing', metadata: { name: 'x' } };
    fc.assert(
      fc.property(spec, spec, (before, after) => {
        const original = { ...head, spec: before };
        const defaulted = { ...head, spec: after };
        const patch = defaultingPatch(original, defaulted);
        const result = applyAsFields(structuredClone(original), patch);
        expect(result).toEqual(defaulted);
        expect(defaultingPatch(original, structuredClone(original))).toEqual([]);
      }),
      {
        numRuns: 300,
        // Seen in CI: a `__proto__` key the defaulting drops.
        examples: [[JSON.parse('{"": {"__proto__": false}}') as Json, { '': {} }]],
      },
    );
  });

  it('makes the operations of fast-json-patch, in its order (property)', () => {
    // Keys of `__proto__` left out: fast-json-patch's compare reads them as the prototype.
    const value = fc
      .jsonValue({ maxDepth: 4 })
      .map((v) => JSON.parse(JSON.stringify(v).replaceAll('"__proto__"', '"p"')) as unknown);
    const spec = fc
      .dictionary(fc.string({ maxLength: 4 }), value, { maxKeys: 5 })
      .map((d) => withoutNullKeys(d) as Json);
    const head = { apiVersion: 'v1', kind: 'Thing', metadata: { name: 'x' } };
    fc.assert(
      fc.property(spec, spec, (before, after) => {
        const original = { ...head, spec: before };
        const defaulted = { ...head, spec: after };
        expect(defaultingPatch(original, defaulted)).toEqual(jsonpatch.compare(original, defaulted));
      }),
      { numRuns: 300 },
    );
  });

  it('leaves keys the original sets to null alone, and adds over them (property)', () => {
    const spec = fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 4 }), { maxKeys: 5 });
    const head = { apiVersion: 'v1', kind: 'Thing', metadata: { name: 'x' } };
    fc.assert(
      fc.property(spec, spec, (before, after) => {
        // What decoding sees of the original is without its null keys; the defaulted object has none.
        const original = JSON.parse(JSON.stringify({ ...head, spec: before })) as Json;
        const defaulted = withoutNullKeys(JSON.parse(JSON.stringify({ ...head, spec: after }))) as Json;
        const patch = defaultingPatch(original, defaulted);
        const removesNullKey = (path: string) =>
          pathValue(original, path) === null &&
          !Array.isArray(pathValue(original, path.slice(0, path.lastIndexOf('/'))));
        expect(patch.filter((op) => op.op === 'remove' && removesNullKey(op.path))).toEqual([]);
        expect(withoutNullKeys(applyAsFields(structuredClone(original), patch))).toEqual(defaulted);
        expect(defaultingPatch(original, withoutNullKeys(original))).toEqual([]);
      }),
      { numRuns: 300 },
    );
    expect(defaultingPatch({ spec: { a: null, b: { c: null } } }, { spec: { a: 1, b: {} } })).toEqual([
      { op: 'add', path: '/spec/a', value: 1 },
    ]);
  });
});

/** `value` without its null-valued object keys, at any depth (null array items stay), as decoding sees it. */
function withoutNullKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNullKeys);
  if (typeof value !== 'object' || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (item === null) continue;
    Object.defineProperty(copy, key, {
      value: withoutNullKeys(item),
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return copy;
}

/** The value at a JSON pointer, or undefined. */
function pathValue(document: unknown, path: string): unknown {
  let current = document;
  for (const token of path
    .split('/')
    .slice(1)
    .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'))) {
    if (typeof current !== 'object' || current === null || !Object.prototype.hasOwnProperty.call(current, token)) {
      return undefined;
    }
    current = (current as Record<string, unknown>)[token];
  }
  return current;
}

/**
 * RFC 6902 as the API server applies a patch: every key is a field, `__proto__` included. fast-json-patch refuses
 * `__proto__` paths, and would set the prototype on `add`/`replace` if told not to refuse them.
 */
function applyAsFields(document: Json, patch: readonly PatchOperation[]): Json {
  for (const operation of patch) {
    const tokens = operation.path
      .split('/')
      .slice(1)
      .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
    const last = tokens.pop();
    if (last === undefined) throw new Error(`patch of the whole document: ${JSON.stringify(operation)}`);
    let parent: unknown = document;
    for (const token of tokens) parent = (parent as Record<string, unknown>)[token];
    const value = 'value' in operation ? structuredClone(operation.value as unknown) : undefined;
    if (Array.isArray(parent)) {
      const index = last === '-' ? parent.length : Number(last);
      if (operation.op === 'add') parent.splice(index, 0, value);
      else if (operation.op === 'remove') parent.splice(index, 1);
      else if (operation.op === 'replace') parent[index] = value;
      else throw new Error(`unexpected operation ${operation.op}`);
    } else if (typeof parent === 'object' && parent !== null) {
      if (operation.op === 'remove') delete (parent as Record<string, unknown>)[last];
      else if (operation.op === 'add' || operation.op === 'replace') {
        Object.defineProperty(parent, last, { value, writable: true, enumerable: true, configurable: true });
      } else throw new Error(`unexpected operation ${operation.op}`);
    } else throw new Error(`no container at ${operation.path}`);
  }
  return document;
}
