/**
 * Status writes that are skipped when nothing a reader cares about would change: otherwise every reconcile writes,
 * and every write wakes the watchers again.
 */
import type { CallOptions, ResourceClient } from './client.js';
import type { ResourceRef } from '../apis/refs.js';

const TIMESTAMPS = new Set(['lastUpdateTime', 'lastTransitionTime']);
const withoutTimestamps = (_key: string, value: unknown) => (TIMESTAMPS.has(_key) ? undefined : value);

/** Deep equality that ignores timestamps. */
export function sameIgnoringTimestamps(a: unknown, b: unknown): boolean {
  return JSON.stringify(a, withoutTimestamps) === JSON.stringify(b, withoutTimestamps);
}

/** True when merging `patch` into `current` changes nothing but timestamps (`null` in a patch removes a field). */
export function statusUnchanged(current: Record<string, unknown> | undefined, patch: Record<string, unknown>): boolean {
  const status = current ?? {};
  return Object.entries(patch).every(([k, v]) =>
    v === null ? status[k] === undefined : sameIgnoringTimestamps(status[k], v),
  );
}

interface WithStatus {
  metadata?: { name?: string; namespace?: string };
  status?: Record<string, unknown>;
}

/** Merge-patches the status subresource of `object` with `patch`, unless that would change nothing. */
export async function patchStatusIfChanged(
  client: ResourceClient,
  ref: ResourceRef,
  object: WithStatus,
  patch: Record<string, unknown>,
  opts: CallOptions = {},
): Promise<boolean> {
  if (statusUnchanged(object.status, patch)) return false;
  await client.mergePatch(
    ref,
    object.metadata?.name ?? '',
    object.metadata?.namespace,
    { status: patch },
    {
      ...opts,
      subresource: 'status',
    },
  );
  return true;
}
