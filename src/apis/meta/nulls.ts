import { isPlainJSON } from './plain-json.js';

/**
 * A document without `null`-valued object keys: to an API server, `field: null` in a manifest means "unset" (the
 * common `kubernetes:` with everything below it commented out). The input is never modified; it is returned as is
 * when it holds no null (without a walk when it is known to hold none, see plain-json.ts). Iterative, so deeply nested
 * garbage can't overflow the stack.
 */
export function withoutNulls(value: unknown): unknown {
  if (isPlainJSON(value)) return value;
  return containsNullKey(value) ? copyWithoutNulls(value) : value;
}

function containsNullKey(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (typeof current !== 'object' || current === null) continue;
    if (Array.isArray(current)) {
      for (const item of current) if (typeof item === 'object' && item !== null) stack.push(item);
      continue;
    }
    for (const key in current) {
      const item = (current as Record<string, unknown>)[key];
      if (item === null) return true;
      if (typeof item === 'object') stack.push(item);
    }
  }
  return false;
}

interface PendingCopy {
  readonly source: object;
  readonly parent: Record<string, unknown> | unknown[];
  readonly key: string | number;
}

function copyWithoutNulls(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const holder: unknown[] = [undefined];
  const stack: PendingCopy[] = [{ source: value, parent: holder, key: 0 }];
  while (stack.length > 0) {
    const { source, parent, key } = stack.pop()!;
    const copy: Record<string, unknown> | unknown[] = Array.isArray(source) ? new Array(source.length) : {};
    (parent as Record<string | number, unknown>)[key] = copy;
    for (const [childKey, item] of Object.entries(source)) {
      const slot = Array.isArray(copy) ? Number(childKey) : childKey;
      if (item === null && !Array.isArray(copy)) continue;
      // Assigning now, even a placeholder, keeps the keys in their original order. `__proto__` is data here.
      if (slot === '__proto__') {
        Object.defineProperty(copy, slot, { value: item, enumerable: true, writable: true, configurable: true });
      } else {
        (copy as Record<string | number, unknown>)[slot] = item;
      }
      if (typeof item === 'object' && item !== null) stack.push({ source: item, parent: copy, key: slot });
    }
  }
  return holder[0];
}
