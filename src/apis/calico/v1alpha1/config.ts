/**
 * The calico providerConfig (`calico.networking.extensions.gardener.cloud/v1alpha1`, kind `NetworkConfig`) as
 * gardener-extension-networking-calico has it: its schema, strict decoding into field errors, and the validation of
 * docs/calico.md section 2. {@link validateNetworkConfig} is the one verdict: the Shoot admission (`validate`, the
 * webhook, `render`) and the extension all call it, with the path of the providerConfig in their object.
 *
 * The zod schema checks the shape (unknown fields and wrong types are errors); enumerations and the rules that
 * depend on the IP families are plain functions with field paths and networking-calico's messages.
 *
 * Kept as one file (over 400 lines): one type, its schema, decoding and validation side by side, as networking-calico's
 * `apis` have them.
 */
import { z } from 'zod';
import {
  FieldPath,
  forbidden,
  invalid,
  notSupported,
  required,
  type ErrorList,
  type FieldError,
} from '../../field/index.js';
import { dns1123SubdomainErrors } from '../../validation/dns-name.js';
import { issueFieldPath, unknownFieldErrors, valueAt } from '../../meta/zod-issues.js';
import { QUANTITY_DETAIL, quantitySign } from '../../validation/quantity.js';
import { parseCIDR, parseIP } from '../../../net/cidr.js';

/** The networking type (`spec.networking.type`, a Network's `spec.type`) this providerConfig belongs to. */
export const CALICO_TYPE = 'calico';

export const GROUP = 'calico.networking.extensions.gardener.cloud';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'NetworkConfig';

export const Backend = { Bird: 'bird', None: 'none', VXLAN: 'vxlan' } as const;
export type Backend = (typeof Backend)[keyof typeof Backend];

export const PoolType = { IPIP: 'ipip', VXLAN: 'vxlan' } as const;
export type PoolType = (typeof PoolType)[keyof typeof PoolType];

/** Encapsulation mode of a pool, as calico spells it in `ipipMode`/`vxlanMode` and the pool env vars. */
export const PoolMode = { Always: 'Always', Never: 'Never', CrossSubnet: 'CrossSubnet', Off: 'Off' } as const;
export type PoolMode = (typeof PoolMode)[keyof typeof PoolMode];

export const IPAMType = { Calico: 'calico-ipam', HostLocal: 'host-local' } as const;
export type IPAMType = (typeof IPAMType)[keyof typeof IPAMType];

export const AutoscalingMode = { ClusterProportional: 'cluster-proportional', VPA: 'vpa', Static: 'static' } as const;
export type AutoscalingMode = (typeof AutoscalingMode)[keyof typeof AutoscalingMode];

export const ServiceLoopPrevention = { Disabled: 'Disabled', Drop: 'Drop', Reject: 'Reject' } as const;
export type ServiceLoopPrevention = (typeof ServiceLoopPrevention)[keyof typeof ServiceLoopPrevention];

/** `ipam.cidr` may name the node's pod range instead of a CIDR, in any letter case. */
export const USE_POD_CIDR = 'usePodCIDR';

const BACKENDS: readonly string[] = Object.values(Backend);
const POOLS: readonly string[] = Object.values(PoolType);
const POOL_MODES: readonly string[] = Object.values(PoolMode);
const VXLAN_POOL_MODES: readonly string[] = [PoolMode.Always, PoolMode.Never];
/** What renders for IPv6: calico has no IP-in-IP for IPv6, and `Off` is not a vxlanMode. */
const IPV6_RENDERED_POOLS: readonly string[] = [PoolType.VXLAN];
const IPV6_RENDERED_MODES: readonly string[] = [PoolMode.Always, PoolMode.Never, PoolMode.CrossSubnet];
const IPAM_TYPES: readonly string[] = [IPAMType.Calico, IPAMType.HostLocal];
const AUTOSCALING_MODES: readonly string[] = Object.values(AutoscalingMode);
const SERVICE_LOOP_PREVENTIONS: readonly string[] = Object.values(ServiceLoopPrevention);

const enabled = () => z.strictObject({ enabled: z.boolean().optional() });
/** A Kubernetes ResourceList: quantities by resource name, as strings or numbers. */
const ResourceListSchema = z.record(z.string(), z.union([z.string(), z.number()]));

export const NetworkConfigSchema = z.strictObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  backend: z.string().optional(),
  ipam: z.strictObject({ type: z.string(), cidr: z.string().optional() }).optional(),
  ipv4: z
    .strictObject({
      pool: z.string().optional(),
      mode: z.string().optional(),
      autoDetectionMethod: z.string().optional(),
    })
    .optional(),
  ipv6: z
    .strictObject({
      pool: z.string().optional(),
      mode: z.string().optional(),
      autoDetectionMethod: z.string().optional(),
      sourceNATEnabled: z.boolean().optional(),
    })
    .optional(),
  typha: enabled().optional(),
  // A string in networking-calico's API; its user documentation writes a number (`vethMTU: 1440`), so both decode.
  vethMTU: z.union([z.string(), z.number()]).optional(),
  ebpfDataplane: enabled().optional(),
  overlay: z.strictObject({ enabled: z.boolean().optional(), createPodRoutes: z.boolean().optional() }).optional(),
  snatToUpstreamDNS: enabled().optional(),
  autoScaling: z
    .strictObject({
      mode: z.string().optional(),
      resources: z
        .strictObject({ node: ResourceListSchema.optional(), typha: ResourceListSchema.optional() })
        .optional(),
    })
    .optional(),
  vxlan: enabled().optional(),
  ipip: z.string().optional(),
  ipAutodetectionMethod: z.string().optional(),
  wireguardEncryption: z.boolean().optional(),
  birdExporter: enabled().optional(),
  multus: z.strictObject({ enabled: z.boolean().optional(), installCNIPlugins: z.boolean().optional() }).optional(),
  serviceLoopPrevention: z.string().optional(),
});
/** The providerConfig as written: every field optional, no defaults applied. */
export type NetworkConfig = z.infer<typeof NetworkConfigSchema>;

/** Where the Network keeps its providerConfig. */
export const NETWORK_PROVIDER_CONFIG_PATH = FieldPath.root('spec', 'providerConfig');
/** Where the Shoot keeps it. */
export const SHOOT_PROVIDER_CONFIG_PATH = FieldPath.root('spec', 'networking', 'providerConfig');

export interface DecodedNetworkConfig {
  /** Set exactly when `errors` is empty; `{}` for an absent providerConfig. */
  readonly config?: NetworkConfig;
  readonly errors: ErrorList;
}

/**
 * Decodes and validates a providerConfig for a network of `ipFamilies` (none means IPv4). Absent (`undefined` or
 * `null`) is valid. Every error is reported, with its path under `path`. This is the one validation of the
 * providerConfig: everything that would stop the values from being computed is a field error here.
 */
export function decodeNetworkConfig(
  raw: unknown,
  ipFamilies: readonly string[] | undefined,
  path: FieldPath = NETWORK_PROVIDER_CONFIG_PATH,
): DecodedNetworkConfig {
  if (raw === undefined || raw === null) return { config: {}, errors: [] };
  const errors: ErrorList = [];
  const parsed = NetworkConfigSchema.safeParse(raw);
  if (!parsed.success) errors.push(...parsed.error.issues.flatMap((issue) => issueErrors(issue, raw, path)));
  if (isPlainObject(raw)) errors.push(...validateSemantics(raw, familiesOrIPv4(ipFamilies), path));
  return errors.length === 0 && parsed.success ? { config: parsed.data, errors } : { errors };
}

/** The field errors of a providerConfig (docs/calico.md section 2); empty when it is valid or absent. */
export function validateNetworkConfig(
  raw: unknown,
  ipFamilies: readonly string[] | undefined,
  path: FieldPath = NETWORK_PROVIDER_CONFIG_PATH,
): ErrorList {
  return decodeNetworkConfig(raw, ipFamilies, path).errors;
}

/** The families of a network; none means IPv4, Gardener's default. */
export function familiesOrIPv4(ipFamilies: readonly string[] | undefined): string[] {
  return ipFamilies === undefined || ipFamilies.length === 0 ? ['IPv4'] : [...ipFamilies];
}

/** `"a", "b"` as networking-calico lists supported values: `["a", "b"]`. */
const listed = (values: readonly string[]) => `[${values.map((v) => JSON.stringify(v)).join(', ')}]`;

function unsupported(path: FieldPath, value: string, what: string, values: readonly string[]): FieldError {
  return invalid(
    path,
    value,
    `unsupported value ${JSON.stringify(value)} for ${what}, supported values are ${listed(values)}`,
  );
}

/**
 * The rules beyond the shape. They read the raw object defensively (a value of the wrong type was reported by the
 * schema and is skipped here), so they run even when the shape is wrong and every error is reported at once.
 */
function validateSemantics(raw: Record<string, unknown>, families: readonly string[], path: FieldPath): ErrorList {
  const errors: ErrorList = [];
  const str = (value: unknown): value is string => typeof value === 'string';
  const hasIPv4 = families.includes('IPv4');
  const hasIPv6 = families.includes('IPv6');

  if (str(raw.apiVersion) && raw.apiVersion !== API_VERSION) {
    errors.push(notSupported(path.child('apiVersion'), raw.apiVersion, [API_VERSION]));
  }
  if (str(raw.kind) && raw.kind !== KIND) errors.push(notSupported(path.child('kind'), raw.kind, [KIND]));

  if (str(raw.backend) && !BACKENDS.includes(raw.backend)) {
    errors.push(unsupported(path.child('backend'), raw.backend, 'backend', BACKENDS));
  }

  const ipam = isPlainObject(raw.ipam) ? raw.ipam : undefined;
  if (ipam) {
    const typePath = path.child('ipam', 'type');
    if (str(ipam.type) && ipam.type !== '' && !IPAM_TYPES.includes(ipam.type)) {
      errors.push(unsupported(typePath, ipam.type, 'type', IPAM_TYPES));
    }
    if (ipam.type === IPAMType.Calico && hasIPv6) {
      errors.push(
        invalid(
          typePath,
          ipam.type,
          `IPAM type "${IPAMType.Calico}" is only supported for IPv4 single-stack shoots, use "${IPAMType.HostLocal}" instead`,
        ),
      );
    }
    if (str(ipam.cidr) && ipam.cidr.toLowerCase() !== USE_POD_CIDR.toLowerCase() && !parseCIDR(ipam.cidr)) {
      errors.push(invalid(path.child('ipam', 'cidr'), ipam.cidr, CIDR_DETAIL));
    }
  }

  for (const [key, has, family] of [
    ['ipv4', hasIPv4, 'IPv4'],
    ['ipv6', hasIPv6, 'IPv6'],
  ] as const) {
    const section = raw[key];
    if (section === undefined || section === null) continue;
    if (!has) {
      errors.push(
        forbidden(
          path.child(key),
          `${family} configuration must not be specified if the shoot doesn't use ${family} networking`,
        ),
      );
    }
    if (!isPlainObject(section)) continue;
    const poolPath = path.child(key, 'pool');
    const modePath = path.child(key, 'mode');
    if (str(section.pool) && !POOLS.includes(section.pool)) {
      errors.push(unsupported(poolPath, section.pool, 'pool', POOLS));
    }
    if (str(section.mode) && !POOL_MODES.includes(section.mode)) {
      errors.push(unsupported(modePath, section.mode, 'mode', POOL_MODES));
    }
    if (section.pool === PoolType.VXLAN && str(section.mode) && POOL_MODES.includes(section.mode)) {
      if (!VXLAN_POOL_MODES.includes(section.mode)) {
        errors.push(
          invalid(
            modePath,
            section.mode,
            `unsupported value ${JSON.stringify(section.mode)} for mode with pool "vxlan", supported values are ${listed(VXLAN_POOL_MODES)}`,
          ),
        );
      }
    }
    if (str(section.autoDetectionMethod) && section.autoDetectionMethod !== '') {
      errors.push(...validateAutoDetectionMethod(section.autoDetectionMethod, path.child(key, 'autoDetectionMethod')));
    }
    // Valid for networking-calico's validation, but its values computation refuses them for IPv6.
    if (key === 'ipv6' && has) {
      if (section.pool === PoolType.IPIP) errors.push(notSupported(poolPath, section.pool, IPV6_RENDERED_POOLS));
      if (section.mode === PoolMode.Off) errors.push(notSupported(modePath, section.mode, IPV6_RENDERED_MODES));
    }
  }

  if (str(raw.ipip)) {
    if (!POOL_MODES.includes(raw.ipip)) errors.push(unsupported(path.child('ipip'), raw.ipip, 'ipip', POOL_MODES));
    if (!hasIPv4 && raw.ipv4 === undefined) {
      errors.push(
        forbidden(
          path.child('ipip'),
          `IPv4 configuration must not be specified if the shoot doesn't use IPv4 networking`,
        ),
      );
    }
  }
  if (str(raw.ipAutodetectionMethod)) {
    errors.push(...validateAutoDetectionMethod(raw.ipAutodetectionMethod, path.child('ipAutodetectionMethod')));
  }

  if (raw.vethMTU !== undefined) errors.push(...validateMTU(raw.vethMTU, path.child('vethMTU')));

  const autoScaling = isPlainObject(raw.autoScaling) ? raw.autoScaling : undefined;
  if (autoScaling) {
    const mode = autoScaling.mode ?? '';
    if (str(mode) && !AUTOSCALING_MODES.includes(mode)) {
      errors.push(unsupported(path.child('autoScaling', 'mode'), mode, 'mode', AUTOSCALING_MODES));
    }
    const resources = isPlainObject(autoScaling.resources) ? autoScaling.resources : {};
    for (const component of ['node', 'typha'] as const) {
      const list = resources[component];
      if (isPlainObject(list)) {
        errors.push(...validateResourceList(list, path.child('autoScaling', 'resources', component)));
      }
    }
  }

  if (str(raw.serviceLoopPrevention) && !SERVICE_LOOP_PREVENTIONS.includes(raw.serviceLoopPrevention)) {
    errors.push(
      unsupported(
        path.child('serviceLoopPrevention'),
        raw.serviceLoopPrevention,
        'serviceLoopPrevention',
        SERVICE_LOOP_PREVENTIONS,
      ),
    );
  }
  return errors;
}

/** k8s.io/apimachinery's IsValidCIDR detail. */
const CIDR_DETAIL = 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)';

const AUTODETECTION_OPTIONS = [
  'first-found',
  'can-reach',
  'interface',
  'skip-interface',
  'cidr',
  'kubernetes-internal-ip',
];

/**
 * calico's IP autodetection methods: `first-found`, `kubernetes-internal-ip`, `can-reach=<ip or DNS name>`,
 * `interface=<regex>`, `skip-interface=<regex>`, `cidr=<cidr>`; the empty method is an error.
 */
export function validateAutoDetectionMethod(method: string, path: FieldPath): ErrorList {
  if (method === '') return [invalid(path, method, 'method cannot be empty')];
  const eq = method.indexOf('=');
  const option = eq < 0 ? method : method.slice(0, eq);
  const parameter = eq < 0 ? undefined : method.slice(eq + 1);
  if (!AUTODETECTION_OPTIONS.includes(option)) {
    return [
      invalid(
        path,
        method,
        `invalid option ${JSON.stringify(option)}, supported options are [${AUTODETECTION_OPTIONS.join(' ')}]`,
      ),
    ];
  }
  if (option === 'first-found' || option === 'kubernetes-internal-ip') {
    return parameter === undefined ? [] : [invalid(path, method, `option ${option} does not take a parameter`)];
  }
  if (parameter === undefined || parameter === '') {
    return [invalid(path, method, `option ${option} requires a parameter`)];
  }
  if (option === 'cidr') return parseCIDR(parameter) ? [] : [invalid(path, parameter, CIDR_DETAIL)];
  if (option === 'can-reach') {
    if (parseIP(parameter) || dns1123SubdomainErrors(parameter).length === 0) return [];
    return [invalid(path, method, 'parameter for can-reach must be a valid IP address or DNS name')];
  }
  try {
    new RegExp(parameter, 'u');
    return [];
  } catch (e) {
    return [invalid(path, method, `invalid regex for option ${option}: ${(e as Error).message}`)];
  }
}

/** `vethMTU`: a decimal integer ≥ 0 (0 lets calico detect it), as a string or a number. */
export function validateMTU(value: unknown, path: FieldPath): ErrorList {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) return [invalid(path, value, 'invalid MTU: must be an integer')];
    return value < 0 ? [invalid(path, value, 'MTU must be a positive integer')] : [];
  }
  if (typeof value !== 'string') return [];
  if (value === '') return [invalid(path, value, 'MTU cannot be empty')];
  if (!/^[+-]?\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    return [invalid(path, value, `invalid MTU: strconv.Atoi: parsing ${JSON.stringify(value)}: invalid syntax`)];
  }
  return Number(value) < 0 ? [invalid(path, value, 'MTU must be a positive integer')] : [];
}

/** The MTU as the ConfigMap's `veth_mtu` string; `"0"` (auto) when unset. */
export function vethMTUString(value: string | number | undefined): string {
  return value === undefined ? '0' : String(Number(value));
}

/** `autoScaling.resources.{node,typha}`: cpu and memory only, each a positive quantity. */
function validateResourceList(list: Record<string, unknown>, path: FieldPath): ErrorList {
  const errors: ErrorList = [];
  for (const [name, quantity] of Object.entries(list)) {
    const at = path.child(name);
    if (typeof quantity !== 'string' && typeof quantity !== 'number') continue;
    const sign = quantitySign(quantity);
    if (sign === undefined) {
      errors.push(invalid(at, quantity, QUANTITY_DETAIL));
      continue;
    }
    if (name === 'cpu' || name === 'memory') {
      const what = name === 'cpu' ? 'CPU' : 'Memory';
      if (sign === 0) errors.push(invalid(at, quantity, `${what} resource must be specified and cannot be zero`));
      else if (sign < 0) errors.push(invalid(at, quantity, `${what} resource must be positive`));
    } else {
      errors.push(invalid(at, quantity, `Unsupported resource: ${name}`));
    }
  }
  return errors;
}

/** One field error per zod issue (per unknown key for `unrecognized_keys`, Required for a missing field). */
function issueErrors(issue: z.core.$ZodIssue, raw: unknown, root: FieldPath): ErrorList {
  const path = issueFieldPath(issue.path, root);
  const value = valueAt(raw, issue.path);
  switch (issue.code) {
    case 'unrecognized_keys':
      return unknownFieldErrors(issue, root);
    case 'invalid_type':
      if (value === undefined) return [required(path, `${String(issue.path.at(-1))} is required`)];
      return [invalid(path, value, `must be of type ${issue.expected}`)];
    case 'invalid_union':
      return [invalid(path, value, 'must be of type string or number')];
    default:
      return [invalid(path, value, issue.message)];
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
