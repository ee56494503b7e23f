/**
 * Starts the decoding of reviews the smallest body first, as many per event-loop turn as fit in a time budget.
 * Decoding, defaulting and validating a review is synchronous work proportional to its body; when many large bodies
 * arrive at once (an attack, or a burst of big Shoots), first come first served would make an ordinary review wait
 * for all of them. Smallest first makes it wait for at most the one being decoded, and I/O (new requests, answers)
 * runs between any two turns. A burst of ordinary reviews (the API server calls the webhook for many writes at
 * once) is answered in one turn, without a turn of the event loop for each review.
 */

/** How long one turn starts reviews for, at most (a review started within it runs to its end or its first I/O). */
export const DEFAULT_TURN_BUDGET_MS = 2;

export class SmallestFirstQueue {
  private readonly waiting: {
    readonly size: number;
    readonly task: () => unknown;
    readonly onError: (error: unknown) => void;
  }[] = [];
  private scheduled = false;
  /** What runs when the current turn ends; undefined outside a turn. */
  private turnEnds: (() => void)[] | undefined;

  constructor(private readonly turnBudgetMs = DEFAULT_TURN_BUDGET_MS) {}

  /**
   * Runs `task` in a later turn, once every smaller task queued before it has started. A task that throws, or whose
   * promise rejects, hands its error to `onError`; a task never holds the queue while it waits for I/O.
   */
  add(size: number, task: () => unknown, onError: (error: unknown) => void): void {
    this.waiting.push({ size, task, onError });
    this.schedule();
  }

  /**
   * Runs `fn` once the turn running now has started all its tasks, or at once outside a turn; what it throws goes
   * to `onError`, as a task's does, and the other callbacks of the turn still run. The server sends its
   * answers so: a turn's reviews then run back to back and its answers are written together, each with its code in
   * cache, where writing each answer between two reviews evicts the review's code (TLS, HTTP) and the other way round.
   */
  afterTurn(fn: () => void, onError: (error: unknown) => void): void {
    if (this.turnEnds === undefined) start(fn, onError);
    else this.turnEnds.push(() => start(fn, onError));
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
    const ends: (() => void)[] = [];
    this.turnEnds = ends;
    try {
      do {
        let smallest = 0;
        for (let i = 1; i < this.waiting.length; i++)
          if (this.waiting[i]!.size < this.waiting[smallest]!.size) smallest = i;
        // The first is the smallest in a burst of ordinary reviews: taken without splice's array of what it removed.
        const next = smallest === 0 ? this.waiting.shift() : this.waiting.splice(smallest, 1)[0];
        if (next !== undefined) start(next.task, next.onError);
      } while (this.waiting.length > 0 && performance.now() - started < this.turnBudgetMs);
    } finally {
      this.turnEnds = undefined;
      if (this.waiting.length > 0) this.schedule();
      for (const end of ends) end();
    }
  };
}

/** Runs `task`, handing what it throws or its promise rejects with to `onError`. */
function start(task: () => unknown, onError: (error: unknown) => void): void {
  try {
    const result = task();
    if (result instanceof Promise) result.catch(onError);
  } catch (e) {
    onError(e);
  }
}
