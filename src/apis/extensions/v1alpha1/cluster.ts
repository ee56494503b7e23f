/**
 * Cluster (extensions.gardener.cloud/v1alpha1), as Gardener's: one cluster-scoped object per shoot, named after the
 * shoot's seed namespace, that hands every extension of that shoot the objects it may need to read (the Shoot, its
 * Seed and CloudProfile) without access to the garden. Extensions look up the Cluster of their object's namespace;
 * provider-local's Worker controller takes the shoot's node ranges from it, as Gardener's does.
 */
import { z } from 'zod';
import { ObjectMetaSchema, RawExtensionSchema } from '../../meta/schemas.js';
import { API_VERSION } from './common.js';

export const ClusterSpecSchema = z.strictObject({
  cloudProfile: RawExtensionSchema,
  seed: RawExtensionSchema,
  shoot: RawExtensionSchema,
});

export const ClusterSchema = z
  .strictObject({
    apiVersion: z.literal(API_VERSION),
    kind: z.literal('Cluster'),
    metadata: ObjectMetaSchema,
    spec: ClusterSpecSchema,
  })
  .meta({ description: 'Cluster is a specification for a Cluster resource: the shoot, seed and cloud profile.' });
export type Cluster = z.infer<typeof ClusterSchema>;

/** The shoot a Cluster carries, as far as an extension reads it (its networking, its hibernation). */
export interface ClusterShoot {
  readonly metadata?: { readonly name?: string; readonly namespace?: string };
  readonly spec?: {
    readonly hibernation?: { readonly enabled?: boolean };
    readonly networking?: {
      readonly ipFamilies?: readonly string[];
      readonly nodes?: string;
      readonly pods?: string;
      readonly services?: string;
    };
  };
}

/** The Cluster's shoot, or undefined when it holds none. */
export function clusterShoot(cluster: Pick<Cluster, 'spec'>): ClusterShoot | undefined {
  const shoot = cluster.spec.shoot;
  return typeof shoot === 'object' && shoot !== null ? (shoot as ClusterShoot) : undefined;
}

/**
 * Whether the Cluster's shoot is to be hibernated (Gardener's `IsHibernationEnabled`): extensions then scale what
 * they run for it to zero.
 */
export function clusterHibernationEnabled(cluster: Pick<Cluster, 'spec'>): boolean {
  return clusterShoot(cluster)?.spec?.hibernation?.enabled === true;
}
