/**
 * One DNS request and its answer over UDP or TCP (RFC 1035 §4.2), with a deadline, and errors that say which
 * server did not answer and how.
 */
import dgram from 'node:dgram';
import { lookup } from 'node:dns/promises';
import net from 'node:net';

export const DEFAULT_DNS_PORT = 53;
/** How long to wait for an answer before giving up. */
export const DEFAULT_DNS_TIMEOUT_MS = 2000;

export type Transport = 'udp' | 'tcp';

/** A DNS server address as written in the DNSRecord secret: `[::1]:5353`, `::1`, `192.0.2.1:53`, `ns.example:53`. */
export interface ServerAddress {
  /** IP address or host name, without brackets. */
  readonly host: string;
  readonly port: number;
  /** `[::1]:5353` / `192.0.2.1:53`: for messages. */
  readonly display: string;
}

/** Parses `[addr]:port`, `[addr]`, a bare IPv6 address, `host:port` or `host`; the port defaults to 53. */
export function parseServer(text: string): ServerAddress {
  const s = text.trim();
  let host: string;
  let portText: string | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(s);
  if (bracketed) {
    host = bracketed[1] ?? '';
    portText = bracketed[2];
    if (!net.isIPv6(host)) throw new Error(`invalid DNS server "${text}": "${host}" is not an IPv6 address`);
  } else if (net.isIPv6(s)) {
    host = s;
  } else {
    const m = /^([^:[\]\s]+)(?::(\d+))?$/.exec(s);
    if (!m) throw new Error(`invalid DNS server "${text}": want [IPv6]:port, IPv4:port or host:port`);
    host = m[1] ?? '';
    portText = m[2];
  }
  const port = portText === undefined ? DEFAULT_DNS_PORT : Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`invalid DNS server "${text}": bad port`);
  return { host, port, display: `${net.isIPv6(host) ? `[${host}]` : host}:${port}` };
}

/** Why an exchange failed; `detail` is meant for the user. */
export class TransportError extends Error {
  override readonly name = 'TransportError';
  constructor(
    readonly kind: 'timeout' | 'unreachable',
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(detail, options);
  }
}

export interface ExchangeOptions {
  readonly transport: Transport;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

/**
 * Sends `message` and resolves with the first answer whose ID matches. Rejects with {@link TransportError} on
 * timeout, refused connection or unreachable address, and with the signal's reason on abort.
 */
export async function exchange(server: ServerAddress, message: Buffer, opts: ExchangeOptions): Promise<Buffer> {
  opts.signal?.throwIfAborted();
  const address = await resolveHost(server);
  return opts.transport === 'tcp'
    ? exchangeTCP(server, address, message, opts)
    : exchangeUDP(server, address, message, opts);
}

/** IP literal as is; a host name resolved with IPv6 addresses first. */
async function resolveHost(server: ServerAddress): Promise<string> {
  if (net.isIP(server.host)) return server.host;
  let addresses: { address: string; family: number }[];
  try {
    addresses = await lookup(server.host, { all: true });
  } catch (e) {
    throw new TransportError('unreachable', `cannot resolve ${server.host}: ${(e as Error).message}`, { cause: e });
  }
  const first = addresses.find((a) => a.family === 6) ?? addresses[0];
  if (!first) throw new TransportError('unreachable', `cannot resolve ${server.host}: no addresses`);
  return first.address;
}

function describeSocketError(server: ServerAddress, e: NodeJS.ErrnoException): TransportError {
  switch (e.code) {
    case 'ECONNREFUSED':
      return new TransportError('unreachable', `connection refused by ${server.display} (no DNS server there?)`, {
        cause: e,
      });
    case 'ENETUNREACH':
    case 'EHOSTUNREACH':
    case 'EADDRNOTAVAIL':
      return new TransportError('unreachable', `${server.display} is unreachable (${e.code})`, { cause: e });
    default:
      return new TransportError('unreachable', `cannot talk to ${server.display}: ${e.message}`, { cause: e });
  }
}

function timeoutError(server: ServerAddress, ms: number): TransportError {
  return new TransportError('timeout', `no answer from ${server.display} within ${ms / 1000}s`);
}

/**
 * Runs `start` with `settle` callbacks; settles once, on the first of: answer, error, deadline, abort. `cleanup`
 * closes the socket whatever happened.
 */
function withDeadline(
  server: ServerAddress,
  opts: ExchangeOptions,
  start: (resolve: (b: Buffer) => void, reject: (e: unknown) => void) => () => void,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) {
      reject(opts.signal.reason);
      return;
    }
    let done = false;
    let cleanup: () => void = () => undefined;
    const finish = (fn: () => void): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      cleanup();
      fn();
    };
    const onAbort = (): void => finish(() => reject(opts.signal?.reason));
    const timer = setTimeout(() => finish(() => reject(timeoutError(server, opts.timeoutMs))), opts.timeoutMs);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    cleanup = start(
      (b) => finish(() => resolve(b)),
      (e) => finish(() => reject(e)),
    );
    if (done) cleanup();
  });
}

function exchangeUDP(server: ServerAddress, address: string, message: Buffer, opts: ExchangeOptions): Promise<Buffer> {
  const id = message.readUInt16BE(0);
  return withDeadline(server, opts, (resolve, reject) => {
    const socket = dgram.createSocket(net.isIPv6(address) ? 'udp6' : 'udp4');
    // A connected socket only sees datagrams from the server and gets ICMP port-unreachable as ECONNREFUSED.
    socket.on('error', (e) => reject(describeSocketError(server, e)));
    socket.on('message', (msg) => {
      if (msg.length >= 12 && msg.readUInt16BE(0) === id && (msg.readUInt8(2) & 0x80) !== 0) resolve(msg);
    });
    socket.connect(server.port, address, () => socket.send(message));
    return () => {
      try {
        socket.close();
      } catch {
        // Already closed.
      }
    };
  });
}

function exchangeTCP(server: ServerAddress, address: string, message: Buffer, opts: ExchangeOptions): Promise<Buffer> {
  const id = message.readUInt16BE(0);
  return withDeadline(server, opts, (resolve, reject) => {
    const socket = net.connect({ host: address, port: server.port });
    const length = Buffer.alloc(2);
    length.writeUInt16BE(message.length, 0);
    socket.on('connect', () => socket.write(Buffer.concat([length, message])));
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2) {
        const size = buffered.readUInt16BE(0);
        if (buffered.length < 2 + size) return;
        const msg = buffered.subarray(2, 2 + size);
        buffered = buffered.subarray(2 + size);
        if (msg.length >= 12 && msg.readUInt16BE(0) === id) {
          resolve(Buffer.from(msg));
          return;
        }
      }
    });
    socket.on('error', (e) => reject(describeSocketError(server, e)));
    socket.on('end', () =>
      reject(new TransportError('unreachable', `${server.display} closed the connection without an answer`)),
    );
    return () => socket.destroy();
  });
}
