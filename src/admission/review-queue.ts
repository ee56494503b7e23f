/**
 * Starts the decoding of reviews one per event-loop turn, the smallest body first. Decoding, defaulting and
 * validating a review is synchronous work proportional to its body; when many large bodies arrive at once (an attack,
 * or a burst of big Shoots), first come first served would make an ordinary review wait for all of them. Smallest
 * first makes it wait for at most the one being decoded, and I/O (new requests, answers) runs between any two.
 */
export class SmallestFirstQueue {
  private readonly waiting: { readonly size: number; readonly start: () => void }[] = [];
  private scheduled = false;

  /** Runs `task` once every smaller task queued before it has started; resolves with its result. */
  run<T>(size: number, task: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ size, start: () => task().then(resolve, reject) });
      this.schedule();
    });
  }

  /** Tasks not started yet. */
  get length(): number {
    return this.waiting.length;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      let smallest = 0;
      for (let i = 1; i < this.waiting.length; i++)
        if (this.waiting[i]!.size < this.waiting[smallest]!.size) smallest = i;
      const [next] = this.waiting.splice(smallest, 1);
      if (this.waiting.length > 0) this.schedule();
      next?.start();
    });
  }
}
