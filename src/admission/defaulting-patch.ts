/**
 * The JSON patch of the mutating webhook (review.ts): the RFC 6902 operations that turn the object of a review into
 * its defaulted self.
 */

/** Fields of the object the API server owns, or that no defaulting may change (compared, not looked up in a set). */
const neverPatched = (key: string) => key === 'apiVersion' || key === 'kind' || key === 'metadata';

/** An RFC 6902 operation of the defaulting patch; `value` is the defaulted object's own (not a copy). */
export type PatchOperation = { op: 'add' | 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

/**
 * The JSON patch that turns `original` into `defaulted`, minimal and idempotent, with the operations fast-json-patch's
 * `compare` makes, in its order, but in one walk and without copies (a paced webhook pays for every object and every
 * line of code a review touches, cold; this walk and what it replaced were a third of a mutating review):
 * - keys of `original` set to `null` count as absent (decoding dropped them), so they are left alone rather than
 *   removed (an `add` over such a key replaces it, per RFC 6902);
 * - `apiVersion`, `kind` and `metadata` are never patched;
 * - iterative: a deeply nested unknown field can't exhaust the stack.
 */
export function defaultingPatch(original: unknown, defaulted: unknown): PatchOperation[] {
  const ops: PatchOperation[] = [];
  if (!isPlainObject(original) || !isPlainObject(defaulted)) return ops;
  const stack: DiffFrame[] = [diffFrame(original, defaulted, '', true)];
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const child = frame.next >= 0 ? diffOldKeys(frame, ops) : undefined;
    if (child) {
      stack.push(child);
      continue;
    }
    stack.pop();
    addNewKeys(frame, ops);
  }
  return ops;
}

/** One pair of containers of the walk in {@link defaultingPatch}: `base`'s keys are visited last to first. */
interface DiffFrame {
  readonly base: Container;
  readonly target: Container;
  readonly path: string;
  /** `base`'s keys, null-valued ones of objects (and the never-patched ones at the root) among them. */
  readonly keys: string[];
  /** Index into `keys` of the next key to visit, descending; -1 once all were. */
  next: number;
  /** Keys visited so far that count: not null-valued in an object, not never-patched at the root. */
  kept: number;
  removed: boolean;
  readonly root: boolean;
  readonly array: boolean;
}

type Container = Record<string, unknown> | unknown[];

function diffFrame(base: Container, target: Container, path: string, root = false): DiffFrame {
  const keys = Object.keys(base);
  return { base, target, path, keys, next: keys.length - 1, kept: 0, removed: false, root, array: Array.isArray(base) };
}

/** Replaces and removes for `frame`'s keys from `next` down; stops at a pair of containers to descend into. */
function diffOldKeys(frame: DiffFrame, ops: PatchOperation[]): DiffFrame | undefined {
  const base = frame.base as Record<string, unknown>;
  const target = frame.target as Record<string, unknown>;
  const targetIsArray = Array.isArray(target);
  while (frame.next >= 0) {
    const key = frame.keys[frame.next--]!;
    const oldValue = base[key];
    // A null-valued key of an object counts as absent; the root's never-patched keys are not looked at.
    if ((oldValue === null && !frame.array) || (frame.root && neverPatched(key))) continue;
    frame.kept++;
    if (!Object.prototype.hasOwnProperty.call(target, key) || (target[key] === undefined && !targetIsArray)) {
      ops.push({ op: 'remove', path: childPath(frame, key) });
      frame.removed = true;
      continue;
    }
    const newValue = target[key];
    if (oldValue === newValue) continue;
    if (isContainer(oldValue) && isContainer(newValue) && Array.isArray(oldValue) === Array.isArray(newValue)) {
      return diffFrame(oldValue, newValue, childPath(frame, key));
    }
    ops.push({ op: 'replace', path: childPath(frame, key), value: newValue });
  }
  return undefined;
}

/** Adds for the keys `frame.target` has and its base lacks (or holds `null` in). */
function addNewKeys(frame: DiffFrame, ops: PatchOperation[]): void {
  const base = frame.base as Record<string, unknown>;
  const target = frame.target as Record<string, unknown>;
  const keys = Object.keys(target);
  let count = keys.length;
  if (frame.root) for (const key of keys) if (neverPatched(key)) count--;
  if (!frame.removed && count === frame.kept) return;
  const array = frame.array;
  for (const key of keys) {
    if (frame.root && neverPatched(key)) continue;
    const value = target[key];
    if (value === undefined) continue;
    if (Object.prototype.hasOwnProperty.call(base, key) && (array || base[key] !== null)) continue;
    ops.push({ op: 'add', path: childPath(frame, key), value });
  }
}

/** The JSON pointer (RFC 6901) of `key` in the frame's containers. */
function childPath(frame: DiffFrame, key: string): string {
  return `${frame.path}/${escapePathComponent(key)}`;
}

function escapePathComponent(key: string): string {
  return key.includes('~') || key.includes('/') ? key.replace(/~/g, '~0').replace(/\//g, '~1') : key;
}

function isContainer(value: unknown): value is Container {
  return typeof value === 'object' && value !== null;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
