/**
 * CloudProfile (core.gardener.cloud/v1beta1), every field of Gardener's `types_cloudprofile.go`: what a provider
 * environment offers Shoots (Kubernetes versions, machine types and images, regions). Strict as the Shoot (see
 * shoot.ts); `providerConfig` is a raw extension and keeps whatever it holds. Cluster-scoped.
 *
 * The lists Gardener requires (`type`, Kubernetes versions, machine types and images, regions) are optional here
 * and required by validation, which says which one is missing in Gardener's words rather than as a type error.
 */
import { z } from 'zod';
import { int32, ObjectMetaSchema, QuantitySchema, RawExtensionSchema } from '../../meta/schemas.js';
import { AccessRestrictionSchema, DurationSchema, StringMapSchema } from './common.js';
import { API_VERSION, CRISchema, SeedSelectorSchema } from './shoot.js';

/** A version's lifecycle state (`ExpirableVersion.classification`). */
export const VersionClassification = {
  Preview: 'preview',
  Supported: 'supported',
  Deprecated: 'deprecated',
} as const;

/** How maintenance updates a machine image (`MachineImage.updateStrategy`). */
export const MachineImageUpdateStrategy = {
  Patch: 'patch',
  Minor: 'minor',
  Major: 'major',
} as const;

/** A version a Shoot may ask for, until its `expirationDate` (an RFC 3339 time). */
export const ExpirableVersionSchema = z.strictObject({
  version: z.string(),
  expirationDate: z.string().optional(),
  classification: z.string().optional(),
  lifecycle: z.array(z.strictObject({ classification: z.string(), startTime: z.string().optional() })).optional(),
});
export type ExpirableVersion = z.infer<typeof ExpirableVersionSchema>;

/** `Capabilities`: capability name → values (`architecture: [amd64]`). */
const CapabilitiesSchema = z.record(z.string(), z.array(z.string()));

export const MachineImageVersionSchema = ExpirableVersionSchema.extend({
  cri: z.array(CRISchema).optional(),
  architectures: z.array(z.string()).optional(),
  kubeletVersionConstraint: z.string().optional(),
  inPlaceUpdates: z.strictObject({ supported: z.boolean(), minVersionForUpdate: z.string().optional() }).optional(),
  capabilityFlavors: z.array(CapabilitiesSchema).optional(),
});
export type MachineImageVersion = z.infer<typeof MachineImageVersionSchema>;

export const MachineImageSchema = z.strictObject({
  name: z.string(),
  versions: z.array(MachineImageVersionSchema),
  updateStrategy: z.string().optional(),
});
export type MachineImage = z.infer<typeof MachineImageSchema>;

export const MachineTypeSchema = z.strictObject({
  name: z.string(),
  cpu: QuantitySchema,
  gpu: QuantitySchema.optional(),
  memory: QuantitySchema,
  storage: z
    .strictObject({
      class: z.string(),
      size: QuantitySchema.optional(),
      type: z.string(),
      minSize: QuantitySchema.optional(),
    })
    .optional(),
  usable: z.boolean().optional(),
  architecture: z.string().optional(),
  capabilities: CapabilitiesSchema.optional(),
  machineControllerManager: z.strictObject({ machineCreationTimeout: DurationSchema.optional() }).optional(),
});
export type MachineType = z.infer<typeof MachineTypeSchema>;

export const RegionSchema = z.strictObject({
  name: z.string(),
  zones: z
    .array(
      z.strictObject({
        name: z.string(),
        unavailableMachineTypes: z.array(z.string()).optional(),
        unavailableVolumeTypes: z.array(z.string()).optional(),
      }),
    )
    .optional(),
  labels: StringMapSchema.optional(),
  accessRestrictions: z.array(AccessRestrictionSchema).optional(),
});
export type Region = z.infer<typeof RegionSchema>;

export const VolumeTypeSchema = z.strictObject({
  class: z.string(),
  name: z.string(),
  usable: z.boolean().optional(),
  minSize: QuantitySchema.optional(),
});

export const CloudProfileSpecSchema = z.strictObject({
  caBundle: z.string().optional(),
  kubernetes: z.strictObject({ versions: z.array(ExpirableVersionSchema).optional() }).optional(),
  machineImages: z.array(MachineImageSchema).optional(),
  machineTypes: z.array(MachineTypeSchema).optional(),
  providerConfig: RawExtensionSchema.optional(),
  regions: z.array(RegionSchema).optional(),
  seedSelector: SeedSelectorSchema.optional(),
  type: z.string().optional(),
  volumeTypes: z.array(VolumeTypeSchema).optional(),
  bastion: z
    .strictObject({
      machineImage: z.strictObject({ name: z.string(), version: z.string().optional() }).optional(),
      machineType: z.strictObject({ name: z.string() }).optional(),
    })
    .optional(),
  limits: z.strictObject({ maxNodesTotal: int32().optional() }).optional(),
  machineCapabilities: z.array(z.strictObject({ name: z.string(), values: z.array(z.string()) })).optional(),
  controlPlane: z.strictObject({ allowZonePinning: z.boolean().optional() }).optional(),
});
export type CloudProfileSpec = z.infer<typeof CloudProfileSpecSchema>;

const VersionStatusSchema = z.strictObject({ version: z.string(), classification: z.string() });

export const CloudProfileStatusSchema = z.strictObject({
  kubernetes: z.strictObject({ versions: z.array(VersionStatusSchema).optional() }).optional(),
  machineImages: z
    .array(z.strictObject({ name: z.string(), versions: z.array(VersionStatusSchema).optional() }))
    .optional(),
});

export const CloudProfileSchema = z
  .strictObject({
    apiVersion: z.literal(API_VERSION),
    kind: z.literal('CloudProfile'),
    metadata: ObjectMetaSchema,
    spec: CloudProfileSpecSchema,
    status: CloudProfileStatusSchema.optional(),
  })
  .meta({ description: 'CloudProfile represents certain properties about a provider environment.' });
export type CloudProfile = z.infer<typeof CloudProfileSchema>;
