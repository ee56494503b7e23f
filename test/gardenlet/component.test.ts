/** What components share: waiting in place for something that is not ready yet. */
import { describe, expect, it } from 'vitest';
import { NotReadyError, retryWhileNotReady } from '../../src/gardenlet/component.js';
import { FakeClock } from '../../src/runtime/clock.js';

describe('retryWhileNotReady', () => {
  const opts = (clock: FakeClock, signal = new AbortController().signal) => ({
    clock,
    forMs: 1_000,
    intervalMs: 100,
    signal,
  });

  it('checks again every interval until the check passes, and returns its value', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const result = retryWhileNotReady(async () => {
      calls++;
      if (calls < 4) throw new NotReadyError(`not yet (${calls})`);
      return clock.now();
    }, opts(clock));
    const started = clock.now();
    await clock.advance(300);
    await expect(result).resolves.toBe(started + 300);
    expect(calls).toBe(4);
  });

  it('gives up with the last NotReadyError once the time is up', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const result = retryWhileNotReady(async () => {
      throw new NotReadyError(`not yet (${++calls})`);
    }, opts(clock));
    const settled = result.catch((e: unknown) => e);
    await clock.advance(1_100);
    const error = await settled;
    expect(error).toBeInstanceOf(NotReadyError);
    expect((error as Error).message).toBe(`not yet (${calls})`);
    expect(calls).toBe(11);
  });

  it('throws any other error at once, without waiting', async () => {
    const clock = new FakeClock();
    let calls = 0;
    await expect(
      retryWhileNotReady(async () => {
        calls++;
        throw new Error('forbidden');
      }, opts(clock)),
    ).rejects.toThrow('forbidden');
    expect(calls).toBe(1);
  });

  it('stops waiting when its signal aborts', async () => {
    const clock = new FakeClock();
    const stop = new AbortController();
    const result = retryWhileNotReady(
      async () => {
        throw new NotReadyError('not yet');
      },
      opts(clock, stop.signal),
    );
    const settled = result.catch((e: unknown) => e);
    await clock.advance(100);
    stop.abort(new Error('stopping'));
    expect(((await settled) as Error).message).toBe('stopping');
  });
});
