import { describe, expect, it } from 'vitest';
import {
  canonicalNameWire,
  signMessage,
  splitTSIG,
  TSIG_ERRORS,
  tsigKey,
  verifyAnswer,
} from '../../../src/extensions/dns/tsig.js';
import { answerTo } from './fake-dns-server.js';

/** The key of the vectors below: 32 bytes of 0x07. */
const SECRET = Buffer.alloc(32, 7).toString('base64');
const KEY = tsigKey('gardener-ipv6', 'hmac-sha256', SECRET);

/**
 * Captured from BIND's own `nsupdate` (9.18, `-y hmac-sha256:gardener-ipv6:<SECRET>`), sent to a UDP socket:
 * `update delete api.s.p.external.local.gardener.cloud. AAAA` and `update add … 120 AAAA 2001:db8::1` in zone
 * `local.gardener.cloud.`, signed at 1795342029 with fudge 300. An independent implementation of RFC 8945.
 */
const NSUPDATE_REQUEST = Buffer.from(
  '114e28000001000000020001056c6f63616c0867617264656e657205636c6f7564000006000103617069017301700865787465726e616c05' +
    '6c6f63616c0867617264656e657205636c6f756400001c00ff000000000000c026001c000100000078001020010db8000000000000000000' +
    '0000010d67617264656e65722d697076360000fa00ff00000000003d0b686d61632d7368613235360000006b01fed2012c002070c581d26f' +
    'e78e0bfc93db435cf4ca24002dbbaa0e860329e6968a14d0960b5e114e00000000',
  'hex',
);

/**
 * A request signed by this module and BIND9's (named 9.18) answer to it, captured from a real exchange: BIND signs
 * answers over the request MAC, so verifying its answer checks the answer side of RFC 8945 §5.3.
 */
const BIND_REQUEST_MAC = Buffer.from('013337e32ce4f20710611f45065d90f17f45416318267c4e4bb55af5a8402f87', 'hex');
const BIND_ANSWER = Buffer.from(
  '1234a8000001000000000001056c6f63616c0867617264656e657205636c6f756400000600010d67617264656e65722d697076360000fa00' +
    'ff00000000003d0b686d61632d7368613235360000006b01fedd012c00209749aca8060fca3d62bf0092946f78499f3c3f2d4f28c66d2f57' +
    '5f8ae1b55529123400000000',
  'hex',
);
const BIND_ANSWER_TIME = 0x6b01fedd;

describe('TSIG signing', () => {
  it('signs exactly as nsupdate does (same MAC, same TSIG record)', () => {
    const split = splitTSIG(NSUPDATE_REQUEST);
    expect(split).toBeDefined();
    const { unsigned, tsig } = split!;
    expect(tsig).toMatchObject({ keyName: 'gardener-ipv6', algorithm: 'hmac-sha256', fudge: 300, error: 0 });
    expect(unsigned.readUInt16BE(10)).toBe(0);

    const signed = signMessage(unsigned, KEY, tsig.timeSigned, { fudge: tsig.fudge });
    expect(signed.message.toString('hex')).toBe(NSUPDATE_REQUEST.toString('hex'));
    expect(signed.mac).toEqual(tsig.mac);
  });

  it('uses the canonical (lower-case) key name whatever case the secret has', () => {
    const { unsigned, tsig } = splitTSIG(NSUPDATE_REQUEST)!;
    const upper = tsigKey('Gardener-IPv6.', 'HMAC-SHA256', SECRET);
    expect(signMessage(unsigned, upper, tsig.timeSigned).mac).toEqual(tsig.mac);
  });

  it('a different secret gives a different MAC', () => {
    const { unsigned, tsig } = splitTSIG(NSUPDATE_REQUEST)!;
    const other = tsigKey('gardener-ipv6', 'hmac-sha256', Buffer.alloc(32, 8).toString('base64'));
    expect(signMessage(unsigned, other, tsig.timeSigned).mac).not.toEqual(tsig.mac);
  });

  it('raises ARCOUNT and keeps the original ID in the TSIG record', () => {
    const message = answerTo(NSUPDATE_REQUEST, 0);
    const signed = signMessage(message, KEY, 1_700_000_000);
    expect(signed.message.readUInt16BE(10)).toBe(1);
    const { tsig, unsigned } = splitTSIG(signed.message)!;
    expect(tsig.originalId).toBe(0x114e);
    expect(tsig.timeSigned).toBe(1_700_000_000);
    expect(unsigned).toEqual(message);
  });
});

describe('TSIG verification of answers', () => {
  it("accepts BIND9's signed answer", () => {
    expect(verifyAnswer(BIND_ANSWER, BIND_REQUEST_MAC, KEY, BIND_ANSWER_TIME)).toEqual({ ok: true });
  });

  it('rejects a tampered answer', () => {
    const tampered = Buffer.from(BIND_ANSWER);
    tampered.writeUInt16BE(tampered.readUInt16BE(2) | 5, 2); // NOERROR → REFUSED
    expect(verifyAnswer(tampered, BIND_REQUEST_MAC, KEY, BIND_ANSWER_TIME)).toMatchObject({
      ok: false,
      reason: 'invalid',
      detail: "the answer's TSIG MAC does not verify",
    });
  });

  it('rejects an answer to another request (the MAC covers the request MAC)', () => {
    const otherMac = Buffer.from(BIND_REQUEST_MAC);
    otherMac.writeUInt8(otherMac.readUInt8(0) ^ 1, 0);
    expect(verifyAnswer(BIND_ANSWER, otherMac, KEY, BIND_ANSWER_TIME)).toMatchObject({ ok: false, reason: 'invalid' });
  });

  it('rejects an answer signed too long ago', () => {
    expect(verifyAnswer(BIND_ANSWER, BIND_REQUEST_MAC, KEY, BIND_ANSWER_TIME + 301)).toMatchObject({
      ok: false,
      detail: "the answer's TSIG time is 301s off",
    });
    expect(verifyAnswer(BIND_ANSWER, BIND_REQUEST_MAC, KEY, BIND_ANSWER_TIME + 300)).toEqual({ ok: true });
  });

  it('rejects an unsigned answer', () => {
    expect(verifyAnswer(answerTo(NSUPDATE_REQUEST, 0), BIND_REQUEST_MAC, KEY, 0)).toMatchObject({
      ok: false,
      detail: 'the answer is not signed',
    });
  });

  it('rejects an answer signed with another key', () => {
    const other = tsigKey('other', 'hmac-sha256', SECRET);
    const answer = signMessage(answerTo(NSUPDATE_REQUEST, 0), other, 1000, { requestMac: BIND_REQUEST_MAC });
    expect(verifyAnswer(answer.message, BIND_REQUEST_MAC, KEY, 1000)).toMatchObject({
      ok: false,
      detail: 'the answer is signed with another key (other)',
    });
  });

  it("reports the server's TSIG error (BADKEY, BADSIG) without a MAC", () => {
    for (const [code, name] of [
      [17, 'BADKEY'],
      [16, 'BADSIG'],
    ] as const) {
      const answer = signMessage(answerTo(NSUPDATE_REQUEST, 9), KEY, 1000, { error: code });
      expect(TSIG_ERRORS[code]).toBe(name);
      expect(verifyAnswer(answer.message, BIND_REQUEST_MAC, KEY, 1000)).toEqual({
        ok: false,
        reason: 'server-error',
        error: name,
      });
    }
  });
});

describe('TSIG keys and names', () => {
  it('reads the secret fields', () => {
    expect(tsigKey('k', undefined, SECRET)).toEqual({
      name: 'k',
      algorithm: 'hmac-sha256',
      secret: Buffer.alloc(32, 7),
    });
    expect(tsigKey('k', 'hmac-sha512.', SECRET).algorithm).toBe('hmac-sha512');
  });

  it('refuses unknown algorithms and text that is not base64', () => {
    expect(() => tsigKey('k', 'hmac-md5', SECRET)).toThrow('unsupported TSIG algorithm "hmac-md5"');
    expect(() => tsigKey('k', 'hmac-sha256', 'not base64!')).toThrow('TSIG secret of key "k" is not base64');
  });

  it('writes names in canonical wire format', () => {
    expect(canonicalNameWire('Gardener-IPv6').toString('hex')).toBe('0d67617264656e65722d6970763600');
    expect(canonicalNameWire('a.B.').toString('hex')).toBe('0161016200');
    expect(canonicalNameWire('.').toString('hex')).toBe('00');
    expect(() => canonicalNameWire('a..b')).toThrow('bad label length');
    expect(() => canonicalNameWire(`${'x'.repeat(64)}.cloud`)).toThrow('bad label length');
  });
});
