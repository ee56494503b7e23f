import { describe, expect, it } from 'vitest';
import {
  CrashLoopTracker,
  STABLE_RUN_MS,
  conditionPatch,
  crashLoopCondition,
  PROCESS_CRASH_LOOP_CONDITION,
} from '../../../../src/extensions/provider-local/machine/process-condition.js';
import type { SupervisedState } from '../../../../src/system/supervisor.js';

const state = (name: string, running: boolean, since: number): SupervisedState => ({
  name,
  running,
  pid: running ? 1 : undefined,
  restarts: 0,
  lastExit: running ? undefined : 'exited with code 1',
  since,
});
const CAUSE = 'exited with code 1: "Failed to run kubelet" err="failed to load kubelet config file"';

describe('the Node condition of processes that keep exiting', () => {
  it('is True once a process exited 3 times in a row after short runs, naming it and its last cause', () => {
    const t = new CrashLoopTracker();
    let now = 1_000_000;
    for (const s of ['containerd', 'kubelet']) t.observe(state(s, true, now));
    // The kubelet ran long, then keeps exiting within seconds of each start.
    now += 10 * 60_000;
    for (let i = 0; i < 3; i++) {
      t.observe(state('kubelet', false, now), CAUSE);
      now += 2_000;
      t.observe(state('kubelet', true, now));
      now += 3_000;
    }
    const states = [state('containerd', true, 1_000_000), state('kubelet', true, now - 3_000)];
    expect(t.condition(states, now)).toEqual({
      type: PROCESS_CRASH_LOOP_CONDITION,
      status: 'True',
      reason: 'ProcessKeepsExiting',
      message: `kubelet keeps exiting (3 times), last ${CAUSE}`,
    });
    // Down between two runs: still looping.
    t.observe(state('kubelet', false, now), CAUSE);
    expect(t.condition([states[0]!, state('kubelet', false, now)], now + 1_000).message).toBe(
      `kubelet keeps exiting (4 times), last ${CAUSE}`,
    );
  });

  it('is False after 2 exits, and again once the process ran stably, its streak starting anew after that', () => {
    const t = new CrashLoopTracker();
    let now = 0;
    const crash = () => {
      t.observe(state('kubelet', true, now));
      now += 1_000;
      t.observe(state('kubelet', false, now), CAUSE);
      now += 1_000;
    };
    crash();
    crash();
    expect(t.condition([state('kubelet', false, now)], now).status).toBe('False');
    crash();
    expect(t.condition([state('kubelet', false, now)], now).status).toBe('True');
    // Running again for a minute: no longer looping.
    t.observe(state('kubelet', true, now));
    expect(t.condition([state('kubelet', true, now)], now + STABLE_RUN_MS - 1).status).toBe('True');
    expect(t.condition([state('kubelet', true, now)], now + STABLE_RUN_MS)).toEqual({
      type: PROCESS_CRASH_LOOP_CONDITION,
      status: 'False',
      reason: 'ProcessesRunning',
      message: 'kubelet running',
    });
    // An exit after the long run starts a new streak of 1.
    now += STABLE_RUN_MS;
    t.observe(state('kubelet', false, now), CAUSE);
    expect(t.condition([state('kubelet', false, now)], now).status).toBe('False');
  });

  it('names every looping process', () => {
    const c = crashLoopCondition([
      { name: 'containerd', exits: 0, cause: '', stable: true },
      { name: 'kubelet', exits: 5, cause: 'a', stable: false },
      { name: 'kube-proxy', exits: 3, cause: 'b', stable: false },
    ]);
    expect(c.message).toBe('kubelet keeps exiting (5 times), last a; kube-proxy keeps exiting (3 times), last b');
  });
});

describe("the patch of the Node's status", () => {
  const want = crashLoopCondition([{ name: 'kubelet', exits: 3, cause: 'x', stable: false }]);
  const now = Date.parse('2026-11-29T03:00:00Z');

  it('adds the condition with its transition time, merged by type beside the kubelet conditions', () => {
    const node = { metadata: { name: 'm' }, status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } };
    expect(conditionPatch(node, want, now)).toEqual({
      status: {
        conditions: [
          { ...want, lastHeartbeatTime: '2026-11-29T03:00:00Z', lastTransitionTime: '2026-11-29T03:00:00Z' },
        ],
      },
    });
  });

  it('is nothing when the Node says so already, and keeps the transition time for a new message', () => {
    const node = { metadata: { name: 'm' }, status: { conditions: [{ ...want }] } };
    expect(conditionPatch(node, want, now)).toBeUndefined();
    const more = { ...want, message: 'kubelet keeps exiting (4 times), last x' };
    expect(conditionPatch(node, more, now)).toEqual({
      status: { conditions: [{ ...more, lastHeartbeatTime: '2026-11-29T03:00:00Z' }] },
    });
  });
});
