/**
 * Types core.gardener.cloud/v1beta1 shares between Shoot and Seed, and the Kubernetes types they embed. Strict, as
 * Gardener's API server decodes them: an unknown field is an error. `runtime.RawExtension` fields stay open.
 */
import { z } from 'zod';
import { int32, int64, QuantitySchema, RawExtensionSchema } from '../../meta/schemas.js';

/** A `metav1.Duration` (`2h`, `10m30s`). */
export const DurationSchema = z.string();

/** A `corev1.ResourceList` (`cpu: 2`, `memory: 8Gi`). */
export const ResourceListSchema = z.record(z.string(), QuantitySchema);

/** `map[string]bool` feature gates of a Kubernetes component. */
export const FeatureGatesSchema = z.record(z.string(), z.boolean());

export const StringMapSchema = z.record(z.string(), z.string());

/** `corev1.ObjectReference`. */
export const ObjectReferenceSchema = z.strictObject({
  kind: z.string().optional(),
  namespace: z.string().optional(),
  name: z.string().optional(),
  uid: z.string().optional(),
  apiVersion: z.string().optional(),
  resourceVersion: z.string().optional(),
  fieldPath: z.string().optional(),
});

/** Gardener's `Backup`: where etcd's backups go (a Seed's, or a self-hosted shoot's control plane pool's). */
export const BackupSchema = z.strictObject({
  provider: z.string(),
  providerConfig: RawExtensionSchema.optional(),
  region: z.string().optional(),
  credentialsRef: ObjectReferenceSchema.optional(),
});

/** `autoscalingv1.CrossVersionObjectReference`. */
export const CrossVersionObjectReferenceSchema = z.strictObject({
  kind: z.string(),
  name: z.string(),
  apiVersion: z.string().optional(),
});

/** A named reference extensions' configs can name (`spec.resources`). */
export const NamedResourceReferenceSchema = z.strictObject({
  name: z.string(),
  resourceRef: CrossVersionObjectReferenceSchema,
});

/** An extension of a shoot or seed: its type and its own configuration. */
export const ExtensionSchema = z.strictObject({
  type: z.string(),
  providerConfig: RawExtensionSchema.optional(),
  disabled: z.boolean().optional(),
});

export const AccessRestrictionSchema = z.strictObject({
  name: z.string(),
});

export const AccessRestrictionWithOptionsSchema = z.strictObject({
  name: z.string(),
  options: StringMapSchema.optional(),
});

/** The gardenlet that last acted on the object. */
export const GardenerSchema = z.strictObject({
  id: z.string().optional(),
  name: z.string().optional(),
  version: z.string().optional(),
});

/** `corev1.Taint`. */
export const CoreTaintSchema = z.strictObject({
  key: z.string(),
  value: z.string().optional(),
  effect: z.string(),
  timeAdded: z.string().optional(),
});

/** `corev1.Toleration`. */
export const CoreTolerationSchema = z.strictObject({
  key: z.string().optional(),
  operator: z.string().optional(),
  value: z.string().optional(),
  effect: z.string().optional(),
  tolerationSeconds: int64().optional(),
});

/** Minimum resource requests of a control-plane component's autoscaling. */
export const ControlPlaneAutoscalingSchema = z.strictObject({
  minAllowed: ResourceListSchema.optional(),
});

export { int32, int64 };
