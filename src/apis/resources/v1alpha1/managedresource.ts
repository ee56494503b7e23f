/**
 * A minimal model of Gardener's `ManagedResource` (resources.gardener.cloud/v1alpha1): a list of Secrets whose data
 * are manifests that gardener-resource-manager applies to the target cluster (the shoot, when `class` is unset) and
 * deletes from it when the ManagedResource goes.
 */
import { z } from 'zod';
import { ConditionSchema, int64, ObjectMetaSchema } from '../../meta/schemas.js';

export const GROUP = 'resources.gardener.cloud';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'ManagedResource';

export const ManagedResourceSpecSchema = z.looseObject({
  /** Which resource manager handles it; unset: the one responsible for the shoot. */
  class: z.string().optional(),
  /** Secrets holding the manifests, one YAML document (or several) per data key. */
  secretRefs: z.array(z.looseObject({ name: z.string() })),
  /** Labels added to every object applied. */
  injectLabels: z.record(z.string(), z.string()).optional(),
  forceOverwriteLabels: z.boolean().optional(),
  forceOverwriteAnnotations: z.boolean().optional(),
  /** Leave the objects in the target cluster when the ManagedResource is deleted. */
  keepObjects: z.boolean().optional(),
  deletePersistentVolumeClaims: z.boolean().optional(),
});

export const ManagedResourceSchema = z
  .looseObject({
    apiVersion: z.literal(API_VERSION),
    kind: z.literal(KIND),
    metadata: ObjectMetaSchema,
    spec: ManagedResourceSpecSchema,
    status: z
      .looseObject({
        conditions: z.array(ConditionSchema).optional(),
        observedGeneration: int64().optional(),
        resources: z.array(z.looseObject({})).optional(),
        secretsDataChecksum: z.string().optional(),
      })
      .optional(),
  })
  .meta({ description: 'ManagedResource describes a list of managed resources.' });
export type ManagedResource = z.infer<typeof ManagedResourceSchema>;
