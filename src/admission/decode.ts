/**
 * From the bytes of a request to an AdmissionReview, within bounds: a body larger than `maxBytes` is refused as it
 * arrives (413), one nesting deeper than `maxDepth`, holding more than `maxValues` values or an object of more than
 * `maxObjectKeys` keys is refused by a pre-scan
 * of each chunk (see json-scan.ts) before it is parsed, and from that point on nothing of it is kept. Pure: the server
 * feeds it chunks, tests feed it strings.
 *
 * Duplicate keys: JSON.parse keeps the last of two equal keys, so a decoded body with fewer keys than the pre-scan
 * counted named one twice; only then is the text read again, to name it. The one walk that counts the decoded keys
 * also learns whether the review's objects hold a null-valued key or a `__proto__` key, and marks those that hold
 * neither, so that decoding them doesn't walk them again for either (plain-json.ts).
 */
import { firstDuplicateKey } from '../apis/meta/json-duplicates.js';
import { markPlainJSON } from '../apis/meta/plain-json.js';
import { JSONBodyScanner } from './json-scan.js';
import { ADMISSION_API_VERSION, type AdmissionRequest, type AdmissionReview } from './review.js';

export interface BodyLimits {
  /** Larger bodies are refused with 413. */
  readonly maxBytes: number;
  /** Most `[`/`{` open at once. */
  readonly maxDepth: number;
  /** Most values (every `[`, `{` and `,` outside strings counts one). */
  readonly maxValues: number;
  /** Most keys in one object. @default unlimited */
  readonly maxObjectKeys?: number;
}

/**
 * Why a body can't be answered as a review: `code` is the HTTP status to answer with. `uid` is the review's, when
 * the pre-scan found it: the server then answers with a denial of that review (the API server shows its message to
 * the client as is) instead of an HTTP error (which the API server reports as a failed webhook call).
 */
export class BodyRefusal extends Error {
  constructor(
    readonly code: 400 | 413,
    message: string,
    readonly uid?: string,
  ) {
    super(message);
  }
}

/** Collects a body chunk by chunk, scanning each as it comes. */
export class ReviewBodyReader {
  private readonly scanner: JSONBodyScanner;
  /**
   * From a body's second chunk on, one buffer of the announced length (no copy to join the chunks); the chunks until
   * then, and when no length was announced. A body of one chunk (a typical review) is that chunk, uncopied.
   */
  private buffer: Buffer | undefined;
  /** Bytes of `buffer` filled; the chunks come after them. */
  private buffered = 0;
  private chunks: Buffer[] = [];
  private size = 0;
  private failure: BodyRefusal | undefined;
  private readonly announced: number | undefined;

  constructor(
    readonly limits: BodyLimits,
    announcedLength?: number,
  ) {
    this.scanner = new JSONBodyScanner(limits);
    if (announcedLength !== undefined && Number.isInteger(announcedLength) && announcedLength > limits.maxBytes) {
      this.failure = this.tooLarge();
    } else if (announcedLength !== undefined && Number.isInteger(announcedLength) && announcedLength > 0) {
      this.announced = announcedLength;
    }
  }

  /** Set once the body is refused; later chunks are counted, not kept. */
  get refusal(): BodyRefusal | undefined {
    return this.failure;
  }

  /** The keys of the body so far, as the pre-scan counts them. */
  get keys(): number {
    return this.scanner.totalKeys;
  }

  /** Bytes held (what this body costs in memory now). */
  get keptBytes(): number {
    return (this.buffer?.length ?? 0) + this.chunks.reduce((sum, c) => sum + c.length, 0);
  }

  push(chunk: Uint8Array): void {
    this.size += chunk.length;
    if (this.failure?.code === 413) return;
    if (this.size > this.limits.maxBytes) return this.refuse(this.tooLarge());
    if (this.failure) return;
    const verdict = this.scanner.write(chunk);
    if (!verdict.ok) return this.refuse(new BodyRefusal(400, verdict.reason, this.scanner.uid));
    const first = this.chunks.length === 1 ? this.chunks[0]! : undefined;
    if (!this.buffer && this.announced !== undefined && first !== undefined && first.length <= this.announced) {
      this.buffer = Buffer.allocUnsafe(this.announced);
      this.buffer.set(first, 0);
      this.buffered = first.length;
      this.chunks = [];
    }
    if (this.buffer && this.chunks.length === 0 && this.size <= this.buffer.length) {
      this.buffer.set(chunk, this.buffered);
      this.buffered += chunk.length;
    } else this.chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
  }

  /** The body as an AdmissionReview, once it ended; throws the refusal, or why it is no review ({@link parseReview}). */
  review(): AdmissionReview {
    return parseReview(this.body(), this.keys);
  }

  /** The whole body, once it ended; throws the refusal. */
  body(): Buffer {
    if (this.failure) throw this.failure;
    if (!this.buffer) return this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    if (this.buffered === this.buffer.length && this.chunks.length === 0) return this.buffer;
    // Fewer or more bytes than announced (Node's HTTP parser refuses those before): what came.
    return Buffer.concat([this.buffer.subarray(0, this.buffered), ...this.chunks]);
  }

  private refuse(refusal: BodyRefusal): void {
    this.failure = refusal;
    this.buffer = undefined;
    this.buffered = 0;
    this.chunks = [];
  }

  private tooLarge(): BodyRefusal {
    return new BodyRefusal(413, `request body larger than ${this.limits.maxBytes} bytes`);
  }
}

/**
 * The body as an AdmissionReview with a request; a {@link BodyRefusal} (400) otherwise. `scannedKeys` is the
 * pre-scan's count of the body's keys ({@link JSONBodyScanner.totalKeys}); without it, the text is searched for
 * duplicate keys instead.
 */
export function parseReview(body: Buffer, scannedKeys?: number): AdmissionReview {
  let value: unknown;
  const text = body.toString('utf8');
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new BodyRefusal(400, `the body is not JSON: ${(e as Error).message}`);
  }
  const review = value as Partial<AdmissionReview> | null;
  const request: Partial<AdmissionRequest> | undefined = isObject(review) ? review.request : undefined;
  const object = isObject(request) ? request.object : undefined;
  const oldObject = isObject(request) ? request.oldObject : undefined;
  // JSON.parse keeps the last of two equal keys: what the webhook judged would not be what the client wrote.
  const rest = walkJSON(value, object, oldObject);
  const objectFacts = walkJSON(object);
  const oldObjectFacts = walkJSON(oldObject);
  const keys = rest.keys + objectFacts.keys + oldObjectFacts.keys;
  if (scannedKeys === undefined ? firstDuplicateKey(text) !== undefined : keys !== scannedKeys) {
    const duplicate = firstDuplicateKey(text) ?? '<unknown>';
    const uid = isObject(request) ? request.uid : undefined;
    throw new BodyRefusal(
      400,
      `duplicate field "${duplicate}": an object of the body names it twice (the API server's strict decoding ` +
        'refuses it too)',
      typeof uid === 'string' && uid !== '' && duplicate !== 'request.uid' ? uid : undefined,
    );
  }
  if (typeof review !== 'object' || review === null || Array.isArray(review)) {
    throw new BodyRefusal(400, 'the body is not an AdmissionReview');
  }
  if (review.apiVersion !== ADMISSION_API_VERSION || review.kind !== 'AdmissionReview') {
    throw new BodyRefusal(
      400,
      `expected an AdmissionReview of ${ADMISSION_API_VERSION}, got kind ${JSON.stringify(review.kind ?? null)} of ` +
        `apiVersion ${JSON.stringify(review.apiVersion ?? null)}`,
    );
  }
  if (!isObject(request) || typeof request.uid !== 'string' || request.uid === '') {
    throw new BodyRefusal(400, 'the AdmissionReview has no request with a uid');
  }
  if (objectFacts.plain && isObject(object)) markPlainJSON(object);
  if (oldObjectFacts.plain && isObject(oldObject)) markPlainJSON(oldObject);
  return review as AdmissionReview;
}

/** A whole body at once, as the server decodes it chunk by chunk: the review, or a {@link BodyRefusal}. */
export function decodeReviewBody(chunks: Iterable<Uint8Array>, limits: BodyLimits): AdmissionReview {
  const reader = new ReviewBodyReader(limits);
  for (const chunk of chunks) reader.push(chunk);
  return reader.review();
}

const isObject = (value: unknown): value is object => typeof value === 'object' && value !== null;

/** What one walk over decoded JSON finds: its objects' keys, and whether none is `__proto__` or holds null. */
interface JSONFacts {
  readonly keys: number;
  readonly plain: boolean;
}

const NO_VALUE: JSONFacts = Object.freeze({ keys: 0, plain: true });

/**
 * Counts the keys of `root`'s objects (not descending into `skip` and `skip2`, walked on their own) and notes a
 * null-valued key or an own `__proto__` key (JSON.parse makes one an own property). Iterative: the pre-scan bounds
 * the depth, not the stack.
 */
function walkJSON(root: unknown, skip?: unknown, skip2?: unknown): JSONFacts {
  if (!isObject(root)) return NO_VALUE;
  const stack: object[] = [root];
  let keys = 0;
  let plain = true;
  while (stack.length > 0) {
    const current = stack.pop()!;
    if (Array.isArray(current)) {
      for (let i = 0; i < current.length; i++) {
        const item: unknown = current[i];
        if (typeof item === 'object' && item !== null) stack.push(item);
      }
      continue;
    }
    for (const key in current) {
      keys++;
      const item = (current as Record<string, unknown>)[key];
      if (key === '__proto__') plain = false;
      if (typeof item !== 'object') continue;
      if (item === null) plain = false;
      else if (item !== skip && item !== skip2) stack.push(item);
    }
  }
  return { keys, plain };
}
