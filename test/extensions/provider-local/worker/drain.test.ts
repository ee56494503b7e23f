import { describe, expect, it } from 'vitest';
import {
  DEFAULT_DRAIN_TIMEOUT_MS,
  drainDescription,
  drainSkips,
  drainTimedOut,
  drainTimeoutMs,
  nodesOfGoneMachines,
  ordinalsToDrain,
  podsBlockingDrain,
  podsToEvict,
  replicasAfterDrain,
  type PodLike,
} from '../../../../src/extensions/provider-local/worker/drain.js';

const pod = (
  name: string,
  node: string,
  extra: Partial<{ owner: string; mirror: boolean; phase: string; deleting: boolean }> = {},
): PodLike => ({
  metadata: {
    name,
    namespace: 'default',
    ...(extra.owner
      ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: extra.owner, name: 'o', uid: 'u', controller: true }] }
      : {}),
    ...(extra.mirror ? { annotations: { 'kubernetes.io/config.mirror': 'abc' } } : {}),
    ...(extra.deleting ? { deletionTimestamp: new Date('2026-11-28T19:00:00Z') } : {}),
  },
  spec: { nodeName: node, containers: [] },
  status: { phase: extra.phase ?? 'Running' },
});

describe('draining a machine', () => {
  it("skips what kubectl drain skips: DaemonSet pods, mirror pods and finished pods, not a ReplicaSet's", () => {
    expect(drainSkips(pod('ds', 'n', { owner: 'DaemonSet' }))).toBe(true);
    expect(drainSkips(pod('static', 'n', { mirror: true }))).toBe(true);
    expect(drainSkips(pod('done', 'n', { phase: 'Succeeded' }))).toBe(true);
    expect(drainSkips(pod('failed', 'n', { phase: 'Failed' }))).toBe(true);
    expect(drainSkips(pod('web', 'n', { owner: 'ReplicaSet' }))).toBe(false);
    expect(drainSkips(pod('bare', 'n'))).toBe(false);
  });

  it('waits for the pods of its Node being deleted, and evicts only those not being deleted yet', () => {
    const pods = [
      pod('web-1', 'machine-w-1', { owner: 'ReplicaSet' }),
      pod('web-0', 'machine-w-0', { owner: 'ReplicaSet' }),
      pod('leaving', 'machine-w-1', { deleting: true }),
      pod('agent', 'machine-w-1', { owner: 'DaemonSet' }),
    ];
    expect(podsBlockingDrain(pods, 'machine-w-1').map((p) => p.metadata?.name)).toEqual(['web-1', 'leaving']);
    expect(podsToEvict(pods, 'machine-w-1').map((p) => p.metadata?.name)).toEqual(['web-1']);
    expect(podsToEvict(pods, 'machine-w-2')).toEqual([]);
  });

  it('drains the highest ordinals, those a StatefulSet removes when its replicas go down', () => {
    expect(ordinalsToDrain(2, 1)).toEqual([1]);
    expect(ordinalsToDrain(5, 2)).toEqual([2, 3, 4]);
    expect(ordinalsToDrain(3, 0)).toEqual([0, 1, 2]);
    expect(ordinalsToDrain(1, 3)).toEqual([]);
  });

  it('lowers the replicas only past drained machines, never past one still draining', () => {
    expect(replicasAfterDrain(2, 1, () => true)).toBe(1);
    expect(replicasAfterDrain(2, 1, () => false)).toBe(2);
    // 4 is drained, 3 is not: only 4 may go.
    expect(replicasAfterDrain(5, 2, (i) => i !== 3)).toBe(4);
    expect(replicasAfterDrain(5, 2, (i) => i === 3)).toBe(5);
    expect(replicasAfterDrain(3, 0, () => true)).toBe(0);
  });

  it("takes the pool's machineDrainTimeout, else the default, for a duration it cannot read too", () => {
    expect(drainTimeoutMs({ machineControllerManager: { machineDrainTimeout: '2h' } }, 1000)).toBe(7_200_000);
    expect(drainTimeoutMs({ machineControllerManager: { machineDrainTimeout: '1m30s' } }, 1000)).toBe(90_000);
    expect(drainTimeoutMs({ machineControllerManager: { machineDrainTimeout: '0' } }, 1000)).toBe(0);
    expect(drainTimeoutMs({ machineControllerManager: { machineDrainTimeout: 'soon' } }, 1000)).toBe(1000);
    expect(drainTimeoutMs({ machineControllerManager: { machineDrainTimeout: '-1m' } }, 1000)).toBe(1000);
    expect(drainTimeoutMs({}, 1000)).toBe(1000);
    expect(drainTimeoutMs(undefined, DEFAULT_DRAIN_TIMEOUT_MS)).toBe(DEFAULT_DRAIN_TIMEOUT_MS);
  });

  it('times out once the timeout has passed since the drain began, as the annotation says', () => {
    const started = '2026-11-28T19:00:00Z';
    const at = (iso: string) => Date.parse(iso);
    expect(drainTimedOut(started, 60_000, at('2026-11-28T19:00:59Z'))).toBe(false);
    expect(drainTimedOut(started, 60_000, at('2026-11-28T19:01:00Z'))).toBe(true);
    expect(drainTimedOut(undefined, 0, at('2026-11-28T19:01:00Z'))).toBe(false);
    expect(drainTimedOut('not a time', 0, at('2026-11-28T19:01:00Z'))).toBe(false);
  });

  it('says which machines are draining and how many pods each has left', () => {
    expect(
      drainDescription([
        { machine: 'machine-w-1', done: false, podsLeft: 2 },
        { machine: 'machine-w-2', done: true, podsLeft: 0 },
        { machine: 'machine-x-0', done: false, podsLeft: 1 },
      ]),
    ).toBe('draining machine machine-w-1 (2 pods left), draining machine machine-x-0 (1 pod left)');
    expect(drainDescription([{ machine: 'machine-w-1', done: true, podsLeft: 3, timedOut: true }])).toBe('');
  });

  it('removes the Nodes of machines neither wanted nor running, and no other Node', () => {
    expect(
      nodesOfGoneMachines(
        ['machine-w-0', 'machine-w-1', 'machine-w-2', 'other'],
        new Set(['machine-w-0']),
        new Set(['machine-w-0', 'machine-w-1']),
      ),
    ).toEqual(['machine-w-2']);
  });
});
