/**
 * Which updates of watched objects matter to a controller (controller-runtime calls these predicates). Without
 * them, every status write (a controller's own, the load balancer's, an extension's) would start a full reconcile.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { deepEqual } from '../apis/meta/objects.js';

type WithStatus = KubernetesObject & { status?: Record<string, unknown> };

/**
 * Spec (generation), deletion, labels or annotations changed: not a status-only update. Finalizer changes are not
 * enough: a controller's own finalizer patch would otherwise start a second reconcile right after the first.
 */
export function specOrMetadataChanged(obj: KubernetesObject, old: KubernetesObject): boolean {
  const a = obj.metadata ?? {};
  const b = old.metadata ?? {};
  return (
    a.generation !== b.generation ||
    a.deletionTimestamp !== b.deletionTimestamp ||
    !deepEqual(a.labels, b.labels) ||
    !deepEqual(a.annotations, b.annotations)
  );
}

/** The load balancer addresses of a Service changed. */
export function loadBalancerChanged(obj: WithStatus, old: WithStatus): boolean {
  const ingress = (o: WithStatus) => (o.status?.loadBalancer as { ingress?: unknown } | undefined)?.ingress;
  return !deepEqual(ingress(obj), ingress(old)) || obj.metadata?.deletionTimestamp !== old.metadata?.deletionTimestamp;
}

/** An extension resource's outcome changed: its last operation state or observed generation. */
export function extensionOutcomeChanged(obj: WithStatus, old: WithStatus): boolean {
  const outcome = (o: WithStatus) => [
    (o.status?.lastOperation as { state?: unknown } | undefined)?.state,
    o.status?.observedGeneration,
    o.metadata?.generation,
  ];
  return !deepEqual(outcome(obj), outcome(old));
}
