/**
 * Draining a machine's Node before the machine goes, as machine-controller-manager does: cordon it
 * (`spec.unschedulable`), evict its pods through the Eviction API (so PodDisruptionBudgets are respected: a 429 is
 * retried at the next look, never turned into a delete), skipping what `kubectl drain` skips (DaemonSet pods, mirror
 * pods, finished pods), and wait until its pods are gone, at most the drain timeout (the pool's
 * `machineControllerManager.machineDrainTimeout`). After that the machine goes anyway. When the drain began is an
 * annotation of the Node, so that a restarted controller keeps the same deadline. A machine wanted again before it
 * went is uncordoned. Once the machine is gone, its Node goes (with the pods still bound to it: nobody runs them).
 *
 * When every machine goes (hibernation, the Worker's deletion) the drain is forceful, as Gardener marks the machines
 * for forceful deletion then "to avoid respecting of PDBs/SLAs": the pods are deleted, not evicted (no PDB could be
 * met with every Node cordoned), and not waited for, as machine-controller-manager's forced drain skips waiting for
 * pod termination: the machine goes at once, its kubelet stopping what still runs.
 *
 * The functions are pure; MachineDrainer does the calls against the shoot's API server.
 */
import type { KubernetesObject, V1Node, V1Pod } from '@kubernetes/client-node';
import { Refs } from '../../../apis/refs.js';
import type { WorkerPool } from '../../../apis/extensions/v1alpha1/worker.js';
import { parseGoDuration } from '../../../apis/core/v1beta1/validation/kubelet.js';
import type { ResourceClient } from '../../../runtime/client.js';
import { isNotFound, isTooManyRequests } from '../../../runtime/errors.js';
import type { Logger } from '../../../runtime/log.js';
import { metav1Time } from '../../../apis/meta/time.js';

/** On a Node being drained: when its drain began (RFC 3339), for the drain timeout. */
export const DRAIN_STARTED_ANNOTATION = 'local.provider.extensions.gardener.cloud/drain-started';
/**
 * How long a drain waits for a Node's pods before its machine goes anyway, when the pool doesn't say: short for
 * local use (machine-controller-manager's default is 2 h).
 */
export const DEFAULT_DRAIN_TIMEOUT_MS = 10 * 60_000;
/** The annotation of a static pod's mirror in the API. */
const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

export type PodLike = Pick<V1Pod, 'metadata' | 'spec' | 'status'>;

/** A pod the drain leaves alone: its DaemonSet would put it back, a mirror has no API-side owner, a finished one. */
export function drainSkips(pod: PodLike): boolean {
  if (pod.metadata?.annotations?.[MIRROR_POD_ANNOTATION] !== undefined) return true;
  if (pod.metadata?.ownerReferences?.some((o) => o.controller && o.kind === 'DaemonSet')) return true;
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** The pods of `node` the drain waits for: those it evicts, and those being deleted already. */
export function podsBlockingDrain(pods: readonly PodLike[], node: string): PodLike[] {
  return pods.filter((p) => p.spec?.nodeName === node && !drainSkips(p));
}

/** The pods of `node` to evict now: blocking the drain and not being deleted yet. */
export function podsToEvict(pods: readonly PodLike[], node: string): PodLike[] {
  return podsBlockingDrain(pods, node).filter((p) => !p.metadata?.deletionTimestamp);
}

/** The ordinals of a StatefulSet that go when its replicas go from `current` to `want`: the highest. */
export function ordinalsToDrain(current: number, want: number): number[] {
  return Array.from({ length: Math.max(0, current - want) }, (_, i) => want + i);
}

/**
 * The replicas a StatefulSet can go to now: it removes the highest ordinals first, so down to `want` only through
 * ordinals that are drained, never past one that is not.
 */
export function replicasAfterDrain(current: number, want: number, drained: (ordinal: number) => boolean): number {
  let replicas = current;
  while (replicas > want && drained(replicas - 1)) replicas--;
  return replicas;
}

/** The pool's drain timeout (`machineControllerManager.machineDrainTimeout`), or `fallbackMs`. */
export function drainTimeoutMs(pool: Pick<WorkerPool, 'machineControllerManager'> | undefined, fallbackMs: number) {
  const text = pool?.machineControllerManager?.machineDrainTimeout;
  const seconds = text === undefined ? undefined : parseGoDuration(text);
  return seconds === undefined || seconds < 0 ? fallbackMs : seconds * 1000;
}

/** Whether a drain that began at `started` (the annotation) has run out of time at `now`. */
export function drainTimedOut(started: string | undefined, timeoutMs: number, now: number): boolean {
  const since = started === undefined ? NaN : Date.parse(started);
  return !Number.isNaN(since) && now - since >= timeoutMs;
}

export interface MachineToDrain {
  readonly name: string;
  readonly timeoutMs: number;
  /** Every machine goes: its pods are deleted, not evicted (no PodDisruptionBudget is asked). */
  readonly force?: boolean;
}

export interface DrainState {
  readonly machine: string;
  /** Drained (or nothing to drain, or timed out): the machine may go. */
  readonly done: boolean;
  /** Pods still on it, while not done. */
  readonly podsLeft: number;
  readonly timedOut?: boolean;
}

/** What the Worker's last operation says of the machines still draining. */
export function drainDescription(states: readonly DrainState[]): string {
  return states
    .filter((s) => !s.done)
    .map((s) => `draining machine ${s.machine} (${s.podsLeft} ${s.podsLeft === 1 ? 'pod' : 'pods'} left)`)
    .join(', ');
}

/** The Nodes of machines that are gone: `machine-…` Nodes neither wanted nor with a machine pod. */
export function nodesOfGoneMachines(
  nodes: readonly string[],
  wanted: ReadonlySet<string>,
  machinePods: ReadonlySet<string>,
): string[] {
  return nodes.filter((n) => /^machine-/.test(n) && !wanted.has(n) && !machinePods.has(n));
}

/** Drains, releases and removes a shoot's machine Nodes through its API server. */
export class MachineDrainer {
  constructor(
    private readonly shoot: ResourceClient,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {}

  /**
   * One step of draining the Nodes of `machines`: all cordoned first (an evicted pod's replacement must not land on
   * another machine that goes too), then on each what may be evicted now is, and what is left counted.
   */
  async drain(machines: readonly MachineToDrain[], signal: AbortSignal): Promise<DrainState[]> {
    const nodes = new Map<string, V1Node & KubernetesObject>();
    for (const { name } of machines) {
      const node = await this.cordon(name, signal);
      if (node) nodes.set(name, node);
    }
    const states: DrainState[] = [];
    for (const machine of machines) {
      const node = nodes.get(machine.name);
      states.push(node ? await this.evict(node, machine, signal) : { machine: machine.name, done: true, podsLeft: 0 });
    }
    return states;
  }

  /** The machine's Node, cordoned and with the time its drain began; undefined when it has none. */
  private async cordon(machine: string, signal: AbortSignal): Promise<(V1Node & KubernetesObject) | undefined> {
    const node = await this.shoot.get<V1Node & KubernetesObject>(Refs.node, machine, undefined, { signal });
    if (!node) return undefined;
    const started = node.metadata?.annotations?.[DRAIN_STARTED_ANNOTATION];
    if (started !== undefined && node.spec?.unschedulable) return node;
    const patched = await this.shoot.mergePatch<V1Node & KubernetesObject>(
      Refs.node,
      machine,
      undefined,
      {
        metadata: { annotations: { [DRAIN_STARTED_ANNOTATION]: started ?? metav1Time(this.now()) } },
        spec: { unschedulable: true },
      },
      { signal },
    );
    this.logger.info({ node: machine }, 'cordoned the Node of a machine that goes, draining it');
    return patched;
  }

  private async evict(node: V1Node & KubernetesObject, how: MachineToDrain, signal: AbortSignal): Promise<DrainState> {
    const { timeoutMs, force } = how;
    const machine = node.metadata?.name ?? '';
    const pods = await this.shoot.list<V1Pod & KubernetesObject>(Refs.pod, {
      fieldSelector: `spec.nodeName=${machine}`,
      signal,
    });
    const blocking = podsBlockingDrain(pods.items, machine);
    if (blocking.length === 0) return { machine, done: true, podsLeft: 0 };
    if (drainTimedOut(node.metadata?.annotations?.[DRAIN_STARTED_ANNOTATION], timeoutMs, this.now())) {
      const left = blocking.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`);
      this.logger.warn({ node: machine, pods: left, timeoutMs }, 'drain timed out, the machine goes anyway');
      return { machine, done: true, podsLeft: blocking.length, timedOut: true };
    }
    if (force) {
      // With each pod's own grace period: the machine's kubelet stops them as the machine stops.
      for (const pod of podsToEvict(pods.items, machine)) {
        await this.shoot
          .delete(Refs.pod, pod.metadata?.name ?? '', pod.metadata?.namespace ?? '', { signal })
          .catch((e: unknown) => {
            if (!isNotFound(e)) throw e;
          });
      }
      return { machine, done: true, podsLeft: 0 };
    }
    for (const pod of podsToEvict(pods.items, machine)) {
      const name = pod.metadata?.name ?? '';
      const namespace = pod.metadata?.namespace ?? '';
      try {
        await this.shoot.createSubresource(
          Refs.pod,
          name,
          namespace,
          'eviction',
          { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } },
          { signal },
        );
      } catch (e) {
        // Gone already; or a PodDisruptionBudget forbids it now (429): again at the next look, never a delete.
        if (isNotFound(e) || isTooManyRequests(e)) continue;
        this.logger.info({ err: e, pod: `${namespace}/${name}` }, 'cannot evict a pod, trying again later');
      }
    }
    return { machine, done: false, podsLeft: blocking.length };
  }

  /** A machine wanted again: its Node schedulable again, if this drain had cordoned it. */
  async release(node: V1Node & KubernetesObject, signal: AbortSignal): Promise<void> {
    if (node.metadata?.annotations?.[DRAIN_STARTED_ANNOTATION] === undefined) return;
    await this.shoot.mergePatch(
      Refs.node,
      node.metadata.name ?? '',
      undefined,
      { metadata: { annotations: { [DRAIN_STARTED_ANNOTATION]: null } }, spec: { unschedulable: null } },
      { signal },
    );
    this.logger.info({ node: node.metadata.name }, 'uncordoned the Node of a machine wanted again');
  }

  /**
   * The Node of a machine that is gone, and the pods still bound to it (DaemonSet and mirror pods, and what a timed
   * out drain left): nothing runs them any more, and they would show `Running` until the pod GC finds them.
   */
  async remove(node: string, signal: AbortSignal): Promise<void> {
    const pods = await this.shoot.list<V1Pod & KubernetesObject>(Refs.pod, {
      fieldSelector: `spec.nodeName=${node}`,
      signal,
    });
    for (const pod of pods.items) {
      await this.shoot.delete(Refs.pod, pod.metadata?.name ?? '', pod.metadata?.namespace ?? '', {
        signal,
        gracePeriodSeconds: 0,
      });
    }
    await this.shoot.delete(Refs.node, node, undefined, { signal });
    this.logger.info({ node, pods: pods.items.length }, 'deleted the Node of a machine that is gone');
  }

  /** The shoot's machine Nodes. */
  async nodes(signal: AbortSignal): Promise<(V1Node & KubernetesObject)[]> {
    return (await this.shoot.list<V1Node & KubernetesObject>(Refs.node, { signal })).items;
  }
}
