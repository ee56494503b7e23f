import { z } from 'zod';
import { ConditionSchema, int64, LastErrorSchema, LastOperationSchema } from '../../meta/schemas.js';

export const GROUP = 'extensions.gardener.cloud';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

/**
 * The status every extension resource carries (Gardener's `DefaultStatus`). Statuses stay open (unknown fields
 * kept): an extension's controller writes them, and Gardener's extensions add their own fields.
 */
export const DefaultStatusShape = {
  conditions: z.array(ConditionSchema).optional(),
  lastError: LastErrorSchema.optional(),
  lastOperation: LastOperationSchema.optional(),
  observedGeneration: int64().optional(),
  providerStatus: z.looseObject({}).optional(),
  state: z.looseObject({}).optional(),
};
