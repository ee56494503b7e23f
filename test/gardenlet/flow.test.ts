import { describe, expect, it, vi } from 'vitest';
import { Flow } from '../../src/gardenlet/flow.js';
import { NotReadyError, StepError } from '../../src/gardenlet/component.js';
import { FakeClock } from '../../src/runtime/clock.js';

const ctx = { signal: new AbortController().signal };

/** A promise and its resolve, to hold a task until the test lets it go. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe('a task graph', () => {
  it('runs independent tasks at once, a dependent only after its dependencies, with their typed outputs', async () => {
    const events: string[] = [];
    const a = gate();
    const b = gate();
    const flow = new Flow('test');
    const first = flow.task({
      id: 'a',
      name: 'task a',
      run: async () => {
        events.push('a start');
        await a.promise;
        events.push('a end');
        return 21;
      },
    });
    const second = flow.task({
      id: 'b',
      name: 'task b',
      run: async () => {
        events.push('b start');
        await b.promise;
        events.push('b end');
        return 'x';
      },
    });
    flow.task({
      id: 'c',
      name: 'task c',
      dependencies: [first, second],
      run: async (_x, out) => {
        const n: number = out(first);
        const s: string = out(second);
        events.push(`c ${n * 2}${s}`);
      },
    });
    const running = flow.run(ctx);
    await new Promise((r) => setImmediate(r));
    // Both independent tasks started before either ended.
    expect(events).toEqual(['a start', 'b start']);
    b.open();
    await new Promise((r) => setImmediate(r));
    expect(events).not.toContain('c 42x');
    a.open();
    const outcome = await running;
    expect(outcome.failure).toBeUndefined();
    expect(events).toEqual(['a start', 'b start', 'b end', 'a end', 'c 42x']);
    expect(outcome.failure === undefined && outcome.output(first)).toBe(21);
    expect(flow.describe()).toEqual(['a', 'b', 'c <- a, b']);
  });

  it('starts nothing new once a task failed, waits for the running ones, and names the failed task', async () => {
    const slow = gate();
    const started: string[] = [];
    const flow = new Flow('test');
    const failing = flow.task({
      id: 'fail',
      name: 'deploying the Network',
      run: () => Promise.reject(new Error('boom')),
    });
    let slowDone = false;
    flow.task({
      id: 'slow',
      name: 'slow',
      run: async () => {
        started.push('slow');
        await slow.promise;
        slowDone = true;
      },
    });
    flow.task({ id: 'after', name: 'after', dependencies: [failing], run: async () => void started.push('after') });
    const running = flow.run(ctx);
    await new Promise((r) => setImmediate(r));
    slow.open();
    const outcome = await running;
    expect(slowDone).toBe(true);
    expect(started).toEqual(['slow']);
    const error = outcome.failure?.error;
    expect(error).toBeInstanceOf(StepError);
    expect((error as StepError).step).toBe('deploying the Network');
    expect(error?.message).toBe('deploying the Network: boom');
    // One task of three completed.
    expect(outcome.failure?.progress).toBe(33);
  });

  it('reports a failure over a task not ready yet, and a task not ready yet with its name', async () => {
    const mixed = new Flow('test');
    mixed.task({ id: 'wait', name: 'waiting', run: () => Promise.reject(new NotReadyError('not yet')) });
    mixed.task({ id: 'fail', name: 'failing', run: () => Promise.reject(new Error('broken')) });
    const failed = (await mixed.run(ctx)).failure;
    expect(failed?.error).toBeInstanceOf(StepError);
    expect(failed?.error.message).toBe('failing: broken');

    const waiting = new Flow('test');
    waiting.task({ id: 'ok', name: 'ok', run: async () => {} });
    waiting.task({
      id: 'wait',
      name: 'waiting for the Worker',
      run: () => Promise.reject(new NotReadyError('1 of 2')),
    });
    const notReady = (await waiting.run(ctx)).failure;
    expect(notReady?.error).toBeInstanceOf(NotReadyError);
    expect(notReady?.error.message).toBe('waiting for the Worker: 1 of 2');
    expect(notReady?.progress).toBe(50);
  });

  it('retries a task not ready yet in place while the others go on, until it is ready or its time is up', async () => {
    const clock = new FakeClock();
    const retryNotReady = { forMs: 3_000, intervalMs: 1_000, clock };
    const runs = { deploy: 0, wait: 0, after: 0 };
    let readyAfter = 3;
    const flow = new Flow('test');
    const deploy = flow.task({ id: 'deploy', name: 'deploying', run: async () => void runs.deploy++ });
    const wait = flow.task({
      id: 'wait',
      name: 'waiting for the Worker',
      dependencies: [deploy],
      run: async () => {
        runs.wait++;
        if (runs.wait < readyAfter) throw new NotReadyError(`look ${runs.wait}`);
      },
    });
    const beside = gate();
    flow.task({ id: 'beside', name: 'beside', dependencies: [deploy], run: () => beside.promise });
    flow.task({ id: 'after', name: 'after', dependencies: [wait], run: async () => void runs.after++ });

    const ready = flow.run(ctx, { retryNotReady });
    await vi.waitFor(() => expect(clock.pendingTimers()).toBe(1));
    beside.open(); // finishes while the wait is retried: the flow goes on
    await clock.advance(1_000);
    await clock.advance(1_000);
    expect((await ready).failure).toBeUndefined();
    // Ready at its third look; what it depends on ran once, what depends on it once it was ready.
    expect(runs).toEqual({ deploy: 1, wait: 3, after: 1 });

    readyAfter = Infinity;
    runs.wait = 0;
    const late = flow.run(ctx, { retryNotReady });
    for (let i = 0; i < 3; i++) {
      await vi.waitFor(() => expect(clock.pendingTimers()).toBe(1));
      await clock.advance(1_000);
    }
    const failure = (await late).failure;
    expect(failure?.error).toBeInstanceOf(NotReadyError);
    // Looks at 0, 1, 2 and 3 s; a fifth would be past the 3 s.
    expect(failure?.error.message).toBe('waiting for the Worker: look 4');
    expect(runs.wait).toBe(4);
  });

  it('stops retrying a task not ready yet once another task failed', async () => {
    const clock = new FakeClock();
    let looks = 0;
    const failNow = gate();
    const flow = new Flow('test');
    flow.task({
      id: 'wait',
      name: 'waiting',
      run: async () => {
        looks++;
        throw new NotReadyError('not yet');
      },
    });
    flow.task({
      id: 'fail',
      name: 'failing',
      run: async () => {
        await failNow.promise;
        throw new Error('broken');
      },
    });
    const outcome = flow.run(ctx, { retryNotReady: { forMs: 60_000, intervalMs: 1_000, clock } });
    await vi.waitFor(() => expect(clock.pendingTimers()).toBe(1));
    failNow.open();
    await clock.advance(1_000);
    const failure = (await outcome).failure;
    expect(failure?.error.message).toBe('failing: broken');
    expect(looks).toBe(2);
  });

  it('stops retrying in place once its `until` aborts (the controller stops): the run ends not ready at once', async () => {
    const clock = new FakeClock();
    const stopping = new AbortController();
    let looks = 0;
    const flow = new Flow('test');
    flow.task({
      id: 'wait',
      name: 'waiting',
      run: async () => {
        looks++;
        throw new NotReadyError(`look ${looks}`);
      },
    });
    const outcome = flow.run(ctx, {
      retryNotReady: { forMs: 60_000, intervalMs: 1_000, clock, until: stopping.signal },
    });
    await vi.waitFor(() => expect(clock.pendingTimers()).toBe(1));
    await clock.advance(1_000);
    await vi.waitFor(() => expect(looks).toBe(2));
    // Stopping in the middle of a wait: no third look, no waiting out the interval.
    stopping.abort();
    const failure = (await outcome).failure;
    expect(failure?.error).toBeInstanceOf(NotReadyError);
    expect(failure?.error.message).toBe('waiting: look 2');
    expect(looks).toBe(2);
  });

  it("keeps a nested StepError's own task name", async () => {
    const flow = new Flow('test');
    flow.task({ id: 'outer', name: 'outer', run: () => Promise.reject(new StepError('inner step', new Error('x'))) });
    const error = (await flow.run(ctx)).failure?.error as StepError;
    expect(error.step).toBe('inner step');
  });

  it('refuses a task added twice or depending on a task it does not have', () => {
    const flow = new Flow('test');
    const a = flow.task({ id: 'a', name: 'a', run: async () => {} });
    expect(() => flow.task({ id: 'a', name: 'again', run: async () => {} })).toThrow(/task a added twice/);
    expect(() => flow.task({ id: 'b', name: 'b', dependencies: [{ id: 'nope' }], run: async () => {} })).toThrow(
      /needs unknown nope/,
    );
    expect(flow.task({ id: 'c', name: 'c', dependencies: [a], run: async () => {} }).id).toBe('c');
  });
});
