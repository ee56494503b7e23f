import { describe, expect, it, vi } from 'vitest';
import { SmallestFirstQueue } from '../../src/admission/review-queue.js';

/** Busy for `ms` (a review's synchronous work). */
function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

/** Resolves after the current turn and its immediates (an I/O callback's place). */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('SmallestFirstQueue', () => {
  it('runs what a task leaves for the end of its turn once every task of the turn has started, and at once outside a turn', async () => {
    const queue = new SmallestFirstQueue(50);
    const events: string[] = [];
    for (const size of [2, 1]) {
      queue.add(
        size,
        () => {
          events.push(`task ${size}`);
          queue.afterTurn(() => events.push(`answer ${size}`), vi.fn());
        },
        vi.fn(),
      );
    }
    await vi.waitFor(() => expect(events).toHaveLength(4));
    expect(events).toEqual(['task 1', 'task 2', 'answer 1', 'answer 2']);
    queue.afterTurn(() => events.push('outside'), vi.fn());
    expect(events.at(-1)).toBe('outside');
  });

  it('hands what an end-of-turn callback throws to its onError, and runs the turn’s other callbacks', async () => {
    const queue = new SmallestFirstQueue(50);
    const thrown = new Error('send failed');
    const onError = vi.fn();
    const ran = vi.fn();
    queue.add(
      1,
      () => {
        queue.afterTurn(() => {
          throw thrown;
        }, onError);
        queue.afterTurn(ran, vi.fn());
      },
      vi.fn(),
    );
    await vi.waitFor(() => expect(ran).toHaveBeenCalledOnce());
    expect(onError).toHaveBeenCalledWith(thrown);
  });

  it('starts the tasks queued in one turn smallest first, all in one later turn when they are quick', async () => {
    const queue = new SmallestFirstQueue(50);
    const order: number[] = [];
    const turns = new Set<number>();
    // One tick per turn of the event loop: an immediate that queues the next.
    let turn = 0;
    let ticking = true;
    const tick = () => {
      turn++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    for (const size of [300, 100, 200, 100]) queue.add(size, () => (order.push(size), turns.add(turn)), vi.fn());
    expect(order).toEqual([]);
    await vi.waitFor(() => expect(order).toHaveLength(4));
    ticking = false;
    expect(order).toEqual([100, 100, 200, 300]);
    expect(turns.size).toBe(1);
  });

  it('leaves the rest for a later turn once a turn has spent its budget, so I/O runs in between', async () => {
    const queue = new SmallestFirstQueue(5);
    const events: string[] = [];
    for (const size of [1, 2, 3]) {
      queue.add(
        size,
        () => {
          events.push(`task ${size}`);
          spin(8);
        },
        vi.fn(),
      );
    }
    // Queued behind the first turn's immediate: runs after it, before the queue's next turn.
    setImmediate(() => events.push('io'));
    await vi.waitFor(() => expect(events.filter((e) => e.startsWith('task'))).toHaveLength(3));
    expect(events).toEqual(['task 1', 'io', 'task 2', 'task 3']);
    expect(queue.length).toBe(0);
  });

  it('hands thrown errors and rejections to the task’s onError, and goes on with the others', async () => {
    const queue = new SmallestFirstQueue();
    const thrown = new Error('thrown');
    const rejected = new Error('rejected');
    const onThrown = vi.fn();
    const onRejected = vi.fn();
    const ran = vi.fn();
    queue.add(
      1,
      () => {
        throw thrown;
      },
      onThrown,
    );
    queue.add(2, () => Promise.reject(rejected), onRejected);
    queue.add(3, ran, vi.fn());
    await vi.waitFor(() => expect(onRejected).toHaveBeenCalledWith(rejected));
    expect(onThrown).toHaveBeenCalledWith(thrown);
    expect(ran).toHaveBeenCalledOnce();
  });

  it('does not wait for a task that waits for I/O before it starts the next', async () => {
    const queue = new SmallestFirstQueue();
    let release!: () => void;
    const slow = vi.fn(() => new Promise<void>((resolve) => (release = resolve)));
    const next = vi.fn();
    queue.add(1, slow, vi.fn());
    await nextTurn();
    queue.add(2, next, vi.fn());
    await vi.waitFor(() => expect(next).toHaveBeenCalledOnce());
    expect(slow).toHaveBeenCalledOnce();
    release();
  });
});
