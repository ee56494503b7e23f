/**
 * Gardener's CIDR validation helpers: parse once, keep the field path with the value, then run family, canonical and
 * overlap checks on the parsed value.
 */
import { invalid, type ErrorList, type FieldError, type FieldPath } from '../field/index.js';
import {
  formatIP,
  invalidCIDRDetail,
  isCanonical,
  mustParseCIDR,
  overlaps,
  parseCIDR,
  type CIDR,
  type IPFamily,
} from '../../net/cidr.js';

/** A CIDR-valued field: where it is, what was written, and what it parsed to (undefined when it didn't). */
export interface CIDRField {
  readonly path: FieldPath;
  readonly value: string;
  readonly cidr: CIDR | undefined;
}

export function cidrField(path: FieldPath, value: string): CIDRField {
  return { path, value, cidr: parseCIDR(value) };
}

export function validateParse(field: CIDRField): ErrorList {
  return field.cidr ? [] : [invalid(field.path, field.value, invalidCIDRDetail(field.value))];
}

export function validateFamily(field: CIDRField, family: IPFamily): ErrorList {
  if (!field.cidr || field.cidr.family === family) return [];
  return [invalid(field.path, formatIP(field.cidr.network), `must be a valid ${family} address`)];
}

export function validateCanonical(field: CIDRField): ErrorList {
  if (!field.cidr || isCanonical(field.cidr)) return [];
  return [invalid(field.path, field.value, 'must be valid canonical CIDR')];
}

/** The error for `later` overlapping `earlier`, on the later field. */
export function overlapError(later: CIDRField, earlier: CIDRField): FieldError {
  return invalid(later.path, later.value, `must not overlap with "${earlier.path.toString()}" ("${earlier.value}")`);
}

/** Checks that the fields are pairwise disjoint, reporting each overlap on the later field. */
export function validateDisjoint(fields: readonly CIDRField[]): ErrorList {
  const errors: ErrorList = [];
  fields.forEach((later, i) => {
    for (const earlier of fields.slice(0, i)) {
      if (later.cidr && earlier.cidr && overlaps(later.cidr, earlier.cidr)) errors.push(overlapError(later, earlier));
    }
  });
  return errors;
}

export function intersects(a: CIDRField | undefined, b: CIDRField | CIDR | undefined): boolean {
  const other = b && 'path' in b ? b.cidr : b;
  return !!a?.cidr && !!other && overlaps(a.cidr, other);
}

/**
 * Ranges no cluster network can use: packets to them never leave a host (loopback, link-local), go to many
 * (multicast, broadcast) or to nobody (unspecified, "this network"). A shoot range overlapping one fails later and
 * far from the cause (a machine's address, a route); admission names it instead.
 */
const SPECIAL_RANGES: readonly { readonly cidr: CIDR; readonly what: string }[] = [
  ['0.0.0.0/8', '"this network" (0.0.0.0/8)'],
  ['127.0.0.0/8', 'loopback (127.0.0.0/8)'],
  ['169.254.0.0/16', 'link-local (169.254.0.0/16)'],
  ['224.0.0.0/4', 'multicast (224.0.0.0/4)'],
  ['255.255.255.255/32', 'broadcast (255.255.255.255/32)'],
  ['::/128', 'unspecified (::/128)'],
  ['::1/128', 'loopback (::1/128)'],
  ['fe80::/10', 'link-local (fe80::/10)'],
  ['ff00::/8', 'multicast (ff00::/8)'],
].map(([cidr, what]) => ({ cidr: mustParseCIDR(cidr!), what: what! }));

/** Refuses a range overlapping a special-purpose one (see SPECIAL_RANGES), naming it. */
export function validateUsable(field: CIDRField): ErrorList {
  if (!field.cidr) return [];
  const special = SPECIAL_RANGES.find((r) => r.cidr.family === field.cidr!.family && overlaps(field.cidr!, r.cidr));
  return special ? [invalid(field.path, field.value, `must not overlap with the ${special.what} range`)] : [];
}

/** Gardener's default VPN ranges, which no shoot or seed network may overlap. */
export const DEFAULT_VPN_RANGES: Readonly<Record<IPFamily, string>> = {
  IPv4: '192.168.123.0/24',
  IPv6: 'fd8f:6d53:b97a:1::/96',
};

const VPN_CIDRS: Readonly<Record<IPFamily, CIDR>> = {
  IPv4: mustParseCIDR(DEFAULT_VPN_RANGES.IPv4),
  IPv6: mustParseCIDR(DEFAULT_VPN_RANGES.IPv6),
};

/** The VPN range of the field's family, when the field overlaps it. */
export function overlappedVPNRange(field: CIDRField): string | undefined {
  if (!field.cidr) return undefined;
  return overlaps(field.cidr, VPN_CIDRS[field.cidr.family]) ? DEFAULT_VPN_RANGES[field.cidr.family] : undefined;
}
