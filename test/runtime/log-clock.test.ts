import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Backoff } from '../../src/runtime/backoff.js';
import { ApiError } from '../../src/runtime/errors.js';
import { FakeClock, realClock } from '../../src/runtime/clock.js';
import { newLogger } from '../../src/runtime/log.js';

describe('newLogger', () => {
  it('writes JSON lines with level label, ISO time, name, context and serialized errors', () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = newLogger({ level: 'debug', name: 'gardenlet', destination });
    logger.child({ controller: 'shoot' }).error({ err: new ApiError(409, 'conflict') }, 'reconcile failed');
    logger.trace('dropped');
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!);
    expect(line).toMatchObject({ level: 'error', name: 'gardenlet', controller: 'shoot', msg: 'reconcile failed' });
    expect(line.time).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
    expect(line.err).toMatchObject({ type: 'ApiError', message: 'conflict', code: 409 });
  });
});

describe('clocks', () => {
  it('FakeClock fires sleeps in time order, including ones scheduled while advancing', async () => {
    const clock = new FakeClock(0);
    const fired: string[] = [];
    void clock.sleep(300).then(() => fired.push(`c@${clock.now()}`));
    void clock.sleep(100).then(async () => {
      fired.push(`a@${clock.now()}`);
      await clock.sleep(100);
      fired.push(`b@${clock.now()}`);
    });
    await clock.advance(1000);
    expect(fired).toEqual(['a@100', 'b@200', 'c@300']);
    expect(clock.now()).toBe(1000);
  });

  it('sleeps end early on abort, for both clocks', async () => {
    const abort = new AbortController();
    const fake = new FakeClock();
    const fakeSleep = fake.sleep(60_000, abort.signal);
    const realSleep = realClock.sleep(60_000, abort.signal);
    abort.abort();
    await Promise.all([fakeSleep, realSleep]);
    expect(fake.pendingTimers()).toBe(0);
    await realClock.sleep(1000, abort.signal); // already aborted: at once
  });

  it('FakeClock refuses an endless loop of zero-length sleeps', async () => {
    const clock = new FakeClock();
    const stop = new AbortController();
    void (async () => {
      while (!stop.signal.aborted) await clock.sleep(0, stop.signal);
    })();
    await expect(clock.advance(1)).rejects.toThrow(/timers in one advance/);
    stop.abort();
  });
});

describe('Backoff', () => {
  it('doubles up to the cap, jitters within [d/2, d], and resets', () => {
    const fixed = new Backoff({ initialMs: 100, maxMs: 1000, jitter: 0 });
    expect([1, 2, 3, 4, 5, 6].map(() => fixed.next())).toEqual([100, 200, 400, 800, 1000, 1000]);
    fixed.reset();
    expect(fixed.next()).toBe(100);
    const low = new Backoff({ initialMs: 100, maxMs: 1000, random: () => 0 });
    const high = new Backoff({ initialMs: 100, maxMs: 1000, random: () => 0.999999 });
    expect([low.next(), low.next()]).toEqual([50, 100]);
    expect([high.next(), high.next()]).toEqual([100, 200]);
  });
});
