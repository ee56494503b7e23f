/**
 * The calico providerConfig of a Network (`calico.networking.extensions.gardener.cloud/v1alpha1`, kind
 * `NetworkConfig`): its schema, decoding into field errors, defaulting and validation (calico-ipv6.md).
 *
 * The zod schema checks the shape (unknown fields and wrong types are errors); the rules that depend on the Network
 * (its IP families and pod ranges) are plain functions with field paths, as the other validations of the project.
 */
import { z } from 'zod';
import type { Network } from '../../../apis/extensions/v1alpha1/network.js';
import {
  FieldPath,
  forbidden,
  invalid,
  notSupported,
  type ErrorList,
  type FieldError,
} from '../../../apis/field/index.js';
import { isIPv6SingleStack } from '../../../apis/validation/ip-families.js';
import { containsCIDR, mustParseCIDR, parseCIDR, parseIP, type IPFamily } from '../../../net/cidr.js';

export const GROUP = 'calico.networking.extensions.gardener.cloud';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'NetworkConfig';

export const Backend = { Bird: 'bird', VXLAN: 'vxlan', None: 'none' } as const;
export type Backend = (typeof Backend)[keyof typeof Backend];

export const PoolType = { IPIP: 'ipip', VXLAN: 'vxlan' } as const;
export type PoolType = (typeof PoolType)[keyof typeof PoolType];

/** Encapsulation mode of a pool, as calico spells it in `ipipMode`/`vxlanMode`. */
export const PoolMode = { Always: 'Always', Never: 'Never', CrossSubnet: 'CrossSubnet' } as const;
export type PoolMode = (typeof PoolMode)[keyof typeof PoolMode];

export const IPAMType = { Calico: 'calico-ipam', HostLocal: 'host-local' } as const;
export type IPAMType = (typeof IPAMType)[keyof typeof IPAMType];

const IPV4_POOLS = [PoolType.IPIP, PoolType.VXLAN] as const;
// Calico has no IP-in-IP for IPv6: VXLAN is its only IPv6 encapsulation.
const IPV6_POOLS = [PoolType.VXLAN] as const;
const IPV4_MODES = [PoolMode.Always, PoolMode.Never, PoolMode.CrossSubnet] as const;
const IPV6_MODES = [PoolMode.Never, PoolMode.Always] as const;

export const NetworkConfigSchema = z.strictObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  backend: z.enum([Backend.Bird, Backend.VXLAN, Backend.None]).optional(),
  ipv4: z
    .strictObject({
      pool: z.enum(IPV4_POOLS).optional(),
      mode: z.enum(IPV4_MODES).optional(),
      autoDetectionMethod: z.string().optional(),
    })
    .optional(),
  ipv6: z
    .strictObject({
      pool: z.enum(IPV6_POOLS).optional(),
      mode: z.enum(IPV6_MODES).optional(),
      autoDetectionMethod: z.string().optional(),
      sourceNATEnabled: z.boolean().optional(),
    })
    .optional(),
  ipam: z.strictObject({ type: z.enum([IPAMType.Calico, IPAMType.HostLocal]).optional() }).optional(),
});
/** The providerConfig as written: every field optional. */
export type NetworkConfig = z.infer<typeof NetworkConfigSchema>;

/** The providerConfig with every default applied ({@link defaultNetworkConfig}). */
export interface ResolvedNetworkConfig {
  readonly backend: Backend;
  readonly ipv4: { readonly pool: PoolType; readonly mode: PoolMode; readonly autoDetectionMethod?: string };
  readonly ipv6: {
    readonly pool: 'vxlan';
    readonly mode: 'Never' | 'Always';
    readonly autoDetectionMethod?: string;
    readonly sourceNATEnabled: boolean;
  };
  readonly ipam: { readonly type: IPAMType };
}

export const PROVIDER_CONFIG_PATH = FieldPath.root('spec', 'providerConfig');

/** fc00::/7: unique local addresses, which are not routed on the internet and so need source NAT to leave. */
export const IPV6_ULA = mustParseCIDR('fc00::/7');

/**
 * Decodes and validates a Network's providerConfig. Absent (`undefined` or `null`) is valid and decodes to `{}`.
 * `config` is set exactly when `errors` is empty. Every error is reported, with its path under `path`.
 */
export function decodeNetworkConfig(
  raw: unknown,
  network: Network,
  path: FieldPath = PROVIDER_CONFIG_PATH,
): { config?: NetworkConfig; errors: ErrorList } {
  if (raw === undefined || raw === null) return { config: {}, errors: [] };
  const errors: ErrorList = [];
  const parsed = NetworkConfigSchema.safeParse(raw);
  if (!parsed.success) errors.push(...parsed.error.issues.flatMap((issue) => issueErrors(issue, raw, path)));
  if (isPlainObject(raw)) errors.push(...validateSemantics(raw, network, path));
  return errors.length === 0 && parsed.success ? { config: parsed.data, errors } : { errors };
}

/** The field errors of a Network's providerConfig (calico-ipv6.md); empty when it is valid or absent. */
export function validateNetworkConfig(
  raw: unknown,
  network: Network,
  path: FieldPath = PROVIDER_CONFIG_PATH,
): ErrorList {
  return decodeNetworkConfig(raw, network, path).errors;
}

/**
 * The providerConfig with its defaults: backend `bird`, IPv4 pool `ipip` (`vxlan` when the backend is not `bird`,
 * since IP-in-IP routes come from BGP) in mode `Always`, IPv6 pool `vxlan` in mode `Never`, IPAM `calico-ipam`, and
 * IPv6 source NAT on exactly when `ipv6PodCIDR` lies in fc00::/7. Idempotent.
 */
export function defaultNetworkConfig(
  config: NetworkConfig | ResolvedNetworkConfig | undefined,
  ipv6PodCIDR?: string,
): ResolvedNetworkConfig {
  const backend = config?.backend ?? Backend.Bird;
  const ipv4 = config?.ipv4;
  const ipv6 = config?.ipv6;
  const pod = ipv6PodCIDR === undefined ? undefined : parseCIDR(ipv6PodCIDR);
  return {
    backend,
    ipv4: {
      pool: ipv4?.pool ?? (backend === Backend.Bird ? PoolType.IPIP : PoolType.VXLAN),
      mode: ipv4?.mode ?? PoolMode.Always,
      ...(ipv4?.autoDetectionMethod !== undefined ? { autoDetectionMethod: ipv4.autoDetectionMethod } : {}),
    },
    ipv6: {
      pool: ipv6?.pool ?? PoolType.VXLAN,
      mode: ipv6?.mode ?? PoolMode.Never,
      ...(ipv6?.autoDetectionMethod !== undefined ? { autoDetectionMethod: ipv6.autoDetectionMethod } : {}),
      sourceNATEnabled: ipv6?.sourceNATEnabled ?? (pod !== undefined && containsCIDR(IPV6_ULA, pod)),
    },
    ipam: { type: config?.ipam?.type ?? IPAMType.Calico },
  };
}

/** The rules beyond the shape; they read the raw object defensively, so they run even when its shape is wrong. */
function validateSemantics(raw: Record<string, unknown>, network: Network, path: FieldPath): ErrorList {
  const errors: ErrorList = [];
  if (typeof raw.apiVersion === 'string' && raw.apiVersion !== API_VERSION) {
    errors.push(notSupported(path.child('apiVersion'), raw.apiVersion, [API_VERSION]));
  }
  if (typeof raw.kind === 'string' && raw.kind !== KIND) {
    errors.push(notSupported(path.child('kind'), raw.kind, [KIND]));
  }
  const families = familiesOf(network);
  // An IPv6 single-stack Network can never become dual-stack (only IPv4 ⇄ [IPv4, IPv6] migrations exist), so IPv4
  // settings on it are a mistake. IPv6 settings on an IPv4 Network are kept for a later migration to dual-stack.
  if (raw.ipv4 !== undefined && isIPv6SingleStack(network.spec.ipFamilies)) {
    errors.push(forbidden(path.child('ipv4'), 'IPv4 settings are not allowed on an IPv6 single-stack network'));
  }
  for (const [key, family] of [
    ['ipv4', 'IPv4'],
    ['ipv6', 'IPv6'],
  ] as const) {
    const section = raw[key];
    if (!isPlainObject(section) || typeof section.autoDetectionMethod !== 'string') continue;
    const error = validateAutoDetectionMethod(
      section.autoDetectionMethod,
      family,
      path.child(key, 'autoDetectionMethod'),
    );
    if (error) errors.push(error);
  }
  const backend = raw.backend ?? Backend.Bird;
  const ipv4 = isPlainObject(raw.ipv4) ? raw.ipv4 : {};
  if (
    families.includes('IPv4') &&
    (backend === Backend.VXLAN || backend === Backend.None) &&
    ipv4.pool === PoolType.IPIP &&
    (ipv4.mode ?? PoolMode.Always) !== PoolMode.Never
  ) {
    errors.push(
      invalid(
        path.child('ipv4', 'pool'),
        ipv4.pool,
        `IP-in-IP needs the "bird" backend (BGP), not "${backend}": use pool "vxlan" or mode "Never"`,
      ),
    );
  }
  return errors;
}

const METHODS_WITHOUT_ARGUMENT = ['first-found', 'kubernetes-internal-ip'];
const METHODS_WITH_ARGUMENT = ['can-reach', 'interface', 'skip-interface', 'cidr'];
// Printable ASCII without spaces: what interface names, regexes, host names and CIDR lists need.
const ARGUMENT = /^[\x21-\x7e]+$/;

/**
 * calico's IP autodetection methods: `first-found`, `kubernetes-internal-ip`, `can-reach=<ip or host>`,
 * `interface=<regex>`, `skip-interface=<regex>`, `cidr=<cidr>[,<cidr>…]`. Addresses must be of the method's family.
 */
function validateAutoDetectionMethod(method: string, family: IPFamily, path: FieldPath): FieldError | undefined {
  const supported = `must be one of ${[...METHODS_WITHOUT_ARGUMENT, ...METHODS_WITH_ARGUMENT.map((m) => `${m}=<value>`)].join(', ')}`;
  if (METHODS_WITHOUT_ARGUMENT.includes(method)) return undefined;
  const eq = method.indexOf('=');
  const name = eq < 0 ? method : method.slice(0, eq);
  const argument = eq < 0 ? '' : method.slice(eq + 1);
  if (!METHODS_WITH_ARGUMENT.includes(name) || !ARGUMENT.test(argument)) return invalid(path, method, supported);
  if (name === 'cidr') {
    for (const text of argument.split(',')) {
      const cidr = parseCIDR(text);
      if (cidr === undefined) return invalid(path, method, `"${text}" is not a CIDR`);
      if (cidr.family !== family) return invalid(path, method, `"${text}" is not an ${family} CIDR`);
    }
  }
  if (name === 'can-reach') {
    const ip = parseIP(argument);
    if (ip !== undefined && ip.family !== family)
      return invalid(path, method, `"${argument}" is not an ${family} address`);
  }
  return undefined;
}

/** One field error per zod issue (per unknown key for `unrecognized_keys`). */
function issueErrors(issue: z.core.$ZodIssue, raw: unknown, root: FieldPath): ErrorList {
  const path = issue.path.reduce<FieldPath>(
    (p, segment) => (typeof segment === 'number' ? p.index(segment) : p.child(String(segment))),
    root,
  );
  const value = valueAt(raw, issue.path);
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((key) => forbidden(path.child(key), `unknown field "${key}"`));
    case 'invalid_value':
      return [notSupported(path, value, issue.values.map(String))];
    case 'invalid_type':
      return [invalid(path, value, `must be of type ${issue.expected}`)];
    default:
      return [invalid(path, value, issue.message)];
  }
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let value = raw;
  for (const segment of path) {
    if (typeof value !== 'object' || value === null || !Object.prototype.hasOwnProperty.call(value, segment)) {
      return undefined;
    }
    value = (value as Record<PropertyKey, unknown>)[segment];
  }
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The Network's IP families; none means IPv4, Gardener's default. */
export function familiesOf(network: Network): string[] {
  const families = network.spec.ipFamilies ?? [];
  return families.length === 0 ? ['IPv4'] : [...families];
}
