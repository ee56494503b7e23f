/**
 * A real BIND9 (`named` from Debian's `bind9` package) as the DNS server of the local setup and the tests: one
 * primary zone that accepts RFC 2136 updates signed with a generated hmac-sha256 TSIG key, listening on an IPv6
 * loopback address only. Everything it writes (config, zone, journal) lives in a temporary folder that `stop`
 * removes.
 */
import { randomBytes, randomInt } from 'node:crypto';
import dgram from 'node:dgram';
import net from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import dnsPacket from 'dns-packet';
import { rcodeName } from '../extensions/dns/rfc2136.js';
import { exchange, parseServer } from '../extensions/dns/transport.js';
import { onEmergencyExit } from '../system/cleanup.js';
import { freePort, urlHost } from '../system/net.js';
import { describeExit, graceBefore, startProcess, which, type ManagedProcess } from '../system/process.js';

/** The zone the local provider's DNSRecords live in (`<domain>.` of the gardenlet's default domain). */
export const LOCAL_DNS_ZONE = 'local.gardener.cloud.';
export const LOCAL_TSIG_KEY_NAME = 'gardener-ipv6';
export const LOCAL_TSIG_ALGORITHM = 'hmac-sha256';
/** How long `named` may take to load the zone and answer. */
export const DEFAULT_BIND9_START_TIMEOUT_MS = 20_000;
const STOP_GRACE_MS = 5_000;
const POLL_INTERVAL_MS = 100;
const ZONE_TTL = 60;

export interface Bind9Options {
  /** Listen address; IPv6 only. @default '::1' */
  readonly address?: string;
  /** @default a free port on `address` */
  readonly port?: number;
  /** @default 'local.gardener.cloud.' */
  readonly zone?: string;
  /** @default 'gardener-ipv6' */
  readonly tsigKeyName?: string;
  /** Base64 hmac-sha256 secret; pass the one of a previous start to restart with the same key. @default random */
  readonly tsigSecret?: string;
  /** The `named` binary. @default `named` on PATH or in /usr/sbin */
  readonly named?: string;
  /** Parent of the temporary folder. @default the OS temp folder */
  readonly parentDir?: string;
  /** @default 20_000 */
  readonly startTimeoutMs?: number;
}

/** A running BIND9; the fields are what the DNSRecord secret needs (`server`, `zone`, `tsig*`). */
export interface Bind9 {
  /** `[::1]:PORT`. */
  readonly server: string;
  readonly address: string;
  readonly port: number;
  /** With trailing dot: `local.gardener.cloud.`. */
  readonly zone: string;
  readonly tsigKeyName: string;
  readonly tsigAlgorithm: typeof LOCAL_TSIG_ALGORITHM;
  readonly tsigSecret: string;
  /** Config, zone file, journal and `named.log`. */
  readonly dir: string;
  readonly process: ManagedProcess;
  /**
   * Stops named (SIGTERM, SIGKILL after 5 s, or at `deadline` (ms since epoch) when that is sooner) and removes its
   * folder. Safe to call twice.
   */
  stop(opts?: { deadline?: number }): Promise<void>;
}

/**
 * named.conf for one dynamic primary zone, IPv6 listener only, no recursion, no rndc channel, no zone transfers
 * (the zone lists every shoot's names).
 */
export function bind9Config(opts: {
  dir: string;
  address: string;
  port: number;
  zone: string;
  tsigKeyName: string;
  tsigSecret: string;
}): string {
  const zone = opts.zone.replace(/\.$/, '');
  const q = JSON.stringify;
  return `options {
  directory ${q(opts.dir)};
  pid-file none;
  session-keyfile none;
  managed-keys-directory ${q(opts.dir)};
  listen-on { none; };
  listen-on-v6 port ${opts.port} { ${opts.address}; };
  recursion no;
  dnssec-validation no;
  notify no;
  allow-query { any; };
  allow-transfer { none; };
};
controls { };
key ${q(opts.tsigKeyName)} {
  algorithm ${LOCAL_TSIG_ALGORITHM};
  secret ${q(opts.tsigSecret)};
};
zone ${q(zone)} {
  type primary;
  file ${q(join(opts.dir, `${zone}.zone`))};
  journal ${q(join(opts.dir, `${zone}.zone.jnl`))};
  allow-update { key ${q(opts.tsigKeyName)}; };
};
`;
}

/** The initial zone: SOA, NS `ns.<zone>` and its AAAA, the listen address. */
export function bind9ZoneFile(zone: string, nsAddress: string): string {
  const origin = zone.endsWith('.') ? zone : `${zone}.`;
  return `$ORIGIN ${origin}
$TTL ${ZONE_TTL}
@ IN SOA ns.${origin} hostmaster.${origin} 1 60 60 3600 ${ZONE_TTL}
@ IN NS ns.${origin}
ns IN AAAA ${nsAddress}
`;
}

/** Starts named and waits until it answers a SOA query for the zone; throws with its log tail when it does not. */
export async function startBind9(opts: Bind9Options = {}): Promise<Bind9> {
  const named = opts.named ?? which('named');
  if (!named) throw new Error('named not found: install BIND9 (apt-get install -y bind9 bind9-utils dnsutils)');
  const address = opts.address ?? '::1';
  // named binds with SO_REUSEPORT: a second one on a busy port starts fine and shares the queries with the first.
  if (opts.port !== undefined) await assertPortFree(address, opts.port);
  const port = opts.port ?? (await freePort(address));
  const zone = opts.zone ? (opts.zone.endsWith('.') ? opts.zone : `${opts.zone}.`) : LOCAL_DNS_ZONE;
  const tsigKeyName = opts.tsigKeyName ?? LOCAL_TSIG_KEY_NAME;
  const tsigSecret = opts.tsigSecret ?? randomBytes(32).toString('base64');
  const dir = mkdtempSync(join(opts.parentDir ?? tmpdir(), 'gardener-ipv6-bind9-'));
  const confFile = join(dir, 'named.conf');
  writeFileSync(confFile, bind9Config({ dir, address, port, zone, tsigKeyName, tsigSecret }));
  writeFileSync(join(dir, `${zone.replace(/\.$/, '')}.zone`), bind9ZoneFile(zone, address));

  // -g: foreground, log to stderr; no -u: stays the user that started it (root in CI), which owns `dir`.
  const proc = startProcess({
    name: 'named',
    command: named,
    args: ['-g', '-c', confFile, '-n', '1'],
    logFile: join(dir, 'named.log'),
  });
  const removeDir = (): void => rmSync(dir, { recursive: true, force: true });
  const unregister = onEmergencyExit(
    () => {
      proc.killNow();
      removeDir();
    },
    { signals: false },
  );
  let stopped: Promise<void> | undefined;
  const stop = (stopOpts: { deadline?: number } = {}): Promise<void> =>
    (stopped ??= (async () => {
      // named can take seconds to exit on SIGTERM on a busy machine: a caller with a deadline must not wait for it.
      await proc.stop(graceBefore(stopOpts.deadline, STOP_GRACE_MS));
      unregister();
      removeDir();
    })());

  const server = `${urlHost(address)}:${port}`;
  try {
    await waitForSOA(proc, server, zone, Date.now() + (opts.startTimeoutMs ?? DEFAULT_BIND9_START_TIMEOUT_MS));
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    server,
    address,
    port,
    zone,
    tsigKeyName,
    tsigAlgorithm: LOCAL_TSIG_ALGORITHM,
    tsigSecret,
    dir,
    process: proc,
    stop,
  };
}

/** True when `server` answers a SOA query for `zone` authoritatively. */
export async function answersSOA(server: string, zone: string, timeoutMs = 1000): Promise<boolean> {
  const id = randomInt(0, 0x10000);
  const query = dnsPacket.encode({ type: 'query', id, questions: [{ name: zone, type: 'SOA', class: 'IN' }] });
  try {
    const wire = await exchange(parseServer(server), query, { transport: 'udp', timeoutMs });
    const answer = dnsPacket.decode(wire);
    return rcodeName(wire) === 'NOERROR' && answer.flag_aa && (answer.answers ?? []).some((a) => a.type === 'SOA');
  } catch {
    return false;
  }
}

/** Throws when something already listens on UDP or TCP `address`:`port`. */
export async function assertPortFree(address: string, port: number): Promise<void> {
  const where = `${urlHost(address)}:${port}`;
  const inUse = (e: NodeJS.ErrnoException) =>
    new Error(`cannot start named at ${where}: ${e.code === 'EADDRINUSE' ? 'the port is in use' : e.message}`);
  await new Promise<void>((resolve, reject) => {
    const udp = dgram.createSocket({ type: 'udp6', ipv6Only: true });
    udp.once('error', (e) => {
      udp.close();
      reject(inUse(e));
    });
    udp.bind({ address, port, exclusive: true }, () => udp.close(() => resolve()));
  });
  await new Promise<void>((resolve, reject) => {
    const tcp = net.createServer();
    tcp.once('error', (e) => reject(inUse(e)));
    tcp.listen({ host: address, port, exclusive: true, ipv6Only: true }, () => tcp.close(() => resolve()));
  });
}

async function waitForSOA(proc: ManagedProcess, server: string, zone: string, deadline: number): Promise<void> {
  for (;;) {
    const exit = proc.exit();
    if (exit !== undefined) throw new Error(`named ${describeExit(exit)} while starting:\n${proc.tail()}`);
    if (await answersSOA(server, zone, 500)) return;
    if (Date.now() > deadline) {
      throw new Error(`named at ${server} did not answer SOA ${zone} in time:\n${proc.tail()}`);
    }
    await new Promise((r) => setTimeout(r, POLL_INTERVAL_MS));
  }
}
