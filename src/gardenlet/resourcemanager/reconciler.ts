/**
 * The resource manager: ManagedResources (`resources.gardener.cloud/v1alpha1`) of the seed applied to their target
 * cluster as gardener-resource-manager does. The objects of the referenced Secrets are applied server-side (field
 * manager `gardener-resource-manager`, forced) in dependency order, with the injected labels and the origin
 * annotation; objects the ManagedResource no longer holds are deleted (unless `keep-object`); deleting the
 * ManagedResource deletes its objects (unless `keepObjects`) before its finalizer goes. Its status says what was
 * applied (`resources`), and how it went: `ResourcesApplied`, `ResourcesHealthy` (workloads ready, definitions
 * established) and `ResourcesProgressing`. Health is checked again every `healthSyncPeriodMs`.
 *
 * Target: the shoot of the ManagedResource's namespace when `class` is unset, the seed itself for class `seed`.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import type { Condition } from '../../apis/meta/schemas.js';
import { type ManagedResource } from '../../apis/resources/v1alpha1/managedresource.js';
import { Refs, type ResourceRef } from '../../apis/refs.js';
import { type ResourceClient } from '../../runtime/client.js';
import { asApiError, isNotFound } from '../../runtime/errors.js';
import { realClock, type Clock } from '../../runtime/clock.js';
import { patchStatusIfChanged } from '../../runtime/status.js';
import type { ReconcileContext, Reconciler, Request, Result } from '../../runtime/controller.js';
import { condition, mergeConditions } from '../../runtime/last-operation.js';
import {
  applyOrder,
  decodeManifests,
  FIELD_MANAGER,
  FINALIZER,
  healthOf,
  isIgnored,
  isKept,
  prepareObjects,
  referenceOf,
  toPrune,
  type ObjectReference,
} from './objects.js';

export const CONDITION_APPLIED = 'ResourcesApplied';
export const CONDITION_HEALTHY = 'ResourcesHealthy';
export const CONDITION_PROGRESSING = 'ResourcesProgressing';
/** How soon a ManagedResource whose target or objects failed is tried again. */
const RETRY_MS = 2_000;
/** How long the target has to answer discovery before a reconcile gives up on it. */
const PROBE_TIMEOUT_MS = 5_000;
/** The class of ManagedResources applied to the seed itself. */
export const SEED_CLASS = 'seed';

export interface Target {
  client: ResourceClient;
  /** `shoot` or `seed`: the first part of the origin annotation. */
  cluster: string;
}

/** The target cluster is being deleted or gone: its objects go with it, nothing is applied or deleted there. */
export const TARGET_GOING = 'going';
/**
 * The target is a hibernated shoot: its API server is down on purpose. Nothing is applied, deleted or reported until
 * it wakes up (Gardener's resource manager of a hibernated shoot is scaled down with it).
 */
export const TARGET_HIBERNATED = 'hibernated';

export interface ManagedResourceReconcilerOptions {
  /** The seed. */
  client: ResourceClient;
  /** The target of a ManagedResource (unset class: its shoot); undefined when this manager doesn't handle it. */
  target: (mr: ManagedResource) => Promise<Target | typeof TARGET_GOING | typeof TARGET_HIBERNATED | undefined>;
  clock?: Clock;
  /** @default 30_000 */
  healthSyncPeriodMs?: number;
}

type Status = NonNullable<ManagedResource['status']>;

export class ManagedResourceReconciler implements Reconciler {
  private readonly clock: Clock;
  /** Discovery per target client and group version (kinds of CRDs applied meanwhile are looked up again). */
  private readonly discovery = new WeakMap<ResourceClient, Map<string, Map<string, ResourceRef>>>();

  constructor(private readonly opts: ManagedResourceReconcilerOptions) {
    this.clock = opts.clock ?? realClock;
  }

  async reconcile(req: Request, ctx: ReconcileContext): Promise<Result | void> {
    const { client } = this.opts;
    const mr = await client.get<ManagedResource & KubernetesObject>(Refs.managedResource, req.name, req.namespace, {
      signal: ctx.signal,
    });
    if (mr === undefined) return;
    const target = await this.opts.target(mr).catch((e: Error) => e);
    if (target === undefined) return;
    // Looked at again soon: a shoot that wakes up gets its objects back as soon as its API server answers.
    if (target === TARGET_HIBERNATED) return { requeueAfter: RETRY_MS };
    if (mr.metadata.deletionTimestamp) {
      if (!(mr.metadata.finalizers ?? []).includes(FINALIZER)) return;
      if (target instanceof Error) throw target;
      if (target === TARGET_GOING) return this.releaseFinalizer(mr, ctx);
      return this.delete(mr, target, ctx);
    }
    if (target === TARGET_GOING) return;
    if (!(mr.metadata.finalizers ?? []).includes(FINALIZER)) {
      await client.mergePatch(
        Refs.managedResource,
        mr.metadata.name!,
        mr.metadata.namespace,
        {
          metadata: {
            finalizers: [...(mr.metadata.finalizers ?? []), FINALIZER],
            resourceVersion: mr.metadata.resourceVersion,
          },
        },
        { signal: ctx.signal },
      );
    }
    const previous = (mr.status?.resources ?? []) as unknown as ObjectReference[];
    if (target instanceof Error) {
      // The shoot's API server is not there yet (or not now): look again soon, not after a growing backoff.
      await this.writeStatus(mr, { applied: ['False', 'TargetUnreachable', target.message] }, ctx);
      return { requeueAfter: RETRY_MS };
    }

    const secrets: { name: string; data?: Record<string, string> }[] = [];
    const missing: string[] = [];
    for (const { name } of mr.spec.secretRefs) {
      const secret = await client.get<KubernetesObject & { data?: Record<string, string> }>(
        Refs.secret,
        name,
        mr.metadata.namespace,
        { signal: ctx.signal },
      );
      if (secret === undefined) missing.push(name);
      else secrets.push({ name, ...(secret.data ? { data: secret.data } : {}) });
    }
    if (missing.length > 0) {
      await this.writeStatus(
        mr,
        { applied: ['False', 'SecretNotFound', `secrets not found: ${missing.join(', ')}`] },
        ctx,
      );
      return { requeue: true };
    }
    const checksum = createHash('sha256').update(JSON.stringify(secrets)).digest('hex');
    const decoded = decodeManifests(secrets);
    if (decoded.errors.length > 0) {
      await this.writeStatus(mr, { applied: ['False', 'DecodingFailed', decoded.errors.join('; ')] }, ctx);
      return { requeueAfter: this.healthSyncPeriodMs };
    }
    const origin = `${target.cluster}:${mr.metadata.namespace}/${mr.metadata.name}`;
    const wanted = prepareObjects(
      decoded.objects.filter((o) => !isIgnored(o)),
      { ...(mr.spec.injectLabels ? { injectLabels: mr.spec.injectLabels } : {}), origin },
    );

    // Whether the target answers at all, within a few seconds: a shoot's API server that is not up yet may leave
    // connections hanging, and every object would wait for its own timeout.
    const probe = await target.client
      .serverResources('v1', { signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(PROBE_TIMEOUT_MS)]) })
      .then(
        () => undefined,
        (e: Error) => e,
      );
    if (probe !== undefined) {
      await this.writeStatus(mr, { applied: ['False', 'TargetUnreachable', probe.message] }, ctx);
      return { requeueAfter: RETRY_MS };
    }

    const failures: string[] = [];
    const live: KubernetesObject[] = [];
    for (const object of applyOrder(wanted)) {
      try {
        const ref = await this.refOf(target.client, object, ctx);
        live.push(
          await target.client.apply(ref, object, { fieldManager: FIELD_MANAGER, force: true, signal: ctx.signal }),
        );
      } catch (e) {
        failures.push(`${describe(referenceOf(object))}: ${(e as Error).message}`);
        // Not an answer of the server: the others would fail alike.
        if (asApiError(e) === undefined && !(e instanceof UnservedKindError)) break;
      }
    }
    const desired = wanted.map(referenceOf);
    const kept: ObjectReference[] = [];
    for (const r of applyOrder(toPrune(previous, desired)).reverse()) {
      try {
        await this.deleteObject(target.client, r, ctx);
      } catch (e) {
        kept.push(r);
        failures.push(`deleting ${describe(r)}: ${(e as Error).message}`);
      }
    }

    const health = live.map(healthOf);
    const unhealthy = health.filter((h) => !h.healthy).map((h) => h.message!);
    const progressing = health.filter((h) => h.progressing).map((h) => h.message!);
    await this.writeStatus(
      mr,
      {
        applied:
          failures.length > 0
            ? ['False', 'ApplyFailed', failures.join('; ')]
            : ['True', 'ApplySucceeded', 'All resources are applied.'],
        healthy:
          unhealthy.length > 0
            ? ['False', 'ResourcesUnhealthy', unhealthy.join('; ')]
            : ['True', 'ResourcesHealthy', 'All resources are healthy.'],
        progressing:
          progressing.length > 0
            ? ['True', 'ResourcesProgressing', progressing.join('; ')]
            : ['False', 'ResourcesRolledOut', 'All resources are rolled out.'],
        resources: [...desired, ...kept],
        checksum,
      },
      ctx,
    );
    // A kind whose definition was just applied is served a moment later: apply again soon.
    if (failures.length > 0) return { requeueAfter: RETRY_MS };
    return {
      requeueAfter: progressing.length > 0 ? Math.min(5_000, this.healthSyncPeriodMs) : this.healthSyncPeriodMs,
    };
  }

  private get healthSyncPeriodMs(): number {
    return this.opts.healthSyncPeriodMs ?? 30_000;
  }

  /** Deletes the ManagedResource's objects (unless kept), waits until they are gone, then drops the finalizer. */
  private async delete(mr: ManagedResource & KubernetesObject, target: Target, ctx: ReconcileContext): Promise<Result> {
    const previous = (mr.status?.resources ?? []) as unknown as ObjectReference[];
    const remaining: string[] = [];
    if (!mr.spec.keepObjects) {
      for (const r of applyOrder(previous).reverse()) {
        if (await this.deleteObject(target.client, r, ctx)) remaining.push(describe(r));
      }
    }
    if (remaining.length > 0) {
      await this.writeStatus(mr, { applied: ['False', 'DeletionPending', `waiting for ${remaining.join(', ')}`] }, ctx);
      return { requeueAfter: 1_000 };
    }
    return this.releaseFinalizer(mr, ctx);
  }

  private async releaseFinalizer(mr: ManagedResource & KubernetesObject, ctx: ReconcileContext): Promise<Result> {
    await this.opts.client.mergePatch(
      Refs.managedResource,
      mr.metadata.name!,
      mr.metadata.namespace,
      {
        metadata: {
          finalizers: (mr.metadata.finalizers ?? []).filter((f) => f !== FINALIZER),
          resourceVersion: mr.metadata.resourceVersion,
        },
      },
      { signal: ctx.signal },
    );
    return {};
  }

  /** Deletes an object unless it is to be kept; true while it still exists (deleted, not gone yet). */
  private async deleteObject(client: ResourceClient, r: ObjectReference, ctx: ReconcileContext): Promise<boolean> {
    const ref = await this.refOf(client, { apiVersion: r.apiVersion, kind: r.kind }, ctx).catch(() => undefined);
    // A kind the server no longer serves: its objects went with their definition.
    if (ref === undefined) return false;
    const current = await client.get(ref, r.name, r.namespace, { signal: ctx.signal });
    if (current === undefined || isKept(current)) return false;
    if (!current.metadata?.deletionTimestamp) {
      await client.delete(ref, r.name, r.namespace, { propagationPolicy: 'Background', signal: ctx.signal });
    }
    return (await client.get(ref, r.name, r.namespace, { signal: ctx.signal })) !== undefined;
  }

  /** The resource of an object's kind, by discovery of the target (looked up again when a kind is not known yet). */
  private async refOf(
    client: ResourceClient,
    object: { apiVersion?: string; kind?: string },
    ctx: ReconcileContext,
  ): Promise<ResourceRef> {
    const apiVersion = object.apiVersion!;
    let byVersion = this.discovery.get(client);
    if (byVersion === undefined) this.discovery.set(client, (byVersion = new Map()));
    let kinds = byVersion.get(apiVersion);
    if (kinds === undefined || !kinds.has(object.kind!)) {
      const served = await client.serverResources(apiVersion, { signal: ctx.signal }).catch((e: unknown) => {
        if (isNotFound(e)) return undefined;
        throw e;
      });
      const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
      kinds = new Map(
        (served ?? [])
          .filter((r) => !r.name.includes('/'))
          .map((r) => [
            r.kind,
            { group: group!, version: version!, plural: r.name, kind: r.kind, namespaced: r.namespaced },
          ]),
      );
      byVersion.set(apiVersion, kinds);
    }
    const ref = kinds.get(object.kind!);
    if (ref === undefined) throw new UnservedKindError(`the target serves no ${object.kind} of ${apiVersion}`);
    return ref;
  }

  private async writeStatus(
    mr: ManagedResource & KubernetesObject,
    s: {
      applied: [string, string, string];
      healthy?: [string, string, string];
      progressing?: [string, string, string];
      resources?: ObjectReference[];
      checksum?: string;
    },
    ctx: ReconcileContext,
  ): Promise<void> {
    const existing = mr.status?.conditions as Condition[] | undefined;
    const make = (type: string, [status, reason, message]: [string, string, string]) =>
      condition(
        this.clock,
        type,
        status === 'True',
        reason,
        message,
        existing?.find((c) => c.type === type),
      );
    const updates = [make(CONDITION_APPLIED, s.applied)];
    if (s.healthy) updates.push(make(CONDITION_HEALTHY, s.healthy));
    if (s.progressing) updates.push(make(CONDITION_PROGRESSING, s.progressing));
    const status: Status = {
      ...mr.status,
      conditions: mergeConditions(existing, updates),
      ...(mr.metadata.generation !== undefined ? { observedGeneration: mr.metadata.generation } : {}),
      ...(s.resources ? { resources: s.resources as unknown as Record<string, unknown>[] } : {}),
      ...(s.checksum ? { secretsDataChecksum: s.checksum } : {}),
    };
    await patchStatusIfChanged(
      this.opts.client,
      Refs.managedResource,
      mr as KubernetesObject & { status?: Status },
      status,
      {
        signal: ctx.signal,
      },
    );
  }
}

/** A kind the target does not serve (yet: its definition may have been applied a moment ago). */
class UnservedKindError extends Error {}

function describe(r: ObjectReference): string {
  return `${r.kind} ${r.namespace ? `${r.namespace}/` : ''}${r.name}`;
}
