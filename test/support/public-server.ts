/**
 * A TCP server at public-range addresses, in a network namespace of its own on this machine, reached through a veth
 * from this process's network namespace (which forwards to it): what "the internet" is for a seed's pods in e2e
 * tests. The addresses are documentation ranges (2001:db8::/32, 203.0.113.0/24), outside every private range the
 * seed's policies know.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { runNft } from '../../src/extensions/provider-local/machine/nft.js';
import { NETNS_ENV, ip } from '../../src/system/netns.js';
import type { IPFamily } from '../../src/net/cidr.js';
import { waitFor } from './wait.js';

/** A subnet of each documentation range of its own per server, so no state of an earlier one is in the way. */
function addressesOf(id: number): Readonly<Record<IPFamily, { server: string; here: string; prefix: number }>> {
  const block = (id % 63) * 4;
  return {
    IPv6: { server: `2001:db8:e4:${id.toString(16)}::1`, here: `2001:db8:e4:${id.toString(16)}::fe`, prefix: 64 },
    IPv4: { server: `203.0.113.${block + 1}`, here: `203.0.113.${block + 2}`, prefix: 30 },
  };
}
const FORWARDING: Readonly<Record<IPFamily, string>> = {
  IPv6: '/proc/sys/net/ipv6/conf/all/forwarding',
  IPv4: '/proc/sys/net/ipv4/ip_forward',
};
export const PUBLIC_SERVER_PORT = 8080;

export class PublicServer {
  private readonly id = randomBytes(2).readUInt16BE(0);
  readonly netns = `gv6pub-${this.id.toString(16)}`;
  private readonly addresses = addressesOf(this.id);
  private readonly link = `${this.netns}h`;
  private server?: ChildProcess;

  constructor(readonly families: readonly IPFamily[]) {}

  /** The server's address of a family. */
  address(family: IPFamily): string {
    return this.addresses[family].server;
  }

  /** `address port` per family, as tcpConnectScript takes them. */
  targets(): string[] {
    return this.families.map((f) => `${this.addresses[f].server} ${PUBLIC_SERVER_PORT}`);
  }

  async start(): Promise<void> {
    for (const family of this.families) {
      // Only the test's own network namespace is changed; on the host, forwarding must already be on.
      if (readFileSync(FORWARDING[family], 'utf8').trim() !== '1') {
        if (!process.env[NETNS_ENV]) throw new Error(`${FORWARDING[family]} is 0: the public server is not reachable`);
        writeFileSync(FORWARDING[family], '1');
      }
    }
    ip(['netns', 'add', this.netns]);
    ip(['link', 'add', this.link, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', this.netns]);
    ip(['-n', this.netns, 'link', 'set', 'lo', 'up']);
    ip(['-n', this.netns, 'link', 'set', 'eth0', 'up']);
    ip(['link', 'set', this.link, 'up']);
    for (const family of this.families) {
      const a = this.addresses[family];
      const v = family === 'IPv6' ? '-6' : '-4';
      ip([v, 'addr', 'add', `${a.here}/${a.prefix}`, 'dev', this.link, ...(family === 'IPv6' ? ['nodad'] : [])]);
      ip([
        '-n',
        this.netns,
        v,
        'addr',
        'add',
        `${a.server}/${a.prefix}`,
        'dev',
        'eth0',
        ...(family === 'IPv6' ? ['nodad'] : []),
      ]);
      ip(['-n', this.netns, v, 'route', 'add', 'default', 'via', a.here]);
    }
    // Answers every connection with the peer's address, so a test sees what source the server saw. A client that
    // resets its connection (a probe timing out) must not take the server down for the next ones.
    const script = [
      "const net = require('node:net');",
      'net.createServer((s) => { s.on("error", () => {}); s.end(s.remoteAddress + "\\n"); }).listen(' +
        `{ port: ${PUBLIC_SERVER_PORT}, host: '::', ipv6Only: false }, () => console.log('listening'));`,
    ].join('\n');
    const server = spawn('ip', ['netns', 'exec', this.netns, process.execPath, '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    this.server = server;
    let out = '';
    server.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    await waitFor(() => out.includes('listening') || server.exitCode !== null, {
      timeoutMs: 10_000,
      message: 'the public test server to listen',
    });
    if (server.exitCode !== null) throw new Error(`the public test server exited with ${server.exitCode}`);
  }

  /**
   * Records the source address of every connection attempt from now on (its SYN), answered or not: a client whose
   * address has no route back here still shows up in `sources()`.
   */
  async recordSources(): Promise<void> {
    const script = [
      'table inet seen',
      'delete table inet seen',
      'table inet seen {',
      '  set v6 { type ipv6_addr; flags dynamic; }',
      '  set v4 { type ipv4_addr; flags dynamic; }',
      '  chain input {',
      '    type filter hook input priority filter; policy accept;',
      `    meta nfproto ipv6 tcp dport ${PUBLIC_SERVER_PORT} tcp flags syn add @v6 { ip6 saddr }`,
      `    meta nfproto ipv4 tcp dport ${PUBLIC_SERVER_PORT} tcp flags syn add @v4 { ip saddr }`,
      '  }',
      '}',
      '',
    ].join('\n');
    await runNft(script, ['-f', '-'], this.netns);
  }

  /** The sources of the connection attempts of a family seen since `recordSources()`, sorted. */
  async sources(family: IPFamily): Promise<string[]> {
    const out = await runNft('', ['-j', 'list', 'set', 'inet', 'seen', family === 'IPv6' ? 'v6' : 'v4'], this.netns);
    const json = JSON.parse(out) as { nftables: { set?: { elem?: unknown[] } }[] };
    const elements = json.nftables.flatMap((x) => x.set?.elem ?? []);
    return elements
      .map((e) => (typeof e === 'string' ? e : ((e as { elem?: { val?: string } }).elem?.val ?? '')))
      .filter((e) => e !== '')
      .sort();
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGKILL');
      await exited;
    }
    try {
      ip(['link', 'del', this.link]);
    } catch {
      // Gone with the namespace already.
    }
    try {
      ip(['netns', 'del', this.netns]);
    } catch {
      // Never created.
    }
  }
}
