/**
 * Links and network namespaces of the local provider (load-balancer and node networks, one namespace per shoot
 * control plane or machine), named so that their owner can be told from the name: `<prefix><pid>...`. Whatever a
 * process that died without cleaning up left behind is found by that pid and removed by `removeOrphans`.
 *
 * Synchronous like netns.ts: each call takes milliseconds and must also work from exit handlers.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { deleteNetns, ip } from './netns.js';
import { pidAlive } from './process.js';

export { pidAlive };
import { parseCIDR, type IPFamily } from '../net/cidr.js';

/** Prefixes of everything named here; the pid of the owner follows the prefix. */
export const OWNED_PREFIXES = { bridge: 'gv6b', netns: 'gv6-', veth: 'gv6v' } as const;

/** Linux interface names are at most 15 bytes. */
const IFNAMSIZ = 15;

/** A short, stable hex tag of a string, for names with little room. */
export function shortHash(value: string, length = 6): string {
  return createHash('sha256').update(value).digest('hex').slice(0, length);
}

/** `gv6b<pid><tag>`: a bridge owned by this process. */
export function bridgeName(tag: string, pid = process.pid): string {
  return `${OWNED_PREFIXES.bridge}${pid}${tag}`.slice(0, IFNAMSIZ);
}

/** `gv6-<pid>-<kind>-<tag>`: a namespace owned by this process. */
export function netnsName(kind: string, tag: string, pid = process.pid): string {
  return `${OWNED_PREFIXES.netns}${pid}-${kind}-${tag}`;
}

/** The host end of a namespace's veth pair: `gv6v<hash of the namespace name>`. */
export function hostVethName(netns: string): string {
  return `${OWNED_PREFIXES.veth}${shortHash(netns, IFNAMSIZ - OWNED_PREFIXES.veth.length)}`;
}

export function linkExists(name: string): boolean {
  try {
    ip(['link', 'show', 'dev', name]);
    return true;
  } catch {
    return false;
  }
}

export function deleteLink(name: string): void {
  try {
    ip(['link', 'del', 'dev', name]);
  } catch {
    // Gone already.
  }
  if (name.startsWith(OWNED_PREFIXES.bridge) && ownedBridges().length === 0) removeForwardingPastDocker();
}

/** Names of the bridges of this namespace made here (by any run). */
function ownedBridges(): string[] {
  return bridges().filter((name) => name.startsWith(OWNED_PREFIXES.bridge));
}

/** Names of the bridges of this namespace. */
function bridges(): string[] {
  try {
    return ip(['-o', 'link', 'show', 'type', 'bridge'])
      .split('\n')
      .map((line) => /^\d+:\s+([^:@\s]+)/.exec(line)?.[1] ?? '')
      .filter(Boolean);
  } catch {
    // No bridges.
    return [];
  }
}

/**
 * Docker sets the FORWARD policy of a host's IPv4 firewall to DROP, and its br_netfilter passes bridged IPv4 through
 * it too: on a host that runs Docker, IPv4 between a seed's Nodes, and from them to the load balancers, would be
 * dropped. Docker takes exceptions in its DOCKER-USER chain: one rule per direction, for every bridge of ours
 * (`gv6b+`), inserted while any of them exists. Without that chain (no Docker, or no iptables) there is nothing to do.
 */
const DOCKER_USER_CHAIN = 'DOCKER-USER';
const DOCKER_EXCEPTION_COMMENT = 'gardener-ipv6 bridges';

function dockerExceptionRule(direction: '-i' | '-o'): string[] {
  return [
    DOCKER_USER_CHAIN,
    direction,
    `${OWNED_PREFIXES.bridge}+`,
    '-m',
    'comment',
    '--comment',
    DOCKER_EXCEPTION_COMMENT,
    '-j',
    'ACCEPT',
  ];
}

/** `iptables`/`ip6tables` in this namespace or, for tests, in `netns`; true when it exited 0. */
function iptables(tool: 'iptables' | 'ip6tables', args: string[], netns?: string): boolean {
  const [command, argv] = netns ? ['ip', ['netns', 'exec', netns, tool, ...args]] : [tool, args];
  try {
    execFileSync(command as string, argv as string[], { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

/** Inserts the DOCKER-USER exception for our bridges where Docker's chain exists (idempotent). */
export function allowForwardingPastDocker(netns?: string): void {
  for (const tool of ['iptables', 'ip6tables'] as const) {
    if (!iptables(tool, ['-w', '-n', '-L', DOCKER_USER_CHAIN], netns)) continue;
    for (const direction of ['-i', '-o'] as const) {
      const rule = dockerExceptionRule(direction);
      if (!iptables(tool, ['-w', '-C', ...rule], netns)) iptables(tool, ['-w', '-I', ...rule], netns);
    }
  }
}

/** Removes that exception (every copy of it). */
export function removeForwardingPastDocker(netns?: string): void {
  for (const tool of ['iptables', 'ip6tables'] as const) {
    for (const direction of ['-i', '-o'] as const) {
      while (iptables(tool, ['-w', '-D', ...dockerExceptionRule(direction)], netns)) {
        // Once per copy.
      }
    }
  }
}

/** `fd00:ff::1/64` → `{ address: 'fd00:ff::1', prefix: 64, family: 'IPv6' }`. */
export function interfaceAddress(cidr: string): { address: string; prefixLength: number; family: IPFamily } {
  const slash = cidr.lastIndexOf('/');
  const parsed = parseCIDR(cidr);
  if (slash < 0 || parsed === undefined) throw new Error(`${JSON.stringify(cidr)} is not an address with a prefix`);
  return { address: cidr.slice(0, slash), prefixLength: parsed.prefix, family: parsed.family };
}

/**
 * A bridge with the given addresses (`fd00:ff::1/64`), up. An existing bridge of that name is reused, so deploying
 * twice is harmless. `nodad`: an address under duplicate address detection can't be bound for a second or two.
 */
export function ensureBridge(name: string, addresses: readonly string[]): void {
  if (!linkExists(name)) ip(['link', 'add', 'name', name, 'type', 'bridge']);
  for (const cidr of addresses) {
    const family = interfaceAddress(cidr).family;
    ip(['addr', 'replace', cidr, 'dev', name, ...(family === 'IPv6' ? ['nodad'] : [])]);
  }
  ip(['link', 'set', 'dev', name, 'up']);
  allowForwardingPastDocker();
}

export interface NamespaceOptions {
  /** Keep `127.0.0.1` on loopback (IPv4 and dual-stack); IPv6-only namespaces have `::1` alone. */
  readonly ipv4Loopback: boolean;
}

/** A fresh network namespace with loopback up; an existing one of that name is deleted first (a stale leftover). */
export function createNamespace(name: string, opts: NamespaceOptions): void {
  deleteNetns(name);
  ip(['netns', 'add', name]);
  try {
    ip(['-n', name, 'link', 'set', 'lo', 'up']);
    if (!opts.ipv4Loopback) ip(['-n', name, 'addr', 'del', '127.0.0.1/8', 'dev', 'lo']);
  } catch (e) {
    deleteNetns(name);
    throw e;
  }
}

/** The owner pid in a name made here, or undefined for names that aren't ours. */
export function ownerPid(name: string): number | undefined {
  for (const prefix of [OWNED_PREFIXES.bridge, OWNED_PREFIXES.netns]) {
    if (!name.startsWith(prefix)) continue;
    const digits = /^\d+/.exec(name.slice(prefix.length));
    return digits ? Number(digits[0]) : undefined;
  }
  return undefined;
}

/**
 * Deletes the namespaces (with whatever still runs in them) and bridges whose owner process is gone: what a
 * previous run that was killed left behind. Returns what it removed.
 */
export function removeOrphans(): string[] {
  const removed: string[] = [];
  const orphan = (name: string) => {
    const pid = ownerPid(name);
    return pid !== undefined && pid !== process.pid && !pidAlive(pid);
  };
  let namespaces: string[] = [];
  try {
    namespaces = ip(['netns', 'list'])
      .split('\n')
      .map((line) => line.split(' ')[0] ?? '')
      .filter(Boolean);
  } catch {
    // No namespaces at all.
  }
  for (const name of namespaces.filter(orphan)) {
    deleteNetns(name);
    removed.push(name);
  }
  for (const name of bridges().filter(orphan)) {
    deleteLink(name);
    removed.push(name);
  }
  return removed;
}
