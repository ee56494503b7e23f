import { z } from 'zod';
import { ObjectMetaSchema, RawExtensionSchema } from '../../meta/schemas.js';
import { API_VERSION, DefaultStatusShape } from './common.js';

export const NetworkSpecSchema = z.strictObject({
  type: z.string().optional(),
  class: z.string().optional(),
  providerConfig: RawExtensionSchema.optional(),
  podCIDR: z.string().optional(),
  serviceCIDR: z.string().optional(),
  ipFamilies: z.array(z.string()).optional(),
});
export type NetworkSpec = z.infer<typeof NetworkSpecSchema>;

export const NetworkSchema = z
  .strictObject({
    apiVersion: z.literal(API_VERSION),
    kind: z.literal('Network'),
    metadata: ObjectMetaSchema,
    spec: NetworkSpecSchema,
    status: z.looseObject({ ...DefaultStatusShape, ipFamilies: z.array(z.string()).optional() }).optional(),
  })
  .meta({ description: 'Network is the specification for cluster networking.' });
export type Network = z.infer<typeof NetworkSchema>;
