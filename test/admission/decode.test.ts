/**
 * The webhook's decode path (pre-scan, body, parse) on deep and wide JSON: it refuses exactly the bodies over the
 * limits, without throwing anything else, and what it refuses costs no memory.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BodyRefusal, decodeReviewBody, ReviewBodyReader, type BodyLimits } from '../../src/admission/decode.js';
import { JSONBodyScanner } from '../../src/admission/json-scan.js';
import { firstDuplicateKey } from '../../src/apis/meta/json-duplicates.js';
import { isPlainJSON } from '../../src/apis/meta/plain-json.js';
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_JSON_DEPTH, DEFAULT_MAX_JSON_VALUES } from '../../src/admission/server.js';

const LIMITS: BodyLimits = {
  maxBytes: DEFAULT_MAX_BODY_BYTES,
  maxDepth: DEFAULT_MAX_JSON_DEPTH,
  maxValues: DEFAULT_MAX_JSON_VALUES,
};

/** Depth and values of a JSON value as the scan counts them (every `[`, `{` and `,`), walked without recursion. */
function measure(root: unknown): { depth: number; values: number } {
  let depth = 0;
  let values = 0;
  const stack: [unknown, number][] = [[root, 1]];
  while (stack.length > 0) {
    const [value, level] = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    const children = Object.values(value);
    depth = Math.max(depth, level);
    values += 1 + Math.max(0, children.length - 1);
    for (const child of children) stack.push([child, level + 1]);
  }
  return { depth, values };
}

/** `object` as the object of a review, as the API server writes it (uid first). */
const reviewText = (objectJSON: string, uid = 'e7f5a1c2-0000-4000-8000-000000000001') =>
  `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":${JSON.stringify(uid)},` +
  `"operation":"CREATE","object":${objectJSON}}}`;
/** The review adds 2 levels (review, request) and 4 values (3 commas of request, 2 of review, less the shared). */
const REVIEW_DEPTH = 2;
const REVIEW_VALUES = 2 + 2 + 2;

/** Splits a text into chunks at the given cut points, as TCP might. */
function chunksOf(text: string, cuts: readonly number[]): Buffer[] {
  const bytes = Buffer.from(text);
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let start = 0;
  for (const point of [...points, bytes.length]) {
    chunks.push(bytes.subarray(start, point));
    start = point;
  }
  return chunks;
}

/** Deep and wide JSON: arrays and objects nested up to `maxDepth`, with long runs of small elements. */
const leaf = fc.oneof(fc.integer(), fc.constantFrom(null, true, 'a"[{\\', '}]', {}, []), fc.string({ maxLength: 8 }));
const deepOrWide = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { maxDepth: 6, depthSize: 'small' },
    leaf,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 4 }), tie('value'), { maxKeys: 4 }),
    // Chains: the depth without the breadth that would make the value huge.
    fc.tuple(fc.integer({ min: 1, max: 150 }), fc.boolean(), tie('value')).map(([levels, objects, leaf]) => {
      let value = leaf;
      for (let i = 0; i < levels; i++) value = objects ? { n: value } : [value];
      return value;
    }),
    // Runs: the values without the depth.
    fc.tuple(fc.integer({ min: 0, max: 3000 }), leaf).map(([length, item]) => new Array(length).fill(item)),
  ),
})).value;

describe('JSONBodyScanner', () => {
  it('counts depth and values outside strings only, whatever the chunking', () => {
    const text = '{"a":"[[[{{{\\"]]]","b":[1,[2,{"c":[]}]],"d":"\\\\"}';
    for (let cut = 0; cut <= text.length; cut++) {
      const scanner = new JSONBodyScanner({ maxDepth: 5, maxValues: 9 });
      for (const chunk of chunksOf(text, [cut])) expect(scanner.write(chunk)).toEqual({ ok: true });
      for (const tighter of [
        new JSONBodyScanner({ maxDepth: 4, maxValues: 9 }),
        new JSONBodyScanner({ maxDepth: 5, maxValues: 8 }),
      ]) {
        expect(chunksOf(text, [cut]).map((c) => tighter.write(c).ok)).toContain(false);
      }
    }
  });

  it('counts the keys of each object, not of arrays, strings or other objects', () => {
    // Three keys at the root, two in "b"'s object, none in arrays however long; commas in strings are no keys.
    const text = '{"a":[1,2,3,4,5,6],"b":{"x":"1,2,3","y":[{"z":0}]},"c":{}}';
    for (let cut = 0; cut <= text.length; cut++) {
      const scanner = new JSONBodyScanner({ maxDepth: 5, maxValues: 100, maxObjectKeys: 3 });
      for (const chunk of chunksOf(text, [cut])) expect(scanner.write(chunk)).toEqual({ ok: true });
      const tighter = new JSONBodyScanner({ maxDepth: 5, maxValues: 100, maxObjectKeys: 2 });
      expect(chunksOf(text, [cut]).map((c) => tighter.write(c))).toContainEqual({
        ok: false,
        reason: 'an object of the body has more than 2 keys',
      });
    }
  });

  it('refuses one object of many keys that stays within the value limit', () => {
    const wide = `{"request":{"uid":"u","object":{${Array.from({ length: 10_001 }, (_, i) => `"k${i}":0`).join(',')}}}}`;
    expect(() => decodeReviewBody([Buffer.from(wide)], { ...LIMITS, maxObjectKeys: 10_000 })).toThrow(
      new BodyRefusal(400, 'an object of the body has more than 10000 keys', 'u'),
    );
    // As many keys over many objects are decoded (and left to validation).
    const spread = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","object":[${Array.from(
      { length: 11 },
      (_, o) => `{${Array.from({ length: 1_000 }, (_, i) => `"k${o}-${i}":0`).join(',')}}`,
    ).join(',')}]}}`;
    expect(decodeReviewBody([Buffer.from(spread)], { ...LIMITS, maxObjectKeys: 10_000 }).request?.uid).toBe('u');
  });

  it('finds request.uid wherever the chunks break, and only that uid', () => {
    const text =
      '{"kind":"AdmissionReview","object":{"uid":"not-this"},"request":{"userInfo":{"uid":"nor-this"},' +
      '"uid":"the-\\u0075id","object":{"metadata":{"uid":"not-that"}}}}';
    for (let cut = 0; cut <= text.length; cut++) {
      const scanner = new JSONBodyScanner(LIMITS);
      for (const chunk of chunksOf(text, [cut, cut + 7])) scanner.write(chunk);
      expect(scanner.uid).toBe('the-uid');
    }
  });

  it('reads escaped keys and skips strings longer than a uid, wherever the chunks break', () => {
    const long = 'x'.repeat(300);
    const text =
      `{"${long}":"${long}","re\\u0071uest":{"${long}":"v","u\\"id":"not-this","uid":"${long}",` +
      `"object":{"uid":"nor-this"}},"request":{"uid":"the-uid"}}`;
    for (let cut = 0; cut <= text.length; cut += 3) {
      const scanner = new JSONBodyScanner(LIMITS);
      for (const chunk of chunksOf(text, [cut, cut + 5])) scanner.write(chunk);
      // The escaped `request` is read as the request, but its uid is too long to be one: the uid comes from the next.
      expect(scanner.uid).toBe('the-uid');
    }
    const escaped = '{"kind":"AdmissionReview","re\\u0071uest":{"\\u0075id":"the-uid","uid":"later"}}';
    for (let cut = 0; cut <= escaped.length; cut++) {
      const scanner = new JSONBodyScanner(LIMITS);
      for (const chunk of chunksOf(escaped, [cut])) scanner.write(chunk);
      expect(scanner.uid).toBe('the-uid');
    }
  });
  it('reads a uid of any characters, escaped or not, wherever the chunks break', () => {
    const text = (uid: string) => `{"kind":"AdmissionReview","request":{"uid":"${uid}","object":{"uid":"not-this"}}}`;
    const cases: [written: string, uid: string][] = [
      ['6f1c0a00-0000-4000-8000-000000000001', '6f1c0a00-0000-4000-8000-000000000001'],
      ['ü-ñ-✓', 'ü-ñ-✓'],
      ['x\\u0041y', 'xAy'],
    ];
    for (const [written, uid] of cases) {
      for (let cut = 0; cut <= Buffer.byteLength(text(written)); cut++) {
        const scanner = new JSONBodyScanner(LIMITS);
        for (const chunk of chunksOf(text(written), [cut])) scanner.write(chunk);
        expect(scanner.uid).toBe(uid);
        // Asked again, the same.
        expect(scanner.uid).toBe(uid);
      }
    }
  });
});

describe('the decode path on deep and wide JSON (fuzz)', () => {
  it('refuses exactly what is over the limits, throws nothing else, and parses the rest', () => {
    const limits: BodyLimits = { maxBytes: 1024 * 1024, maxDepth: 100, maxValues: 5000 };
    const seen = new Set<string>();
    fc.assert(
      fc.property(deepOrWide, fc.array(fc.nat(), { maxLength: 6 }), (object, cuts) => {
        const text = reviewText(JSON.stringify(object));
        const { depth, values } = measure(object);
        fc.pre(Buffer.byteLength(text) <= limits.maxBytes);
        const over = depth + REVIEW_DEPTH > limits.maxDepth || values + REVIEW_VALUES > limits.maxValues;
        const reader = new ReviewBodyReader(limits);
        let refusal: BodyRefusal | undefined;
        for (const chunk of chunksOf(text, cuts)) {
          reader.push(chunk);
          // Refused: nothing of the body is kept from then on.
          if (reader.refusal) expect(reader.keptBytes).toBe(0);
        }
        try {
          const review = decodeReviewBody(chunksOf(text, cuts), limits);
          expect(review.request?.uid).toBe('e7f5a1c2-0000-4000-8000-000000000001');
        } catch (e) {
          if (!(e instanceof BodyRefusal)) throw e;
          refusal = e;
        }
        expect(refusal !== undefined, `depth ${depth}, values ${values}`).toBe(over);
        seen.add(refusal ? refusal.message.replace(/ \d+.*/, '') : 'accepted');
        if (refusal) {
          expect(refusal).toMatchObject({ code: 400, uid: 'e7f5a1c2-0000-4000-8000-000000000001' });
          expect(refusal.message).toMatch(/nests deeper than 100 levels|has more than 5000 values/);
        }
      }),
      { numRuns: 300 },
    );
    // The generator reaches both limits and what is under them.
    expect([...seen].sort()).toEqual(['accepted', 'the body has more than', 'the body nests deeper than']);
  });

  // Chunks as TLS delivers them (records of up to 16 KiB) or larger.
  it('refuses worst-case bodies under the size limit without allocating for them', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const room = DEFAULT_MAX_BODY_BYTES - reviewText('').length - 8;
    const worst: Record<string, Buffer> = {
      'deep arrays': Buffer.from(reviewText('['.repeat(room / 2) + ']'.repeat(room / 2))),
      'deep objects': Buffer.from(reviewText('{"a":'.repeat(room / 6) + '0' + '}'.repeat(room / 6))),
      'wide objects': Buffer.from(reviewText(`[${'{},'.repeat(room / 3 - 1)}{}]`)),
      'wide numbers': Buffer.from(reviewText(`[${'0,'.repeat(room / 2 - 1)}0]`)),
    };
    fc.assert(
      fc.property(
        fc.constantFrom(...Object.keys(worst)),
        fc.integer({ min: 16 * 1024, max: 256 * 1024 }),
        (shape, size) => {
          const body = worst[shape]!;
          expect(body.length).toBeLessThanOrEqual(DEFAULT_MAX_BODY_BYTES);
          const reader = new ReviewBodyReader(LIMITS);
          gc();
          const before = process.memoryUsage().heapUsed;
          for (let i = 0; i < body.length; i += size) reader.push(body.subarray(i, i + size));
          const grown = process.memoryUsage().heapUsed - before;
          expect(reader.refusal?.code, shape).toBe(400);
          expect(reader.keptBytes).toBe(0);
          // JSON.parse of these costs 40 to 150 MB; the scan keeps a few strings of the first levels.
          expect(grown, shape).toBeLessThan(1024 * 1024);
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('duplicate keys by count', () => {
  const body = (object: string, rest = '') =>
    `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u",${rest}"object":${object}}}`;

  it.each([
    ['an object key', body('{"a":1,"a":2}'), 'request.object.a'],
    ['a key spelt with an escape', body('{"spec":{"n\\u0061me":1,"name":2}}'), 'request.object.spec.name'],
    ['two __proto__ keys', body('{"__proto__":{"a":1},"__proto__":{}}'), 'request.object.__proto__'],
    ['the old object', body('{}', '"oldObject":{"m":{"x":1,"x":1}},'), 'request.oldObject.m.x'],
    ['the review', body('{}', '"operation":"CREATE","operation":"UPDATE",'), 'request.operation'],
  ])('refuses %s named twice, wherever the chunks break', (_, text, path) => {
    for (let cut = 0; cut <= text.length; cut++) {
      expect(() => decodeReviewBody(chunksOf(text, [cut]), LIMITS)).toThrow(
        new BodyRefusal(
          400,
          `duplicate field "${path}": an object of the body names it twice (the API server's strict decoding ` +
            'refuses it too)',
          'u',
        ),
      );
    }
  });

  it('finds a duplicate exactly when the text names a key twice (property)', () => {
    const key = fc.constantFrom('a', 'b', 'n\\u0061me', 'name', '__proto__', 'x:y', 'q\\"');
    const json = fc.letrec<{ value: string }>((tie) => ({
      value: fc.oneof(
        { maxDepth: 4 },
        fc.constantFrom('1', 'null', '"s,:{"', '[]', '{}'),
        fc.array(tie('value'), { maxLength: 3 }).map((items) => `[${items.join(',')}]`),
        fc
          .array(fc.tuple(key, tie('value')), { maxLength: 4 })
          .map((members) => `{${members.map(([k, v]) => `"${k}":${v}`).join(',')}}`),
      ),
    })).value;
    fc.assert(
      fc.property(json, json, fc.array(fc.nat(), { maxLength: 3 }), (object, old, cuts) => {
        const text = body(object, `"oldObject":${old},`);
        const duplicate = firstDuplicateKey(text);
        let refusal: unknown;
        try {
          decodeReviewBody(chunksOf(text, cuts), LIMITS);
        } catch (e) {
          refusal = e;
        }
        if (duplicate === undefined) expect(refusal).toBeUndefined();
        else expect((refusal as BodyRefusal).message).toContain(`duplicate field "${duplicate}"`);
      }),
      { numRuns: 500 },
    );
  });

  it("marks the review's objects that hold no null-valued key and no __proto__ key", () => {
    const decode = (text: string) => decodeReviewBody([Buffer.from(text)], LIMITS).request!;
    const plain = decode(body('{"a":[null,{"b":1}]}', '"oldObject":{"a":{"b":null}},'));
    // A null in an array is no null-valued key.
    expect(isPlainJSON(plain.object)).toBe(true);
    expect(isPlainJSON(plain.oldObject)).toBe(false);
    expect(isPlainJSON(decode(body('{"a":{"__proto__":{}}}')).object)).toBe(false);
    // Nulls elsewhere in the review don't matter to the object.
    expect(isPlainJSON(decode(body('{"a":1}', '"name":null,')).object)).toBe(true);
  });
});

describe('ReviewBodyReader', () => {
  it('keeps a body of one chunk as it came, and joins more chunks into the announced length', () => {
    const text = reviewText('{"a":[1,2,3],"b":"x"}');
    const whole = Buffer.from(text);
    const one = new ReviewBodyReader(LIMITS, whole.length);
    one.push(whole);
    expect(one.body()).toBe(whole);
    for (let cut = 0; cut <= whole.length; cut += 7) {
      for (const announced of [whole.length, whole.length - 5, whole.length + 5, undefined]) {
        const reader = new ReviewBodyReader(LIMITS, announced);
        for (const chunk of chunksOf(text, [cut, cut + 13, whole.length - 5])) reader.push(chunk);
        // What came, whatever was announced (Node's HTTP parser refuses a mismatch before).
        expect(reader.body().toString()).toBe(text);
        expect(reader.keptBytes).toBeGreaterThanOrEqual(whole.length - 5);
      }
    }
  });
});
