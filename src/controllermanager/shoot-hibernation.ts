/**
 * The shoot hibernation controller, as gardener-controller-manager's: a Shoot with `spec.hibernation.schedules` has
 * `spec.hibernation.enabled` set to true at a schedule's `start` and to false at its `end`, in the schedule's
 * location, and `status.lastHibernationTriggerTime` set to when it did. A time that passed since the last trigger
 * (or since the shoot was created) counts once; one missed by more than the trigger deadline (the controller was
 * down) is skipped. The shoot is looked at again at its schedules' next time.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { decode } from '../apis/admission.js';
import { nextTime, parseCron, previousTime, type CronSchedule } from '../apis/core/v1beta1/hibernation.js';
import type { Shoot } from '../apis/core/v1beta1/shoot.js';
import { Shoots } from '../apis/registry.js';
import { Refs } from '../apis/refs.js';
import type { ResourceClient } from '../runtime/client.js';
import { realClock, type Clock } from '../runtime/clock.js';
import {
  requestFor,
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
} from '../runtime/controller.js';
import type { Manager } from '../runtime/manager.js';
import { specOrMetadataChanged } from '../runtime/predicates.js';
import { metav1Time } from '../apis/meta/time.js';

export const HIBERNATION_CONTROLLER_NAME = 'shoot-hibernation';
/** Gardener's default `triggerDeadlineDuration`: a schedule time missed by longer is not acted on. */
export const DEFAULT_TRIGGER_DEADLINE_MS = 2 * 3600_000;
/** The longest wait for a next schedule time: timers don't take longer ones, and a restart looks again anyway. */
const MAX_REQUEUE_MS = 12 * 3600_000;

interface Trigger {
  readonly cron: CronSchedule;
  readonly location: string;
  /** `start` hibernates, `end` wakes up. */
  readonly enabled: boolean;
}

/** The shoot's schedule times as triggers; expressions that don't parse (validation refuses them) are left out. */
function triggers(shoot: Shoot): Trigger[] {
  return (shoot.spec.hibernation?.schedules ?? []).flatMap((s) =>
    (
      [
        [s.start, true],
        [s.end, false],
      ] as const
    ).flatMap(([spec, enabled]) => {
      if (spec === undefined) return [];
      try {
        return [{ cron: parseCron(spec), location: s.location ?? 'UTC', enabled }];
      } catch {
        return [];
      }
    }),
  );
}

export interface HibernationDecision {
  /** What `spec.hibernation.enabled` is to become now; undefined when no schedule time is due. */
  readonly enabled?: boolean;
  /** The schedule time acted on (or skipped because it was missed by more than the deadline). */
  readonly scheduled?: number;
  readonly missed?: boolean;
  /** When a schedule has its next time; undefined when none has one. */
  readonly next?: number;
}

/**
 * What the schedules ask for at `now`: the latest schedule time after the last trigger (or the shoot's creation)
 * and not after now, unless it is older than `deadlineMs`; and the next schedule time.
 */
export function hibernationDecision(shoot: Shoot, now: number, deadlineMs: number): HibernationDecision {
  const since = Date.parse(shoot.status?.lastHibernationTriggerTime ?? shoot.metadata.creationTimestamp ?? '');
  let due: { at: number; enabled: boolean } | undefined;
  let next: number | undefined;
  for (const t of triggers(shoot)) {
    const at = previousTime(t.cron, t.location, now);
    // Later wins; at the same minute, hibernating wins.
    if (at !== undefined && !(at <= since) && (due === undefined || at > due.at || (at === due.at && t.enabled))) {
      due = { at, enabled: t.enabled };
    }
    const upcoming = nextTime(t.cron, t.location, now);
    if (upcoming !== undefined && (next === undefined || upcoming < next)) next = upcoming;
  }
  const nextPart = next !== undefined ? { next } : {};
  if (due === undefined) return nextPart;
  if (now - due.at > deadlineMs) return { scheduled: due.at, missed: true, ...nextPart };
  return { enabled: due.enabled, scheduled: due.at, ...nextPart };
}

export interface ShootHibernationOptions {
  readonly client: ResourceClient;
  /** Reads the shoot (the informer cache). */
  readonly shoot: (name: string, namespace: string | undefined) => Promise<unknown>;
  readonly clock?: Clock;
  /** @default DEFAULT_TRIGGER_DEADLINE_MS */
  readonly triggerDeadlineMs?: number;
}

export class ShootHibernationReconciler implements Reconciler {
  private readonly clock: Clock;

  constructor(private readonly options: ShootHibernationOptions) {
    this.clock = options.clock ?? realClock;
  }

  async reconcile(req: Request, ctx: ReconcileContext): Promise<Result | void> {
    const raw = await this.options.shoot(req.name, req.namespace);
    const shoot = raw ? decode(Shoots, raw).value : undefined;
    if (!shoot || shoot.metadata.deletionTimestamp || !(shoot.spec.hibernation?.schedules?.length ?? 0)) return;
    const now = this.clock.now();
    const decision = hibernationDecision(shoot, now, this.options.triggerDeadlineMs ?? DEFAULT_TRIGGER_DEADLINE_MS);
    const requeue =
      decision.next !== undefined
        ? { requeueAfter: Math.min(MAX_REQUEUE_MS, Math.max(1_000, decision.next - now)) }
        : undefined;
    if (decision.missed) {
      ctx.logger.info(
        { scheduled: metav1Time(decision.scheduled!) },
        'hibernation schedule time missed by more than the trigger deadline, skipped',
      );
    }
    if (decision.enabled === undefined) return requeue;
    const { client } = this.options;
    const name = shoot.metadata.name ?? '';
    if (shoot.spec.hibernation?.enabled !== decision.enabled) {
      // Bound to the version decided on: a concurrent change is a conflict and a retry on the newer shoot.
      await client.mergePatch(
        Refs.shoot,
        name,
        shoot.metadata.namespace,
        {
          metadata: { resourceVersion: shoot.metadata.resourceVersion },
          spec: { hibernation: { enabled: decision.enabled } },
        },
        { signal: ctx.signal },
      );
    }
    await client.mergePatch(
      Refs.shoot,
      name,
      shoot.metadata.namespace,
      { status: { lastHibernationTriggerTime: metav1Time(now) } },
      { subresource: 'status', signal: ctx.signal },
    );
    ctx.logger.info(
      { enabled: decision.enabled, scheduled: metav1Time(decision.scheduled!) },
      decision.enabled ? 'hibernating shoot by schedule' : 'waking up shoot by schedule',
    );
    return requeue;
  }
}

/** Adds the controller: Shoots with hibernation schedules are its requests. */
export function addShootHibernationController(
  manager: Manager,
  options: Pick<ShootHibernationOptions, 'triggerDeadlineMs'> = {},
): void {
  const shoots = manager.informer<KubernetesObject>(Refs.shoot);
  const scheduled = (s: KubernetesObject) =>
    ((s as { spec?: { hibernation?: { schedules?: unknown[] } } }).spec?.hibernation?.schedules?.length ?? 0) > 0;
  manager
    .controller({
      name: HIBERNATION_CONTROLLER_NAME,
      reconciler: new ShootHibernationReconciler({
        client: manager.client,
        clock: manager.clock,
        shoot: async (name, namespace) => shoots.get(name, namespace),
        ...options,
      }),
    })
    .watch(shoots, (s) => (scheduled(s) ? [requestFor(s)] : []), specOrMetadataChanged);
}
