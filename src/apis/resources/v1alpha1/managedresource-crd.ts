/**
 * The CustomResourceDefinition of ManagedResource, generated from its zod schema like the project's own CRDs, for
 * API servers without gardener-resource-manager's CRD (the local setup).
 */
import { crdFor } from '../../crds.js';
import type { KindInfo } from '../../registry.js';
import { Refs, servedAs } from '../../refs.js';
import { ManagedResourceSchema, type ManagedResource } from './managedresource.js';

export const ManagedResources: KindInfo<ManagedResource> = {
  ...servedAs(Refs.managedResource),
  singular: 'managedresource',
  shortNames: ['mr'],
  schema: ManagedResourceSchema,
  columns: [
    { name: 'Class', jsonPath: '.spec.class', type: 'string', description: 'the class of the resource manager' },
    {
      name: 'Applied',
      jsonPath: `.status.conditions[?(@.type=="ResourcesApplied")].status`,
      type: 'string',
      description: 'whether all resources have been applied',
    },
    {
      name: 'Healthy',
      jsonPath: `.status.conditions[?(@.type=="ResourcesHealthy")].status`,
      type: 'string',
      description: 'whether all resources are healthy',
    },
    { name: 'Age', jsonPath: '.metadata.creationTimestamp', type: 'date', description: 'creation timestamp' },
  ],
  default: (object) => object,
  validate: () => [],
  validateUpdate: () => [],
};

/** `managedresources.resources.gardener.cloud`, with a structural schema and the status subresource. */
export const managedResourceCRD: Record<string, unknown> = crdFor(ManagedResources as KindInfo<unknown>);
