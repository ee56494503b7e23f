/**
 * Seed (core.gardener.cloud/v1beta1), every field of Gardener's `types_seed.go`, strict as the Shoot (see shoot.ts);
 * the `providerConfig`s are raw extensions and keep whatever they hold.
 */
import { z } from 'zod';
import {
  ConditionSchema,
  int64,
  LastOperationSchema,
  ObjectMetaSchema,
  QuantitySchema,
  RawExtensionSchema,
  SecretReferenceSchema,
} from '../../meta/schemas.js';
import {
  AccessRestrictionSchema,
  CoreTolerationSchema,
  ExtensionSchema,
  FeatureGatesSchema,
  GardenerSchema,
  NamedResourceReferenceSchema,
  ObjectReferenceSchema,
  ResourceListSchema,
  StringMapSchema,
  BackupSchema,
} from './common.js';
import { API_VERSION } from './shoot.js';

export const ShootNetworksSchema = z.strictObject({
  pods: z.string().optional(),
  services: z.string().optional(),
});

export const SeedNetworksSchema = z.strictObject({
  nodes: z.string().optional(),
  pods: z.string().optional(),
  services: z.string().optional(),
  shootDefaults: ShootNetworksSchema.optional(),
  blockCIDRs: z.array(z.string()).optional(),
  ipFamilies: z.array(z.string()).optional(),
});
export type SeedNetworks = z.infer<typeof SeedNetworksSchema>;

/** A taint keeps shoots off the seed unless they tolerate it (see Shoot `spec.tolerations`). */
export const SeedTaintSchema = z.strictObject({
  key: z.string(),
  value: z.string().optional(),
});
export type SeedTaint = z.infer<typeof SeedTaintSchema>;

const EnabledSchema = z.strictObject({ enabled: z.boolean().optional() });

const ProxyProtocolSchema = z.strictObject({ allowed: z.boolean().optional() });

export const SeedSettingsSchema = z.strictObject({
  excessCapacityReservation: z
    .strictObject({
      enabled: z.boolean().optional(),
      configs: z
        .array(
          z.strictObject({
            resources: ResourceListSchema.optional(),
            nodeSelector: StringMapSchema.optional(),
            tolerations: z.array(CoreTolerationSchema).optional(),
          }),
        )
        .optional(),
    })
    .optional(),
  /** `visible: false` hides the seed from the scheduler (shoots may still name it). @default true */
  scheduling: z.strictObject({ visible: z.boolean().optional() }).optional(),
  loadBalancerServices: z
    .strictObject({
      annotations: StringMapSchema.optional(),
      class: z.string().optional(),
      externalTrafficPolicy: z.string().optional(),
      zones: z
        .array(
          z.strictObject({
            name: z.string(),
            annotations: StringMapSchema.optional(),
            externalTrafficPolicy: z.string().optional(),
            proxyProtocol: ProxyProtocolSchema.optional(),
          }),
        )
        .optional(),
      proxyProtocol: ProxyProtocolSchema.optional(),
      zonalIngress: EnabledSchema.optional(),
    })
    .optional(),
  verticalPodAutoscaler: z
    .strictObject({
      enabled: z.boolean().optional(),
      featureGates: FeatureGatesSchema.optional(),
      maxAllowed: ResourceListSchema.optional(),
    })
    .optional(),
  dependencyWatchdog: z.strictObject({ weeder: EnabledSchema.optional(), prober: EnabledSchema.optional() }).optional(),
  topologyAwareRouting: EnabledSchema.optional(),
  zoneSelection: z.strictObject({ mode: z.string().optional() }).optional(),
  persistentVolumeClaimAutoscaler: EnabledSchema.optional(),
});

/** A DNS provider of the seed: the type, and the credentials either as a secret or any object reference. */
const SeedDNSProviderSchema = z.strictObject({
  type: z.string(),
  secretRef: SecretReferenceSchema.optional(),
  credentialsRef: ObjectReferenceSchema.optional(),
});

/** A DNS provider for a domain (the internal or a default domain of the shoots). */
const SeedDNSProviderConfigSchema = z.strictObject({
  type: z.string(),
  domain: z.string(),
  zone: z.string().optional(),
  credentialsRef: ObjectReferenceSchema.optional(),
});

export const SeedSpecSchema = z.strictObject({
  backup: BackupSchema.optional(),
  dns: z
    .strictObject({
      provider: SeedDNSProviderSchema.optional(),
      internal: SeedDNSProviderConfigSchema.optional(),
      defaults: z.array(SeedDNSProviderConfigSchema).optional(),
    })
    .optional(),
  networks: SeedNetworksSchema.optional(),
  provider: z
    .strictObject({
      type: z.string().optional(),
      providerConfig: RawExtensionSchema.optional(),
      region: z.string().optional(),
      zones: z.array(z.string()).optional(),
    })
    .optional(),
  taints: z.array(SeedTaintSchema).optional(),
  volume: z
    .strictObject({
      minimumSize: QuantitySchema.optional(),
      providers: z.array(z.strictObject({ purpose: z.string(), name: z.string() })).optional(),
    })
    .optional(),
  settings: SeedSettingsSchema.optional(),
  ingress: z
    .strictObject({
      domain: z.string().optional(),
      controller: z.strictObject({ kind: z.string(), providerConfig: RawExtensionSchema.optional() }).optional(),
    })
    .optional(),
  accessRestrictions: z.array(AccessRestrictionSchema).optional(),
  extensions: z.array(ExtensionSchema).optional(),
  resources: z.array(NamedResourceReferenceSchema).optional(),
});

export const SeedStatusSchema = z.strictObject({
  gardener: GardenerSchema.optional(),
  kubernetesVersion: z.string().optional(),
  conditions: z.array(ConditionSchema).optional(),
  observedGeneration: int64().optional(),
  clusterIdentity: z.string().optional(),
  capacity: ResourceListSchema.optional(),
  allocatable: ResourceListSchema.optional(),
  clientCertificateExpirationTimestamp: z.string().optional(),
  lastOperation: LastOperationSchema.optional(),
});

export const SeedSchema = z
  .strictObject({
    apiVersion: z.literal(API_VERSION),
    kind: z.literal('Seed'),
    metadata: ObjectMetaSchema,
    spec: SeedSpecSchema,
    status: SeedStatusSchema.optional(),
  })
  .meta({ description: 'Seed represents an installation request for an external controller.' });
export type Seed = z.infer<typeof SeedSchema>;
