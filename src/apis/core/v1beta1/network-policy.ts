/**
 * Gardener's conventions for NetworkPolicies: pods opt in to a policy with the label
 * `networking.gardener.cloud/<target>: allowed`, and each policy says what it allows in an annotation.
 */
import type { V1NetworkPolicy } from '@kubernetes/client-node';

export const POLICY_LABEL_PREFIX = 'networking.gardener.cloud';

/** A NetworkPolicy of a seed namespace, with Gardener's description annotation. */
export function networkPolicyObject(
  meta: { readonly name: string; readonly namespace: string; readonly labels?: Record<string, string> },
  description: string,
  spec: object,
): V1NetworkPolicy {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: {
      name: meta.name,
      namespace: meta.namespace,
      ...(meta.labels ? { labels: { ...meta.labels } } : {}),
      annotations: { [`${POLICY_LABEL_PREFIX}/description`]: description },
    },
    spec: spec as V1NetworkPolicy['spec'],
  };
}

/** The labels that let a pod use the gardenlet's egress policies: `networking.gardener.cloud/<target>: allowed`. */
export function allowedTo(
  ...targets: ('to-dns' | 'to-public-networks' | 'to-private-networks' | 'to-blocked-cidrs')[]
) {
  return Object.fromEntries(targets.map((t) => [`${POLICY_LABEL_PREFIX}/${t}`, 'allowed'])) as Record<string, string>;
}
