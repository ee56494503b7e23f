/**
 * The shoot care controller, as Gardener's: checks what runs for a shoot and reports it in the shoot's
 * conditions, periodically and whenever a control plane process starts or exits (workloads of the seed: their
 * readiness and the API server's /readyz).
 *   APIServerAvailable   /readyz of the shoot's kube-apiserver at its load-balancer address
 *   ControlPlaneHealthy  etcd, kube-apiserver, kube-controller-manager, kube-scheduler with their replicas ready
 *   EveryNodeReady       (with machines) every machine has a Node, and every Node is Ready
 *   SystemComponentsHealthy  (with machines) CoreDNS available, the seed namespace's ManagedResources applied and
 *                        healthy
 * and, while the shoot's API server answers, the constraint HibernationPossible (constraints.ts).
 * A shoot that is (or is being) hibernated or waking up is not checked: every condition is True with reason
 * `ConditionNotChecked`, as Gardener reports it. Only this controller writes these conditions; the shoot reconciler
 * keeps them when it writes its own.
 */
import type { KubernetesObject, V1Namespace } from '@kubernetes/client-node';
import { decode } from '../../../apis/admission.js';
import type { Condition } from '../../../apis/meta/schemas.js';
import { Shoots } from '../../../apis/registry.js';
import type { Shoot } from '../../../apis/core/v1beta1/shoot.js';
import type { ControlPlaneHealth, HealthCheck, WorkersHealth } from './health.js';
import { type ResourceClient } from '../../../runtime/client.js';
import { isConflict } from '../../../runtime/errors.js';
import { realClock, type Clock } from '../../../runtime/clock.js';
import type { ReconcileContext, Reconciler, Request, Result } from '../../../runtime/controller.js';
import { hasFinalizer } from '../../../runtime/finalizers.js';
import { sameIgnoringTimestamps } from '../../../runtime/status.js';
import { condition, mergeConditions } from '../../../runtime/last-operation.js';
import { SHOOT_FINALIZER, seedNamespaceName } from '../../../apis/core/v1beta1/names.js';
import { Refs } from '../../../apis/refs.js';
import { classifySeedNamespace } from '../ownership.js';
import {
  CONSTRAINT_HIBERNATION_POSSIBLE,
  hibernationEnabled,
  isHibernated,
} from '../../../apis/core/v1beta1/hibernation.js';

export const CONDITION_API_SERVER_AVAILABLE = 'APIServerAvailable';
export const CONDITION_CONTROL_PLANE_HEALTHY = 'ControlPlaneHealthy';
export const CONDITION_EVERY_NODE_READY = 'EveryNodeReady';
export const CONDITION_SYSTEM_COMPONENTS_HEALTHY = 'SystemComponentsHealthy';
/**
 * How often a healthy shoot is checked: Gardener's local setup's 30 s (its default is a minute). Each check reads the
 * shoot's API server (its Nodes, system pods, webhooks) and its control plane in the seed: per shoot on a seed, so
 * its period is what the checks cost a seed with many shoots. Changes of the Shoot are checked at once.
 */
export const DEFAULT_CARE_SYNC_PERIOD_MS = 30_000;
/** While something is wrong, look again sooner: a restarted process should turn the condition back quickly. */
const UNHEALTHY_SYNC_PERIOD_MS = 1_000;

export interface ShootCareOptions {
  /** The seed's client: the shoot's seed namespace. */
  readonly client: ResourceClient;
  /** The garden's client, where the Shoot's status goes. @default `client` */
  readonly garden?: ResourceClient;
  /** The control plane's health: its workloads' in the seed. */
  readonly controlPlaneHealth: (namespace: string) => Promise<ControlPlaneHealth | undefined>;
  /**
   * The machines' health (EveryNodeReady, SystemComponentsHealthy) of a shoot with machines; undefined while it has
   * none yet. Without it, shoots' machines are not judged (nobody runs them).
   */
  readonly workersHealth?: (shoot: Shoot) => Promise<WorkersHealth | undefined>;
  /**
   * The `HibernationPossible` constraint of a shoot whose API server answers (constraints.ts, from the shoot's
   * webhook configurations); undefined when it can't be told. Without it, no constraint is written.
   */
  readonly hibernationPossible?: (shoot: Shoot) => Promise<HealthCheck | undefined>;
  /** Reads the shoot (the informer cache). */
  readonly shoot: (name: string, namespace: string | undefined) => Promise<unknown>;
  readonly seedName?: string;
  readonly syncPeriodMs?: number;
  readonly clock?: Clock;
}

/** Shoot updates the care controller reacts to: a new spec, conditions another writer changed, a wake-up. */
export function conditionsOrSpecChanged(obj: KubernetesObject, old: KubernetesObject): boolean {
  const conditions = (o: KubernetesObject) => (o as { status?: { conditions?: unknown } }).status?.conditions;
  return (
    obj.metadata?.generation !== old.metadata?.generation ||
    obj.metadata?.deletionTimestamp !== old.metadata?.deletionTimestamp ||
    !sameIgnoringTimestamps(conditions(obj), conditions(old)) ||
    // Woken up: checked again at once.
    (obj as { status?: { hibernated?: boolean } }).status?.hibernated !==
      (old as { status?: { hibernated?: boolean } }).status?.hibernated
  );
}

export class ShootCareReconciler implements Reconciler {
  private readonly clock: Clock;

  constructor(private readonly options: ShootCareOptions) {
    this.clock = options.clock ?? realClock;
  }

  async reconcile(req: Request, ctx: ReconcileContext): Promise<Result | void> {
    const raw = await this.options.shoot(req.name, req.namespace);
    const shoot = raw ? decode(Shoots, raw).value : undefined;
    if (!shoot?.spec.seedName || shoot.metadata.deletionTimestamp || !hasFinalizer(shoot, SHOOT_FINALIZER)) return;
    if (this.options.seedName !== undefined && shoot.spec.seedName !== this.options.seedName) return;
    // What runs under the seed namespace's name is another shoot's when that shoot owns the namespace (ownership.ts).
    const namespace = await this.options.client.get<V1Namespace>(Refs.namespace, seedNamespaceName(shoot), undefined, {
      signal: ctx.signal,
    });
    if (classifySeedNamespace(namespace, shoot).kind === 'foreign') return;

    const previous = (type: string) => shoot.status?.conditions?.find((c) => c.type === type);
    const workersHealth = this.options.workersHealth;
    const withMachines =
      workersHealth !== undefined && (shoot.spec.provider?.workers ?? []).some((w) => (w.minimum ?? 0) > 0);
    if (hibernationEnabled(shoot) || isHibernated(shoot)) {
      const types = [
        CONDITION_API_SERVER_AVAILABLE,
        CONDITION_CONTROL_PLANE_HEALTHY,
        ...(withMachines ? [CONDITION_EVERY_NODE_READY, CONDITION_SYSTEM_COMPONENTS_HEALTHY] : []),
      ];
      const updates = types.map((t) => this.condition(t, true, 'ConditionNotChecked', HIBERNATED, previous));
      await this.writeConditions(shoot as KubernetesObject & typeof shoot, updates, ctx);
      return { requeueAfter: this.options.syncPeriodMs ?? DEFAULT_CARE_SYNC_PERIOD_MS };
    }
    const health = await this.options.controlPlaneHealth(seedNamespaceName(shoot));
    const updates: Condition[] =
      health === undefined
        ? [
            this.condition(CONDITION_API_SERVER_AVAILABLE, false, 'ControlPlaneNotRunning', notRunning, previous),
            this.condition(CONDITION_CONTROL_PLANE_HEALTHY, false, 'ControlPlaneNotRunning', notRunning, previous),
          ]
        : [
            this.condition(
              CONDITION_API_SERVER_AVAILABLE,
              health.apiServer.ok,
              health.apiServer.reason,
              health.apiServer.message,
              previous,
            ),
            this.condition(
              CONDITION_CONTROL_PLANE_HEALTHY,
              health.controlPlane.ok,
              health.controlPlane.reason,
              health.controlPlane.message,
              previous,
            ),
          ];
    let workersHealthy = true;
    if (withMachines) {
      const workers = await workersHealth!(shoot);
      const nodes = workers?.nodes ?? { ok: false, reason: 'MissingNodes', message: 'no machines yet' };
      const system = workers?.system ?? { ok: false, reason: 'MissingNodes', message: 'no machines yet' };
      updates.push(
        this.condition(CONDITION_EVERY_NODE_READY, nodes.ok, nodes.reason, nodes.message, previous),
        this.condition(CONDITION_SYSTEM_COMPONENTS_HEALTHY, system.ok, system.reason, system.message, previous),
      );
      workersHealthy = nodes.ok && system.ok;
    }
    // Constraints, as Gardener's care controller checks them: only while the shoot's API server answers.
    const constraints: Condition[] = [];
    if (health?.apiServer.ok === true && this.options.hibernationPossible) {
      const possible = await this.options.hibernationPossible(shoot).catch(() => undefined);
      if (possible) {
        const before = shoot.status?.constraints?.find((c) => c.type === CONSTRAINT_HIBERNATION_POSSIBLE);
        constraints.push(
          condition(
            this.clock,
            CONSTRAINT_HIBERNATION_POSSIBLE,
            possible.ok,
            possible.reason,
            possible.message,
            before,
          ),
        );
      }
    }
    await this.writeConditions(shoot as KubernetesObject & typeof shoot, updates, ctx, constraints);
    const healthy = health?.apiServer.ok === true && health.controlPlane.ok && workersHealthy;
    return {
      requeueAfter: healthy ? (this.options.syncPeriodMs ?? DEFAULT_CARE_SYNC_PERIOD_MS) : UNHEALTHY_SYNC_PERIOD_MS,
    };
  }

  private condition(
    type: string,
    ok: boolean,
    reason: string,
    message: string,
    previous: (type: string) => Condition | undefined,
  ): Condition {
    return condition(this.clock, type, ok, reason, message, previous(type));
  }

  /**
   * Merges the conditions into the shoot's, guarded by its resourceVersion: on a conflict (the shoot reconciler
   * wrote meanwhile) the reconcile is simply retried on the newer object.
   */
  private async writeConditions(
    shoot: {
      metadata: { name?: string; namespace?: string; resourceVersion?: string };
      status?: { conditions?: Condition[]; constraints?: Condition[] };
    },
    updates: Condition[],
    ctx: ReconcileContext,
    constraintUpdates: Condition[] = [],
  ): Promise<void> {
    const merged = mergeConditions(shoot.status?.conditions, updates);
    const constraints = mergeConditions(shoot.status?.constraints, constraintUpdates);
    if (
      sameIgnoringTimestamps(shoot.status?.conditions ?? [], merged) &&
      sameIgnoringTimestamps(shoot.status?.constraints ?? [], constraints)
    ) {
      return;
    }
    try {
      await (this.options.garden ?? this.options.client).mergePatch(
        Refs.shoot,
        shoot.metadata.name ?? '',
        shoot.metadata.namespace,
        {
          metadata: { resourceVersion: shoot.metadata.resourceVersion },
          status: { conditions: merged, ...(constraints.length > 0 ? { constraints } : {}) },
        },
        { subresource: 'status', signal: ctx.signal },
      );
    } catch (e) {
      if (!isConflict(e)) throw e;
      throw new Error('the shoot changed while its conditions were written; retrying', { cause: e });
    }
  }
}

const notRunning = 'The shoot control plane is not running (yet).';
const HIBERNATED = 'Shoot cluster has been hibernated.';
