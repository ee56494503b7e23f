/**
 * TSIG (RFC 8945): HMAC signatures of DNS messages with a shared key, as BIND's `allow-update { key …; }` wants.
 *
 * dns-packet encodes messages but knows nothing of TSIG, so this module signs a finished message (the
 * MAC covers the message bytes plus the "TSIG variables", then the TSIG RR is appended) and checks the signature of
 * an answer. Only the single-message case is needed: an UPDATE and its answer, never a multi-message zone transfer.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { recordSpans } from './wire.js';

/** The HMAC algorithms of RFC 8945 §6 that are safe to use, by their TSIG name. */
export const TSIG_ALGORITHMS = {
  'hmac-sha256': 'sha256',
  'hmac-sha384': 'sha384',
  'hmac-sha512': 'sha512',
} as const;
export type TSIGAlgorithm = keyof typeof TSIG_ALGORITHMS;

/** Allowed clock difference between signer and verifier; RFC 8945 §10 recommends 300 s. */
export const DEFAULT_FUDGE_SECONDS = 300;

/** TSIG error codes (RFC 8945 §3, RFC 7873) as they appear in the TSIG RR's error field. */
export const TSIG_ERRORS: Readonly<Record<number, string>> = {
  16: 'BADSIG',
  17: 'BADKEY',
  18: 'BADTIME',
  19: 'BADMODE',
  20: 'BADNAME',
  21: 'BADALG',
  22: 'BADTRUNC',
  23: 'BADCOOKIE',
};

const TYPE_TSIG = 250;
const CLASS_ANY = 255;
const HEADER_ARCOUNT = 10;

export interface TSIGKey {
  /** Key name as the server knows it (`gardener-ipv6`); compared case-insensitively. */
  readonly name: string;
  readonly algorithm: TSIGAlgorithm;
  readonly secret: Buffer;
}

/** A key from the secret's text fields; throws with a message naming the field that is wrong. */
export function tsigKey(name: string, algorithm: string | undefined, secretBase64: string): TSIGKey {
  const alg = (algorithm ?? 'hmac-sha256').toLowerCase().replace(/\.$/, '');
  if (!(alg in TSIG_ALGORITHMS)) {
    throw new Error(
      `unsupported TSIG algorithm "${algorithm}" (supported: ${Object.keys(TSIG_ALGORITHMS).join(', ')})`,
    );
  }
  const text = secretBase64.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || text.length % 4 !== 0) {
    throw new Error(`TSIG secret of key "${name}" is not base64`);
  }
  return { name, algorithm: alg as TSIGAlgorithm, secret: Buffer.from(text, 'base64') };
}

/**
 * A domain name in canonical wire format (RFC 4034 §6.2): lower-case, uncompressed, root-terminated. The TSIG
 * variables must use this form whatever case the key was written in.
 */
export function canonicalNameWire(name: string): Buffer {
  const labels = name
    .replace(/\.$/, '')
    .split('.')
    .filter((label, i, all) => label !== '' || all.length > 1);
  const parts: Buffer[] = [];
  for (const label of labels) {
    const bytes = Buffer.from(label.toLowerCase(), 'utf8');
    if (bytes.length === 0 || bytes.length > 63) throw new Error(`invalid DNS name "${name}": bad label length`);
    parts.push(Buffer.from([bytes.length]), bytes);
  }
  parts.push(Buffer.from([0]));
  const wire = Buffer.concat(parts);
  if (wire.length > 255) throw new Error(`invalid DNS name "${name}": longer than 255 octets`);
  return wire;
}

/** The fields of a TSIG RR. */
export interface TSIGRecord {
  /** Owner name: the key name, lower-case, without trailing dot. */
  readonly keyName: string;
  /** Algorithm name, lower-case, without trailing dot (`hmac-sha256`). */
  readonly algorithm: string;
  /** Seconds since the epoch. */
  readonly timeSigned: number;
  readonly fudge: number;
  readonly mac: Buffer;
  readonly originalId: number;
  /** 0, or one of {@link TSIG_ERRORS}. */
  readonly error: number;
  readonly otherData: Buffer;
}

/** The TSIG variables of RFC 8945 §4.3.3 that follow the message in the MAC input. */
function tsigVariables(r: Omit<TSIGRecord, 'mac' | 'originalId'>): Buffer {
  const fixed = Buffer.alloc(10);
  writeUInt48(fixed, r.timeSigned, 0);
  fixed.writeUInt16BE(r.fudge, 6);
  fixed.writeUInt16BE(r.error, 8);
  const other = Buffer.alloc(2);
  other.writeUInt16BE(r.otherData.length, 0);
  const classTTL = Buffer.alloc(6);
  classTTL.writeUInt16BE(CLASS_ANY, 0); // TTL 0 follows
  return Buffer.concat([
    canonicalNameWire(r.keyName),
    classTTL,
    canonicalNameWire(r.algorithm),
    fixed,
    other,
    r.otherData,
  ]);
}

function hmac(key: TSIGKey, ...parts: Buffer[]): Buffer {
  const h = createHmac(TSIG_ALGORITHMS[key.algorithm], key.secret);
  for (const part of parts) h.update(part);
  return h.digest();
}

/** The TSIG RR in wire format (owner and algorithm uncompressed, as RFC 8945 §4.2 requires). */
export function encodeTSIGRecord(r: TSIGRecord): Buffer {
  const algorithm = canonicalNameWire(r.algorithm);
  const rdata = Buffer.alloc(algorithm.length + 16 + r.mac.length + r.otherData.length);
  let o = algorithm.copy(rdata, 0);
  writeUInt48(rdata, r.timeSigned, o);
  o = rdata.writeUInt16BE(r.fudge, o + 6);
  o = rdata.writeUInt16BE(r.mac.length, o);
  o += r.mac.copy(rdata, o);
  o = rdata.writeUInt16BE(r.originalId, o);
  o = rdata.writeUInt16BE(r.error, o);
  o = rdata.writeUInt16BE(r.otherData.length, o);
  r.otherData.copy(rdata, o);
  const owner = canonicalNameWire(r.keyName);
  const fixed = Buffer.alloc(10);
  fixed.writeUInt16BE(TYPE_TSIG, 0);
  fixed.writeUInt16BE(CLASS_ANY, 2);
  fixed.writeUInt32BE(0, 4);
  fixed.writeUInt16BE(rdata.length, 8);
  return Buffer.concat([owner, fixed, rdata]);
}

/** Parses the RDATA of a TSIG RR; throws on malformed data. */
export function decodeTSIGRData(ownerName: string, rdata: Buffer): TSIGRecord {
  const { name: algorithm, end } = readUncompressedName(rdata, 0);
  const need = (n: number): void => {
    if (rdata.length < n) throw new Error('truncated TSIG record');
  };
  need(end + 10);
  const timeSigned = readUInt48(rdata, end);
  const fudge = rdata.readUInt16BE(end + 6);
  const macSize = rdata.readUInt16BE(end + 8);
  let o = end + 10;
  need(o + macSize + 6);
  const mac = rdata.subarray(o, o + macSize);
  o += macSize;
  const originalId = rdata.readUInt16BE(o);
  const error = rdata.readUInt16BE(o + 2);
  const otherLen = rdata.readUInt16BE(o + 4);
  o += 6;
  need(o + otherLen);
  return {
    keyName: ownerName.toLowerCase().replace(/\.$/, ''),
    algorithm,
    timeSigned,
    fudge,
    mac: Buffer.from(mac),
    originalId,
    error,
    otherData: Buffer.from(rdata.subarray(o, o + otherLen)),
  };
}

export interface SignedMessage {
  /** The message with the TSIG RR appended and ARCOUNT raised by one. */
  readonly message: Buffer;
  /** The request MAC, which the answer's MAC covers. */
  readonly mac: Buffer;
}

/**
 * Signs a complete DNS message (RFC 8945 §5.1, §5.3 for answers): MAC over the message and the TSIG variables
 * (an answer's MAC also covers the request MAC), then the TSIG RR as the last additional record. `timeSigned` is in
 * seconds since the epoch.
 */
export function signMessage(
  message: Buffer,
  key: TSIGKey,
  timeSigned: number,
  opts: { fudge?: number; requestMac?: Buffer; error?: number } = {},
): SignedMessage {
  if (message.length < 12) throw new Error('DNS message shorter than its header');
  const vars = {
    keyName: key.name,
    algorithm: key.algorithm,
    timeSigned,
    fudge: opts.fudge ?? DEFAULT_FUDGE_SECONDS,
    error: opts.error ?? 0,
    otherData: Buffer.alloc(0),
  };
  const prefix = opts.requestMac ? [macWithSize(opts.requestMac)] : [];
  const mac = hmac(key, ...prefix, message, tsigVariables(vars));
  const record = encodeTSIGRecord({ ...vars, mac, originalId: message.readUInt16BE(0) });
  const signed = Buffer.concat([message, record]);
  signed.writeUInt16BE(message.readUInt16BE(HEADER_ARCOUNT) + 1, HEADER_ARCOUNT);
  return { message: signed, mac };
}

function macWithSize(mac: Buffer): Buffer {
  const size = Buffer.alloc(2);
  size.writeUInt16BE(mac.length, 0);
  return Buffer.concat([size, mac]);
}

export interface SplitMessage {
  /** The message as it was before signing: TSIG RR removed, ARCOUNT lowered, ID = the TSIG's original ID. */
  readonly unsigned: Buffer;
  readonly tsig: TSIGRecord;
}

/** Separates the TSIG RR (the last additional record) from a message; undefined when the message has none. */
export function splitTSIG(message: Buffer): SplitMessage | undefined {
  const last = recordSpans(message).at(-1);
  if (!last || last.type !== TYPE_TSIG || message.readUInt16BE(HEADER_ARCOUNT) === 0) return undefined;
  const tsig = decodeTSIGRData(last.name, last.rdata);
  const unsigned = Buffer.from(message.subarray(0, last.start));
  unsigned.writeUInt16BE(message.readUInt16BE(HEADER_ARCOUNT) - 1, HEADER_ARCOUNT);
  unsigned.writeUInt16BE(tsig.originalId, 0);
  return { unsigned, tsig };
}

/** What checking the signature of an answer found. */
export type TSIGVerdict =
  | { readonly ok: true }
  /** The server reported a TSIG error (its answer is then unsigned, except for BADTIME). */
  | { readonly ok: false; readonly reason: 'server-error'; readonly error: string }
  /** The answer's signature is wrong, missing, from another key or too old. */
  | { readonly ok: false; readonly reason: 'invalid'; readonly detail: string };

/**
 * Checks the TSIG of an answer to a signed request (RFC 8945 §5.3): MAC over the request MAC, the answer without
 * its TSIG, and the TSIG variables; the key and algorithm must be the request's; the time within the fudge.
 * `now` is in seconds since the epoch.
 */
export function verifyAnswer(answer: Buffer, requestMac: Buffer, key: TSIGKey, now: number): TSIGVerdict {
  const split = splitTSIG(answer);
  if (!split) return { ok: false, reason: 'invalid', detail: 'the answer is not signed' };
  const { unsigned, tsig } = split;
  if (tsig.error !== 0) {
    return { ok: false, reason: 'server-error', error: TSIG_ERRORS[tsig.error] ?? `TSIG error ${tsig.error}` };
  }
  if (tsig.keyName !== key.name.toLowerCase().replace(/\.$/, '') || tsig.algorithm !== key.algorithm) {
    return { ok: false, reason: 'invalid', detail: `the answer is signed with another key (${tsig.keyName})` };
  }
  const expected = hmac(key, macWithSize(requestMac), unsigned, tsigVariables(tsig));
  if (tsig.mac.length !== expected.length || !timingSafeEqual(tsig.mac, expected)) {
    return { ok: false, reason: 'invalid', detail: "the answer's TSIG MAC does not verify" };
  }
  if (Math.abs(now - tsig.timeSigned) > tsig.fudge) {
    return { ok: false, reason: 'invalid', detail: `the answer's TSIG time is ${now - tsig.timeSigned}s off` };
  }
  return { ok: true };
}

/** Reads a domain name that must not be compressed (TSIG's algorithm name); lower-case, without trailing dot. */
function readUncompressedName(buf: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = [];
  let o = offset;
  for (;;) {
    if (o >= buf.length) throw new Error('truncated name in TSIG record');
    const len = buf[o] ?? 0;
    if (len === 0) return { name: labels.join('.').toLowerCase(), end: o + 1 };
    if (len > 63) throw new Error('compressed or invalid name in TSIG record');
    labels.push(buf.toString('utf8', o + 1, o + 1 + len));
    o += 1 + len;
  }
}

function writeUInt48(buf: Buffer, value: number, offset: number): void {
  buf.writeUInt16BE(Math.floor(value / 2 ** 32) & 0xffff, offset);
  buf.writeUInt32BE(value >>> 0, offset + 2);
}

function readUInt48(buf: Buffer, offset: number): number {
  return buf.readUInt16BE(offset) * 2 ** 32 + buf.readUInt32BE(offset + 2);
}
