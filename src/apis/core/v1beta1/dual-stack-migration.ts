/**
 * Where a shoot's migration to dual-stack stands, as Gardener tracks it: the constraint `DualStackNodesMigrationReady`
 * in `status.constraints` exists from the reconcile that finds the shoot's Network of fewer families than its spec
 * until the Network runs every family. It is `Progressing` (`NodesNotMigrated`) while a Node lacks a pod range of a
 * family, `True` (`NodesMigrated`) once every Node has one of each. Until it is `True`, the network (calico's
 * settings, and the pod network settings of the machines) keeps the primary family only; while it exists, CoreDNS's
 * Service does too. The Shoot's operation stays `Processing` until it is removed.
 */
import type { Condition } from '../../meta/schemas.js';
import { metav1Time } from '../../meta/time.js';

export const DUAL_STACK_NODES_MIGRATION_READY = 'DualStackNodesMigrationReady';

interface WithConstraints {
  readonly status?: { readonly constraints?: readonly Condition[] };
}

/** The shoot's DualStackNodesMigrationReady constraint, if it migrates. */
export function nodesMigrationConstraint(shoot: WithConstraints): Condition | undefined {
  return shoot.status?.constraints?.find((c) => c.type === DUAL_STACK_NODES_MIGRATION_READY);
}

/** Whether the shoot's Nodes are migrating: the constraint exists and is not True. */
export function nodesMigrating(shoot: WithConstraints): boolean {
  const constraint = nodesMigrationConstraint(shoot);
  return constraint !== undefined && constraint.status !== 'True';
}

/** The families the shoot's network runs now: the primary alone while its Nodes migrate. */
export function networkFamiliesInEffect<T>(families: readonly T[], shoot: WithConstraints): T[] {
  return nodesMigrating(shoot) ? families.slice(0, 1) : [...families];
}

/** The families CoreDNS's Service has now: the primary alone until the migration is over. */
export function dnsServiceFamiliesInEffect<T>(families: readonly T[], shoot: WithConstraints): T[] {
  return nodesMigrationConstraint(shoot) !== undefined ? families.slice(0, 1) : [...families];
}

/** A Node as the migration counts it. */
export interface NodePodRanges {
  readonly metadata?: { readonly name?: string };
  readonly spec?: { readonly podCIDRs?: readonly string[] };
}

/**
 * The constraint for Nodes `nodes` of a shoot of `families` families: True once there is a Node and every Node has
 * a pod range per family (as Gardener counts them), else Progressing with the Nodes still to migrate.
 */
export function nodesMigrationCondition(
  nodes: readonly NodePodRanges[],
  families: number,
  now: number,
  previous?: Condition,
): Condition {
  const behind = nodes.filter((n) => (n.spec?.podCIDRs?.length ?? 0) < families).map((n) => n.metadata?.name ?? '?');
  const done = nodes.length > 0 && behind.length === 0;
  const status = done ? 'True' : 'Progressing';
  const time = metav1Time(now);
  return {
    type: DUAL_STACK_NODES_MIGRATION_READY,
    status,
    lastTransitionTime: previous?.status === status && previous.lastTransitionTime ? previous.lastTransitionTime : time,
    lastUpdateTime: time,
    reason: done ? 'NodesMigrated' : 'NodesNotMigrated',
    message: done
      ? `All ${nodes.length} Nodes have pod ranges of both IP families.`
      : nodes.length === 0
        ? 'Migrating the Nodes to both IP families: the shoot has no Node yet.'
        : `Migrating the Nodes to both IP families: ${nodes.length - behind.length} of ${nodes.length} Nodes ` +
          `migrated, ${behind.join(', ')} left.`,
  };
}
