/**
 * A copy of a decoded document without `null`-valued object keys: to an API server, `field: null` in a manifest means
 * "unset" (the common `kubernetes:` with everything below it commented out). Iterative, so deeply nested garbage
 * can't overflow the stack; the input is never modified.
 */
export function withoutNulls(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const root: { value: unknown } = { value: undefined };
  const stack: { source: object; assign: (copy: unknown) => void }[] = [
    { source: value, assign: (copy) => (root.value = copy) },
  ];
  while (stack.length > 0) {
    const { source, assign } = stack.pop()!;
    if (Array.isArray(source)) {
      const copy: unknown[] = new Array(source.length);
      assign(copy);
      source.forEach((item, i) => {
        if (typeof item === 'object' && item !== null) stack.push({ source: item, assign: (c) => (copy[i] = c) });
        else copy[i] = item;
      });
    } else {
      const copy: Record<string, unknown> = {};
      assign(copy);
      for (const [key, item] of Object.entries(source)) {
        if (item === null) continue;
        if (typeof item === 'object') stack.push({ source: item, assign: (c) => (copy[key] = c) });
        else copy[key] = item;
      }
    }
  }
  return root.value;
}
