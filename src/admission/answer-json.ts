/**
 * The webhooks' allowing answers and the JSON text of an answer, without JSON.stringify reading the patch's
 * base64 again: the base64 of a Shoot's defaulting patch is some 600 characters, which JSON.stringify of the answer
 * scans for characters to escape (about 1 µs of V8 11's time, a tenth of a mutating review hot), and Content-Length
 * scans them once more. A {@link PatchedResponse} makes its base64 itself, so its characters need no escaping and are
 * one byte each in UTF-8.
 */
import type { PatchOperation } from './defaulting-patch.js';

/** The `response` of an AdmissionReview that allows the object as it is. */
export class AllowedResponse {
  readonly uid: string;
  readonly allowed: true;

  constructor(uid: string) {
    this.uid = uid;
    this.allowed = true;
  }
}

/** The `response` of an AdmissionReview that allows the object with a JSON patch (RFC 6902), as base64. */
export class PatchedResponse {
  readonly uid: string;
  readonly allowed: true;
  readonly patchType: 'JSONPatch';
  /** Base64 of the patch's JSON. */
  readonly patch: string;

  constructor(uid: string, patch: readonly PatchOperation[]) {
    // In this order, as JSON.stringify writes them and as the literal this replaces had them.
    this.uid = uid;
    this.allowed = true;
    this.patchType = 'JSONPatch';
    this.patch = base64(JSON.stringify(patch));
  }
}

/** Bytes of UTF-8 a patch's JSON is encoded through; a longer one gets a buffer of its own. */
const SCRATCH_BYTES = 16 * 1024;
let scratch: Buffer | undefined;

/** The base64 of `text`'s UTF-8, through one buffer kept for it rather than a new one per patch. */
function base64(text: string): string {
  // A UTF-16 code unit is at most 3 bytes of UTF-8.
  if (text.length * 3 > SCRATCH_BYTES) return Buffer.from(text).toString('base64');
  scratch ??= Buffer.allocUnsafeSlow(SCRATCH_BYTES);
  const length = scratch.write(text);
  return scratch.toString('base64', 0, length);
}

/** An answer as its JSON text and that text's length in UTF-8. */
export interface AnswerText {
  readonly text: string;
  readonly bytes: number;
}

const HEAD = '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":';
const ALLOWED_TAIL = ',"allowed":true}}';
const PATCHED_MIDDLE = ',"allowed":true,"patchType":"JSONPatch","patch":"';
const PATCHED_TAIL = '"}}';

/**
 * The JSON text of an AdmissionReview answer, as JSON.stringify writes it: for an answer of `admission.k8s.io/v1`
 * whose response is an {@link AllowedResponse} or a {@link PatchedResponse} (and nothing else: the answers review.ts
 * makes), put together from its parts; JSON.stringify's otherwise.
 */
export function answerText(answer: { apiVersion: string; kind: string; response: object }): AnswerText {
  const response = answer.response;
  const ours =
    (response instanceof PatchedResponse || response instanceof AllowedResponse) &&
    answer.apiVersion === 'admission.k8s.io/v1' &&
    answer.kind === 'AdmissionReview';
  if (!ours) {
    const text = JSON.stringify(answer);
    return { text, bytes: Buffer.byteLength(text) };
  }
  const uid = JSON.stringify(response.uid);
  const uidBytes = utf8Length(uid);
  if (response instanceof AllowedResponse) {
    return { text: HEAD + uid + ALLOWED_TAIL, bytes: HEAD.length + uidBytes + ALLOWED_TAIL.length };
  }
  return {
    text: HEAD + uid + PATCHED_MIDDLE + response.patch + PATCHED_TAIL,
    bytes: HEAD.length + uidBytes + PATCHED_MIDDLE.length + response.patch.length + PATCHED_TAIL.length,
  };
}

/** `Buffer.byteLength(text)`, without its call into C++ for ASCII (a uid always is: the API server makes UUIDs). */
function utf8Length(text: string): number {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return Buffer.byteLength(text);
  return text.length;
}
