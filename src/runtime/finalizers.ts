/**
 * Adding and removing finalizers with optimistic concurrency: a merge patch that carries the resourceVersion it was
 * computed from, re-read and re-tried on conflict, so concurrent writers never drop each other's finalizers.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { type CallOptions, type ResourceClient } from './client.js';
import { retryOnConflict } from './retry.js';
import { type ResourceRef } from '../apis/refs.js';

type Named = { metadata?: { name?: string; namespace?: string } };

async function updateFinalizers(
  client: ResourceClient,
  ref: ResourceRef,
  object: Named,
  change: (finalizers: string[]) => string[] | undefined,
  opts: CallOptions,
): Promise<void> {
  const name = object.metadata?.name ?? '';
  const namespace = object.metadata?.namespace;
  await retryOnConflict(async () => {
    const current = await client.get<KubernetesObject>(ref, name, namespace, opts);
    if (!current) return;
    const next = change([...(current.metadata?.finalizers ?? [])]);
    if (!next) return;
    await client.mergePatch(
      ref,
      name,
      namespace,
      { metadata: { finalizers: next, resourceVersion: current.metadata?.resourceVersion } },
      opts,
    );
  });
}

export function addFinalizer(
  client: ResourceClient,
  ref: ResourceRef,
  object: Named,
  finalizer: string,
  opts: CallOptions = {},
): Promise<void> {
  return updateFinalizers(client, ref, object, (f) => (f.includes(finalizer) ? undefined : [...f, finalizer]), opts);
}

export function removeFinalizer(
  client: ResourceClient,
  ref: ResourceRef,
  object: Named,
  finalizer: string,
  opts: CallOptions = {},
): Promise<void> {
  return updateFinalizers(
    client,
    ref,
    object,
    (f) => (f.includes(finalizer) ? f.filter((x) => x !== finalizer) : undefined),
    opts,
  );
}

export function hasFinalizer(object: Named & { metadata?: { finalizers?: string[] } }, finalizer: string): boolean {
  return object.metadata?.finalizers?.includes(finalizer) ?? false;
}
