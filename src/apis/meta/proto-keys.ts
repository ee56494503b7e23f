/**
 * `__proto__` keys the decoded object would lose. JSON.parse and the YAML reader keep a `__proto__` key as an own
 * property, but decoding (zod) drops it from maps (labels, annotations) and from objects that keep unknown fields,
 * where the API server would keep the key (and validate it). Such a key becomes a field error naming it instead of
 * vanishing. Strict objects refuse it as any unknown field; raw data (`providerConfig`) keeps it, for its own
 * validation to judge.
 */
import type { z } from 'zod';
import { FieldPath, invalid, type FieldError } from '../field/index.js';
import { isPlainJSON } from './plain-json.js';
import { defOf, type ZodDef } from './zod-def.js';

const PROTO = '__proto__';

/** The schema without wrappers that don't change the shape (optional, nullable, default, pipe, lazy, ...). */
function unwrap(schema: z.ZodType): ZodDef {
  let def = defOf(schema);
  for (let i = 0; i < 32; i++) {
    const inner = def.innerType ?? def.in ?? def.getter?.();
    if (!inner) break;
    def = defOf(inner);
  }
  return def;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether any object in `value` has an own `__proto__` key: the cheap walk that spares most inputs the one below. */
function hasProtoKey(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (typeof current !== 'object' || current === null) continue;
    if (Array.isArray(current)) {
      for (const item of current) if (typeof item === 'object' && item !== null) stack.push(item);
      continue;
    }
    for (const key in current) {
      if (key === PROTO) return true;
      const item = (current as Record<string, unknown>)[key];
      if (typeof item === 'object' && item !== null) stack.push(item);
    }
  }
  return false;
}

/** Field errors for every `__proto__` key of `value` that decoding with `schema` would drop. Iterative. */
export function droppedProtoKeys(schema: z.ZodType, value: unknown): FieldError[] {
  if (isPlainJSON(value) || !hasProtoKey(value)) return [];
  const errors: FieldError[] = [];
  const stack: [z.ZodType, unknown, FieldPath | undefined][] = [[schema, value, undefined]];
  const at = (path: FieldPath | undefined, name: string) => (path ? path.child(name) : FieldPath.root(name));
  while (stack.length > 0) {
    const [current, item, path] = stack.pop()!;
    const def = unwrap(current);
    if (def.type === 'array' && def.element && Array.isArray(item)) {
      item.forEach((element, i) => stack.push([def.element!, element, (path ?? FieldPath.root('')).index(i)]));
      continue;
    }
    if (!isPlainObject(item)) continue;
    // A strict object refuses the key as an unknown field already (see zod-issues.ts).
    const keepsAnyKey =
      def.type === 'record' ||
      (def.type === 'object' && def.catchall !== undefined && defOf(def.catchall).type !== 'never');
    if (keepsAnyKey && Object.prototype.hasOwnProperty.call(item, PROTO)) {
      errors.push(invalid(at(path, PROTO), item[PROTO], `the key "${PROTO}" is not supported`));
    }
    if (def.type === 'record' && def.valueType) {
      for (const key of Object.keys(item)) if (key !== PROTO) stack.push([def.valueType, item[key], at(path, key)]);
    } else if (def.type === 'object' && def.shape) {
      for (const key of Object.keys(item)) {
        const field = Object.prototype.hasOwnProperty.call(def.shape, key) ? def.shape[key] : undefined;
        if (field && key !== PROTO) stack.push([field, item[key], at(path, key)]);
      }
    }
  }
  return errors;
}
