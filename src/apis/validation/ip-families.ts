import { duplicate, forbidden, invalid, notSupported, type ErrorList, type FieldPath } from '../field/index.js';
import type { FeatureGates } from '../../featuregate/featuregate.js';
import { IP_FAMILIES, type IPFamily } from '../../net/cidr.js';

export interface IPFamiliesOptions {
  /** Shoot and Seed gate an IPv6 primary family behind IPv6SingleStack; Network does not. */
  readonly gateIPv6SingleStack: boolean;
}

/** What the CIDR checks of a networking section need to know about its families. */
export interface FamilyInfo {
  readonly families: readonly IPFamily[];
  readonly primary: IPFamily;
  readonly singleStack: boolean;
}

export function familyInfo(ipFamilies: readonly string[] | undefined): FamilyInfo {
  const families = (ipFamilies ?? []).filter(isIPFamily);
  return { families, primary: families[0] ?? 'IPv4', singleStack: (ipFamilies ?? []).length <= 1 };
}

export function isIPFamily(value: unknown): value is IPFamily {
  return value === 'IPv4' || value === 'IPv6';
}

export function isIPv6SingleStack(ipFamilies: readonly string[] | undefined): boolean {
  return ipFamilies?.length === 1 && ipFamilies[0] === 'IPv6';
}

/**
 * The ipFamilies rules (docs/api-reference.md, "The ipFamilies rules"). `valid` is false when the CIDR checks of the
 * section must be skipped.
 */
export function validateIPFamilies(
  ipFamilies: readonly string[] | undefined,
  path: FieldPath,
  gates: FeatureGates,
  options: IPFamiliesOptions,
): { errors: ErrorList; valid: boolean } {
  const errors: ErrorList = [];
  const list = ipFamilies ?? [];
  const seen = new Set<string>();
  list.forEach((family, i) => {
    if (!isIPFamily(family)) errors.push(notSupported(path.index(i), family, IP_FAMILIES));
    if (seen.has(family)) errors.push(duplicate(path.index(i), family));
    seen.add(family);
  });
  if (errors.length === 0 && list.length > 1 && !gates.DualStack) {
    errors.push(invalid(path, list, 'dual-stack networking is not supported'));
  }
  if (options.gateIPv6SingleStack && list[0] === 'IPv6' && !gates.IPv6SingleStack) {
    errors.push(invalid(path, list, 'IPv6 single-stack networking is not supported'));
  }
  return { errors, valid: errors.length === 0 };
}

/**
 * IP family changes on update: immutable without DualStack; with it, a single-stack list gains the other family as
 * its second ([IPv4] → [IPv4, IPv6], [IPv6] → [IPv6, IPv4], as Gardener's), and [IPv4, IPv6] may go back to [IPv4].
 */
export function validateIPFamiliesUpdate(
  newFamilies: readonly string[] | undefined,
  oldFamilies: readonly string[] | undefined,
  path: FieldPath,
  gates: FeatureGates,
): ErrorList {
  const next = newFamilies ?? [];
  const prev = oldFamilies ?? [];
  if (sameList(next, prev)) return [];
  if (!gates.DualStack) return [invalid(path, next, 'field is immutable')];
  const key = (l: readonly string[]) => l.join(',');
  const allowed = new Set(['IPv4=>IPv4,IPv6', 'IPv6=>IPv6,IPv4', 'IPv4,IPv6=>IPv4']);
  if (allowed.has(`${key(prev)}=>${key(next)}`)) return [];
  return [
    forbidden(
      path,
      `unsupported IP family update: oldIPFamilies=[${prev.join(' ')}], newIPFamilies=[${next.join(' ')}]`,
    ),
  ];
}

export function sameList(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}
