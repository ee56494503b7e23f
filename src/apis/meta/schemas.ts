/**
 * Schemas shared by every group: object metadata, last operation, conditions.
 *
 * Objects are strict (an unknown field is an error), as the API server decodes Kubernetes and Gardener types; only
 * raw extensions (`RawExtensionSchema`) keep whatever they hold.
 */
import { z } from 'zod';

const int32 = () => z.number().int().min(-2147483648).max(2147483647);
const int64 = () => z.number().int();
export { int32, int64 };

export const OwnerReferenceSchema = z.strictObject({
  apiVersion: z.string(),
  kind: z.string(),
  name: z.string(),
  uid: z.string(),
  controller: z.boolean().optional(),
  blockOwnerDeletion: z.boolean().optional(),
});

/** Server-side apply's field ownership; `fieldsV1` is the API server's own format, kept as is. */
export const ManagedFieldsEntrySchema = z.strictObject({
  manager: z.string().optional(),
  operation: z.string().optional(),
  apiVersion: z.string().optional(),
  time: z.string().nullable().optional(),
  fieldsType: z.string().optional(),
  fieldsV1: z.unknown().optional(),
  subresource: z.string().optional(),
});

/** `metav1.ObjectMeta`, every field. */
export const ObjectMetaSchema = z.strictObject({
  name: z.string().optional(),
  generateName: z.string().optional(),
  namespace: z.string().optional(),
  selfLink: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: int64().optional(),
  creationTimestamp: z.string().nullable().optional(),
  deletionTimestamp: z.string().nullable().optional(),
  deletionGracePeriodSeconds: int64().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  ownerReferences: z.array(OwnerReferenceSchema).optional(),
  finalizers: z.array(z.string()).optional(),
  managedFields: z.array(ManagedFieldsEntrySchema).optional(),
});
export type ObjectMeta = z.infer<typeof ObjectMetaSchema>;

export const LastOperationType = {
  Create: 'Create',
  Reconcile: 'Reconcile',
  Delete: 'Delete',
  Migrate: 'Migrate',
  Restore: 'Restore',
} as const;
export type LastOperationType = (typeof LastOperationType)[keyof typeof LastOperationType];

export const LastOperationState = {
  Processing: 'Processing',
  Succeeded: 'Succeeded',
  Error: 'Error',
  Failed: 'Failed',
  Pending: 'Pending',
  Aborted: 'Aborted',
} as const;
export type LastOperationState = (typeof LastOperationState)[keyof typeof LastOperationState];

export const LastOperationSchema = z.strictObject({
  type: z.string(),
  state: z.string(),
  progress: int32(),
  description: z.string(),
  lastUpdateTime: z.string(),
});
export type LastOperation = z.infer<typeof LastOperationSchema>;

export const LastErrorSchema = z.strictObject({
  description: z.string(),
  taskID: z.string().optional(),
  codes: z.array(z.string()).optional(),
  lastUpdateTime: z.string().optional(),
});

export const ConditionSchema = z.strictObject({
  type: z.string(),
  status: z.string(),
  lastTransitionTime: z.string().optional(),
  lastUpdateTime: z.string().optional(),
  reason: z.string().optional(),
  message: z.string().optional(),
  codes: z.array(z.string()).optional(),
});
export type Condition = z.infer<typeof ConditionSchema>;

/**
 * Free-form configuration an extension reads (`providerConfig`): any JSON value, kept as is (a `runtime.RawExtension`).
 */
export const RawExtensionSchema = z.unknown().meta({ 'x-kubernetes-preserve-unknown-fields': true });

export const SecretReferenceSchema = z.strictObject({
  name: z.string().optional(),
  namespace: z.string().optional(),
});

/**
 * An `intstr.IntOrString` (`maxSurge: 1`, `maxSurge: "25%"`). The CRD says `x-kubernetes-int-or-string`, which the
 * API server knows; the union's `anyOf` goes (see crds.ts).
 */
export const IntOrStringSchema = z.union([int32(), z.string()]).meta({ 'x-kubernetes-int-or-string': true });
export type IntOrString = z.infer<typeof IntOrStringSchema>;

/** A `resource.Quantity` (`cpu: 2`, `memory: 8Gi`): an int-or-string, as controller-gen has it in CRDs. */
export const QuantitySchema = z.union([int64(), z.string()]).meta({ 'x-kubernetes-int-or-string': true });
