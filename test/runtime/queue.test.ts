import { describe, expect, it } from 'vitest';
import { FakeClock, settle } from '../../src/runtime/clock.js';
import { WorkQueue } from '../../src/runtime/queue.js';

function newQueue(clock = new FakeClock()) {
  return { clock, queue: new WorkQueue({ clock, name: 'test' }) };
}

describe('WorkQueue', () => {
  it('hands out keys in order and queues each key once', async () => {
    const { queue } = newQueue();
    queue.add('a');
    queue.add('b');
    queue.add('a');
    expect(queue.len()).toBe(2);
    expect(await queue.get()).toBe('a');
    expect(await queue.get()).toBe('b');
    expect(queue.len()).toBe(0);
  });

  it('processes a key re-added while in progress again after done, never twice at once', async () => {
    const { queue } = newQueue();
    queue.add('a');
    const key = await queue.get();
    queue.add('a');
    queue.add('a');
    expect(queue.len()).toBe(0);
    let second: string | undefined;
    void queue.get().then((k) => (second = k));
    await settle();
    expect(second).toBeUndefined();
    queue.done(key!);
    await settle();
    expect(second).toBe('a');
    queue.done('a');
    expect(queue.len()).toBe(0);
  });

  it('wakes a waiting get when a key arrives', async () => {
    const { queue } = newQueue();
    const got = queue.get();
    queue.add('x');
    expect(await got).toBe('x');
  });

  it('grows the per-key backoff from 100 ms by doubling up to 60 s, and forget resets it', async () => {
    const { queue } = newQueue();
    const delays: number[] = [];
    for (let i = 0; i < 13; i++) {
      delays.push(queue.backoffFor('k'));
      queue.addRateLimited('k');
    }
    expect(delays).toEqual([100, 200, 400, 800, 1600, 3200, 6400, 12_800, 25_600, 51_200, 60_000, 60_000, 60_000]);
    expect(queue.numRequeues('k')).toBe(13);
    expect(queue.backoffFor('other')).toBe(100);
    queue.forget('k');
    expect(queue.backoffFor('k')).toBe(100);
  });

  it('adds a rate-limited key only after its backoff', async () => {
    const { clock, queue } = newQueue();
    queue.addRateLimited('k');
    queue.addRateLimited('k'); // 200 ms, but the pending 100 ms add is earlier and wins
    await clock.advance(99);
    expect(queue.len()).toBe(0);
    await clock.advance(1);
    expect(queue.len()).toBe(1);
    expect(await queue.get()).toBe('k');
    queue.done('k');
    queue.addRateLimited('k');
    await clock.advance(399);
    expect(queue.len()).toBe(0);
    await clock.advance(1);
    expect(queue.len()).toBe(1);
  });

  it('addAfter delays a key and keeps the earliest of several delays', async () => {
    const { clock, queue } = newQueue();
    queue.addAfter('k', 5000);
    queue.addAfter('k', 1000);
    queue.addAfter('k', 3000);
    expect(queue.delayed()).toBe(1);
    await clock.advance(999);
    expect(queue.len()).toBe(0);
    await clock.advance(1);
    expect(queue.len()).toBe(1);
    await clock.advance(10_000);
    expect(queue.len()).toBe(1);
    expect(queue.delayed()).toBe(0);
    queue.addAfter('now', 0);
    expect(queue.len()).toBe(2);
  });

  it('shutdown releases waiting gets, drops queued and delayed keys and ignores adds', async () => {
    const { clock, queue } = newQueue();
    const waiting = [queue.get(), queue.get()];
    queue.shutdown();
    expect(await Promise.all(waiting)).toEqual([undefined, undefined]);

    const second = newQueue(clock).queue;
    second.add('a');
    second.addAfter('b', 100);
    second.shutdown();
    expect(second.len()).toBe(0);
    expect(second.delayed()).toBe(0);
    expect(await second.get()).toBeUndefined();
    second.add('c');
    await clock.advance(1000);
    expect(second.len()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });
});
