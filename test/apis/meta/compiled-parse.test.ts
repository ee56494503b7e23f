import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compiledParser, sharingParser, UNDECIDED } from '../../../src/apis/meta/compiled-parse.js';
import { ALL_KINDS, DNSRecords, Networks, Seeds, Shoots, Workers, type KindInfo } from '../../../src/apis/registry.js';
import {
  dnsRecordObject,
  dualStackShootObject,
  ipv4ShootObject,
  ipv6ShootObject,
  networkObject,
  robustnessShootObject,
  seedDualStackNetworks,
  seedObject,
  workerObject,
  workerPool,
} from '../../fixtures/objects.js';

type Json = Record<string, unknown>;

/**
 * The same result as zod's: the same values, keys in the same order (JSON text), unknown fields by reference. With
 * the sharing parser (`share`), also the input left as it was, and every object or array of the result the input's own
 * at that place or not the input's at all.
 */
function expectSameAsZod(schema: z.ZodType, input: unknown, share = false): 'decided' | 'undecided' {
  const before = share ? snapshot(input) : undefined;
  const fast = (share ? sharingParser : compiledParser)(schema)(input);
  const zod = schema.safeParse(input);
  if (share) {
    expect(snapshot(input), 'the input was modified').toEqual(before);
    if (fast !== UNDECIDED) expectSharedInPlace(fast, input);
  }
  if (fast === UNDECIDED) return 'undecided';
  expect(zod.success, `zod refuses what the compiled parser decoded: ${JSON.stringify(input)}`).toBe(true);
  // Prototypes, own keys, -0 and NaN alike (not vitest's toStrictEqual, which reads a `constructor` key as the type).
  expect(isDeepStrictEqual(fast, zod.data), `${JSON.stringify(input)}`).toBe(true);
  expect(JSON.stringify(fast)).toBe(JSON.stringify(zod.data));
  return 'decided';
}

/** Every place of a value with what is there: primitives as they are, containers by kind and prototype. */
function snapshot(value: unknown, path = '', out: [string, unknown][] = []): [string, unknown][] {
  if (typeof value !== 'object' || value === null) {
    out.push([path, value]);
    return out;
  }
  out.push([
    path,
    Array.isArray(value) ? 'array' : Object.getPrototypeOf(value) === null ? 'null-prototype' : 'object',
  ]);
  for (const key of Object.keys(value)) snapshot((value as Json)[key], `${path}/${key}`, out);
  return out;
}

/** Each container of `decoded` is `input`'s own at the same place, or none of `input`'s containers. */
function expectSharedInPlace(decoded: unknown, input: unknown): void {
  const inputs = new Set<unknown>();
  const collect = (value: unknown) => {
    if (typeof value !== 'object' || value === null || inputs.has(value)) return;
    inputs.add(value);
    for (const item of Object.values(value)) collect(item);
  };
  collect(input);
  const walk = (value: unknown, original: unknown) => {
    if (typeof value !== 'object' || value === null) return;
    if (value === original) return;
    expect(inputs.has(value), 'a container of the input at another place').toBe(false);
    for (const [key, item] of Object.entries(value)) {
      const from = typeof original === 'object' && original !== null ? (original as Json)[key] : undefined;
      walk(item, Object.prototype.hasOwnProperty.call(original ?? {}, key) ? from : undefined);
    }
  };
  walk(decoded, input);
}

const fixtures: [KindInfo<unknown>, () => unknown][] = [
  [Shoots, () => ipv4ShootObject()],
  [Shoots, () => ipv6ShootObject()],
  [Shoots, () => dualStackShootObject()],
  [Shoots, robustnessShootObject],
  [Seeds, () => seedObject(seedDualStackNetworks)],
  [Networks, () => networkObject()],
  [DNSRecords, () => dnsRecordObject()],
  [Workers, () => workerObject()],
  [Workers, () => workerObject({ pools: [workerPool({ maxSurge: '25%', nodeTemplate: { capacity: { cpu: 2 } } })] })],
];

/** Every place in a JSON document: [parent, key] pairs. */
function places(doc: unknown): [Json | unknown[], string | number][] {
  const out: [Json | unknown[], string | number][] = [];
  const walk = (value: unknown) => {
    if (Array.isArray(value)) {
      value.forEach((item, i) => {
        out.push([value, i]);
        walk(item);
      });
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        out.push([value as Json, key]);
        walk(item);
      }
    }
  };
  walk(doc);
  return out;
}

const mutation = fc.record({
  at: fc.nat(),
  how: fc.constantFrom('set', 'delete', 'add', 'proto', 'undefined'),
  key: fc.constantFrom('name', 'type', 'x', 'labels', 'pods', 'maxPods', 'workers', '__proto__', 'constructor', '0'),
  value: fc.oneof(
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom(-0, 2 ** 31, -(2 ** 31), 2 ** 53, 1.5, NaN, Infinity, '', 'calico', ['IPv6'], { a: 'b' }),
  ),
});

type Mutation = typeof mutation extends fc.Arbitrary<infer T> ? T : never;

function mutate(doc: Json, mutations: readonly Mutation[]): Json {
  for (const m of mutations) {
    const all = places(doc);
    if (all.length === 0) break;
    const [parent, key] = all[m.at % all.length]!;
    const target = (parent as Json)[key as string];
    if (m.how === 'set') (parent as Json)[key as string] = structuredClone(m.value);
    else if (m.how === 'undefined') (parent as Json)[key as string] = undefined;
    else if (m.how === 'delete') {
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete parent[key as string];
    } else if (typeof target === 'object' && target !== null && !Array.isArray(target)) {
      // An own `__proto__` key, as JSON.parse makes it, or any other key.
      const added = m.how === 'proto' ? '__proto__' : m.key;
      Object.defineProperty(target, added, {
        value: structuredClone(m.value),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return doc;
}

describe('compiled parser', () => {
  it('compiles every kind and decodes its objects as zod does', () => {
    for (const kind of ALL_KINDS) expect(typeof compiledParser(kind.schema)).toBe('function');
    for (const [kind, make] of fixtures) {
      const object = JSON.parse(JSON.stringify(make())) as Json;
      expect(expectSameAsZod(kind.schema, object)).toBe('decided');
      // Unknown fields and raw extensions are zod's too: the very values of the input.
      const decoded = compiledParser(kind.schema)(object) as Json;
      expect((decoded.metadata as Json | undefined) === object.metadata).toBe(false);
    }
    const withRawExtension = JSON.parse(JSON.stringify(ipv6ShootObject())) as Json;
    (withRawExtension.spec as Json).networking = {
      ...((withRawExtension.spec as Json).networking as Json),
      providerConfig: { a: [1] },
    };
    const decoded = compiledParser(Shoots.schema)(withRawExtension) as { spec: { networking: Json } };
    expect(decoded.spec.networking.providerConfig).toBe(
      ((withRawExtension.spec as Json).networking as Json).providerConfig,
    );
    // An unknown field of a strict object is zod's to report.
    const withUnknown: Json = { ...withRawExtension, extra: { deep: [1] } };
    expect(compiledParser(Shoots.schema)(withUnknown)).toBe(UNDECIDED);
    expect(Shoots.schema.safeParse(withUnknown).success).toBe(false);
  });

  it.each([false, true])(
    'decodes exactly what zod decodes, as zod does, and leaves the rest to zod (property; sharing %s)',
    (share) => {
      const outcomes = { decided: 0, undecided: 0 };
      fc.assert(
        fc.property(
          fc.nat(fixtures.length - 1),
          fc.array(mutation, { minLength: 0, maxLength: 3 }),
          (which, mutations) => {
            const [kind, make] = fixtures[which]!;
            const doc = mutate(JSON.parse(JSON.stringify(make())) as Json, mutations);
            outcomes[expectSameAsZod(kind.schema, doc, share)]++;
          },
        ),
        { numRuns: 2000 },
      );
      // Both ways were taken, many times: the property is not vacuous.
      expect(outcomes.decided).toBeGreaterThan(200);
      expect(outcomes.undecided).toBeGreaterThan(200);
    },
  );

  it('shares what decodes to itself with the input, and copies only the way to what does not', () => {
    for (const [kind, make] of fixtures) {
      // Keys in zod's order: the whole input decodes to itself.
      const ordered = JSON.parse(JSON.stringify(kind.schema.parse(make()))) as Json;
      expect(sharingParser(kind.schema)(ordered)).toBe(ordered);
    }
    const shoot = JSON.parse(JSON.stringify(Shoots.schema.parse(ipv6ShootObject()))) as {
      metadata: Json;
      spec: Json & { networking: Json; provider?: Json };
    };
    // A key out of the shape's order: that object is new, its fields and every other object the input's own.
    shoot.spec.networking = { ipFamilies: shoot.spec.networking.ipFamilies, ...shoot.spec.networking };
    const decoded = sharingParser(Shoots.schema)(shoot) as typeof shoot;
    expect(decoded).not.toBe(shoot);
    expect(decoded.spec).not.toBe(shoot.spec);
    expect(decoded.spec.networking).not.toBe(shoot.spec.networking);
    expect(decoded.metadata).toBe(shoot.metadata);
    expect(decoded.spec.provider).toBe(shoot.spec.provider);
    expect(decoded.spec.networking.ipFamilies).toBe(shoot.spec.networking.ipFamilies);
    expect(JSON.stringify(decoded)).toBe(JSON.stringify(Shoots.schema.parse(shoot)));
  });

  it('agrees with zod on the schema kinds one by one', () => {
    const int32 = z.number().int().min(-2147483648).max(2147483647);
    const schema = z.looseObject({
      s: z.string().optional(),
      n: int32.optional(),
      f: z.number().optional(),
      b: z.boolean().optional(),
      l: z.literal('v1').optional(),
      a: z.array(z.string()).optional(),
      r: z.record(z.string(), z.string()).optional(),
      u: z.unknown().optional(),
      nn: z.string().nullable().optional(),
      req: z.string(),
      strict: z.strictObject({ a: z.string() }).optional(),
      // Not compiled: zod decodes these places itself.
      checked: z.string().min(2).optional(),
      stripping: z.object({ a: z.string() }).optional(),
    });
    const values = [
      undefined,
      null,
      '',
      'x',
      'v1',
      0,
      -0,
      1.5,
      2 ** 31,
      2 ** 53,
      NaN,
      Infinity,
      true,
      [],
      ['x'],
      [1],
      {},
      { a: 'b' },
      { a: 1 },
    ];
    const keys = ['s', 'n', 'f', 'b', 'l', 'a', 'r', 'u', 'nn', 'checked', 'strict', 'stripping'];
    let decided = 0;
    for (const key of keys) {
      for (const value of values) {
        if (expectSameAsZod(schema, { req: 'r', [key]: value, other: value }) === 'decided') decided++;
        expectSameAsZod(schema, { req: 'r', [key]: value, other: value }, true);
        expectSameAsZod(schema, { [key]: value, req: 'r' }, true);
      }
    }
    expect(decided).toBeGreaterThan(40);
    expect(expectSameAsZod(schema, { s: 'x' })).toBe('undecided');
    expect(expectSameAsZod(schema, { req: 'r', strict: { a: 'x' } })).toBe('decided');
    expect(expectSameAsZod(schema, { req: 'r', strict: { a: 'x', b: 1 } })).toBe('undecided');
    expect(expectSameAsZod(schema, { req: 'r', strict: JSON.parse('{"a": "x", "__proto__": {}}') })).toBe('undecided');
    expect(expectSameAsZod(schema, JSON.parse('{"req": "r", "__proto__": {"a": 1}}'))).toBe('decided');
    expect(expectSameAsZod(schema, JSON.parse('{"req": "r", "r": {"__proto__": "x"}}'))).toBe('undecided');
    expect(expectSameAsZod(schema, Object.assign(Object.create(null) as Json, { req: 'r' }))).toBe('decided');
    expect(expectSameAsZod(schema, { req: 'r', r: Object.assign(Object.create(null) as Json, { a: 'b' }) })).toBe(
      'undecided',
    );
    for (const input of [
      JSON.parse('{"req": "r", "__proto__": {"a": 1}}'),
      Object.assign(Object.create(null) as Json, { req: 'r' }),
      { req: 'r', a: ['x', 'y'], r: { a: 'b' }, nn: null, strict: { a: 'x' } },
    ]) {
      expect(expectSameAsZod(schema, input, true)).toBe('decided');
    }
  });

  it('leaves everything to zod where code generation is disallowed', () => {
    const script = [
      "const { compiledParser, UNDECIDED } = await import('./src/apis/meta/compiled-parse.ts');",
      "const { decode } = await import('./src/apis/admission.ts');",
      "const { Shoots } = await import('./src/apis/registry.ts');",
      "const shoot = { apiVersion: 'core.gardener.cloud/v1beta1', kind: 'Shoot', metadata: { name: 'a' }, spec: {} };",
      'console.log(JSON.stringify([compiledParser(Shoots.schema)(shoot) === UNDECIDED, decode(Shoots, shoot)]));',
    ].join('\n');
    const out = execFileSync(
      process.execPath,
      ['--disallow-code-generation-from-strings', '--import', 'tsx', '--input-type=module', '-e', script],
      { cwd: join(import.meta.dirname, '../../..'), encoding: 'utf8' },
    );
    expect(JSON.parse(out)).toEqual([
      true,
      {
        value: { apiVersion: 'core.gardener.cloud/v1beta1', kind: 'Shoot', metadata: { name: 'a' }, spec: {} },
        errors: [],
      },
    ]);
  });
});
