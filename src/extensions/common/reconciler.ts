/**
 * The generic extension reconciler, as Gardener's extensions library (`extensions/pkg/controller`) has it around an
 * Actuator: it reads the object, leaves those of another `spec.type` alone, adds the finalizer before any work, calls
 * the actuator's reconcile (or, once the object is being deleted, its delete and then removes the finalizer), writes
 * the status (status.ts) and turns the actuator's outcome into the controller's result. An extension's own files hold
 * what is its own: the actuator.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ResourceRef } from '../../apis/refs.js';
import { Annotations, OPERATION_RECONCILE } from '../../apis/core/v1beta1/names.js';
import type { ResourceClient } from '../../runtime/client.js';
import { realClock, type Clock } from '../../runtime/clock.js';
import type { ReconcileContext, Reconciler, Request, Result } from '../../runtime/controller.js';
import { addFinalizer, hasFinalizer, removeFinalizer } from '../../runtime/finalizers.js';
import { patchStatusIfChanged } from '../../runtime/status.js';
import { extensionStatusPatch, type ExtensionObject } from './status.js';

/** The operation is done; `result` is what the extension reports of it in its own status fields. */
export interface ActuatorSucceeded<R> {
  readonly state: 'Succeeded';
  readonly description: string;
  readonly result?: R;
}

/** The operation goes on: the object is looked at again after `requeueAfter` ms (besides watch events). */
export interface ActuatorProcessing {
  readonly state: 'Processing';
  readonly progress: number;
  readonly description: string;
  readonly requeueAfter: number;
}

/**
 * The operation failed (`lastError`, with Gardener's error codes). Either the object is looked at again after
 * `requeueAfter` ms, for a cause that may go away by itself (a machine that may recover), or the reconcile fails
 * with `error`: the controller retries it with backoff, a TerminalError not at all (only a change of the object helps).
 */
export type ActuatorError = {
  readonly state: 'Error';
  readonly description: string;
  readonly codes?: readonly string[];
} & ({ readonly requeueAfter: number } | { readonly error: unknown });

export type ActuatorOutcome<R = never> = ActuatorSucceeded<R> | ActuatorProcessing | ActuatorError;

/**
 * What an extension does with its objects, as Gardener's `Actuator`: `delete` succeeds only once nothing of the object
 * is left (the finalizer goes then). An error thrown (rather than returned as an Error outcome) fails the reconcile
 * without a status write.
 */
export interface Actuator<T, R = never> {
  reconcile(ctx: ReconcileContext, object: T): Promise<ActuatorOutcome<R>>;
  delete(ctx: ReconcileContext, object: T): Promise<ActuatorOutcome<R>>;
  /**
   * The extension's own status fields written with an outcome (a Network's families, a DNSRecord's zone, a Worker's
   * machine deployments), beside `lastOperation`, whose `lastUpdateTime` they share.
   */
  statusFields?(object: T, outcome: ActuatorOutcome<R>, lastUpdateTime: string): Record<string, unknown>;
}

/** An extension object as the reconciler handles it. */
export type ExtensionResource = ExtensionObject & {
  readonly metadata: { name?: string; namespace?: string; finalizers?: string[] };
  readonly status?: Record<string, unknown>;
};

/** An object read: the extension's, or why it is not (left alone). */
export type Decoded<T> = { readonly value: T } | { readonly errors: unknown };

export interface ExtensionReconcilerOptions<T, R> {
  readonly client: ResourceClient;
  readonly ref: ResourceRef;
  /** The `spec.type` of the objects this extension serves. */
  readonly extensionType: string;
  readonly finalizer: string;
  readonly actuator: Actuator<T, R>;
  readonly clock?: Clock;
  /** A succeeded object is reconciled again after this long (Gardener's sync period). @default never */
  readonly resyncIntervalMs?: number;
  /** Decoding (and defaulting) of the object read. @default the object as read */
  readonly decode?: (object: KubernetesObject) => Decoded<T>;
}

/** True for an object whose `spec.type` is `type`. */
export function hasExtensionType(object: object, type: string): boolean {
  return (object as { spec?: { type?: unknown } }).spec?.type === type;
}

export class ExtensionReconciler<T extends ExtensionResource, R = never> implements Reconciler {
  private readonly client: ResourceClient;
  private readonly ref: ResourceRef;
  private readonly actuator: Actuator<T, R>;
  private readonly clock: Clock;

  constructor(private readonly opts: ExtensionReconcilerOptions<T, R>) {
    this.client = opts.client;
    this.ref = opts.ref;
    this.actuator = opts.actuator;
    this.clock = opts.clock ?? realClock;
  }

  async reconcile(req: Request, ctx: ReconcileContext): Promise<Result | void> {
    const read = await this.client.get<KubernetesObject>(this.ref, req.name, req.namespace, { signal: ctx.signal });
    if (!read || !hasExtensionType(read, this.opts.extensionType)) return;
    const decoded = this.opts.decode ? this.opts.decode(read) : { value: read as unknown as T };
    if (!('value' in decoded)) {
      // The API server validates extension objects; an object that does not decode is left alone, not guessed at.
      ctx.logger.error({ errors: decoded.errors }, `${this.ref.kind} cannot be decoded, skipping`);
      return;
    }
    const object = decoded.value;
    if (object.metadata.deletionTimestamp) return this.delete(object, ctx);

    await addFinalizer(this.client, this.ref, object, this.opts.finalizer, { signal: ctx.signal });
    const outcome = await this.actuator.reconcile(ctx, object);
    await this.writeStatus(object, outcome, ctx);
    if (outcome.state !== 'Succeeded') return resultOf(outcome);
    // As Gardener's extensions: the gardenlet's request to reconcile (written with each deploy) is answered.
    if ((read.metadata?.annotations ?? {})[Annotations.operation] === OPERATION_RECONCILE) {
      await this.client.mergePatch(
        this.ref,
        req.name,
        req.namespace,
        { metadata: { annotations: { [Annotations.operation]: null } } },
        { signal: ctx.signal },
      );
    }
    ctx.logger.debug(outcome.description);
    return this.opts.resyncIntervalMs !== undefined ? { requeueAfter: this.opts.resyncIntervalMs } : undefined;
  }

  private async delete(object: T, ctx: ReconcileContext): Promise<Result | void> {
    if (!hasFinalizer(object, this.opts.finalizer)) return;
    const outcome = await this.actuator.delete(ctx, object);
    if (outcome.state !== 'Succeeded') {
      // The finalizer stays while anything of the object may be left.
      await this.writeStatus(object, outcome, ctx);
      return resultOf(outcome);
    }
    await removeFinalizer(this.client, this.ref, object, this.opts.finalizer, { signal: ctx.signal });
    ctx.logger.debug(outcome.description);
  }

  /** Merge-patches the status; skipped when nothing but timestamps would change (no needless watch events). */
  private async writeStatus(object: T, outcome: ActuatorOutcome<R>, ctx: ReconcileContext): Promise<void> {
    const patch = actuatorStatusPatch(this.actuator, object, outcome, this.clock.now());
    try {
      await patchStatusIfChanged(this.client, this.ref, object, patch, { signal: ctx.signal });
    } catch (e) {
      if (outcome.state !== 'Error') throw e;
      // The operation's error matters more; the status is written again on the retry.
      ctx.logger.warn({ err: e }, `cannot write the error to the ${this.ref.kind} status`);
    }
  }
}

/**
 * The status merge patch the reconciler writes for `outcome` at `now` (ms since the epoch): the common part
 * (lastOperation, observedGeneration, lastError) and the actuator's own fields, which share lastOperation's time.
 */
export function actuatorStatusPatch<T extends ExtensionObject, R>(
  actuator: Pick<Actuator<T, R>, 'statusFields'>,
  object: T,
  outcome: ActuatorOutcome<R>,
  now: number,
): Record<string, unknown> {
  const common = extensionStatusPatch(object, outcome, now);
  return { ...common, ...actuator.statusFields?.(object, outcome, common.lastOperation.lastUpdateTime) };
}

/** The controller's result of an outcome that is not a success: look again later, or fail. */
function resultOf(outcome: ActuatorProcessing | ActuatorError): Result {
  if ('error' in outcome) throw outcome.error;
  return { requeueAfter: outcome.requeueAfter };
}
