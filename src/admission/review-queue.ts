/**
 * Starts the decoding of reviews: an ordinary one at once, larger ones the smallest body first, as many per
 * event-loop turn as fit in a time budget. Decoding, defaulting and validating a review is synchronous work
 * proportional to its body; when many large bodies arrive at once (an attack, or a burst of big Shoots), first come
 * first served would make an ordinary review wait for all of them. Here an ordinary review waits for at most the one
 * being decoded, and I/O (new requests, answers) runs between any two turns. An ordinary review is answered as soon
 * as its body is read, without waiting for a turn of the event loop: at 200 reviews/s that turn costs as much as a
 * tenth of the review.
 */

/** How long one turn starts reviews for, at most (a review started within it runs to its end or its first I/O). */
export const DEFAULT_TURN_BUDGET_MS = 2;
/**
 * The largest body started at once: a Shoot with its managedFields is 10 to 30 KiB, and 64 KiB decodes in well under
 * the turn budget (about 0.3 µs per value, a value every 10 bytes or more).
 */
export const DEFAULT_IMMEDIATE_MAX_BYTES = 64 * 1024;

export class SmallestFirstQueue {
  private readonly waiting: { readonly size: number; readonly start: () => void }[] = [];
  private scheduled = false;

  constructor(
    private readonly turnBudgetMs = DEFAULT_TURN_BUDGET_MS,
    private readonly immediateMaxSize = DEFAULT_IMMEDIATE_MAX_BYTES,
  ) {}

  /**
   * Runs `task` now when `size` is ordinary (at most `immediateMaxSize`), else in a later turn, once every smaller
   * task queued before it has started. A task that throws, or whose promise rejects, hands its error to `onError`; a
   * task never holds the queue while it waits for I/O.
   */
  add(size: number, task: () => unknown, onError: (error: unknown) => void): void {
    if (size <= this.immediateMaxSize) return start(task, onError);
    this.waiting.push({ size, start: () => start(task, onError) });
    this.schedule();
  }

  /** Tasks not started yet. */
  get length(): number {
    return this.waiting.length;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.turn);
  }

  private readonly turn = (): void => {
    this.scheduled = false;
    const started = performance.now();
    do {
      let smallest = 0;
      for (let i = 1; i < this.waiting.length; i++)
        if (this.waiting[i]!.size < this.waiting[smallest]!.size) smallest = i;
      const [next] = this.waiting.splice(smallest, 1);
      next?.start();
    } while (this.waiting.length > 0 && performance.now() - started < this.turnBudgetMs);
    if (this.waiting.length > 0) this.schedule();
  };
}

function start(task: () => unknown, onError: (error: unknown) => void): void {
  try {
    const result = task();
    if (result instanceof Promise) result.catch(onError);
  } catch (e) {
    onError(e);
  }
}
