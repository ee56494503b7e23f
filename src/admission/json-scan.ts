/**
 * A pre-scan of a JSON body over its raw bytes, chunk by chunk as they arrive, before anything is parsed: the
 * nesting depth of `[` and `{` outside strings and the number of values are what turn a small body into a large
 * heap (a 3 MiB body of `[[[[…` or `[{},{},…` costs JSON.parse and every walk after it hundreds of MB), and both are
 * counted here in one pass that allocates nothing per byte, and so are the keys of each object: one object of 98,000
 * keys (1 MB, within the value limit) costs 65 MB and a quarter of a second to decode and walk, ten times what as many
 * values in arrays or small objects do. The scan also picks up `request.uid` of an
 * AdmissionReview (the API server writes it first), so that a refused body can still get an AdmissionReview answer,
 * and counts the keys of the whole body (every `:` outside strings is one): a decoded body with fewer named an object
 * key twice (see decode.ts), which spares the body a second pass over its text.
 *
 * It is no validator: malformed JSON that stays within the limits is left to JSON.parse.
 */

export interface JSONScanLimits {
  /** Most `[`/`{` open at once. */
  readonly maxDepth: number;
  /** Most values (every `[`, `{` and `,` outside strings counts one: an upper bound of the elements less one). */
  readonly maxValues: number;
  /** Most keys in one object (every `,` in an object counts one more). @default unlimited */
  readonly maxObjectKeys?: number;
}

export type JSONScanVerdict = { readonly ok: true } | { readonly ok: false; readonly reason: string };

const OK: JSONScanVerdict = Object.freeze({ ok: true });

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** Strings at the depths of `request.uid` are captured up to this many bytes (a uid is a UUID, 36). */
const CAPTURED_STRING_BYTES = 256;
/** The object depth whose keys are tracked: the root's (1) and the request's (2). */
const TRACKED_DEPTH = 2;

/** Scans a JSON text fed in chunks; stops counting at the first limit exceeded. */
export class JSONBodyScanner {
  private depth = 0;
  private values = 0;
  private keyTotal = 0;
  private inString = false;
  private escaped = false;
  private failure: string | undefined;
  /** Per tracked depth (index 1, 2): inside an object (keys expected after `{` and `,`), and its last key. */
  private readonly isObject: boolean[] = [false, false, false];
  private readonly expectKey: boolean[] = [false, false, false];
  private readonly keys: (string | undefined)[] = [undefined, undefined, undefined];
  /**
   * Per depth open so far (up to `maxDepth`): the keys of the object open there, or -1 in an array. A plain array that
   * grows with the depth: a typed array of `maxDepth` per body cost more to make than the scan of a typical body.
   */
  private readonly objectKeys: number[] = [-1];
  /**
   * Whether the string being read is one the uid search needs (a key of the root or of `request`, or the value of
   * `request.uid`); its bytes are decoded from the chunk where it ends, with the pieces of earlier chunks in `pieces`.
   */
  private capturing = false;
  private pieces: Buffer[] | undefined;
  private capturedBytes = 0;
  private uidValue: string | undefined;
  /**
   * A uid of printable ASCII within one chunk (every uid the API server writes) is kept as where it is, and made a
   * string only when asked for: only a refused body needs it (a decoded one has it from JSON.parse), and making it
   * cost more than the scan of the bytes around it. The chunk is the caller's, which keeps the body's chunks as they
   * came anyway (see decode.ts).
   */
  private uidChunk: Uint8Array | undefined;
  private uidStart = 0;
  private uidEnd = 0;
  private uidFound = false;

  constructor(readonly limits: JSONScanLimits) {}

  /** The keys of all objects scanned so far (every `:` outside strings: valid JSON has one per key). */
  get totalKeys(): number {
    return this.keyTotal;
  }

  /** `request.uid`, once scanned (the first one: the API server writes it before the objects). */
  get uid(): string | undefined {
    if (this.uidChunk !== undefined) {
      this.uidValue = latin1(this.uidChunk, this.uidStart, this.uidEnd);
      this.uidChunk = undefined;
    }
    return this.uidValue;
  }

  /** Scans the next bytes; once it returns a failure, later calls return the same and scan nothing. */
  write(chunk: Uint8Array): JSONScanVerdict {
    if (this.failure !== undefined) return { ok: false, reason: this.failure };
    const { maxDepth, maxValues } = this.limits;
    const maxObjectKeys = this.limits.maxObjectKeys ?? Infinity;
    const objectKeys = this.objectKeys;
    let depth = this.depth;
    let values = this.values;
    let totalKeys = this.keyTotal;
    let inString = this.inString;
    let escaped = this.escaped;
    const length = chunk.length;
    // Where the string being read starts in this chunk (0 when it began in an earlier one).
    let stringStart = 0;
    for (let i = 0; i < length; i++) {
      if (inString) {
        if (escaped) {
          escaped = false;
          continue;
        }
        const end = closingQuote(chunk, i, length);
        if (end < 0) {
          // The string goes on in the next chunk, its first byte escaped when this one ends on a backslash.
          escaped = end === ESCAPE_PENDING;
          if (this.capturing) this.keepPiece(chunk, stringStart, length);
          break;
        }
        inString = false;
        if (depth <= TRACKED_DEPTH) {
          if (
            this.capturing &&
            !this.expectKey[depth]! &&
            this.isUidValue(depth) &&
            this.keepUid(chunk, stringStart, end)
          ) {
            this.capturing = false;
          } else {
            this.endString(
              depth,
              this.capturing ? this.text(chunk, stringStart, end, this.expectKey[depth]!) : undefined,
            );
          }
        }
        i = end;
        continue;
      }
      const byte = chunk[i]!;
      switch (byte) {
        case QUOTE: {
          // A string no search needs (below the tracked depths, or once the uid is found): skipped here, without
          // the capture's bookkeeping, when it ends in this chunk.
          if (depth > TRACKED_DEPTH || this.uidFound) {
            const end = closingQuote(chunk, i + 1, length);
            if (end >= 0) {
              i = end;
              break;
            }
          }
          inString = true;
          stringStart = i + 1;
          this.capturing = this.wanted(depth);
          this.pieces = undefined;
          this.capturedBytes = 0;
          break;
        }
        case OPEN_BRACKET:
        case OPEN_BRACE:
          depth++;
          values++;
          if (depth > maxDepth) return this.fail(`the body nests deeper than ${maxDepth} levels`, depth, values);
          if (values > maxValues) return this.fail(`the body has more than ${maxValues} values`, depth, values);
          // An empty object counts one key: the limit is far from 1.
          objectKeys[depth] = byte === OPEN_BRACE ? 1 : -1;
          if (depth <= TRACKED_DEPTH) {
            this.isObject[depth] = byte === OPEN_BRACE;
            this.expectKey[depth] = byte === OPEN_BRACE;
            this.keys[depth] = undefined;
          }
          break;
        case CLOSE_BRACKET:
        case CLOSE_BRACE:
          if (depth > 0) depth--;
          break;
        case COMMA:
          values++;
          if (values > maxValues) return this.fail(`the body has more than ${maxValues} values`, depth, values);
          if (objectKeys[depth]! >= 0 && ++objectKeys[depth]! > maxObjectKeys)
            return this.fail(`an object of the body has more than ${maxObjectKeys} keys`, depth, values);
          if (depth <= TRACKED_DEPTH && this.isObject[depth]) this.expectKey[depth] = true;
          break;
        case COLON:
          totalKeys++;
          if (depth <= TRACKED_DEPTH) this.expectKey[depth] = false;
          break;
      }
    }
    this.depth = depth;
    this.values = values;
    this.keyTotal = totalKeys;
    this.inString = inString;
    this.escaped = escaped;
    return OK;
  }

  private fail(reason: string, depth: number, values: number): JSONScanVerdict {
    this.failure = reason;
    this.depth = depth;
    this.values = values;
    return { ok: false, reason };
  }

  /** The strings the uid search reads: keys of the root and of `request`, and `request.uid` itself, until found. */
  private wanted(depth: number): boolean {
    if (this.uidFound) return false;
    if (depth === 1) return this.expectKey[1]!;
    return (
      depth === 2 &&
      this.isObject[1]! &&
      this.keys[1] === 'request' &&
      (this.expectKey[2]! || (this.isObject[2]! && this.keys[2] === 'uid'))
    );
  }

  /** A piece of a wanted string that goes on in the next chunk (copied: the chunk is the caller's). */
  private keepPiece(chunk: Uint8Array, start: number, end: number): void {
    this.capturedBytes += end - start;
    if (this.capturedBytes > CAPTURED_STRING_BYTES) {
      this.capturing = false;
      this.pieces = undefined;
      return;
    }
    (this.pieces ??= []).push(Buffer.from(chunk.subarray(start, end)));
  }

  /**
   * The wanted string ending at `end` of `chunk`, unescaped; undefined when too long or not a valid string. A `key`
   * only matters as `request` or `uid` (what the uid search compares keys with): without escapes it is compared with
   * those, not made, and any other is undefined.
   */
  private text(chunk: Uint8Array, start: number, end: number, key = false): string | undefined {
    this.capturing = false;
    if (this.capturedBytes + end - start > CAPTURED_STRING_BYTES) return undefined;
    if (!this.pieces && key) {
      const name = searchedKey(chunk, start, end);
      if (name !== null) return name;
    }
    const tail = Buffer.from(chunk.buffer, chunk.byteOffset + start, end - start);
    const raw = this.pieces ? Buffer.concat([...this.pieces, tail]) : tail;
    this.pieces = undefined;
    if (!raw.includes(BACKSLASH)) return raw.toString('utf8');
    try {
      // Escapes and all: JSON.parse undoes them.
      return JSON.parse(`"${raw.toString('utf8')}"`) as string;
    } catch {
      return undefined;
    }
  }

  private endString(depth: number, text: string | undefined): void {
    if (depth === 0) return;
    if (this.expectKey[depth]) {
      this.keys[depth] = text;
      return;
    }
    if (this.isUidValue(depth) && text !== undefined) {
      this.uidValue = text;
      this.uidFound = true;
    }
  }

  /** Whether a value string ending at `depth` is `request.uid`, the first one. */
  private isUidValue(depth: number): boolean {
    return depth === 2 && !this.uidFound && this.isObject[1]! && this.keys[1] === 'request' && this.keys[2] === 'uid';
  }

  /** Keeps where the uid is, when it is printable ASCII without escapes in this one chunk; false otherwise. */
  private keepUid(chunk: Uint8Array, start: number, end: number): boolean {
    if (this.pieces !== undefined || end - start > CAPTURED_STRING_BYTES || !isPlainText(chunk, start, end))
      return false;
    this.uidChunk = chunk;
    this.uidStart = start;
    this.uidEnd = end;
    this.uidFound = true;
    return true;
  }
}

/** {@link closingQuote}: the string goes on in the next chunk, whose first byte a trailing backslash escapes. */
const ESCAPE_PENDING = -2;
/** Bytes of a string read one by one in JavaScript before the rest is searched natively. */
const SHORT_STRING_BYTES = 64;

/**
 * The index of the quote that closes the string going on at `from` (not an escaped byte), or -1 when the chunk ends
 * first ({@link ESCAPE_PENDING} when it ends on an escaping backslash). Keys and most values are short: those are read
 * byte by byte here, where a call into C++ (`indexOf`) per string cost more than the string; the rest of a long one
 * is searched natively.
 */
function closingQuote(chunk: Uint8Array, from: number, length: number): number {
  let i = from;
  const shortEnd = Math.min(length, from + SHORT_STRING_BYTES);
  while (i < shortEnd) {
    const byte = chunk[i]!;
    if (byte === QUOTE) return i;
    if (byte === BACKSLASH) {
      if (i + 1 >= length) return ESCAPE_PENDING;
      i += 2;
    } else i++;
  }
  if (i >= length) return -1;
  let end = chunk.indexOf(QUOTE, i);
  while (end >= 0) {
    let backslashes = 0;
    while (end - backslashes - 1 >= i && chunk[end - backslashes - 1] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return end;
    end = chunk.indexOf(QUOTE, end + 1);
  }
  let trailing = 0;
  while (length - trailing - 1 >= i && chunk[length - trailing - 1] === BACKSLASH) trailing++;
  return trailing % 2 === 1 ? ESCAPE_PENDING : -1;
}

const REQUEST = 'request';
const UID = 'uid';

/**
 * `request` or `uid` when the bytes of a key are that name, undefined when they are another; null when they hold an
 * escape (the key is then unescaped and compared as a string).
 */
function searchedKey(chunk: Uint8Array, start: number, end: number): string | undefined | null {
  for (let i = start; i < end; i++) if (chunk[i] === BACKSLASH) return null;
  const name = end - start === REQUEST.length ? REQUEST : end - start === UID.length ? UID : undefined;
  if (name === undefined) return undefined;
  for (let i = 0; i < name.length; i++) if (chunk[start + i] !== name.charCodeAt(i)) return undefined;
  return name;
}

/** Whether the bytes are printable ASCII without escapes: their string is their bytes as they are. */
function isPlainText(chunk: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const byte = chunk[i]!;
    if (byte === BACKSLASH || byte < 0x20 || byte > 0x7e) return false;
  }
  return true;
}

/** Bytes of ASCII as a string. */
function latin1(chunk: Uint8Array, start: number, end: number): string {
  return Buffer.from(chunk.buffer, chunk.byteOffset + start, end - start).toString('latin1');
}
