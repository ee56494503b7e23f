/**
 * Reading the record layout of any DNS message: where each resource record starts and ends, its owner, type and
 * rdata, without interpreting the rdata. dns-packet's decoder interprets rdata by type and so misreads RFC 2136
 * update sections (a "delete RRset" carries type AAAA with empty rdata); TSIG only needs the layout.
 */

export const HEADER_LENGTH = 12;

export interface RecordSpan {
  /** Offset of the record's first byte (its owner name). */
  readonly start: number;
  /** Offset after its rdata. */
  readonly end: number;
  /** Lower-case, without trailing dot; compression resolved. */
  readonly name: string;
  readonly type: number;
  readonly class: number;
  readonly ttl: number;
  readonly rdata: Buffer;
}

/** Reads a possibly compressed name; `end` is where the name ends in the record (after a pointer, if any). */
export function readName(buf: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = [];
  let o = offset;
  let end: number | undefined;
  for (let jumps = 0; jumps < 128;) {
    if (o >= buf.length) throw new Error('truncated name');
    const len = buf[o] ?? 0;
    if (len === 0) return { name: labels.join('.').toLowerCase(), end: end ?? o + 1 };
    if ((len & 0xc0) === 0xc0) {
      if (o + 1 >= buf.length) throw new Error('truncated name');
      end ??= o + 2;
      o = buf.readUInt16BE(o) & 0x3fff;
      jumps++;
      continue;
    }
    if (len > 63) throw new Error('invalid label');
    if (o + 1 + len > buf.length) throw new Error('truncated name');
    labels.push(buf.toString('utf8', o + 1, o + 1 + len));
    o += 1 + len;
  }
  throw new Error('name compression loop');
}

/** The records of all sections after the question (zone) section, in order; throws on a malformed message. */
export function recordSpans(message: Buffer): RecordSpan[] {
  if (message.length < HEADER_LENGTH) throw new Error('message shorter than its header');
  let o = HEADER_LENGTH;
  for (let i = 0; i < message.readUInt16BE(4); i++) {
    o = readName(message, o).end + 4;
    if (o > message.length) throw new Error('truncated question');
  }
  const count = message.readUInt16BE(6) + message.readUInt16BE(8) + message.readUInt16BE(10);
  const spans: RecordSpan[] = [];
  for (let i = 0; i < count; i++) {
    const { name, end } = readName(message, o);
    if (end + 10 > message.length) throw new Error('truncated record');
    const rdlength = message.readUInt16BE(end + 8);
    const next = end + 10 + rdlength;
    if (next > message.length) throw new Error('truncated record');
    spans.push({
      start: o,
      end: next,
      name,
      type: message.readUInt16BE(end),
      class: message.readUInt16BE(end + 2),
      ttl: message.readUInt32BE(end + 4),
      rdata: message.subarray(end + 10, next),
    });
    o = next;
  }
  return spans;
}
