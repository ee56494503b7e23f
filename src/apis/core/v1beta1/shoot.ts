import { z } from 'zod';
import {
  ConditionSchema,
  int32,
  int64,
  LastErrorSchema,
  LastOperationSchema,
  ObjectMetaSchema,
  RawExtensionSchema,
} from '../../meta/schemas.js';
import { LabelSelectorSchema } from '../../meta/label-selector.js';

export const GROUP = 'core.gardener.cloud';
export const VERSION = 'v1beta1';
export const API_VERSION = `${GROUP}/${VERSION}`;

/** Shoot `spec.networking`. `ipFamilies` is a plain string list here: unsupported values are field errors. */
export const NetworkingSchema = z.looseObject({
  type: z.string().optional(),
  providerConfig: RawExtensionSchema.optional(),
  pods: z.string().optional(),
  nodes: z.string().optional(),
  services: z.string().optional(),
  ipFamilies: z.array(z.string()).optional(),
});
export type Networking = z.infer<typeof NetworkingSchema>;

export const KubeletConfigSchema = z.looseObject({
  maxPods: int32().optional(),
});
export type KubeletConfig = z.infer<typeof KubeletConfigSchema>;

export const KubeControllerManagerConfigSchema = z.looseObject({
  nodeCIDRMaskSize: int32().optional(),
  nodeCIDRMaskSizeIPv6: int32().optional(),
});
export type KubeControllerManagerConfig = z.infer<typeof KubeControllerManagerConfigSchema>;

export const KubernetesSchema = z.looseObject({
  version: z.string().optional(),
  kubelet: KubeletConfigSchema.optional(),
  kubeControllerManager: KubeControllerManagerConfigSchema.optional(),
  kubeAPIServer: z.looseObject({}).optional(),
});

export const WorkerSchema = z.looseObject({
  name: z.string(),
  machine: z.looseObject({ type: z.string().optional(), image: z.looseObject({}).optional() }).optional(),
  minimum: int32().optional(),
  maximum: int32().optional(),
  kubernetes: z.looseObject({ kubelet: KubeletConfigSchema.optional(), version: z.string().optional() }).optional(),
  zones: z.array(z.string()).optional(),
});
export type Worker = z.infer<typeof WorkerSchema>;

export const ProviderSchema = z.looseObject({
  type: z.string().optional(),
  workers: z.array(WorkerSchema).optional(),
  infrastructureConfig: RawExtensionSchema.optional(),
  controlPlaneConfig: RawExtensionSchema.optional(),
});

/** A seed taint a shoot tolerates: any value of `key`, or only `value` when given (Gardener's `Toleration`). */
export const TolerationSchema = z.looseObject({
  key: z.string(),
  value: z.string().optional(),
});
export type Toleration = z.infer<typeof TolerationSchema>;

/** Which seeds the scheduler may choose: a label selector on the Seed, as Gardener's `SeedSelector`. */
export const SeedSelectorSchema = LabelSelectorSchema.extend({
  providerTypes: z.array(z.string()).optional(),
});

export const DNSProviderSchema = z.looseObject({
  type: z.string().optional(),
  primary: z.boolean().optional(),
});

export const ShootSpecSchema = z.looseObject({
  cloudProfileName: z.string().optional(),
  cloudProfile: z.looseObject({ name: z.string().optional(), kind: z.string().optional() }).optional(),
  credentialsBindingName: z.string().optional(),
  secretBindingName: z.string().optional(),
  region: z.string().optional(),
  seedName: z.string().optional(),
  provider: ProviderSchema.optional(),
  networking: NetworkingSchema.optional(),
  kubernetes: KubernetesSchema.optional(),
  dns: z.looseObject({ domain: z.string().optional(), providers: z.array(DNSProviderSchema).optional() }).optional(),
  seedSelector: SeedSelectorSchema.optional(),
  tolerations: z.array(TolerationSchema).optional(),
  purpose: z.string().optional(),
});
export type ShootSpec = z.infer<typeof ShootSpecSchema>;

export const NetworkingStatusSchema = z.looseObject({
  nodes: z.array(z.string()).optional(),
  pods: z.array(z.string()).optional(),
  services: z.array(z.string()).optional(),
  egressCIDRs: z.array(z.string()).optional(),
});
export type NetworkingStatus = z.infer<typeof NetworkingStatusSchema>;

export const ShootStatusSchema = z.looseObject({
  conditions: z.array(ConditionSchema).optional(),
  constraints: z.array(ConditionSchema).optional(),
  lastOperation: LastOperationSchema.optional(),
  lastErrors: z.array(LastErrorSchema).optional(),
  observedGeneration: int64().optional(),
  seedName: z.string().optional(),
  technicalID: z.string().optional(),
  networking: NetworkingStatusSchema.optional(),
  advertisedAddresses: z.array(z.looseObject({ name: z.string(), url: z.string() })).optional(),
});
export type ShootStatus = z.infer<typeof ShootStatusSchema>;

export const ShootSchema = z
  .looseObject({
    apiVersion: z.literal(API_VERSION),
    kind: z.literal('Shoot'),
    metadata: ObjectMetaSchema,
    spec: ShootSpecSchema,
    status: ShootStatusSchema.optional(),
  })
  .meta({ description: 'Shoot represents a Shoot cluster created and managed by Gardener.' });
export type Shoot = z.infer<typeof ShootSchema>;
