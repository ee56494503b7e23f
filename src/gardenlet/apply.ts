/**
 * The few write patterns every component uses, over the runtime's ResourceClient.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ResourceClient } from '../runtime/client.js';
import type { ResourceRef } from '../apis/refs.js';
import { realClock, type Clock } from '../runtime/clock.js';
import { NotReadyError, type ComponentContext } from './component.js';
import { Annotations, FIELD_MANAGER, OPERATION_RECONCILE } from '../apis/core/v1beta1/names.js';

/** Any object with a name: our zod-typed kinds and client-node's types alike. */
export interface NamedObject {
  readonly metadata?: { readonly name?: string; readonly namespace?: string };
}

/** Server-side apply of objects this manager owns, all at once; a no-op on the server when nothing changed. */
export async function applyAll(
  client: ResourceClient,
  ref: ResourceRef,
  objects: readonly NamedObject[],
  ctx: ComponentContext,
): Promise<void> {
  for (const object of objects) {
    await client.apply(ref, object as KubernetesObject, {
      fieldManager: FIELD_MANAGER,
      force: true,
      signal: ctx.signal,
    });
  }
}

export async function deleteAll(
  client: ResourceClient,
  ref: ResourceRef,
  names: readonly string[],
  namespace: string | undefined,
  ctx: ComponentContext,
): Promise<void> {
  await Promise.all(names.map((name) => client.delete(ref, name, namespace, { signal: ctx.signal })));
}

/** Throws NotReadyError while any of the objects still exists. */
export async function waitGone(
  client: ResourceClient,
  ref: ResourceRef,
  names: readonly string[],
  namespace: string | undefined,
  ctx: ComponentContext,
): Promise<void> {
  for (const name of names) {
    if (await client.get(ref, name, namespace, { signal: ctx.signal })) {
      throw new NotReadyError(`${ref.kind} ${namespace ? `${namespace}/` : ''}${name} is still being deleted`);
    }
  }
}

interface ExtensionStatus {
  metadata?: {
    generation?: number;
    name?: string;
    namespace?: string;
    creationTimestamp?: string | Date;
    deletionTimestamp?: string | Date;
    managedFields?: { time?: string | Date }[];
  };
  spec?: { type?: string };
  status?: {
    observedGeneration?: number;
    lastOperation?: { type?: string; state?: string; description?: string };
    lastError?: { description?: string };
  };
}

const FAILED_STATES = new Set(['Error', 'Failed']);

/**
 * Why deleting an extension object fails, as its extension reports it (a last operation of type Delete in state
 * Error or Failed), or undefined while nothing failed.
 */
export function extensionDeletionError(object: ExtensionStatus & { kind?: string }): string | undefined {
  const operation = object.status?.lastOperation;
  if (
    !object.metadata?.deletionTimestamp ||
    operation?.type !== 'Delete' ||
    !FAILED_STATES.has(operation.state ?? '')
  ) {
    return undefined;
  }
  const what = `${object.kind ?? 'object'} ${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`;
  return `${what} reports ${operation.state} while being deleted: ${object.status?.lastError?.description ?? operation.description ?? ''}`;
}

/**
 * Throws NotReadyError while any of the extension objects (`names`, or every one of the namespace) still exists,
 * and an Error when its extension reports that deleting it fails: the shoot shows a failing extension object while
 * it is deleted just as while it is created (the extension retries by itself; so does the reconcile).
 */
export async function waitExtensionsGone(
  client: ResourceClient,
  ref: ResourceRef,
  names: readonly string[] | 'all',
  namespace: string,
  ctx: ComponentContext,
): Promise<void> {
  const remaining: (ExtensionStatus & KubernetesObject)[] =
    names === 'all'
      ? (await client.list<ExtensionStatus & KubernetesObject>(ref, { namespace, signal: ctx.signal })).items
      : (
          await Promise.all(
            names.map((name) =>
              client.get<ExtensionStatus & KubernetesObject>(ref, name, namespace, { signal: ctx.signal }),
            ),
          )
        ).filter((o) => o !== undefined);
  if (remaining.length === 0) return;
  const failures = remaining
    .map((o) => extensionDeletionError({ ...o, kind: ref.kind }))
    .filter((f) => f !== undefined);
  if (failures.length > 0) throw new Error(failures.join('; '));
  const listed = remaining.map((o) => `${namespace}/${o.metadata?.name ?? ''}`).join(', ');
  throw new NotReadyError(`${ref.kind} ${listed} ${remaining.length === 1 ? 'is' : 'are'} still being deleted`);
}

/**
 * How long an extension resource may go unreconciled after its last write before the wait gives up with an error
 * (the shoot's last operation then says which extension is missing; the reconcile is retried with backoff).
 */
export const EXTENSION_PICKUP_TIMEOUT_MS = 2 * 60_000;

/** The time of the object's last write: its newest managed field entry, else its creation. */
function lastWriteTime(object: ExtensionStatus): number | undefined {
  const times = [object.metadata?.creationTimestamp, ...(object.metadata?.managedFields ?? []).map((f) => f.time)]
    .filter((t): t is string | Date => t !== undefined)
    .map((t) => new Date(t).getTime())
    .filter((t) => !Number.isNaN(t));
  return times.length > 0 ? Math.max(...times) : undefined;
}

/**
 * An extension resource is ready when its controller observed the current generation, the last operation
 * succeeded and the operation annotation a deploy wrote (when it wrote one) is answered. An Error state is reported (the extension retries by itself), anything else is "not yet", until
 * `EXTENSION_PICKUP_TIMEOUT_MS` after its last write: then no extension is taking care of it, which is an error.
 */
export async function waitExtensionReady(
  client: ResourceClient,
  ref: ResourceRef,
  name: string,
  namespace: string,
  ctx: ComponentContext,
  opts: { clock?: Clock; pickupTimeoutMs?: number } = {},
): Promise<void> {
  const object = await client.get<ExtensionStatus & KubernetesObject>(ref, name, namespace, { signal: ctx.signal });
  const what = `${ref.kind} ${namespace}/${name}`;
  if (!object) throw new NotReadyError(`${what} does not exist yet`);
  const observed = object.status?.observedGeneration;
  const operation = object.status?.lastOperation;
  // Asked to reconcile with this deploy (the operation annotation) and not answered yet: an earlier success is not it.
  const asked = object.metadata?.annotations?.[Annotations.operation] === OPERATION_RECONCILE;
  const notPickedUp = (why: string) => {
    const timeoutMs = opts.pickupTimeoutMs ?? EXTENSION_PICKUP_TIMEOUT_MS;
    const written = lastWriteTime(object);
    const now = (opts.clock ?? realClock).now();
    if (written !== undefined && now - written > timeoutMs) {
      const type = object.spec?.type;
      throw new Error(
        `${what} was not reconciled within ${Math.round(timeoutMs / 1000)}s of its last change: no extension for ` +
          `${ref.kind}${type ? ` type ${JSON.stringify(type)}` : ''} seems to run in this installation`,
      );
    }
    return new NotReadyError(`${what} ${why}`);
  };
  if (observed !== object.metadata?.generation || !operation) throw notPickedUp('is not reconciled yet');
  if (operation.state === 'Error' || operation.state === 'Failed') {
    throw new Error(`${what} reports ${operation.state}: ${operation.description ?? ''}`);
  }
  if (operation.state !== 'Succeeded') throw new NotReadyError(`${what} is ${operation.state ?? 'pending'}`);
  if (asked) throw notPickedUp('is not reconciled yet (its operation annotation is still there)');
}
