/**
 * The scheduler's Shoot reconciler (Gardener's gardener-scheduler): binds a Shoot without `spec.seedName` to the seed
 * {@link determineSeed} chooses, or reports on the Shoot why no seed fits (a `SchedulingFailed` event and a Pending
 * last operation) and tries again later.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { decode } from '../apis/admission.js';
import type { Seed } from '../apis/core/v1beta1/seed.js';
import type { Shoot } from '../apis/core/v1beta1/shoot.js';
import { Seeds, Shoots, type KindInfo } from '../apis/registry.js';
import { lastOperation } from '../runtime/last-operation.js';
import { Refs } from '../apis/refs.js';
import { type ResourceClient } from '../runtime/client.js';
import { asApiError } from '../runtime/errors.js';
import { realClock, type Clock } from '../runtime/clock.js';
import type { ReconcileContext, Reconciler, Request, Result } from '../runtime/controller.js';
import type { EventRecorder } from '../runtime/events.js';
import { patchStatusIfChanged } from '../runtime/status.js';
import { determineSeed } from './determine-seed.js';

/** Gardener's event reasons (`ShootEventSchedulingSuccessful`, `ShootEventSchedulingFailed`). */
export const EventReasons = { scheduled: 'SchedulingSuccessful', failed: 'SchedulingFailed' } as const;
/** How soon an unschedulable shoot is tried again (a seed change tries at once). */
export const SCHEDULING_RETRY_MS = 30_000;

/** Reads of the watched objects: the manager's informer caches. */
export interface SchedulerReader {
  shoot(name: string, namespace: string | undefined): Promise<unknown>;
  seeds(): Promise<readonly unknown[]>;
  shoots(): Promise<readonly unknown[]>;
}

export interface ShootSchedulerOptions {
  readonly client: ResourceClient;
  readonly reader: SchedulerReader;
  readonly recorder: EventRecorder;
  readonly clock?: Clock;
}

/** The objects of the kind that decode, defaulted; the others can't take part in a decision. */
function decodeAll<T>(kind: KindInfo<T>, objects: readonly unknown[]): T[] {
  return objects.flatMap((o) => {
    const { value } = decode(kind, o);
    return value === undefined ? [] : [kind.default(value)];
  });
}

export class ShootSchedulerReconciler implements Reconciler {
  private readonly clock: Clock;

  constructor(private readonly options: ShootSchedulerOptions) {
    this.clock = options.clock ?? realClock;
  }

  async reconcile(req: Request, ctx: ReconcileContext): Promise<Result | void> {
    const raw = await this.options.reader.shoot(req.name, req.namespace);
    if (!raw) return;
    const decoded = decode(Shoots, raw);
    if (!decoded.value) {
      ctx.logger.error({ errors: decoded.errors }, 'shoot cannot be decoded, skipping');
      return;
    }
    const shoot = Shoots.default(decoded.value);
    if (shoot.spec.seedName || shoot.metadata.deletionTimestamp) return;

    const seeds: Seed[] = decodeAll(Seeds, await this.options.reader.seeds());
    const shoots: Shoot[] = decodeAll(Shoots, await this.options.reader.shoots());
    const decision = determineSeed(shoot, seeds, shoots);
    if ('error' in decision) return this.reportFailure(shoot, decision.error, ctx);

    const seedName = decision.seed.metadata.name ?? '';
    try {
      // Bound to the version the decision was made on: a concurrent change makes this a conflict, and a retry.
      await this.options.client.mergePatch(
        Refs.shoot,
        shoot.metadata.name ?? '',
        shoot.metadata.namespace,
        { metadata: { resourceVersion: shoot.metadata.resourceVersion }, spec: { seedName } },
        { signal: ctx.signal },
      );
    } catch (e) {
      const api = asApiError(e);
      if (api && api.code === 422)
        return this.reportFailure(shoot, `binding to seed '${seedName}': ${api.message}`, ctx);
      throw e;
    }
    ctx.logger.info({ seed: seedName, region: shoot.spec.region }, 'shoot scheduled to seed');
    await this.options.recorder.event(
      shoot as KubernetesObject,
      'Normal',
      EventReasons.scheduled,
      `Scheduled to seed '${seedName}'`,
    );
  }

  private async reportFailure(shoot: Shoot, error: string, ctx: ReconcileContext): Promise<Result> {
    const description = `Failed to schedule Shoot: ${error}`;
    ctx.logger.info({ reason: error }, 'shoot cannot be scheduled');
    const op = lastOperation(this.clock, 'Create', 'Pending', 0, description);
    // Only when the reason changed: the retries of an unschedulable shoot neither write nor repeat the event.
    const changed = await patchStatusIfChanged(
      this.options.client,
      Refs.shoot,
      shoot,
      { lastOperation: op },
      {
        signal: ctx.signal,
      },
    );
    if (changed)
      await this.options.recorder.event(shoot as KubernetesObject, 'Warning', EventReasons.failed, description);
    return { requeueAfter: SCHEDULING_RETRY_MS };
  }
}
