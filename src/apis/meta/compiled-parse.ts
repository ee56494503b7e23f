/**
 * A zod schema compiled into one plain function that decodes what the schema accepts exactly as `schema.parse`
 * does (the same values, keys in the same order, unknown fields by reference), and gives up on anything else, for
 * zod to decode and report.
 *
 * Why: decoding runs for every admission review, and the webhook is paced, so a review runs with its code and data
 * out of cache. zod walks a schema as a graph of objects and closures (each field a schema instance, a `run`, a
 * payload, an issue list): a Shoot took ~90 µs cold, a third of a review. The compiled function is straight-line
 * code over the input. Errors are rare and stay zod's: the compiled function only decides the successful case.
 *
 * It knows the kinds the APIs use (loose and strict objects, strings, numbers with integer and range checks, booleans,
 * literals, arrays, string-keyed records, optional, nullable, unknown); any other schema, or check, is decoded by
 * zod itself at that place (`safeParse` of the subtree).
 *
 * Kept as one file (over 400 lines): one compiler, its schema kinds side by side, each emitting the code the others
 * call.
 */
import type { z } from 'zod';
import { defOf, type ZodDef } from './zod-def.js';

/** What a compiled parser returns when it can't decide: decode with zod. */
export const UNDECIDED: unique symbol = Symbol('undecided');

export type CompiledParser = (input: unknown) => unknown;

/** One cache per kind of parser: copying (`false`) and sharing (`true`). */
const parsers = { false: new WeakMap<z.ZodType, CompiledParser>(), true: new WeakMap<z.ZodType, CompiledParser>() };

/** `schema` compiled once per schema and kind. */
function cachedParser(schema: z.ZodType, share: boolean): CompiledParser {
  const cache = parsers[`${share}`];
  let parser = cache.get(schema);
  if (!parser) {
    parser = compile(schema, share);
    cache.set(schema, parser);
  }
  return parser;
}

/** `schema` compiled (once per schema): the decoded value, or {@link UNDECIDED}. */
export function compiledParser(schema: z.ZodType): CompiledParser {
  return cachedParser(schema, false);
}

/**
 * {@link compiledParser}, but an object, array or record of the input that decodes to what it is (the same values,
 * keys already in the decoded order) is returned itself, not copied: the decoded value shares every unchanged part
 * with the input, and the copy-on-write defaulting and the defaulting patch's walk (which skips what is identical)
 * then touch only what changed. Only for input nothing else holds or modifies, as JSON.parse made it (the
 * webhook's review objects): whoever modifies a decoded part modifies the input.
 */
export function sharingParser(schema: z.ZodType): CompiledParser {
  return cachedParser(schema, true);
}

/** Source of a function body, and the values it closes over (`refs[i]`). */
class Generator {
  readonly refs: unknown[] = [];
  private names = 0;

  /**
   * `root` is the schema this function decodes; objects below it get functions of their own. `share`: see
   * {@link sharingParser}.
   */
  constructor(
    private readonly root: z.ZodType,
    private readonly share: boolean,
  ) {}

  name(prefix: string): string {
    return `${prefix}${this.names++}`;
  }

  ref(value: unknown): string {
    this.refs.push(value);
    return `refs[${this.refs.length - 1}]`;
  }

  /** Code that decodes `input` (a variable) with `schema` into a new `const` it returns the name of. */
  value(schema: z.ZodType, input: string, out: string[]): string {
    const def = defOf(schema);
    const result = this.name('v');
    switch (def.type) {
      case 'string':
        if (def.checks?.length) return this.delegate(schema, input, out);
        out.push(`if (typeof ${input} !== 'string') return UNDECIDED;`, `const ${result} = ${input};`);
        return result;
      case 'boolean':
        if (def.checks?.length) return this.delegate(schema, input, out);
        out.push(`if (typeof ${input} !== 'boolean') return UNDECIDED;`, `const ${result} = ${input};`);
        return result;
      case 'number': {
        const conditions = [`typeof ${input} !== 'number'`, `!Number.isFinite(${input})`];
        for (const check of def.checks ?? []) {
          const c = check._zod.def;
          if (c.check === 'number_format' && c.format === 'safeint') {
            conditions.push(`!Number.isSafeInteger(${input})`);
          } else if ((c.check === 'greater_than' || c.check === 'less_than') && typeof c.value === 'number') {
            const op = c.check === 'greater_than' ? (c.inclusive ? '<' : '<=') : c.inclusive ? '>' : '>=';
            conditions.push(`${input} ${op} ${this.ref(c.value)}`);
          } else {
            return this.delegate(schema, input, out);
          }
        }
        out.push(`if (${conditions.join(' || ')}) return UNDECIDED;`, `const ${result} = ${input};`);
        return result;
      }
      case 'literal': {
        const values = def.values ?? [];
        if (!values.every((v) => typeof v === 'string' || typeof v === 'boolean' || typeof v === 'number')) {
          return this.delegate(schema, input, out);
        }
        out.push(`if (!${this.ref(values)}.includes(${input})) return UNDECIDED;`, `const ${result} = ${input};`);
        return result;
      }
      case 'unknown':
      case 'any':
        out.push(`const ${result} = ${input};`);
        return result;
      case 'nullable': {
        const inner: string[] = [];
        const innerResult = this.value(def.innerType!, input, inner);
        out.push(`let ${result} = null;`, `if (${input} !== null) {`, ...inner, `${result} = ${innerResult};`, `}`);
        return result;
      }
      case 'array': {
        if (def.checks?.length) return this.delegate(schema, input, out);
        const item = this.name('item');
        const inner: string[] = [];
        const itemResult = this.value(def.element!, item, inner);
        const i = this.name('i');
        if (this.share) {
          // A copy only from the first item that decodes to something else.
          const copy = this.name('copy');
          out.push(
            `if (!Array.isArray(${input})) return UNDECIDED;`,
            `let ${copy};`,
            `for (let ${i} = 0; ${i} < ${input}.length; ${i}++) {`,
            `const ${item} = ${input}[${i}];`,
            ...inner,
            `if (${copy} !== undefined) ${copy}.push(${itemResult});`,
            `else if (${itemResult} !== ${item}) { ${copy} = ${input}.slice(0, ${i}); ${copy}.push(${itemResult}); }`,
            `}`,
            `const ${result} = ${copy} === undefined ? ${input} : ${copy};`,
          );
          return result;
        }
        out.push(
          `if (!Array.isArray(${input})) return UNDECIDED;`,
          `const ${result} = [];`,
          `for (let ${i} = 0; ${i} < ${input}.length; ${i}++) {`,
          `const ${item} = ${input}[${i}];`,
          ...inner,
          `${result}.push(${itemResult});`,
          `}`,
        );
        return result;
      }
      case 'record': {
        const keyDef = defOf(def.keyType!);
        if (keyDef.type !== 'string' || keyDef.checks?.length) return this.delegate(schema, input, out);
        const key = this.name('key');
        const item = this.name('item');
        const inner: string[] = [];
        const itemResult = this.value(def.valueType!, item, inner);
        // Plain data only: anything zod's record treats specially (other prototypes, symbol keys, `__proto__`,
        // a `constructor` key, which its plain-object test reads) is left to zod.
        const plainData = [
          `if (typeof ${input} !== 'object' || ${input} === null || Object.getPrototypeOf(${input}) !== Object.prototype) return UNDECIDED;`,
          `if (Object.getOwnPropertySymbols(${input}).length > 0) return UNDECIDED;`,
        ];
        if (this.share) {
          // A copy only from the first value that decodes to something else (the keys before it as they are).
          const keys = this.name('keys');
          const j = this.name('j');
          const m = this.name('m');
          const copy = this.name('copy');
          out.push(
            ...plainData,
            `const ${keys} = Object.keys(${input});`,
            `let ${copy};`,
            `for (let ${j} = 0; ${j} < ${keys}.length; ${j}++) {`,
            `const ${key} = ${keys}[${j}];`,
            `if (${key} === '__proto__' || ${key} === 'constructor') return UNDECIDED;`,
            `const ${item} = ${input}[${key}];`,
            ...inner,
            `if (${copy} !== undefined) ${copy}[${key}] = ${itemResult};`,
            `else if (${itemResult} !== ${item}) {`,
            `${copy} = {};`,
            `for (let ${m} = 0; ${m} < ${j}; ${m}++) ${copy}[${keys}[${m}]] = ${input}[${keys}[${m}]];`,
            `${copy}[${key}] = ${itemResult};`,
            `}`,
            `}`,
            `const ${result} = ${copy} === undefined ? ${input} : ${copy};`,
          );
          return result;
        }
        out.push(
          ...plainData,
          `const ${result} = {};`,
          `for (const ${key} of Object.keys(${input})) {`,
          `if (${key} === '__proto__' || ${key} === 'constructor') return UNDECIDED;`,
          `const ${item} = ${input}[${key}];`,
          ...inner,
          `${result}[${key}] = ${itemResult};`,
          `}`,
        );
        return result;
      }
      case 'object': {
        if (schema === this.root) return this.object(schema, def, input, out);
        // A function per object, not one inlined body: with every field of Gardener's Shoot, that body is too large
        // for V8 to optimize (6.6 µs per warm Shoot decode inlined, 1.0 µs this way).
        const parser = this.ref(this.share ? sharingParser(schema) : compiledParser(schema));
        out.push(`const ${result} = ${parser}(${input});`, `if (${result} === UNDECIDED) return UNDECIDED;`);
        return result;
      }
      default:
        return this.delegate(schema, input, out);
    }
  }

  /**
   * A loose object (unknown keys kept): the shape's keys first, in the shape's order, then the others in the input's,
   * as zod's object does. A strict object: the shape's keys, and any other key is zod's to report. Other catchalls
   * (stripping, typed) are zod's.
   */
  private object(schema: z.ZodType, def: ZodDef, input: string, out: string[]): string {
    const keys = Object.keys(def.shape ?? {});
    const catchall = def.catchall ? defOf(def.catchall).type : undefined;
    const strict = catchall === 'never';
    if ((catchall !== 'unknown' && !strict) || def.checks?.length || keys.includes('__proto__')) {
      return this.delegate(schema, input, out);
    }
    if (this.share) return this.sharedObject(def, keys, strict, input, out);
    const result = this.name('o');
    out.push(
      `if (typeof ${input} !== 'object' || ${input} === null || Array.isArray(${input})) return UNDECIDED;`,
      `const ${result} = {};`,
    );
    for (const key of keys) {
      const field = def.shape![key]!;
      const fieldDef = defOf(field);
      const k = JSON.stringify(key);
      const x = this.name('x');
      const inner: string[] = [];
      if (fieldDef.type === 'optional') {
        const innerResult = this.value(fieldDef.innerType!, x, inner);
        out.push(
          `if (${k} in ${input}) {`,
          `const ${x} = ${input}[${k}];`,
          `if (${x} === undefined) ${result}[${k}] = undefined;`,
          `else {`,
          ...inner,
          `${result}[${k}] = ${innerResult};`,
          `}`,
          `}`,
        );
      } else {
        const innerResult = this.value(field, x, inner);
        out.push(
          `if (!(${k} in ${input})) return UNDECIDED;`,
          `const ${x} = ${input}[${k}];`,
          ...inner,
          `${result}[${k}] = ${innerResult};`,
        );
      }
    }
    const known = this.ref(new Set(keys));
    const key = this.name('key');
    if (strict) {
      out.push(`for (const ${key} in ${input}) if (!${known}.has(${key})) return UNDECIDED;`);
      return result;
    }
    out.push(
      `for (const ${key} in ${input}) {`,
      `if (${known}.has(${key}) || ${key} === '__proto__') continue;`,
      `${result}[${key}] = ${input}[${key}];`,
      `}`,
    );
    return result;
  }

  /**
   * {@link object} for {@link sharingParser}: the input itself when every field decodes to its own value and the
   * input's keys are in the decoded order already (the shape's present keys in the shape's order, then the unknown
   * ones); else a new object, as {@link object} builds it.
   */
  private sharedObject(def: ZodDef, keys: readonly string[], strict: boolean, input: string, out: string[]): string {
    const same = this.name('same');
    out.push(
      `if (typeof ${input} !== 'object' || ${input} === null || Array.isArray(${input})) return UNDECIDED;`,
      // zod's object is a plain one, whatever the input's prototype.
      `let ${same} = Object.getPrototypeOf(${input}) === Object.prototype;`,
    );
    const fields: { key: string; has?: string; value: string }[] = [];
    for (const key of keys) {
      const field = def.shape![key]!;
      const fieldDef = defOf(field);
      const k = JSON.stringify(key);
      const x = this.name('x');
      const inner: string[] = [];
      if (fieldDef.type === 'optional') {
        const has = this.name('has');
        const v = this.name('v');
        const innerResult = this.value(fieldDef.innerType!, x, inner);
        out.push(
          `let ${has} = false;`,
          `let ${v};`,
          `if (${k} in ${input}) {`,
          `${has} = true;`,
          `const ${x} = ${input}[${k}];`,
          `if (${x} !== undefined) {`,
          ...inner,
          `${v} = ${innerResult};`,
          `if (${v} !== ${x}) ${same} = false;`,
          `}`,
          `}`,
        );
        fields.push({ key: k, has, value: v });
      } else {
        const innerResult = this.value(field, x, inner);
        out.push(
          `if (!(${k} in ${input})) return UNDECIDED;`,
          `const ${x} = ${input}[${k}];`,
          ...inner,
          `if (${innerResult} !== ${x}) ${same} = false;`,
        );
        fields.push({ key: k, value: innerResult });
      }
    }
    // Each key's place in the shape: the input's keys are in the decoded order when the shape's come first, in order.
    const places = this.ref(new Map(keys.map((key, i) => [key, i])));
    const key = this.name('key');
    const at = this.name('at');
    const last = this.name('last');
    const unknown = this.name('unknown');
    out.push(
      `let ${last} = -1;`,
      `let ${unknown} = false;`,
      `for (const ${key} in ${input}) {`,
      `const ${at} = ${places}.get(${key});`,
      `if (${at} === undefined) {`,
      strict ? `return UNDECIDED;` : `${unknown} = true;`,
      `if (${key} === '__proto__') ${same} = false;`,
      `} else {`,
      `if (${unknown} || ${at} < ${last}) ${same} = false;`,
      `${last} = ${at};`,
      `}`,
      `}`,
    );
    const result = this.name('o');
    out.push(`let ${result} = ${input};`, `if (!${same}) {`, `${result} = {};`);
    for (const field of fields) {
      out.push(
        field.has
          ? `if (${field.has}) ${result}[${field.key}] = ${field.value};`
          : `${result}[${field.key}] = ${field.value};`,
      );
    }
    if (!strict) {
      out.push(
        `for (const ${key} in ${input}) {`,
        `if (${places}.has(${key}) || ${key} === '__proto__') continue;`,
        `${result}[${key}] = ${input}[${key}];`,
        `}`,
      );
    }
    out.push(`}`);
    return result;
  }

  /** Code that has zod decode `input` with `schema`. */
  private delegate(schema: z.ZodType, input: string, out: string[]): string {
    const parsed = this.name('parsed');
    const result = this.name('v');
    out.push(
      `const ${parsed} = ${this.ref(schema)}.safeParse(${input});`,
      `if (!${parsed}.success) return UNDECIDED;`,
      `const ${result} = ${parsed}.data;`,
    );
    return result;
  }
}

function compile(schema: z.ZodType, share: boolean): CompiledParser {
  const generator = new Generator(schema, share);
  const body: string[] = [];
  const result = generator.value(schema, 'input', body);
  body.push(`return ${result};`);
  // The generated code only names variables of its own, and reaches values (schemas, key sets, bounds) by index.
  let factory: (refs: unknown[], undecided: typeof UNDECIDED) => CompiledParser;
  try {
    factory = new Function(
      'refs',
      'UNDECIDED',
      `return function compiledParse(input) {\n${body.join('\n')}\n};`,
    ) as typeof factory;
  } catch {
    // Code generation disallowed (`--disallow-code-generation-from-strings`): zod decodes everything.
    return () => UNDECIDED;
  }
  return factory(generator.refs, UNDECIDED);
}
