/**
 * The answers' JSON text (src/admission/answer-json.ts): a patched answer put together from its parts is the text
 * JSON.stringify writes of it, with its length in UTF-8, and the patch is the base64 of the operations' JSON,
 * whatever their size and characters.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AllowedResponse, answerText, PatchedResponse } from '../../src/admission/answer-json.js';
import type { PatchOperation } from '../../src/admission/defaulting-patch.js';
import { failureStatus } from '../../src/apis/field/index.js';

const answer = (response: object) => ({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response });

const operations: fc.Arbitrary<PatchOperation[]> = fc.array(
  fc.oneof(
    fc.record({ op: fc.constantFrom('add' as const, 'replace' as const), path: fc.string(), value: fc.jsonValue() }),
    fc.record({ op: fc.constant('remove' as const), path: fc.string({ unit: 'grapheme' }) }),
  ),
  { maxLength: 8 },
);

describe('AllowedResponse', () => {
  it('is the literal it replaces', () => {
    expect(JSON.stringify(new AllowedResponse('ü'))).toBe(JSON.stringify({ uid: 'ü', allowed: true }));
    expect(new AllowedResponse('u')).toEqual({ uid: 'u', allowed: true });
  });
});

describe('PatchedResponse', () => {
  it('is the literal it replaces, its patch the base64 of the JSON of the operations (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), operations, (uid, patch) => {
        const response = new PatchedResponse(uid, patch);
        const literal = {
          uid,
          allowed: true,
          patchType: 'JSONPatch',
          patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
        };
        expect(JSON.stringify(response)).toBe(JSON.stringify(literal));
        expect(response).toEqual(literal);
      }),
    );
  });

  it('encodes a patch larger than its scratch buffer', () => {
    const patch: PatchOperation[] = [{ op: 'add', path: '/spec/x', value: 'é€'.repeat(20_000) }];
    expect(JSON.parse(Buffer.from(new PatchedResponse('u', patch).patch, 'base64').toString())).toEqual(patch);
  });
});

describe('answerText', () => {
  it("is JSON.stringify's text of an allowing answer, patched or not, and its UTF-8 length (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), operations, (uid, patch) => {
        for (const reply of [answer(new PatchedResponse(uid, patch)), answer(new AllowedResponse(uid))]) {
          const { text, bytes } = answerText(reply);
          expect(text).toBe(JSON.stringify(reply));
          expect(bytes).toBe(Buffer.byteLength(text));
        }
      }),
    );
  });

  it('is JSON.stringify for every other answer', () => {
    const others = [
      answer({ uid: 'u', allowed: true }),
      answer({ uid: 'ü"\\', allowed: false, status: failureStatus(422, 'Invalid', 'spec.x: Invalid value') }),
      answer({ uid: 'u', allowed: true, patchType: 'JSONPatch', patch: 'a"b' }),
      { ...answer(new PatchedResponse('u', [])), apiVersion: 'admission.k8s.io/v1beta1' },
      { ...answer(new AllowedResponse('u')), kind: 'Other' },
    ];
    for (const reply of others) {
      expect(answerText(reply)).toEqual({
        text: JSON.stringify(reply),
        bytes: Buffer.byteLength(JSON.stringify(reply)),
      });
    }
  });
});
