/**
 * `status.lastOperation` and conditions as Gardener writes them.
 */
import type { Condition, LastOperation } from '../apis/meta/schemas.js';
import type { Clock } from './clock.js';
import { metav1Time } from '../apis/meta/time.js';

export function lastOperation(
  clock: Clock,
  type: string,
  state: string,
  progress: number,
  description: string,
): LastOperation {
  return {
    type,
    state,
    progress,
    description,
    lastUpdateTime: metav1Time(clock.now()),
  };
}

export function condition(
  clock: Clock,
  type: string,
  ok: boolean | 'Unknown',
  reason: string,
  message: string,
  previous?: Condition,
): Condition {
  const status = ok === 'Unknown' ? 'Unknown' : ok ? 'True' : 'False';
  const now = metav1Time(clock.now());
  return {
    type,
    status,
    lastTransitionTime: previous?.status === status && previous.lastTransitionTime ? previous.lastTransitionTime : now,
    lastUpdateTime: now,
    reason,
    message,
  };
}

/**
 * The conditions with `updates` put in place of those of the same type (new types appended): each controller
 * writes its own conditions and keeps the others' (a merge patch replaces the whole list).
 */
export function mergeConditions(
  existing: readonly Condition[] | undefined,
  updates: readonly Condition[],
): Condition[] {
  const result = [...(existing ?? [])];
  for (const update of updates) {
    const i = result.findIndex((c) => c.type === update.type);
    if (i >= 0) result[i] = update;
    else result.push(update);
  }
  return result;
}
