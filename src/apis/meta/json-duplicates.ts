/**
 * Duplicate keys in JSON input. `JSON.parse` keeps the last of two equal keys without a word, while kubectl and the
 * API server's strict decoding refuse them (`duplicate field`), and so does the YAML reader for YAML input: a file
 * whose second `ipFamilies` silently wins would validate something else than what its author reads. The CLI checks its
 * JSON input with it, the webhook the body of each review.
 */

interface Frame {
  /** The keys seen so far, for an object; undefined for an array. */
  readonly keys: Set<string> | undefined;
  readonly path: string;
  /** The key whose value comes next (objects), or the index of the current element (arrays). */
  key: string;
  index: number;
}

/** `spec.networking`, `items[2].metadata`: where a value sits, as field paths read. */
function childPath(parent: Frame | undefined): string {
  if (parent === undefined) return '';
  if (parent.keys === undefined) return `${parent.path}[${parent.index}]`;
  return parent.path === '' ? parent.key : `${parent.path}.${parent.key}`;
}

/**
 * The field path of the first key that an object of `text` names twice (`metadata.name`, `items[1].spec.region`), or
 * undefined when there is none. `text` must be JSON that `JSON.parse` accepts: the scan relies on it and checks
 * nothing else. One pass, strings skipped with `indexOf`: tens of milliseconds for megabytes. It holds the keys of the
 * objects open at the point it reads (at most nesting depth many sets), none of those it left.
 */
export function firstDuplicateKey(text: string): string | undefined {
  const stack: Frame[] = [];
  let lastString = '';
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      // The closing quote is the first one not escaped by an odd number of backslashes.
      let end = text.indexOf('"', i + 1);
      for (;;) {
        let backslashes = 0;
        while (text.charCodeAt(end - 1 - backslashes) === 0x5c) backslashes++;
        if (backslashes % 2 === 0) break;
        end = text.indexOf('"', end + 1);
      }
      lastString = text.slice(i, end + 1);
      i = end;
    } else if (c === 0x3a /* : */) {
      const top = stack[stack.length - 1]!;
      // Only a key with escapes needs decoding (`n\u0061me` is `name`): most have none.
      const key = lastString.includes('\\') ? (JSON.parse(lastString) as string) : lastString.slice(1, -1);
      if (top.keys!.has(key)) return top.path === '' ? key : `${top.path}.${key}`;
      top.keys!.add(key);
      top.key = key;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const path = childPath(stack[stack.length - 1]);
      stack.push({ keys: c === 0x7b ? new Set() : undefined, path, key: '', index: 0 });
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1]!;
      if (top.keys === undefined) top.index++;
    }
  }
  return undefined;
}
