/**
 * A generic reader of DNS messages for tests: every section as (name, type, class, ttl, rdata hex), with name
 * compression resolved. dns-packet cannot serve here: it decodes rdata by type, and an RFC 2136 "delete RRset"
 * carries a type (AAAA) with empty rdata.
 */

export interface WireRecord {
  name: string;
  type: number;
  class: number;
  ttl: number;
  rdata: string;
}

export interface WireMessage {
  id: number;
  flags: number;
  opcode: number;
  rcode: number;
  zone: { name: string; type: number; class: number }[];
  prerequisites: WireRecord[];
  updates: WireRecord[];
  additionals: WireRecord[];
}

function readName(buf: Buffer, start: number): { name: string; end: number } {
  const labels: string[] = [];
  let o = start;
  let end: number | undefined;
  for (let hops = 0; hops < 64; hops++) {
    const len = buf.readUInt8(o);
    if (len === 0) return { name: labels.join('.').toLowerCase(), end: end ?? o + 1 };
    if ((len & 0xc0) === 0xc0) {
      end ??= o + 2;
      o = buf.readUInt16BE(o) & 0x3fff;
      continue;
    }
    labels.push(buf.toString('utf8', o + 1, o + 1 + len));
    o += 1 + len;
  }
  throw new Error('name compression loop');
}

export function parseMessage(buf: Buffer): WireMessage {
  const flags = buf.readUInt16BE(2);
  const counts = [4, 6, 8, 10].map((o) => buf.readUInt16BE(o)) as [number, number, number, number];
  let o = 12;
  const zone: WireMessage['zone'] = [];
  for (let i = 0; i < counts[0]; i++) {
    const { name, end } = readName(buf, o);
    zone.push({ name, type: buf.readUInt16BE(end), class: buf.readUInt16BE(end + 2) });
    o = end + 4;
  }
  const records = (n: number): WireRecord[] => {
    const out: WireRecord[] = [];
    for (let i = 0; i < n; i++) {
      const { name, end } = readName(buf, o);
      const rdlength = buf.readUInt16BE(end + 8);
      out.push({
        name,
        type: buf.readUInt16BE(end),
        class: buf.readUInt16BE(end + 2),
        ttl: buf.readUInt32BE(end + 4),
        rdata: buf.subarray(end + 10, end + 10 + rdlength).toString('hex'),
      });
      o = end + 10 + rdlength;
    }
    return out;
  };
  const prerequisites = records(counts[1]);
  const updates = records(counts[2]);
  const additionals = records(counts[3]);
  if (o !== buf.length) throw new Error(`${buf.length - o} trailing bytes`);
  return {
    id: buf.readUInt16BE(0),
    flags,
    opcode: (flags >> 11) & 0xf,
    rcode: flags & 0xf,
    zone,
    prerequisites,
    updates,
    additionals,
  };
}
