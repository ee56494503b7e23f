/**
 * IP and CIDR primitives with Go's `net.ParseCIDR` semantics, on top of ipaddr.js.
 *
 * ipaddr.js alone is too lenient for an API (`010.0.0.1` parses as octal, `parseCIDR` keeps host bits and mixes
 * families in `match`), so every IP and CIDR in the project goes through this module.
 */
import ipaddr from 'ipaddr.js';

export const IPFamily = { IPv4: 'IPv4', IPv6: 'IPv6' } as const;
export type IPFamily = (typeof IPFamily)[keyof typeof IPFamily];
export const IP_FAMILIES: readonly IPFamily[] = [IPFamily.IPv4, IPFamily.IPv6];

const BITS: Record<IPFamily, number> = { IPv4: 32, IPv6: 128 };
const STRICT_IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const IPV6_CHARS = /^[0-9a-fA-F:.]+$/;
const PREFIX_DIGITS = /^\d{1,4}$/;
const IPV4_MAPPED_PREFIX = 0xffffn << 32n;

/** An IP address, reduced to its family and numeric value. IPv4-mapped IPv6 addresses are IPv4. */
export interface IP {
  readonly family: IPFamily;
  readonly value: bigint;
}

/** A parsed CIDR: the address as written (host bits kept), the prefix length and the network it denotes. */
export interface CIDR {
  readonly input: string;
  readonly family: IPFamily;
  readonly ip: IP;
  readonly prefix: number;
  /** The network address (host bits cleared). */
  readonly network: IP;
}

/** Parses an IP address like Go's `netip.ParseAddr`: no zones, no leading zeros in IPv4 octets. */
export function parseIP(text: unknown): IP | undefined {
  if (typeof text !== 'string' || text.length === 0 || text.length > 64) return undefined;
  if (STRICT_IPV4.test(text)) return { family: 'IPv4', value: bytesToBigInt(ipaddr.IPv4.parse(text).toByteArray()) };
  if (!IPV6_CHARS.test(text) || !text.includes(':')) return undefined;
  const hexText = text.includes('.') ? withEmbeddedIPv4AsHex(text) : text;
  if (hexText === undefined || !ipaddr.IPv6.isValid(hexText)) return undefined;
  const v6 = ipaddr.IPv6.parse(hexText);
  if (v6.isIPv4MappedAddress()) {
    return { family: 'IPv4', value: bytesToBigInt(v6.toIPv4Address().toByteArray()) };
  }
  return { family: 'IPv6', value: bytesToBigInt(v6.toByteArray()) };
}

/**
 * Parsed CIDRs by their text. Admission parses the same few for every review (a seed's networks and shoot defaults,
 * the VPN ranges, the shoot's own), and an IPv6 parse costs microseconds. Bounded (cleared when full); the CIDRs
 * are frozen, so sharing them is safe. Longer texts are never CIDRs and are not kept.
 */
const parsedCIDRs = new Map<string, CIDR | null>();
const PARSED_CIDRS_MAX = 4096;
const CIDR_TEXT_MAX = 72;

/** Parses `address/prefix` like Go's `net.ParseCIDR`. Host bits may be set. Returns undefined when it isn't one. */
export function parseCIDR(text: unknown): CIDR | undefined {
  if (typeof text !== 'string') return undefined;
  if (text.length > CIDR_TEXT_MAX) return parseCIDRText(text);
  const known = parsedCIDRs.get(text);
  if (known !== undefined) return known ?? undefined;
  const cidr = parseCIDRText(text);
  if (parsedCIDRs.size >= PARSED_CIDRS_MAX) parsedCIDRs.clear();
  parsedCIDRs.set(text, cidr === undefined ? null : cidr);
  return cidr;
}

function parseCIDRText(text: string): CIDR | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const addressText = text.slice(0, slash);
  const prefixText = text.slice(slash + 1);
  if (!PREFIX_DIGITS.test(prefixText)) return undefined;
  let ip = parseIP(addressText);
  if (ip === undefined) return undefined;
  let prefix = Number(prefixText);
  const writtenAsIPv6 = addressText.includes(':');
  if (prefix > (writtenAsIPv6 ? 128 : 32)) return undefined;
  // An IPv4-mapped IPv6 CIDR is an IPv4 network; its mask is the low 32 bits of the IPv6 mask, as in Go. A mask
  // shorter than /96 cuts into the ::ffff: prefix, and Go's network address is then an IPv6 one.
  if (writtenAsIPv6 && ip.family === 'IPv4') {
    if (prefix >= 96) prefix -= 96;
    else ip = { family: 'IPv6', value: IPV4_MAPPED_PREFIX | ip.value };
  }
  const network = Object.freeze({ family: ip.family, value: maskValue(ip, prefix) });
  return Object.freeze({ input: text, family: ip.family, ip: Object.freeze(ip), prefix, network });
}

/** The error detail Go's `net.ParseCIDR` failure turns into in Gardener's validation. */
export function invalidCIDRDetail(text: unknown): string {
  return `invalid CIDR address: ${typeof text === 'string' ? text : String(text)}`;
}

/** RFC 5952 text of an address (IPv4 dotted quad, IPv6 lower-case and compressed). */
export function formatIP(ip: IP): string {
  const bytes = bigIntToBytes(ip.value, BITS[ip.family] / 8);
  return ipaddr.fromByteArray(bytes).toString();
}

/** Canonical `network/prefix` text of a CIDR. */
export function formatCIDR(cidr: CIDR): string {
  return `${formatIP(cidr.network)}/${cidr.prefix}`;
}

/** Canonical text of an address given as text, or undefined when it isn't an address. */
export function canonicalIP(text: string): string | undefined {
  const ip = parseIP(text);
  return ip === undefined ? undefined : formatIP(ip);
}

/** True when the CIDR is written with its network address (no host bits), as Gardener's canonical check wants. */
export function isCanonical(cidr: CIDR): boolean {
  return cidr.ip.value === cidr.network.value;
}

export function contains(cidr: CIDR, ip: IP): boolean {
  return cidr.family === ip.family && maskValue(ip, cidr.prefix) === cidr.network.value;
}

/**
 * Whether CIDRs overlap, by pair: admission compares the same few CIDRs (the shoot's, its seed's, the VPN and
 * load-balancer ranges) at every review, and each comparison allocates BigInts. Keyed by the CIDR objects, which
 * {@link parseCIDR} hands out once per text (frozen); bounded per CIDR (cleared when full).
 */
const overlapsByPair = new WeakMap<CIDR, Map<CIDR, boolean>>();
const OVERLAPS_PER_CIDR_MAX = 256;

/** Two CIDRs overlap when either contains the other's network address; different families never overlap. */
export function overlaps(a: CIDR, b: CIDR): boolean {
  if (a.family !== b.family) return false;
  let known = overlapsByPair.get(a);
  const cached = known?.get(b);
  if (cached !== undefined) return cached;
  const result = contains(a, b.network) || contains(b, a.network);
  if (known === undefined) overlapsByPair.set(a, (known = new Map()));
  else if (known.size >= OVERLAPS_PER_CIDR_MAX) known.clear();
  known.set(b, result);
  return result;
}

/** True when `inner` lies entirely inside `outer`. */
export function containsCIDR(outer: CIDR, inner: CIDR): boolean {
  return outer.family === inner.family && outer.prefix <= inner.prefix && contains(outer, inner.network);
}

/** Number of addresses in the CIDR. */
export function addressCount(cidr: CIDR): bigint {
  return 1n << BigInt(BITS[cidr.family] - cidr.prefix);
}

export function familyBits(family: IPFamily): number {
  return BITS[family];
}

/** The n-th address of the CIDR's network (0 is the network address), or undefined when it lies outside. */
export function nthAddress(cidr: CIDR, n: bigint | number): IP | undefined {
  const offset = BigInt(n);
  if (offset < 0n || offset >= addressCount(cidr)) return undefined;
  return { family: cidr.family, value: cidr.network.value + offset };
}

/** Parses a CIDR that is known to be valid (constants, tests); throws otherwise. */
export function mustParseCIDR(text: string): CIDR {
  const cidr = parseCIDR(text);
  if (cidr === undefined) throw new Error(`invalid CIDR constant ${text}`);
  return cidr;
}

/**
 * `x:…:a.b.c.d` with the dotted quad written as two hex groups, or undefined when the quad isn't strict. ipaddr.js
 * reads `::a.b.c.d` as IPv4-mapped; Go (and RFC 4291) read it as the IPv6 address `::a0b:c0d`.
 */
function withEmbeddedIPv4AsHex(text: string): string | undefined {
  const colon = text.lastIndexOf(':');
  const quad = text.slice(colon + 1);
  if (!STRICT_IPV4.test(quad)) return undefined;
  const [a, b, c, d] = quad.split('.').map(Number) as [number, number, number, number];
  return `${text.slice(0, colon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/** `BigInt(n)` for every count of host bits, made once. */
const HOST_BITS: readonly bigint[] = Array.from({ length: 129 }, (_, n) => BigInt(n));

function maskValue(ip: IP, prefix: number): bigint {
  const hostBits = HOST_BITS[BITS[ip.family] - prefix] ?? BigInt(BITS[ip.family] - prefix);
  return (ip.value >> hostBits) << hostBits;
}

function bytesToBigInt(bytes: readonly number[]): bigint {
  return bytes.reduce((acc, byte) => (acc << 8n) | BigInt(byte), 0n);
}

function bigIntToBytes(value: bigint, length: number): number[] {
  const bytes = new Array<number>(length);
  for (let i = length - 1; i >= 0; i--) {
    bytes[i] = Number(value & 0xffn);
    value >>= 8n;
  }
  return bytes;
}

/** The first address of the service range: the `kubernetes` service's ClusterIP, a SAN of the serving cert. */
export function firstServiceIP(cidr: string): string {
  const [address, prefixLength] = ipaddr.parseCIDR(cidr);
  // parseCIDR keeps host bits (`fd00::5/112`): clear them to get the network address, then add one.
  const bytes = address.toByteArray().map((byte, i) => {
    const bits = Math.min(8, Math.max(0, prefixLength - i * 8));
    return byte & ((0xff << (8 - bits)) & 0xff);
  });
  for (let i = bytes.length - 1; i >= 0; i--) {
    bytes[i] = (bytes[i]! + 1) & 0xff;
    if (bytes[i] !== 0) break;
  }
  return ipaddr.fromByteArray(bytes).toString();
}
