/**
 * Each pod's port on its machine's bridge holds the pod to its own addresses, as calico's RPF checks hold a workload
 * to its endpoint's: a pod's frames leave its veth only with its own MAC address, its own IPs as source (IPv6's
 * unspecified and link-local sources for neighbour discovery), ARP only for its own IPv4 address and MAC, neighbour
 * advertisements only for its own IPv6 or a link-local address, and no router advertisement or redirect. NetworkPolicies
 * name pods by their addresses: without this, a pod with NET_ADMIN (privileged, or a machine pod's shoot on a seed
 * Node) could send as another pod, answer neighbour discovery for it and take its replies.
 *
 * One nftables table of the bridge family per machine network namespace: a base chain on the bridge's prerouting
 * hook sends each port's frames to the port's chain through a verdict map keyed by the host end of the pod's veth.
 * Ports are added when the CNI hook announces a pod (network-policy/cni-hook.ts), before its containers start, and
 * removed when its sandbox goes; the table outlives the enforcer like the policies' table. The bridge plugin's own
 * `macspoofchk` checks the MAC address only, hence this.
 */
import { formatCIDR, formatIP, parseCIDR, parseIP, type IP } from '../../../../net/cidr.js';
import { runNft } from '../nft.js';
import { ALLOWED_SOURCE_PREFIXES_ANNOTATION } from '../../machine-contract.js';

/** The table the enforcer keeps in each machine's network namespace. */
export const ANTI_SPOOFING_TABLE = 'gardener-ipv6-anti-spoofing';

/** A pod's port on the bridge, as the bridge plugin's result says: the host end of its veth, the pod's MAC address. */
export interface BridgePort {
  readonly hostInterface: string;
  readonly mac: string;
}

/** A pod's port with the addresses it holds the pod to. */
export interface PodPort extends BridgePort {
  readonly ips: readonly string[];
  /** Further sources the pod may send from (its ALLOWED_SOURCE_PREFIXES_ANNOTATION). */
  readonly allowedSourcePrefixes?: readonly string[];
}

/** The CIDRs of a pod's ALLOWED_SOURCE_PREFIXES_ANNOTATION, canonical; none when it has none or a bad one. */
export function allowedSourcePrefixes(annotations: Readonly<Record<string, string>> | undefined): string[] {
  const text = annotations?.[ALLOWED_SOURCE_PREFIXES_ANNOTATION];
  if (text === undefined) return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(value)) return [];
  return value.flatMap((v) => {
    const cidr = parseCIDR(v);
    return cidr === undefined ? [] : [formatCIDR(cidr)];
  });
}

const INTERFACE_NAME = /^[A-Za-z0-9_.-]{1,15}$/;
const MAC = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/;

/** Why `port` can't be one (undefined when it can). */
export function invalidPodPort(port: { hostInterface?: unknown; mac?: unknown }): string | undefined {
  if (typeof port.hostInterface !== 'string' || !INTERFACE_NAME.test(port.hostInterface))
    return 'port.hostInterface must be an interface name';
  if (typeof port.mac !== 'string' || !MAC.test(port.mac.toLowerCase()))
    return 'port.mac must be a MAC address (six hexadecimal pairs)';
  return undefined;
}

const chainOf = (hostInterface: string) => `port-${hostInterface}`;

/** The table with its dispatch, created if missing; its ports stay. One transaction. */
export function antiSpoofingBaseScript(): string {
  return [
    `add table bridge ${ANTI_SPOOFING_TABLE}`,
    `add map bridge ${ANTI_SPOOFING_TABLE} ports { type ifname : verdict; }`,
    `add chain bridge ${ANTI_SPOOFING_TABLE} prerouting { type filter hook prerouting priority -300; policy accept; }`,
    `flush chain bridge ${ANTI_SPOOFING_TABLE} prerouting`,
    `add rule bridge ${ANTI_SPOOFING_TABLE} prerouting iifname vmap @ports`,
    '',
  ].join('\n');
}

/** An IPv6 address as the 128-bit number nft compares a raw payload field with. */
const hex128 = (ip: IP) => `0x${ip.value.toString(16).padStart(32, '0')}`;

/** The port's chain and map element (replacing a chain of the same name). One transaction. */
export function antiSpoofingPortScript(port: PodPort): string {
  const chain = chainOf(port.hostInterface);
  const mac = port.mac.toLowerCase();
  const ips = port.ips.map(parseIP).filter((ip): ip is IP => ip !== undefined);
  const v4 = ips.filter((ip) => ip.family === 'IPv4');
  const v6 = ips.filter((ip) => ip.family === 'IPv6');
  const extra = (port.allowedSourcePrefixes ?? []).map((c) => parseCIDR(c)).filter((c) => c !== undefined);
  const extraOf = (family: 'IPv4' | 'IPv6') => extra.filter((c) => c.family === family).map(formatCIDR);
  const set = (items: string[]) => (items.length === 1 ? items[0]! : `{ ${items.join(', ')} }`);
  const rules = [
    `ether saddr != ${mac} drop`,
    ...(v4.length > 0
      ? [
          `arp saddr ether != ${mac} drop`,
          `arp saddr ip != ${set(v4.map(formatIP))} drop`,
          `ip saddr != ${set([...v4.map(formatIP), ...extraOf('IPv4')])} drop`,
        ]
      : ['ether type { arp, ip } drop']),
    ...(v6.length > 0
      ? [
          // `::` while duplicate address detection runs; link-local for neighbour discovery.
          `ip6 saddr != ${set(['::', 'fe80::/10', ...v6.map(formatIP), ...extraOf('IPv6')])} drop`,
          // The target of a neighbour advertisement (bytes 8-23 of the ICMPv6 message): its own, or link-local.
          `icmpv6 type nd-neighbor-advert @th,64,128 != ${set(v6.map(hex128))} @th,64,16 != 0xfe80 drop`,
          'icmpv6 type { nd-router-advert, nd-redirect } drop',
        ]
      : ['ether type ip6 drop']),
  ];
  return [
    `add chain bridge ${ANTI_SPOOFING_TABLE} ${chain}`,
    `flush chain bridge ${ANTI_SPOOFING_TABLE} ${chain}`,
    ...rules.map((rule) => `add rule bridge ${ANTI_SPOOFING_TABLE} ${chain} ${rule}`),
    `add element bridge ${ANTI_SPOOFING_TABLE} ports { ${JSON.stringify(port.hostInterface)} : jump ${chain} }`,
    '',
  ].join('\n');
}

/** Removes a port's element and chain. One transaction; fails when the port is not there. */
export function antiSpoofingRemoveScript(hostInterface: string): string {
  const chain = chainOf(hostInterface);
  return [
    `delete element bridge ${ANTI_SPOOFING_TABLE} ports { ${JSON.stringify(hostInterface)} }`,
    `delete chain bridge ${ANTI_SPOOFING_TABLE} ${chain}`,
    '',
  ].join('\n');
}

/** The ports of the table in a network namespace, by `nft -j list map`. */
async function portsIn(netns: string | undefined): Promise<string[]> {
  const out = await runNft('', ['-j', 'list', 'map', 'bridge', ANTI_SPOOFING_TABLE, 'ports'], netns).catch(() => '');
  if (out === '') return [];
  const parsed = JSON.parse(out) as { nftables?: { map?: { elem?: [string, unknown][] } }[] };
  const elements = parsed.nftables?.find((o) => o.map !== undefined)?.map?.elem ?? [];
  return elements.map((e) => e[0]).filter((name): name is string => typeof name === 'string');
}

/** The anti-spoofing table of one network namespace (the caller's when `netns` is unset). */
export class AntiSpoofing {
  private ready: Promise<void> | undefined;

  constructor(private readonly netns?: string) {}

  /** Creates the table and its dispatch if missing (again after a failure). */
  deploy(): Promise<void> {
    this.ready ??= runNft(antiSpoofingBaseScript(), ['-f', '-'], this.netns).then(
      () => {},
      (e: Error) => {
        this.ready = undefined;
        throw e;
      },
    );
    return this.ready;
  }

  /** Puts the port's rules in force; resolves once they are. */
  async add(port: PodPort): Promise<void> {
    await this.deploy();
    await runNft(antiSpoofingPortScript(port), ['-f', '-'], this.netns);
  }

  /** Removes a port's rules; nothing when it has none. */
  async remove(hostInterface: string): Promise<void> {
    if ((await portsIn(this.netns)).includes(hostInterface)) await this.delete(hostInterface);
  }

  /** Removes the ports whose interface is gone (their sandbox went while nobody listened). */
  async collect(existing: (hostInterface: string) => boolean): Promise<string[]> {
    const gone = (await portsIn(this.netns)).filter((name) => !existing(name));
    for (const name of gone) await this.delete(name);
    return gone;
  }

  /** Removes the whole table, if there is one (an uninstall); whether there was. */
  static async removeTable(netns?: string): Promise<boolean> {
    const present = await runNft('', ['list', 'table', 'bridge', ANTI_SPOOFING_TABLE], netns).then(
      () => true,
      () => false,
    );
    if (present) await runNft(`delete table bridge ${ANTI_SPOOFING_TABLE}\n`, ['-f', '-'], netns);
    return present;
  }

  /**
   * Removes a port's element and chain; a port that another removal took meanwhile (a sandbox's teardown and the
   * collection of gone ports) is no failure.
   */
  private async delete(hostInterface: string): Promise<void> {
    try {
      await runNft(antiSpoofingRemoveScript(hostInterface), ['-f', '-'], this.netns);
    } catch (e) {
      if ((await portsIn(this.netns)).includes(hostInterface)) throw e;
    }
  }
}
