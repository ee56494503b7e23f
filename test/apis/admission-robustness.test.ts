/**
 * Malformed input must never throw out of `admit` (except UnknownKindError for objects that aren't of a served kind):
 * every call either succeeds or returns field errors, and never modifies its input.
 */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { admit, UnknownKindError, type AdmissionInput } from '../../src/apis/admission.js';
import { ErrorType, statusFor } from '../../src/apis/field/index.js';
import { featureGates } from '../../src/featuregate/featuregate.js';
import {
  dnsRecordObject,
  networkObject,
  robustnessShootObject,
  seedObject,
  workerObject,
} from '../fixtures/objects.js';

type Json = Record<string, unknown>;
type PathSegment = string | number;

const GATES = [featureGates(), featureGates({ IPv6SingleStack: true, DualStack: true })];
const ERROR_TYPES = new Set<string>(Object.values(ErrorType));

const asJson = (o: unknown): Json => structuredClone(o) as Json;
const VALID: Record<string, () => Json> = {
  Shoot: robustnessShootObject,
  Seed: () => asJson(seedObject()),
  Network: () => asJson(networkObject({}, { deletionTimestamp: undefined })),
  DNSRecord: () => asJson(dnsRecordObject({ ttl: 60 })),
  Worker: () => asJson(workerObject()),
};

/** Every path to a value inside a document (objects and arrays alike), the root excluded. */
function pathsOf(value: unknown, prefix: PathSegment[] = []): PathSegment[][] {
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) => {
    const path = [...prefix, Array.isArray(value) ? Number(key) : key];
    return [path, ...pathsOf(item, path)];
  });
}

/** A copy of `document` with `value` at `path`; missing or non-object parents become objects. */
function setAt(document: Json, path: readonly PathSegment[], value: unknown): Json {
  const copy = structuredClone(document);
  let node: Record<PropertyKey, unknown> = copy;
  path.forEach((segment, i) => {
    if (i === path.length - 1) {
      Object.defineProperty(node, segment, { value, enumerable: true, writable: true, configurable: true });
      return;
    }
    const child = node[segment];
    if (typeof child !== 'object' || child === null) node[segment] = {};
    node = node[segment] as Record<PropertyKey, unknown>;
  });
  return copy;
}

function deepFreeze<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item !== 'object' || item === null || Object.isFrozen(item)) continue;
    Object.freeze(item);
    for (const child of Object.values(item)) if (typeof child === 'object' && child !== null) stack.push(child);
  }
  return value;
}

/** A copy to compare with later, or undefined when the value is too deep for structuredClone and toEqual. */
function snapshot<T>(value: T): T | undefined {
  try {
    return structuredClone(value);
  } catch (e) {
    if (e instanceof RangeError) return undefined;
    throw e;
  }
}

/** Nesting `depth` levels deep, built without recursion. */
function nested(depth: number, kind: 'object' | 'array'): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = kind === 'object' ? { x: value, y: [1, null, 'z'] } : [value, 1];
  return value;
}

/**
 * Runs `admit` on frozen input: it must succeed or return well-formed field errors (a Status can be built from them),
 * throw nothing but UnknownKindError, and leave the input as it was.
 */
function expectRobust(input: AdmissionInput): 'ok' | 'errors' | 'unknown-kind' {
  // Frozen input makes any write throw (ES modules are strict code); the snapshot also checks what was read back.
  const before = snapshot([input.object, input.oldObject, input.seed]);
  deepFreeze(input);
  let outcome: 'ok' | 'errors' | 'unknown-kind';
  try {
    const result = admit(input);
    const malformed = result.errors.filter(
      (e) => !ERROR_TYPES.has(e.type) || typeof e.field !== 'string' || e.field === '' || typeof e.detail !== 'string',
    );
    expect(malformed).toEqual([]);
    const status = statusFor(result.id, result.errors);
    expect(status.code).toBe(result.errors.length === 0 ? 200 : 422);
    outcome = result.errors.length === 0 ? 'ok' : 'errors';
  } catch (e) {
    if (!(e instanceof UnknownKindError)) throw e;
    outcome = 'unknown-kind';
  }
  const after = [input.object, input.oldObject, input.seed];
  // isDeepStrictEqual is the fast path; toEqual also accepts the clone of a null-prototype object, and explains a diff
  if (before !== undefined && !isDeepStrictEqual(after, before)) expect(after).toEqual(before);
  return outcome;
}

const garbage = fc.oneof(fc.anything(), fc.jsonValue());

describe('admit on malformed input', () => {
  it.each(Object.keys(VALID))('accepts the valid %s fixture', (kind) => {
    expect(expectRobust({ object: VALID[kind]!(), gates: GATES[0]! })).toBe('ok');
  });

  describe.each(Object.keys(VALID))('%s', (kind) => {
    const valid = VALID[kind]!();
    // keep apiVersion and kind: those decide the kind, and replacing them is the UnknownKindError case below
    const paths = pathsOf(valid).filter((p) => p[0] !== 'apiVersion' && p[0] !== 'kind');

    it('garbage at any existing path', () => {
      fc.assert(
        fc.property(fc.constantFrom(...paths), garbage, fc.constantFrom(...GATES), (path, value, gates) => {
          expectRobust({ object: setAt(valid, path, value), gates });
        }),
        { numRuns: 200 },
      );
    });

    it('garbage under a new key at any path', () => {
      // Under objects only: JSON has no way to give an array a key that is not an index (a generated "length" on
      // one would not be an input at all).
      const objectPaths = paths.filter((path) => {
        const target = path.reduce<unknown>((node, segment) => (node as Record<PropertyKey, unknown>)[segment], valid);
        return typeof target === 'object' && target !== null && !Array.isArray(target);
      });
      fc.assert(
        fc.property(
          fc.constantFrom<PathSegment[]>([], ...objectPaths),
          fc.oneof(fc.string(), fc.constantFrom('__proto__', 'constructor', 'toString', 'spec', 'networks')),
          garbage,
          (path, key, value) => {
            expectRobust({ object: setAt(valid, [...path, key], value), gates: GATES[1]! });
          },
        ),
        { numRuns: 100 },
      );
    });

    it('garbage in the old object of an update', () => {
      fc.assert(
        fc.property(fc.constantFrom(...paths), garbage, (path, value) => {
          expectRobust({ object: valid, oldObject: setAt(valid, path, value), gates: GATES[1]! });
          expectRobust({ object: setAt(valid, path, value), oldObject: valid, gates: GATES[1]! });
        }),
        { numRuns: 100 },
      );
    });

    it('an arbitrary document in place of the object', () => {
      fc.assert(
        fc.property(garbage, (value) => {
          expect(expectRobust({ object: value, gates: GATES[0]! })).toBe('unknown-kind');
        }),
        { numRuns: 100 },
      );
    });

    it('an arbitrary spec, metadata or status', () => {
      fc.assert(
        fc.property(
          fc.constantFrom('spec', 'metadata', 'status'),
          fc.dictionary(fc.string(), garbage),
          (key, value) => {
            expectRobust({ object: { ...valid, [key]: value }, gates: GATES[1]! });
          },
        ),
        { numRuns: 100 },
      );
    });

    it.each([
      ['an unknown top-level field', ['unknownField']],
      ['an unknown field under spec', ['spec', 'unknownField']],
      ['spec', ['spec']],
      ['metadata.annotations', ['metadata', 'annotations']],
    ] as const)('10,000 levels of nesting under %s', (_, path) => {
      for (const shape of ['object', 'array'] as const) {
        const deep = nested(10_000, shape);
        expectRobust({ object: setAt(valid, path, deep), gates: GATES[1]! });
        expectRobust({ object: setAt(valid, path, deep), oldObject: setAt(valid, path, deep), gates: GATES[1]! });
      }
    });

    it('10,000 levels of nesting in a raw extension', () => {
      const path = kind === 'Shoot' ? ['spec', 'networking', 'providerConfig'] : ['spec', 'providerConfig'];
      if (kind === 'Seed') return; // a Seed has no raw extension in the modelled fields
      const deep = nested(10_000, 'object');
      expectRobust({ object: setAt(valid, path, deep), oldObject: valid, gates: GATES[1]! });
      expectRobust({ object: setAt(valid, path, deep), oldObject: setAt(valid, path, deep), gates: GATES[1]! });
    });
  });

  describe('typed fields', () => {
    const wrongTypes = [
      42,
      true,
      null,
      {},
      [],
      [[]],
      { IPv4: true },
      '',
      'x'.repeat(10_000),
      -1,
      1.5,
      Number.MAX_SAFE_INTEGER,
    ];
    const cases: [string, PathSegment[]][] = [
      ['Shoot', ['spec', 'networking']],
      ['Shoot', ['spec', 'networking', 'ipFamilies']],
      ['Shoot', ['spec', 'networking', 'ipFamilies', 0]],
      ['Shoot', ['spec', 'networking', 'pods']],
      ['Shoot', ['spec', 'networking', 'nodes']],
      ['Shoot', ['spec', 'provider', 'workers']],
      ['Shoot', ['spec', 'provider', 'workers', 0]],
      ['Shoot', ['spec', 'provider', 'workers', 0, 'kubernetes', 'kubelet', 'maxPods']],
      ['Shoot', ['spec', 'kubernetes', 'kubeControllerManager', 'nodeCIDRMaskSize']],
      ['Shoot', ['spec', 'kubernetes', 'kubeControllerManager', 'nodeCIDRMaskSizeIPv6']],
      ['Shoot', ['status', 'networking', 'pods']],
      ['Shoot', ['metadata']],
      ['Shoot', ['metadata', 'name']],
      ['Shoot', ['metadata', 'labels']],
      ['Seed', ['spec', 'networks']],
      ['Seed', ['spec', 'networks', 'ipFamilies']],
      ['Seed', ['spec', 'networks', 'pods']],
      ['Seed', ['spec', 'networks', 'shootDefaults']],
      ['Seed', ['spec', 'networks', 'blockCIDRs']],
      ['Network', ['spec', 'podCIDR']],
      ['Network', ['spec', 'ipFamilies']],
      ['Network', ['metadata', 'deletionTimestamp']],
      ['DNSRecord', ['spec', 'values']],
      ['DNSRecord', ['spec', 'values', 0]],
      ['DNSRecord', ['spec', 'ttl']],
      ['DNSRecord', ['spec', 'recordType']],
      ['DNSRecord', ['spec', 'secretRef']],
    ];

    it.each(cases)('%s %j with values of the wrong type', (kind, path) => {
      const valid = VALID[kind]!();
      for (const value of wrongTypes) {
        for (const gates of GATES) {
          expectRobust({ object: setAt(valid, path, value), gates });
          expectRobust({ object: setAt(valid, path, value), oldObject: valid, gates });
        }
      }
    });

    it('reports a type error with the path of the offending value', () => {
      const result = admit({
        object: setAt(VALID.Shoot!(), ['spec', 'networking', 'ipFamilies', 1], 6),
        gates: GATES[0]!,
      });
      expect(result.errors.map((e) => e.field)).toEqual(['spec.networking.ipFamilies[1]']);
      expect(result.object).toBeUndefined();
    });
  });

  describe('huge lists', () => {
    const big = 100_000;

    it.each([
      ['Shoot', ['spec', 'networking', 'ipFamilies']],
      ['Seed', ['spec', 'networks', 'ipFamilies']],
      ['Network', ['spec', 'ipFamilies']],
    ] as const)('%s with 100k ipFamilies entries', (kind, path) => {
      const valid = VALID[kind]!();
      const families = Array.from({ length: big }, (_, i) => (i % 3 === 0 ? 'IPv4' : i % 3 === 1 ? 'IPv6' : `IPv${i}`));
      expect(expectRobust({ object: setAt(valid, [...path], families), gates: GATES[1]! })).toBe('errors');
      expect(expectRobust({ object: setAt(valid, [...path], families), oldObject: valid, gates: GATES[1]! })).toBe(
        'errors',
      );
    });

    it('DNSRecord with 100k values', () => {
      const valid = VALID.DNSRecord!();
      const values = Array.from({ length: big }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
      expect(expectRobust({ object: setAt(valid, ['spec', 'values'], values), gates: GATES[0]! })).toBe('ok');
      const withBadValue = [...values.slice(0, -1), 'not-an-ip'];
      expect(expectRobust({ object: setAt(valid, ['spec', 'values'], withBadValue), gates: GATES[0]! })).toBe('errors');
      const cname = setAt(setAt(valid, ['spec', 'recordType'], 'CNAME'), ['spec', 'values'], [...values]);
      expect(expectRobust({ object: cname, gates: GATES[0]! })).toBe('errors');
    });

    it('Seed with 100k blockCIDRs and Shoot with 100k status ranges', () => {
      const cidrs = Array.from({ length: big }, (_, i) =>
        i % 2 ? `10.${(i >> 8) & 255}.${i & 255}.0/24` : `bogus-${i}`,
      );
      expect(
        expectRobust({ object: setAt(VALID.Seed!(), ['spec', 'networks', 'blockCIDRs'], cidrs), gates: GATES[0]! }),
      ).toBe('errors');
      expect(
        expectRobust({
          object: setAt(VALID.Shoot!(), ['status', 'networking', 'egressCIDRs'], cidrs),
          gates: GATES[0]!,
        }),
      ).toBe('errors');
    });

    it('Shoot with 10k workers', () => {
      const workers = Array.from({ length: 10_000 }, (_, i) => ({
        name: `w${i}`,
        kubernetes: { kubelet: { maxPods: 100 + (i % 200) } },
      }));
      expectRobust({ object: setAt(VALID.Shoot!(), ['spec', 'provider', 'workers'], workers), gates: GATES[0]! });
    });
  });

  describe('kinds', () => {
    it('throws UnknownKindError for other kinds and broken kind fields', () => {
      for (const [apiVersion, kind] of [
        ['v1', 'Pod'],
        ['core.gardener.cloud/v1beta1', 'Network'],
        ['extensions.gardener.cloud/v1alpha1', 'Shoot'],
        [undefined, 'Seed'],
        ['core.gardener.cloud/v1beta1', ['Seed']],
      ] as const) {
        expect(() => admit({ object: { ...seedObject(), apiVersion, kind }, gates: GATES[0]! })).toThrow(
          UnknownKindError,
        );
      }
      for (const object of [undefined, null, 'Seed', 42, [], [seedObject()]]) {
        expect(() => admit({ object, gates: GATES[0]! })).toThrow(UnknownKindError);
      }
    });

    it('throws UnknownKindError when the old object or the seed context is of another kind', () => {
      expect(() => admit({ object: seedObject(), oldObject: networkObject(), gates: GATES[0]! })).toThrow(
        UnknownKindError,
      );
      expect(() => admit({ object: VALID.Shoot!(), seed: networkObject(), gates: GATES[0]! })).toThrow(
        UnknownKindError,
      );
    });

    it('garbage in the seed context is an UnknownKindError or field errors', () => {
      const seed = asJson(seedObject());
      const paths = pathsOf(seed).filter((p) => p[0] !== 'apiVersion' && p[0] !== 'kind');
      fc.assert(
        fc.property(fc.constantFrom(...paths), garbage, (path, value) => {
          expectRobust({ object: VALID.Shoot!(), seed: setAt(seed, path, value), gates: GATES[1]! });
        }),
        { numRuns: 100 },
      );
    });
  });
});

describe('withoutNulls', () => {
  it('keeps a "__proto__" key as data while dropping nulls', async () => {
    const { withoutNulls } = await import('../../src/apis/meta/nulls.js');
    const input = JSON.parse('{"a":null,"spec":{"__proto__":{"x":1},"b":null,"c":2}}');
    const output = withoutNulls(input) as { spec: Record<string, unknown> };
    expect(Object.keys(output)).toEqual(['spec']);
    expect(Object.keys(output.spec)).toEqual(['__proto__', 'c']);
    expect(Object.getOwnPropertyDescriptor(output.spec, '__proto__')?.value).toEqual({ x: 1 });
    expect(Object.getPrototypeOf(output.spec)).toBe(Object.prototype);
  });
});
