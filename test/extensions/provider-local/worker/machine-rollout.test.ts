import { describe, expect, it } from 'vitest';
import {
  REVISION_LABEL,
  currentRevision,
  machinePodState,
  poolRollout,
  replaceMachine,
  rolloutDescription,
  type MachinePodState,
  type RolloutCalls,
} from '../../../../src/extensions/provider-local/worker/machine-rollout.js';

const WANTED = ['machine-w-0', 'machine-w-1', 'machine-w-2'];
const pod = (name: string, revision: string | undefined, ready = true, deleting = false): MachinePodState => ({
  name,
  revision,
  ready,
  deleting,
});

describe('a pool rolling to a new machine template', () => {
  it('has nothing to do when every machine is of the current template', () => {
    expect(
      poolRollout(
        WANTED,
        WANTED.map((n) => pod(n, 'new')),
        'new',
      ),
    ).toEqual({ outdated: [], replace: undefined });
  });

  it('replaces the highest outdated machine first, one at a time', () => {
    const pods = WANTED.map((n) => pod(n, 'old'));
    expect(poolRollout(WANTED, pods, 'new')).toEqual({ outdated: WANTED, replace: 'machine-w-2' });
    // The replacement started but is not Ready yet: the next one waits.
    const starting = [pod('machine-w-0', 'old'), pod('machine-w-1', 'old'), pod('machine-w-2', 'new', false)];
    expect(poolRollout(WANTED, starting, 'new')).toEqual({
      outdated: ['machine-w-0', 'machine-w-1'],
      replace: undefined,
    });
    const ready = [pod('machine-w-0', 'old'), pod('machine-w-1', 'old'), pod('machine-w-2', 'new')];
    expect(poolRollout(WANTED, ready, 'new').replace).toBe('machine-w-1');
  });

  it('waits while a machine is missing or stopping (the StatefulSet creates it anew)', () => {
    const missing = [pod('machine-w-0', 'old'), pod('machine-w-1', 'old')];
    expect(poolRollout(WANTED, missing, 'new')).toEqual({
      outdated: ['machine-w-0', 'machine-w-1'],
      replace: undefined,
    });
    const stopping = [pod('machine-w-0', 'old'), pod('machine-w-1', 'old'), pod('machine-w-2', 'old', true, true)];
    expect(poolRollout(WANTED, stopping, 'new').replace).toBeUndefined();
  });

  it('replaces an outdated machine that is not Ready (a broken one is no reason to wait)', () => {
    const pods = [pod('machine-w-0', 'new'), pod('machine-w-1', 'old', false), pod('machine-w-2', 'new')];
    expect(poolRollout(WANTED, pods, 'new').replace).toBe('machine-w-1');
  });

  it('reads a pod: the revision its StatefulSet controller made it of, its Ready condition and deletion', () => {
    expect(
      machinePodState({
        metadata: { name: 'machine-w-0', labels: { [REVISION_LABEL]: 'machine-w-abc' } },
        status: { conditions: [{ type: 'Ready', status: 'True' }] },
      }),
    ).toEqual({ name: 'machine-w-0', revision: 'machine-w-abc', ready: true, deleting: false });
    expect(machinePodState({ metadata: { name: 'm', deletionTimestamp: new Date() } })).toEqual({
      name: 'm',
      revision: undefined,
      ready: false,
      deleting: true,
    });
  });

  it("knows the StatefulSet's current revision only once its controller observed its generation", () => {
    const set = (generation: number, observed: number) => ({
      metadata: { generation },
      status: { observedGeneration: observed, updateRevision: 'machine-w-new', replicas: 2 },
    });
    expect(currentRevision(set(3, 3))).toBe('machine-w-new');
    // Its template just changed: the revision it says is still the one before.
    expect(currentRevision(set(4, 3))).toBeUndefined();
    expect(currentRevision(undefined)).toBeUndefined();
  });

  it('judges nothing outdated without a current revision, nor a pod no StatefulSet controller made', () => {
    expect(
      poolRollout(
        WANTED,
        WANTED.map((n) => pod(n, 'old')),
        undefined,
      ),
    ).toEqual({ outdated: [], replace: undefined });
    const byHand = [pod('machine-w-0', undefined), pod('machine-w-1', 'new'), pod('machine-w-2', 'new')];
    expect(poolRollout(WANTED, byHand, 'new')).toEqual({ outdated: [], replace: undefined });
  });

  it('says per pool how many outdated machines are left and what the step did', () => {
    expect(
      rolloutDescription([
        { pool: 'a', rollout: { outdated: ['machine-a-0', 'machine-a-1'], replace: 'machine-a-1' }, step: 'x' },
        { pool: 'b', rollout: { outdated: [], replace: undefined } },
        { pool: 'c', rollout: { outdated: ['machine-c-0'], replace: undefined } },
      ]),
    ).toBe('pool a: 2 machines of an outdated template left, x; pool c: 1 machine of an outdated template left');
  });
});

describe('replacing a machine', () => {
  const calls = (done: boolean) => {
    const log: string[] = [];
    const c: RolloutCalls = {
      drain: async (m, t) => {
        log.push(`drain ${m} ${t}`);
        return { done, podsLeft: done ? 0 : 2 };
      },
      removeNode: async (m) => void log.push(`node ${m}`),
      deletePod: async (m) => void log.push(`pod ${m}`),
    };
    return { c, log };
  };

  it('drains it first, and deletes nothing while pods are left', async () => {
    const { c, log } = calls(false);
    expect(await replaceMachine('machine-w-1', 60_000, c)).toBe(
      'replacing machine machine-w-1: draining it (2 pods left)',
    );
    expect(log).toEqual(['drain machine-w-1 60000']);
  });

  it('once drained, deletes its Node before its pod (the new machine registers a new Node)', async () => {
    const { c, log } = calls(true);
    expect(await replaceMachine('machine-w-1', 60_000, c)).toBe(
      'replacing machine machine-w-1: drained, its Node and its pod deleted',
    );
    expect(log).toEqual(['drain machine-w-1 60000', 'node machine-w-1', 'pod machine-w-1']);
  });
});
