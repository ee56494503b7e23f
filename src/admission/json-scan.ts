/**
 * A pre-scan of a JSON body over its raw bytes, chunk by chunk as they arrive, before anything is parsed: the
 * nesting depth of `[` and `{` outside strings and the number of values are what turn a small body into a large
 * heap (a 3 MiB body of `[[[[…` or `[{},{},…` costs JSON.parse and every walk after it hundreds of MB), and both are
 * counted here in one pass that allocates nothing per byte. The scan also picks up `request.uid` of an
 * AdmissionReview (the API server writes it first), so that a refused body can still get an AdmissionReview answer.
 *
 * It is no validator: malformed JSON that stays within the limits is left to JSON.parse.
 */

export interface JSONScanLimits {
  /** Most `[`/`{` open at once. */
  readonly maxDepth: number;
  /** Most values (every `[`, `{` and `,` outside strings counts one: an upper bound of the elements less one). */
  readonly maxValues: number;
}

export type JSONScanVerdict = { readonly ok: true } | { readonly ok: false; readonly reason: string };

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
  private inString = false;
  private escaped = false;
  private failure: string | undefined;
  /** Per tracked depth (index 1, 2): inside an object (keys expected after `{` and `,`), and its last key. */
  private readonly isObject: boolean[] = [false, false, false];
  private readonly expectKey: boolean[] = [false, false, false];
  private readonly keys: (string | undefined)[] = [undefined, undefined, undefined];
  /** Bytes of the string being read when it is at a tracked depth, undefined otherwise or once too long. */
  private captured: number[] | undefined;
  private uidValue: string | undefined;

  constructor(readonly limits: JSONScanLimits) {}

  /** `request.uid`, once scanned (the first one: the API server writes it before the objects). */
  get uid(): string | undefined {
    return this.uidValue;
  }

  /** Scans the next bytes; once it returns a failure, later calls return the same and scan nothing. */
  write(chunk: Uint8Array): JSONScanVerdict {
    if (this.failure !== undefined) return { ok: false, reason: this.failure };
    const { maxDepth, maxValues } = this.limits;
    let depth = this.depth;
    let values = this.values;
    let inString = this.inString;
    let escaped = this.escaped;
    const length = chunk.length;
    for (let i = 0; i < length; i++) {
      if (inString) {
        // To the closing quote natively: strings are most of a body's bytes.
        if (escaped) {
          escaped = false;
          if (this.captured !== undefined) this.capture(chunk, i, i + 1);
          continue;
        }
        let end = chunk.indexOf(QUOTE, i);
        let backslashes = 0;
        while (end >= 0) {
          backslashes = 0;
          while (end - backslashes - 1 >= i && chunk[end - backslashes - 1] === BACKSLASH) backslashes++;
          if (backslashes % 2 === 0) break;
          end = chunk.indexOf(QUOTE, end + 1);
        }
        if (end < 0) {
          // The string goes on in the next chunk; a trailing odd run of backslashes escapes its first byte.
          let trailing = 0;
          while (length - trailing - 1 >= i && chunk[length - trailing - 1] === BACKSLASH) trailing++;
          escaped = trailing % 2 === 1;
          if (this.captured !== undefined) this.capture(chunk, i, length);
          break;
        }
        if (this.captured !== undefined) this.capture(chunk, i, end);
        inString = false;
        if (depth <= TRACKED_DEPTH) this.endString(depth);
        i = end;
        continue;
      }
      const byte = chunk[i]!;
      switch (byte) {
        case QUOTE:
          inString = true;
          this.captured = depth <= TRACKED_DEPTH && depth > 0 ? [] : undefined;
          break;
        case OPEN_BRACKET:
        case OPEN_BRACE:
          depth++;
          values++;
          if (depth > maxDepth) return this.fail(`the body nests deeper than ${maxDepth} levels`, depth, values);
          if (values > maxValues) return this.fail(`the body has more than ${maxValues} values`, depth, values);
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
          if (depth <= TRACKED_DEPTH && this.isObject[depth]) this.expectKey[depth] = true;
          break;
        case COLON:
          if (depth <= TRACKED_DEPTH) this.expectKey[depth] = false;
          break;
      }
    }
    this.depth = depth;
    this.values = values;
    this.inString = inString;
    this.escaped = escaped;
    return { ok: true };
  }

  private fail(reason: string, depth: number, values: number): JSONScanVerdict {
    this.failure = reason;
    this.depth = depth;
    this.values = values;
    return { ok: false, reason };
  }

  private capture(chunk: Uint8Array, start: number, end: number): void {
    if (this.captured!.length + end - start > CAPTURED_STRING_BYTES) {
      this.captured = undefined;
      return;
    }
    for (let i = start; i < end; i++) this.captured!.push(chunk[i]!);
  }

  private endString(depth: number): void {
    const raw = this.captured;
    this.captured = undefined;
    if (raw === undefined || depth === 0) return;
    let text: string | undefined;
    if (!raw.includes(BACKSLASH)) {
      text = Buffer.from(raw).toString('utf8');
    } else {
      try {
        // Escapes and all: JSON.parse undoes them.
        text = JSON.parse(`"${Buffer.from(raw).toString('utf8')}"`) as string;
      } catch {
        text = undefined;
      }
    }
    if (this.expectKey[depth]) {
      this.keys[depth] = text;
      return;
    }
    if (
      depth === 2 &&
      this.uidValue === undefined &&
      this.isObject[1] &&
      this.keys[1] === 'request' &&
      this.keys[2] === 'uid' &&
      text !== undefined
    ) {
      this.uidValue = text;
    }
  }
}
