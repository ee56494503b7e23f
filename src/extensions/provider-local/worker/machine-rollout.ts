/**
 * Rolling a pool's machines to a new machine template, as machine-controller-manager rolls a MachineDeployment to a
 * new machine class: one machine at a time, drained first, replaced by a new machine with a new Node. What a machine
 * is built with (its node addresses of every family, the pod ranges it may send from, its size, its image) is its
 * pod's template. The StatefulSet's `OnDelete` update strategy leaves the replacing to this: its controller labels
 * each pod with the revision of the template it was made from (`controller-revision-hash`) and says which revision is
 * current (`status.updateRevision`, once it observed the StatefulSet's generation); a pod of another revision is an
 * outdated machine. The Node goes with the old machine (a Node's `podCIDRs` can't change, so a machine that gains an
 * IP family needs a new Node), and the StatefulSet creates the new machine under the same name.
 *
 * The next machine is replaced once every machine of the current template is Ready (maxUnavailable 1, maxSurge 0:
 * the names are fixed), highest ordinal first, as a StatefulSet rolls. Nothing is replaced while the pool scales or
 * the shoot hibernates.
 */
import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { Refs } from '../../../apis/refs.js';
import type { ResourceClient } from '../../../runtime/client.js';
import type { MachineDrainer } from './drain.js';

/** The StatefulSet controller's label of a pod: the revision of the template it was made from. */
export const REVISION_LABEL = 'controller-revision-hash';

/** The StatefulSet's current template revision, once its controller observed its generation. */
export function currentRevision(set: V1StatefulSet | undefined): string | undefined {
  const observed = (set?.status?.observedGeneration ?? 0) >= (set?.metadata?.generation ?? 1);
  return observed ? set?.status?.updateRevision : undefined;
}

/** A machine pod as the rollout judges it. */
export interface MachinePodState {
  readonly name: string;
  /** The revision of the template it was made from; undefined for a pod no StatefulSet controller made. */
  readonly revision: string | undefined;
  readonly ready: boolean;
  readonly deleting: boolean;
}

export function machinePodState(pod: V1Pod): MachinePodState {
  return {
    name: pod.metadata?.name ?? '',
    revision: pod.metadata?.labels?.[REVISION_LABEL],
    ready: pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
    deleting: pod.metadata?.deletionTimestamp !== undefined,
  };
}

/** Where a pool's rollout stands: its outdated machines, and the one to replace now (none while it must wait). */
export interface PoolRollout {
  readonly outdated: readonly string[];
  readonly replace: string | undefined;
}

/**
 * The rollout of a pool whose machines should be `wanted` (by name, ordinal order) of revision `revision` (none:
 * not known yet, nothing is outdated), with `pods` the pool's machine pods now. A machine is replaced only when
 * every wanted machine has a pod, none is stopping, and every one of the current revision is Ready.
 */
export function poolRollout(
  wanted: readonly string[],
  pods: readonly MachinePodState[],
  revision: string | undefined,
): PoolRollout {
  const byName = new Map(pods.map((p) => [p.name, p]));
  const current = (name: string) => {
    const pod = byName.get(name);
    return pod?.revision === undefined || pod.revision === revision;
  };
  const outdated = revision === undefined ? [] : wanted.filter((name) => byName.has(name) && !current(name));
  if (outdated.length === 0) return { outdated, replace: undefined };
  const settled =
    wanted.every((name) => byName.has(name)) &&
    pods.every((p) => !p.deleting) &&
    wanted.every((name) => !current(name) || byName.get(name)!.ready);
  return { outdated, replace: settled ? outdated[outdated.length - 1] : undefined };
}

/** What the Worker's last operation says of the pools' rollouts: empty when no machine is outdated. */
export function rolloutDescription(
  rollouts: readonly { readonly pool: string; readonly rollout: PoolRollout; readonly step?: string }[],
): string {
  return rollouts
    .filter((r) => r.rollout.outdated.length > 0)
    .map((r) => {
      const n = r.rollout.outdated.length;
      const left = `pool ${r.pool}: ${n} ${n === 1 ? 'machine' : 'machines'} of an outdated template left`;
      return r.step ? `${left}, ${r.step}` : left;
    })
    .join('; ');
}

/** What a rollout step does through the seed and the shoot. */
export interface RolloutCalls {
  /** One drain step of the machine's Node (cordon, evict); true once it is drained or its drain timed out. */
  drain(machine: string, timeoutMs: number): Promise<{ done: boolean; podsLeft: number }>;
  /** Deletes the machine's Node and the pods still bound to it. */
  removeNode(machine: string): Promise<void>;
  /** Deletes the machine's pod: its StatefulSet creates the new machine. */
  deletePod(machine: string): Promise<void>;
}

/**
 * One step of replacing `machine`: drained (one drain step per call), then its Node and its pod deleted. Returns what
 * the Worker's last operation says of it.
 */
export async function replaceMachine(machine: string, timeoutMs: number, calls: RolloutCalls): Promise<string> {
  const drain = await calls.drain(machine, timeoutMs);
  if (!drain.done) {
    return `replacing machine ${machine}: draining it (${drain.podsLeft} ${drain.podsLeft === 1 ? 'pod' : 'pods'} left)`;
  }
  // The Node first: the new machine registers a new one, with ranges of every family its template has.
  await calls.removeNode(machine);
  await calls.deletePod(machine);
  return `replacing machine ${machine}: drained, its Node and its pod deleted`;
}

/** The rollout's calls against the seed and, through `drainer`, the shoot (none without it: nothing to drain). */
export function rolloutCalls(
  seed: ResourceClient,
  namespace: string,
  drainer: MachineDrainer | undefined,
  signal: AbortSignal,
): RolloutCalls {
  return {
    drain: async (name, timeoutMs) =>
      drainer ? (await drainer.drain([{ name, timeoutMs }], signal))[0]! : { done: true, podsLeft: 0 },
    removeNode: async (name) => {
      if (drainer) await drainer.remove(name, signal);
    },
    deletePod: async (name) => {
      await seed.delete(Refs.pod, name, namespace, { signal });
    },
  };
}
