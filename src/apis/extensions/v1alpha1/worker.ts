import { z } from 'zod';
import {
  int32,
  IntOrStringSchema,
  ObjectMetaSchema,
  QuantitySchema,
  RawExtensionSchema,
  SecretReferenceSchema,
} from '../../meta/schemas.js';
import { KubeletConfigSchema, MachineControllerManagerSettingsSchema } from '../../core/v1beta1/shoot.js';
import { API_VERSION, DefaultStatusShape } from './common.js';

/** A `[]byte` field: base64 text on the wire, as Go's encoding/json writes it. */
const BytesSchema = z.string().meta({ format: 'byte' });

/** A `metav1.Duration` (`2h`, `10m30s`). */
const DurationSchema = z.string();

/** `corev1.SecretKeySelector`: one key of a secret in the object's namespace. */
export const SecretKeySelectorSchema = z.strictObject({
  name: z.string().optional(),
  key: z.string().optional(),
  optional: z.boolean().optional(),
});
export type SecretKeySelector = z.infer<typeof SecretKeySelectorSchema>;

/** `corev1.Taint` of the pool's Nodes. */
export const TaintSchema = z.strictObject({
  key: z.string(),
  value: z.string().optional(),
  effect: z.string(),
  timeAdded: z.string().nullable().optional(),
});
export type Taint = z.infer<typeof TaintSchema>;

export const MachineImageSchema = z.strictObject({
  name: z.string().optional(),
  version: z.string().optional(),
});
export type MachineImage = z.infer<typeof MachineImageSchema>;

/** The root disk of a pool's machines. */
export const VolumeSchema = z.strictObject({
  name: z.string().optional(),
  type: z.string().optional(),
  size: z.string(),
  encrypted: z.boolean().optional(),
});
export type Volume = z.infer<typeof VolumeSchema>;

export const DataVolumeSchema = z.strictObject({
  name: z.string(),
  type: z.string().optional(),
  size: z.string(),
  encrypted: z.boolean().optional(),
});
export type DataVolume = z.infer<typeof DataVolumeSchema>;

export const ClusterAutoscalerOptionsSchema = z.strictObject({
  scaleDownUtilizationThreshold: z.string().optional(),
  scaleDownGpuUtilizationThreshold: z.string().optional(),
  scaleDownUnneededTime: DurationSchema.optional(),
  scaleDownUnreadyTime: DurationSchema.optional(),
  maxNodeProvisionTime: DurationSchema.optional(),
});

/** What the cluster autoscaler assumes of a pool's Nodes when it scales the pool from zero. */
export const NodeTemplateSchema = z.strictObject({
  capacity: z.record(z.string(), QuantitySchema).optional(),
});

export const WorkerPoolSchema = z.strictObject({
  name: z.string().optional(),
  machineType: z.string().optional(),
  machineImage: MachineImageSchema.optional(),
  minimum: int32().optional(),
  maximum: int32().optional(),
  maxSurge: IntOrStringSchema.optional(),
  maxUnavailable: IntOrStringSchema.optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  labels: z.record(z.string(), z.string()).optional(),
  taints: z.array(TaintSchema).optional(),
  nodeAgentSecretName: z.string().optional(),
  providerConfig: RawExtensionSchema.optional(),
  userDataSecretRef: SecretKeySelectorSchema.optional(),
  /** The user data itself, before Gardener moved it into a secret (`userDataSecretRef`). */
  userData: BytesSchema.optional(),
  volume: VolumeSchema.optional(),
  dataVolumes: z.array(DataVolumeSchema).optional(),
  kubeletDataVolumeName: z.string().optional(),
  zones: z.array(z.string()).optional(),
  machineControllerManager: MachineControllerManagerSettingsSchema.optional(),
  kubernetesVersion: z.string().optional(),
  nodeTemplate: NodeTemplateSchema.optional(),
  architecture: z.string().optional(),
  clusterAutoscaler: ClusterAutoscalerOptionsSchema.optional(),
  priority: int32().optional(),
  kubeletConfig: KubeletConfigSchema.optional(),
  updateStrategy: z.string().optional(),
});
export type WorkerPool = z.infer<typeof WorkerPoolSchema>;

export const WorkerSpecSchema = z.strictObject({
  type: z.string().optional(),
  class: z.string().optional(),
  providerConfig: RawExtensionSchema.optional(),
  infrastructureProviderStatus: RawExtensionSchema.optional(),
  region: z.string().optional(),
  secretRef: SecretReferenceSchema.optional(),
  sshPublicKey: BytesSchema.optional(),
  pools: z.array(WorkerPoolSchema).optional(),
});
export type WorkerSpec = z.infer<typeof WorkerSpecSchema>;

/** A MachineDeployment the extension made for a pool, for the cluster autoscaler. */
export const MachineDeploymentSchema = z.looseObject({
  name: z.string(),
  minimum: int32(),
  maximum: int32(),
  priority: int32().optional(),
});
export type MachineDeployment = z.infer<typeof MachineDeploymentSchema>;

export const WorkerStatusSchema = z.looseObject({
  ...DefaultStatusShape,
  machineDeployments: z.array(MachineDeploymentSchema).optional(),
  machineDeploymentsLastUpdateTime: z.string().nullable().optional(),
});
export type WorkerStatus = z.infer<typeof WorkerStatusSchema>;

export const WorkerSchema = z
  .strictObject({
    apiVersion: z.literal(API_VERSION),
    kind: z.literal('Worker'),
    metadata: ObjectMetaSchema,
    spec: WorkerSpecSchema,
    status: WorkerStatusSchema.optional(),
  })
  .meta({ description: 'Worker is a specification for a Worker resource.' });
export type Worker = z.infer<typeof WorkerSchema>;
