/**
 * IPv6-only network namespaces (iproute2's `ip netns`): a fresh namespace whose loopback has `::1` but not
 * `127.0.0.1`, so anything that silently relies on IPv4 fails there instead of passing by accident. Optionally a
 * veth pair with only IPv6 addresses connects it to the namespace we run in.
 *
 * The calls are synchronous: they take milliseconds and must also work from `exit` handlers.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { which } from './process.js';

export const NETNS_ENV = 'GARDENER_IPV6_NETNS';

export function ip(args: string[]): string {
  try {
    return execFileSync(which('ip') ?? 'ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    const error = e as NodeJS.ErrnoException & { stderr?: string };
    if (error.code === 'ENOENT') throw new Error('`ip` (iproute2) is not installed');
    throw new Error(`ip ${args.join(' ')}: ${error.stderr?.trim() || error.message}`);
  }
}

/** Why this process can't create network namespaces, or undefined when it can (root on Linux with iproute2). */
export function netnsUnsupportedReason(): string | undefined {
  if (process.platform !== 'linux') return `network namespaces need Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'creating network namespaces needs root';
  if (which('ip') === undefined) return '`ip` (iproute2) is not installed';
  return undefined;
}

export function randomNetnsName(prefix = 'gipv6'): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

/**
 * Creates a namespace with loopback up and 127.0.0.1 removed, and checks that ::1 is there and no IPv4 address is.
 * Deletes it again if any step fails.
 */
export function createIPv6OnlyNetns(name = randomNetnsName()): string {
  ip(['netns', 'add', name]);
  try {
    ip(['-n', name, 'link', 'set', 'lo', 'up']);
    ip(['-n', name, 'addr', 'del', '127.0.0.1/8', 'dev', 'lo']);
    const v4 = ip(['-n', name, '-4', '-o', 'addr', 'show']).trim();
    if (v4 !== '') throw new Error(`namespace ${name} still has IPv4 addresses: ${v4}`);
    const v6 = ip(['-n', name, '-6', '-o', 'addr', 'show', 'dev', 'lo']);
    if (!/\binet6 ::1\/128\b/.test(v6)) {
      throw new Error(
        `namespace ${name} has no ::1 on loopback (is IPv6 disabled? sysctl net.ipv6.conf.default.disable_ipv6)`,
      );
    }
  } catch (e) {
    deleteNetns(name);
    throw e;
  }
  return name;
}

/** The pids of processes still running in the namespace. */
export function netnsPids(name: string): number[] {
  try {
    return ip(['netns', 'pids', name]).split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * Kills whatever still runs in the namespace and deletes it (which also removes veth pairs with an end inside).
 * Never throws: it runs during cleanup.
 */
export function deleteNetns(name: string): void {
  for (const pid of netnsPids(name)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
  try {
    ip(['netns', 'del', name]);
  } catch {
    // Already deleted.
  }
}

export function netnsExists(name: string): boolean {
  try {
    return ip(['netns', 'list'])
      .split('\n')
      .some((line) => line.split(' ')[0] === name);
  } catch {
    return false;
  }
}

export interface VethPair {
  hostInterface: string;
  nsInterface: string;
  /** Address on our side, without prefix length, e.g. `fd00:7a:1234::1`. */
  hostAddress: string;
  /** Address inside the namespace, e.g. `fd00:7a:1234::2`. */
  nsAddress: string;
  prefixLength: number;
}

/**
 * Connects the namespace to ours with a veth pair carrying only IPv6: a random /64 in fd00:7a::/32 (unique local
 * addresses; random so two environments don't collide). `nodad` skips duplicate address detection, during which
 * the addresses could not be bound yet.
 */
export function addIPv6Veth(netns: string): VethPair {
  // 1..ffff without leading zeros: the addresses print in canonical (RFC 5952) form, fd00:7a:eb0::1.
  const id = ((randomBytes(2).readUInt16BE() % 0xffff) + 1).toString(16);
  const tag = netns.slice(-6);
  const pair: VethPair = {
    hostInterface: `gv6h-${tag}`,
    nsInterface: `gv6n-${tag}`,
    hostAddress: `fd00:7a:${id}::1`,
    nsAddress: `fd00:7a:${id}::2`,
    prefixLength: 64,
  };
  ip(['link', 'add', pair.hostInterface, 'type', 'veth', 'peer', 'name', pair.nsInterface, 'netns', netns]);
  try {
    ip(['addr', 'add', `${pair.hostAddress}/64`, 'dev', pair.hostInterface, 'nodad']);
    ip(['link', 'set', pair.hostInterface, 'up']);
    ip(['-n', netns, 'addr', 'add', `${pair.nsAddress}/64`, 'dev', pair.nsInterface, 'nodad']);
    ip(['-n', netns, 'link', 'set', pair.nsInterface, 'up']);
  } catch (e) {
    deleteVeth(pair);
    throw e;
  }
  return pair;
}

export function deleteVeth(pair: VethPair): void {
  try {
    ip(['link', 'del', pair.hostInterface]);
  } catch {
    // Deleting the namespace removed it already.
  }
}
