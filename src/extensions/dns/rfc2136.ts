/**
 * RFC 2136 dynamic updates of one RRset at a time, optionally signed with TSIG (RFC 8945).
 *
 * Messages are built with dns-packet. An UPDATE reuses the query layout (RFC 2136 §2): the zone section is the
 * question section, prerequisites are the answer section, updates the authority section. dns-packet writes rdata
 * by record type, and "delete an RRset" (§2.5.2) needs the type with an empty rdata: for that it takes the generic
 * encoder, which it uses for `UNKNOWN_<code>` types (the names its own decoder gives unknown types).
 *
 * Kept as one file (over 400 lines): the messages of one protocol exchange and the client that sends them, whose
 * encoding and answer checks are read against each other and the RFCs.
 */
import { randomInt } from 'node:crypto';
import dnsPacket from 'dns-packet';
import { formatIP, parseIP } from '../../net/cidr.js';
import {
  DEFAULT_DNS_TIMEOUT_MS,
  exchange,
  parseServer,
  TransportError,
  type ServerAddress,
  type Transport,
} from './transport.js';
import { canonicalNameWire, signMessage, verifyAnswer, type TSIGKey } from './tsig.js';
import { recordSpans } from './wire.js';

export const OPCODE_UPDATE = 5;
/** The record types the DNS extension publishes. */
export const RECORD_TYPE_CODES = { A: 1, CNAME: 5, TXT: 16, AAAA: 28 } as const;
export type UpdateRecordType = keyof typeof RECORD_TYPE_CODES;

const FLAG_QR = 0x8000;
const FLAG_TC = 0x0200;

export interface RRsetRef {
  /** Zone apex, e.g. `local.gardener.cloud.`; the trailing dot is optional. */
  readonly zone: string;
  /** Owner name inside the zone; the trailing dot is optional. */
  readonly name: string;
  readonly type: UpdateRecordType;
}

export interface RRset extends RRsetRef {
  readonly ttl: number;
  /** Record data as text: addresses for A/AAAA (written canonically), a name for CNAME, text for TXT. */
  readonly values: readonly string[];
}

/**
 * The canonical text of a value: RFC 5952 for AAAA (`::ffff:a.b.c.d` for IPv4-mapped ones), dotted quad for A,
 * fully qualified for CNAME; TXT as is. Throws when the value does not fit the type.
 */
export function canonicalValue(type: UpdateRecordType, value: string): string {
  switch (type) {
    case 'A': {
      const ip = parseIP(value);
      if (ip?.family !== 'IPv4' || value.includes(':')) throw new Error(`"${value}" is not an IPv4 address`);
      return formatIP(ip);
    }
    case 'AAAA': {
      const ip = value.includes(':') ? parseIP(value) : undefined;
      if (!ip) throw new Error(`"${value}" is not an IPv6 address`);
      return ip.family === 'IPv6' ? formatIP(ip) : `::ffff:${formatIP(ip)}`;
    }
    case 'CNAME':
      canonicalNameWire(value);
      return value.endsWith('.') ? value : `${value}.`;
    case 'TXT':
      return value;
  }
}

/** Text longer than 255 octets goes into several character-strings of one TXT record (RFC 1035 §3.3.14). */
function txtStrings(value: string): Buffer[] {
  const bytes = Buffer.from(value, 'utf8');
  const chunks: Buffer[] = [];
  for (let o = 0; o < bytes.length; o += 255) chunks.push(bytes.subarray(o, o + 255));
  return chunks.length > 0 ? chunks : [Buffer.alloc(0)];
}

function addRecord(name: string, type: UpdateRecordType, ttl: number, value: string): dnsPacket.Answer {
  switch (type) {
    case 'A':
    case 'AAAA':
    case 'CNAME':
      return { name, type, class: 'IN', ttl, data: value };
    case 'TXT':
      return { name, type, class: 'IN', ttl, data: txtStrings(value) };
  }
}

/** RFC 2136 §2.5.2: class ANY, TTL 0, empty rdata deletes the RRset of (name, type). */
function deleteRRsetRecord(name: string, type: UpdateRecordType): dnsPacket.Answer {
  return {
    name,
    type: `UNKNOWN_${RECORD_TYPE_CODES[type]}`,
    class: 'ANY',
    ttl: 0,
    data: Buffer.alloc(0),
  } as unknown as dnsPacket.Answer;
}

/** RFC 2136 §2.4 prerequisites, as this extension uses them. */
export type Prerequisite =
  /** §2.4.2 "RRset exists (value dependent)": the RRset of (name, type) is exactly `values`. */
  | {
      readonly kind: 'rrset-equals';
      readonly name: string;
      readonly type: UpdateRecordType;
      readonly values: readonly string[];
    }
  /** §2.4.3 "RRset does not exist": no RRset of (name, type). */
  | { readonly kind: 'rrset-absent'; readonly name: string; readonly type: UpdateRecordType };

/** One atomic UPDATE of a zone: applied only when every prerequisite holds, then all of it or nothing. */
export interface RRsetChange {
  /** Zone apex; every name must be in it. */
  readonly zone: string;
  readonly prerequisites?: readonly Prerequisite[];
  /** RRsets removed (nothing there is no error). */
  readonly delete?: readonly Omit<RRsetRef, 'zone'>[];
  /** RRsets made exactly their values: delete the RRset, then add one RR per value (no values: only the delete). */
  readonly replace?: readonly Omit<RRset, 'zone'>[];
}

const CLASS_NONE = 254;

/** The UPDATE message of `change`; throws for a bad name, TTL or value. */
export function encodeUpdate(change: RRsetChange, id: number): Buffer {
  canonicalNameWire(change.zone);
  const prerequisites = change.prerequisites ?? [];
  const prerequisiteSets = prerequisites.map(prerequisiteRecords);
  const updates: dnsPacket.Answer[] = [];
  for (const ref of change.delete ?? []) {
    canonicalNameWire(ref.name);
    updates.push(deleteRRsetRecord(ref.name, ref.type));
  }
  for (const rrset of change.replace ?? []) {
    canonicalNameWire(rrset.name);
    if (!Number.isInteger(rrset.ttl) || rrset.ttl < 0 || rrset.ttl > 2147483647) {
      throw new Error(`invalid TTL ${rrset.ttl}`);
    }
    const values = [...new Set(rrset.values.map((v) => canonicalValue(rrset.type, v)))];
    if (rrset.type === 'CNAME' && values.length > 1) throw new Error('a CNAME RRset has a single value');
    updates.push(
      deleteRRsetRecord(rrset.name, rrset.type),
      ...values.map((v) => addRecord(rrset.name, rrset.type, rrset.ttl, v)),
    );
  }
  const message = dnsPacket.encode({
    type: 'query',
    id,
    flags: OPCODE_UPDATE << 11,
    questions: [{ name: change.zone, type: 'SOA', class: 'IN' }],
    answers: prerequisiteSets.flat(),
    authorities: updates,
    additionals: [],
  });
  // dns-packet has no class NONE: "RRset does not exist" is written as class ANY and its class set afterwards.
  const spans = recordSpans(message);
  let index = 0;
  prerequisites.forEach((p, i) => {
    const span = spans[index];
    if (p.kind === 'rrset-absent' && span) message.writeUInt16BE(CLASS_NONE, span.end - span.rdata.length - 8);
    index += prerequisiteSets[i]?.length ?? 0;
  });
  return message;
}

function prerequisiteRecords(p: Prerequisite): dnsPacket.Answer[] {
  canonicalNameWire(p.name);
  if (p.kind === 'rrset-absent') return [deleteRRsetRecord(p.name, p.type)];
  // §2.4.2: class of the zone, TTL 0, one RR per value.
  return [...new Set(p.values.map((v) => canonicalValue(p.type, v)))].map((v) => addRecord(p.name, p.type, 0, v));
}

/**
 * The UPDATE message that makes the RRset of (name, type) exactly `values`: delete the RRset, then add one RR per
 * value, in one message so the server applies both or nothing. No values: only the delete.
 */
export function encodeReplaceRRset(rrset: RRset, id: number): Buffer {
  return encodeUpdate({ zone: rrset.zone, replace: [rrset] }, id);
}

/** The UPDATE message that deletes the RRset of (name, type). Deleting what is not there is no error. */
export function encodeDeleteRRset(ref: RRsetRef, id: number): Buffer {
  return encodeUpdate({ zone: ref.zone, delete: [ref] }, id);
}

/** A standard query (opcode 0) for the RRset of (name, type), recursion not desired. */
export function encodeQuery(name: string, type: UpdateRecordType, id: number): Buffer {
  canonicalNameWire(name);
  return dnsPacket.encode({ type: 'query', id, flags: 0, questions: [{ name, type, class: 'IN' }] });
}

/** Why an update failed. */
export type DNSUpdateFailure =
  /** The server answered with an error RCODE (`REFUSED`, `NOTAUTH`, `NOTZONE`, `SERVFAIL`, …). */
  | 'rcode'
  /** The server rejected the TSIG key or signature, or the answer's signature did not verify. */
  | 'tsig'
  /** No answer in time. */
  | 'timeout'
  /** Connection refused, network unreachable, name not resolvable. */
  | 'unreachable'
  /** An answer that is not a valid answer to the request. */
  | 'protocol';

/** An update that did not happen; the message says what, where and the server's answer. */
export class DNSUpdateError extends Error {
  override readonly name = 'DNSUpdateError';
  constructor(
    readonly reason: DNSUpdateFailure,
    /** The server's answer or what went wrong, e.g. `REFUSED` or `no answer from [::1]:5353 within 2s`. */
    readonly detail: string,
    /** What was attempted, e.g. `update of AAAA api.x.local.gardener.cloud at [::1]:5353`. */
    readonly operation: string,
    readonly extra: { rcode?: string; tsigError?: string; cause?: unknown } = {},
  ) {
    super(`${operation} failed: ${detail}`, extra.cause === undefined ? undefined : { cause: extra.cause });
  }

  get rcode(): string | undefined {
    return this.extra.rcode;
  }

  get tsigError(): string | undefined {
    return this.extra.tsigError;
  }
}

export interface DNSUpdateClientOptions {
  /** `[::1]:5353`, `::1` (port 53), `192.0.2.1:53` or `host:port`. */
  readonly server: string;
  /** Signs requests and requires signed answers when set. */
  readonly tsig?: TSIGKey;
  /** @default 2000 */
  readonly timeoutMs?: number;
  /** UDP, falling back to TCP on a truncated answer; or TCP only. @default 'udp' */
  readonly transport?: Transport;
  /** Seconds since the epoch, for TSIG times. @default the system clock */
  readonly now?: () => number;
}

export interface CallOptions {
  readonly signal?: AbortSignal;
}

/** Sends RFC 2136 updates to one server. */
export class DNSUpdateClient {
  readonly server: ServerAddress;
  private readonly tsig: TSIGKey | undefined;
  private readonly timeoutMs: number;
  private readonly transport: Transport;
  private readonly now: () => number;

  constructor(opts: DNSUpdateClientOptions) {
    this.server = parseServer(opts.server);
    this.tsig = opts.tsig;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_DNS_TIMEOUT_MS;
    this.transport = opts.transport ?? 'udp';
    this.now = opts.now ?? (() => Math.floor(Date.now() / 1000));
  }

  /** Makes the RRset of (name, type) exactly `values` with `ttl` (one atomic UPDATE). */
  async replaceRRset(rrset: RRset, opts: CallOptions = {}): Promise<void> {
    await this.update({ zone: rrset.zone, replace: [rrset] }, opts);
  }

  /** Removes the RRset of (name, type); succeeds when it is already gone. */
  async deleteRRset(ref: RRsetRef, opts: CallOptions = {}): Promise<void> {
    await this.update({ zone: ref.zone, delete: [ref] }, opts);
  }

  /**
   * Sends one UPDATE. A prerequisite that does not hold rejects with a {@link DNSUpdateError} of reason `rcode`
   * and rcode `NXRRSET` (an RRset is not as required) or `YXRRSET` (an RRset exists that must not).
   */
  async update(change: RRsetChange, opts: CallOptions = {}): Promise<void> {
    await this.send(describeChange(change, this.server.display), (id) => encodeUpdate(change, id), opts);
  }

  /**
   * The TXT records of `name` (the character-strings of each record joined), from an unsigned query: empty when
   * the name or its TXT RRset does not exist. Meant for messages; decisions are made by UPDATE prerequisites.
   */
  async readTXT(name: string, opts: CallOptions = {}): Promise<string[]> {
    const operation = `query of TXT ${displayName(name)} at ${this.server.display}`;
    const id = randomInt(0, 0x10000);
    const request = encodeQuery(name, 'TXT', id);
    const answer = await this.exchange(operation, request, opts);
    const rcode = rcodeName(answer);
    if (rcode === 'NXDOMAIN') return [];
    if (rcode !== 'NOERROR') throw new DNSUpdateError('rcode', rcode, operation, { rcode });
    let decoded: dnsPacket.Packet;
    try {
      decoded = dnsPacket.decode(answer);
    } catch (e) {
      throw new DNSUpdateError('protocol', `malformed answer: ${(e as Error).message}`, operation, { cause: e });
    }
    const wanted = displayName(name).toLowerCase();
    return (decoded.answers ?? [])
      .filter((a) => a.type === 'TXT' && a.name.toLowerCase().replace(/\.$/, '') === wanted)
      .map((a) => {
        const data = (a as { data: Buffer | string | (Buffer | string)[] }).data;
        return (Array.isArray(data) ? data : [data]).map((d) => d.toString()).join('');
      });
  }

  /** One request and its answer, over TCP again when the UDP answer is truncated. */
  private async exchange(operation: string, request: Buffer, opts: CallOptions): Promise<Buffer> {
    try {
      const answer = await exchange(this.server, request, {
        transport: this.transport,
        timeoutMs: this.timeoutMs,
        ...opts,
      });
      if (this.transport !== 'udp' || (answer.readUInt16BE(2) & FLAG_TC) === 0) return answer;
      return await exchange(this.server, request, { transport: 'tcp', timeoutMs: this.timeoutMs, ...opts });
    } catch (e) {
      if (e instanceof TransportError) throw new DNSUpdateError(e.kind, e.detail, operation, { cause: e });
      throw e;
    }
  }

  private async send(operation: string, encode: (id: number) => Buffer, opts: CallOptions): Promise<void> {
    const id = randomInt(0, 0x10000);
    const unsigned = encode(id);
    const signed = this.tsig ? signMessage(unsigned, this.tsig, this.now()) : undefined;
    const request = signed?.message ?? unsigned;

    const answer = await this.exchange(operation, request, opts);
    checkAnswer(
      answer,
      operation,
      this.tsig && signed ? { key: this.tsig, mac: signed.mac, now: this.now() } : undefined,
    );
  }
}

/**
 * Throws {@link DNSUpdateError} unless `answer` is a successful, correctly signed answer to an UPDATE. A TSIG error
 * of the server wins over the RCODE (NOTAUTH alone would not say that the key is unknown).
 */
export function checkAnswer(
  answer: Buffer,
  operation: string,
  tsig?: { key: TSIGKey; mac: Buffer; now: number },
): void {
  try {
    recordSpans(answer);
  } catch (e) {
    throw new DNSUpdateError('protocol', `malformed answer: ${(e as Error).message}`, operation, { cause: e });
  }
  if ((answer.readUInt16BE(2) & FLAG_QR) === 0) throw new DNSUpdateError('protocol', 'not an answer', operation);
  const opcode = (answer.readUInt16BE(2) >> 11) & 0xf;
  if (opcode !== OPCODE_UPDATE) throw new DNSUpdateError('protocol', `answer has opcode ${opcode}`, operation);
  const rcode = rcodeName(answer);

  if (tsig) {
    let verdict: ReturnType<typeof verifyAnswer>;
    try {
      verdict = verifyAnswer(answer, tsig.mac, tsig.key, tsig.now);
    } catch (e) {
      throw new DNSUpdateError('protocol', `malformed TSIG: ${(e as Error).message}`, operation, { cause: e });
    }
    if (!verdict.ok && verdict.reason === 'server-error') {
      throw new DNSUpdateError('tsig', `${rcode} (TSIG error ${verdict.error} for key "${tsig.key.name}")`, operation, {
        rcode,
        tsigError: verdict.error,
      });
    }
    // Servers may leave error answers (FORMERR, NOTIMP) unsigned; report the RCODE then.
    if (!verdict.ok && rcode === 'NOERROR') throw new DNSUpdateError('tsig', verdict.detail, operation, { rcode });
  }
  if (rcode !== 'NOERROR') throw new DNSUpdateError('rcode', rcode, operation, { rcode });
}

/** The RCODE's name (RFC 1035, RFC 2136 §2.2). */
export function rcodeName(message: Buffer): string {
  const code = message.readUInt16BE(2) & 0xf;
  return RCODES[code] ?? `RCODE ${code}`;
}

const RCODES: Readonly<Record<number, string>> = {
  0: 'NOERROR',
  1: 'FORMERR',
  2: 'SERVFAIL',
  3: 'NXDOMAIN',
  4: 'NOTIMP',
  5: 'REFUSED',
  6: 'YXDOMAIN',
  7: 'YXRRSET',
  8: 'NXRRSET',
  9: 'NOTAUTH',
  10: 'NOTZONE',
};

/** `update of AAAA api.… at [::1]:53` for the first RRset the change writes (or removes). */
function describeChange(change: RRsetChange, server: string): string {
  const first = change.replace?.[0] ?? change.delete?.[0];
  const verb = change.replace?.length ? 'update' : 'delete';
  return first ? `${verb} of ${first.type} ${displayName(first.name)} at ${server}` : `update at ${server}`;
}

function displayName(name: string): string {
  return name.replace(/\.$/, '');
}
