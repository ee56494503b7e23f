import { z } from 'zod';
import { ConditionSchema, int64, LastOperationSchema, ObjectMetaSchema } from '../../meta/schemas.js';
import { API_VERSION } from './shoot.js';

export const ShootNetworksSchema = z.looseObject({
  pods: z.string().optional(),
  services: z.string().optional(),
});

export const SeedNetworksSchema = z.looseObject({
  nodes: z.string().optional(),
  pods: z.string().optional(),
  services: z.string().optional(),
  shootDefaults: ShootNetworksSchema.optional(),
  blockCIDRs: z.array(z.string()).optional(),
  ipFamilies: z.array(z.string()).optional(),
});
export type SeedNetworks = z.infer<typeof SeedNetworksSchema>;

/** A taint keeps shoots off the seed unless they tolerate it (see Shoot `spec.tolerations`). */
export const SeedTaintSchema = z.looseObject({
  key: z.string(),
  value: z.string().optional(),
});
export type SeedTaint = z.infer<typeof SeedTaintSchema>;

export const SeedSettingsSchema = z.looseObject({
  /** `visible: false` hides the seed from the scheduler (shoots may still name it). @default true */
  scheduling: z.looseObject({ visible: z.boolean().optional() }).optional(),
});

export const SeedSpecSchema = z.looseObject({
  provider: z.looseObject({ type: z.string().optional(), region: z.string().optional() }).optional(),
  taints: z.array(SeedTaintSchema).optional(),
  settings: SeedSettingsSchema.optional(),
  networks: SeedNetworksSchema.optional(),
  dns: z.looseObject({}).optional(),
  ingress: z.looseObject({ domain: z.string().optional() }).optional(),
});

export const SeedStatusSchema = z.looseObject({
  conditions: z.array(ConditionSchema).optional(),
  lastOperation: LastOperationSchema.optional(),
  observedGeneration: int64().optional(),
});

export const SeedSchema = z
  .looseObject({
    apiVersion: z.literal(API_VERSION),
    kind: z.literal('Seed'),
    metadata: ObjectMetaSchema,
    spec: SeedSpecSchema,
    status: SeedStatusSchema.optional(),
  })
  .meta({ description: 'Seed represents an installation request for an external controller.' });
export type Seed = z.infer<typeof SeedSchema>;
