/**
 * The status every extension object reports, as Gardener's extensions library writes it
 * (`extensions/pkg/controller`'s status updater): `lastOperation` of the operation's type and state, `lastError` set
 * on Error and cleared on success (left as it was while processing), and `observedGeneration`. Each extension adds
 * its own fields (a Network's families, a DNSRecord's zone, a Worker's machine deployments) to the patch.
 */
import type { LastOperation } from '../../apis/meta/schemas.js';
import { metav1Time } from '../../apis/meta/time.js';

export type OperationType = 'Create' | 'Reconcile' | 'Delete';

/** Gardener's error code (`gardencorev1beta1.ErrorCode`) for a problem only a change of the object fixes. */
export const ERR_CONFIGURATION_PROBLEM = 'ERR_CONFIGURATION_PROBLEM';

/** What an operation on an extension object ended with, or where it stands. */
export type ExtensionOutcome =
  | { readonly state: 'Succeeded'; readonly description: string }
  | { readonly state: 'Processing'; readonly progress: number; readonly description: string }
  | { readonly state: 'Error'; readonly description: string; readonly codes?: readonly string[] };

/** What the status writer reads of an extension object. */
export interface ExtensionObject {
  readonly metadata: { readonly generation?: number; readonly deletionTimestamp?: string | Date | null };
  readonly status?: { readonly lastOperation?: { readonly type?: string; readonly state?: string } };
}

/** Delete while deleting; Create until the first success; Reconcile after (Gardener's rule). */
export function operationType(object: ExtensionObject): OperationType {
  if (object.metadata.deletionTimestamp) return 'Delete';
  const last = object.status?.lastOperation;
  return !last || (last.type === 'Create' && last.state !== 'Succeeded') ? 'Create' : 'Reconcile';
}

/** The progress Gardener's extensions report: 100 when done, the operation's own while processing, 50 on error. */
function progressOf(outcome: ExtensionOutcome): number {
  return outcome.state === 'Succeeded' ? 100 : outcome.state === 'Processing' ? outcome.progress : 50;
}

/**
 * The status merge patch of `outcome` at `now` (ms since the epoch): lastOperation (of `type`, by default the
 * object's operationType), observedGeneration, and lastError set on Error, cleared (null) on success.
 */
export function extensionStatusPatch(
  object: ExtensionObject,
  outcome: ExtensionOutcome,
  now: number,
  type: OperationType = operationType(object),
): { lastOperation: LastOperation; observedGeneration?: number; lastError?: Record<string, unknown> | null } {
  const lastUpdateTime = metav1Time(now);
  const lastOperation: LastOperation = {
    type,
    state: outcome.state,
    progress: progressOf(outcome),
    description: outcome.description,
    lastUpdateTime,
  };
  const patch: ReturnType<typeof extensionStatusPatch> = {
    lastOperation,
    ...(object.metadata.generation !== undefined ? { observedGeneration: object.metadata.generation } : {}),
  };
  if (outcome.state === 'Succeeded') patch.lastError = null;
  else if (outcome.state === 'Error') {
    patch.lastError = {
      description: outcome.description,
      ...(outcome.codes && outcome.codes.length > 0 ? { codes: [...outcome.codes] } : {}),
      lastUpdateTime,
    };
  }
  return patch;
}
