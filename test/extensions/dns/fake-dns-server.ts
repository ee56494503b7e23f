/**
 * A scripted DNS server on [::1] (UDP and TCP on the same port) for error paths a real BIND9 does not produce on
 * demand: REFUSED, SERVFAIL, silence, truncation, bad signatures.
 */
import dgram from 'node:dgram';
import net from 'node:net';

/** Returns the answer to send, or undefined to stay silent. */
export type Handler = (request: Buffer, transport: 'udp' | 'tcp') => Buffer | undefined;

export interface FakeDNSServer {
  readonly port: number;
  /** `[::1]:PORT`. */
  readonly server: string;
  readonly requests: { transport: 'udp' | 'tcp'; message: Buffer }[];
  close(): Promise<void>;
}

export async function startFakeDNSServer(handler: Handler): Promise<FakeDNSServer> {
  // UDP takes a free port; TCP may find that port taken (other processes): then try another one.
  for (let attempt = 1; ; attempt++) {
    try {
      return await tryStart(handler);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 10) throw e;
    }
  }
}

async function tryStart(handler: Handler): Promise<FakeDNSServer> {
  const requests: FakeDNSServer['requests'] = [];
  const udp = dgram.createSocket({ type: 'udp6', ipv6Only: true });
  await new Promise<void>((resolve) => udp.bind(0, '::1', resolve));
  const port = udp.address().port;
  udp.on('message', (msg, rinfo) => {
    requests.push({ transport: 'udp', message: msg });
    const answer = handler(msg, 'udp');
    if (answer) udp.send(answer, rinfo.port, rinfo.address);
  });
  const sockets = new Set<net.Socket>();
  const tcp = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const msg = buffered.subarray(2, 2 + buffered.readUInt16BE(0));
        buffered = buffered.subarray(2 + msg.length);
        requests.push({ transport: 'tcp', message: Buffer.from(msg) });
        const answer = handler(Buffer.from(msg), 'tcp');
        if (answer) {
          const len = Buffer.alloc(2);
          len.writeUInt16BE(answer.length, 0);
          socket.write(Buffer.concat([len, answer]));
        }
      }
    });
    socket.on('error', () => undefined);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen({ host: '::1', port, ipv6Only: true }, resolve);
    });
  } catch (e) {
    udp.close();
    throw e;
  }
  return {
    port,
    server: `[::1]:${port}`,
    requests,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
      await new Promise<void>((resolve) => udp.close(() => resolve()));
    },
  };
}

/**
 * An answer to `request`: same ID and zone section, QR set, opcode kept, the given RCODE, no other sections
 * (what BIND9 sends for an UPDATE). `flags` are OR-ed in (e.g. TC).
 */
export function answerTo(request: Buffer, rcode: number, flags = 0): Buffer {
  const zoneEnd = endOfZoneSection(request);
  const answer = Buffer.from(request.subarray(0, zoneEnd));
  const opcodeBits = request.readUInt16BE(2) & 0x7800;
  answer.writeUInt16BE(0x8000 | opcodeBits | flags | (rcode & 0xf), 2);
  answer.writeUInt16BE(0, 6);
  answer.writeUInt16BE(0, 8);
  answer.writeUInt16BE(0, 10);
  return answer;
}

function endOfZoneSection(msg: Buffer): number {
  let o = 12;
  for (let i = 0; i < msg.readUInt16BE(4); i++) {
    while (msg.readUInt8(o) !== 0) o += 1 + msg.readUInt8(o);
    o += 5;
  }
  return o;
}
