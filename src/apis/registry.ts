/**
 * Every kind this project serves: its schema, scope, defaulting and validation, in one table the CLI, the webhook
 * and the CRD generator share.
 */
import type { z } from 'zod';
import type { ErrorList } from './field/index.js';
import { Refs, servedAs } from './refs.js';
import type { FeatureGates } from '../featuregate/featuregate.js';
import { CloudProfileSchema, type CloudProfile } from './core/v1beta1/cloudprofile.js';
import { defaultCloudProfile, defaultSeed, defaultShoot } from './core/v1beta1/defaults.js';
import { SeedSchema, type Seed } from './core/v1beta1/seed.js';
import { ShootSchema, type Shoot } from './core/v1beta1/shoot.js';
import { validateCloudProfile, validateCloudProfileUpdate } from './core/v1beta1/validation/cloudprofile.js';
import { validateSeed, validateSeedUpdate } from './core/v1beta1/validation/seed.js';
import { nameIsDNSLabel, type NameRule } from './validation/object-meta.js';
import { validateShoot, validateShootUpdate } from './core/v1beta1/validation/shoot.js';
import { defaultDNSRecord } from './extensions/v1alpha1/defaults.js';
import { DNSRecordSchema, type DNSRecord } from './extensions/v1alpha1/dnsrecord.js';
import { NetworkSchema, type Network } from './extensions/v1alpha1/network.js';
import { OperatingSystemConfigSchema } from './extensions/v1alpha1/operatingsystemconfig.js';
import { validateDNSRecord, validateDNSRecordUpdate } from './extensions/v1alpha1/validation/dnsrecord.js';
import { validateNetwork, validateNetworkUpdate } from './extensions/v1alpha1/validation/network.js';
import { validateWorker, validateWorkerUpdate } from './extensions/v1alpha1/validation/worker.js';
import { WorkerSchema, type Worker } from './extensions/v1alpha1/worker.js';
import { ClusterSchema, type Cluster } from './extensions/v1alpha1/cluster.js';
import { InternalSecretSchema, type InternalSecret } from './core/v1beta1/internalsecret.js';

export interface KindInfo<T = unknown> {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  readonly scope: 'Namespaced' | 'Cluster';
  readonly schema: z.ZodType<T>;
  /** Printer columns for `kubectl get`. */
  readonly columns: readonly { name: string; jsonPath: string; type: string; description: string }[];
  /** How `metadata.name` is checked. @default nameIsDNSSubdomain, as the API server checks custom resources */
  readonly nameRule?: NameRule;
  default(object: T): T;
  validate(object: T, gates: FeatureGates): ErrorList;
  validateUpdate(object: T, old: T, gates: FeatureGates): ErrorList;
}

const identity = <T>(o: T): T => o;

const AGE = { name: 'Age', jsonPath: '.metadata.creationTimestamp', type: 'date', description: 'creation timestamp' };
const LAST_OP = {
  name: 'Status',
  jsonPath: '.status.lastOperation.state',
  type: 'string',
  description: 'state of the last operation',
};

export const Shoots: KindInfo<Shoot> = {
  ...servedAs(Refs.shoot),
  singular: 'shoot',
  shortNames: [],
  schema: ShootSchema,
  columns: [
    { name: 'Seed', jsonPath: '.spec.seedName', type: 'string', description: 'seed that hosts the control plane' },
    { name: 'IP Families', jsonPath: '.spec.networking.ipFamilies', type: 'string', description: 'IP families' },
    LAST_OP,
    AGE,
  ],
  // Gardener: a Shoot name is a DNS label (it becomes part of namespaces and domain names).
  nameRule: nameIsDNSLabel,
  default: defaultShoot,
  validate: validateShoot,
  validateUpdate: validateShootUpdate,
};

export const Seeds: KindInfo<Seed> = {
  ...servedAs(Refs.seed),
  singular: 'seed',
  shortNames: [],
  schema: SeedSchema,
  columns: [
    { name: 'IP Families', jsonPath: '.spec.networks.ipFamilies', type: 'string', description: 'IP families' },
    LAST_OP,
    AGE,
  ],
  default: defaultSeed,
  validate: validateSeed,
  validateUpdate: validateSeedUpdate,
};

export const CloudProfiles: KindInfo<CloudProfile> = {
  ...servedAs(Refs.cloudProfile),
  singular: 'cloudprofile',
  shortNames: [],
  schema: CloudProfileSchema,
  columns: [{ name: 'Provider', jsonPath: '.spec.type', type: 'string', description: 'provider type' }, AGE],
  default: defaultCloudProfile,
  validate: (profile) => validateCloudProfile(profile),
  validateUpdate: (next, prev) => validateCloudProfileUpdate(next, prev),
};

export const Networks: KindInfo<Network> = {
  ...servedAs(Refs.network),
  singular: 'network',
  shortNames: [],
  schema: NetworkSchema,
  columns: [
    { name: 'Type', jsonPath: '.spec.type', type: 'string', description: 'network provider' },
    { name: 'Pod CIDR', jsonPath: '.spec.podCIDR', type: 'string', description: 'pod network' },
    { name: 'Service CIDR', jsonPath: '.spec.serviceCIDR', type: 'string', description: 'service network' },
    { name: 'Status', jsonPath: '.status.lastOperation.state', type: 'string', description: 'last operation state' },
    AGE,
  ],
  default: identity,
  validate: validateNetwork,
  validateUpdate: validateNetworkUpdate,
};

export const DNSRecords: KindInfo<DNSRecord> = {
  ...servedAs(Refs.dnsRecord),
  singular: 'dnsrecord',
  shortNames: ['dns'],
  schema: DNSRecordSchema,
  columns: [
    { name: 'Type', jsonPath: '.spec.type', type: 'string', description: 'DNS provider' },
    { name: 'Domain Name', jsonPath: '.spec.name', type: 'string', description: 'record name' },
    { name: 'Record Type', jsonPath: '.spec.recordType', type: 'string', description: 'record type' },
    { name: 'Status', jsonPath: '.status.lastOperation.state', type: 'string', description: 'last operation state' },
    AGE,
  ],
  default: defaultDNSRecord,
  validate: validateDNSRecord,
  validateUpdate: (next, prev) => validateDNSRecordUpdate(next, prev),
};

export const OperatingSystemConfigs: KindInfo<z.infer<typeof OperatingSystemConfigSchema>> = {
  ...servedAs(Refs.operatingSystemConfig),
  singular: 'operatingsystemconfig',
  shortNames: ['osc'],
  schema: OperatingSystemConfigSchema,
  columns: [
    { name: 'Type', jsonPath: '.spec.type', type: 'string', description: 'operating system' },
    { name: 'Purpose', jsonPath: '.spec.purpose', type: 'string', description: 'purpose' },
    { name: 'Status', jsonPath: '.status.lastOperation.state', type: 'string', description: 'last operation state' },
    AGE,
  ],
  default: identity,
  validate: () => [],
  validateUpdate: () => [],
};

export const Workers: KindInfo<Worker> = {
  ...servedAs(Refs.worker),
  singular: 'worker',
  shortNames: [],
  schema: WorkerSchema,
  columns: [
    { name: 'Type', jsonPath: '.spec.type', type: 'string', description: 'cloud provider' },
    { name: 'Region', jsonPath: '.spec.region', type: 'string', description: 'region of the machines' },
    { name: 'Status', jsonPath: '.status.lastOperation.state', type: 'string', description: 'last operation state' },
    AGE,
  ],
  default: identity,
  validate: validateWorker,
  validateUpdate: (next, prev) => validateWorkerUpdate(next, prev),
};

export const Clusters: KindInfo<Cluster> = {
  ...servedAs(Refs.cluster),
  singular: 'cluster',
  shortNames: [],
  schema: ClusterSchema,
  columns: [AGE],
  default: identity,
  validate: () => [],
  validateUpdate: () => [],
};

export const InternalSecrets: KindInfo<InternalSecret> = {
  ...servedAs(Refs.internalSecret),
  singular: 'internalsecret',
  shortNames: [],
  schema: InternalSecretSchema,
  columns: [{ name: 'Type', jsonPath: '.type', type: 'string', description: 'type of the secret' }, AGE],
  default: identity,
  validate: () => [],
  validateUpdate: () => [],
};

export const ALL_KINDS: readonly KindInfo<never>[] = [
  Shoots,
  Seeds,
  CloudProfiles,
  Networks,
  DNSRecords,
  OperatingSystemConfigs,
  Workers,
  Clusters,
  InternalSecrets,
] as unknown as readonly KindInfo<never>[];

export function apiVersionOf(info: Pick<KindInfo, 'group' | 'version'>): string {
  return `${info.group}/${info.version}`;
}

/** Each kind by its apiVersion, then its kind: a review looks its objects' kinds up several times. */
const KINDS_BY_API_VERSION = new Map<string, Map<string, KindInfo<unknown>>>();
for (const info of ALL_KINDS as readonly KindInfo<unknown>[]) {
  const apiVersion = apiVersionOf(info);
  const kinds = KINDS_BY_API_VERSION.get(apiVersion) ?? new Map<string, KindInfo<unknown>>();
  kinds.set(info.kind, info);
  KINDS_BY_API_VERSION.set(apiVersion, kinds);
}

/** The kind an object claims to be, when this project serves it. */
export function lookupKind(object: unknown): KindInfo<unknown> | undefined {
  if (typeof object !== 'object' || object === null) return undefined;
  const { apiVersion, kind } = object as { apiVersion?: unknown; kind?: unknown };
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return undefined;
  return KINDS_BY_API_VERSION.get(apiVersion)?.get(kind);
}
