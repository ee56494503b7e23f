/**
 * A bound on the bytes of request bodies the webhook holds at once, from the moment it starts reading a body to the
 * moment its answer is sent. Reviews are decoded one after the other (review-queue.ts), but every body received waits
 * for its turn, and reading, decoding and answering a body costs some three times its size on top: 48 concurrent 1 MB
 * reviews took the webhook from 100 to 247 MiB, with 256 MiB to live in. Within the bound, what a body costs is paid
 * for a bounded number of bodies whatever their shape; a request beyond it is not read (its bytes wait in the
 * kernel's socket buffers) until others are answered, and is told to come back (429 with Retry-After, as the API
 * server's max-in-flight filter does; the API server's webhook client retries it) if that takes too long.
 */

interface Waiter {
  readonly bytes: number;
  readonly admit: () => void;
}

export class InFlightBytes {
  private held = 0;
  private readonly waiting: Waiter[] = [];

  /**
   * @param maxBytes most bytes held at once; a body is always let in when nothing else is held, whatever its size.
   * @param reserveBytes of `maxBytes`, kept for bodies up to `smallBytes` (ordinary reviews of 2 to 30 KB), so that
   * large bodies never keep them waiting.
   */
  constructor(
    readonly maxBytes: number,
    readonly reserveBytes: number,
    readonly smallBytes: number,
  ) {}

  /** Bytes held now. */
  get bytes(): number {
    return this.held;
  }

  /** Requests waiting for room. */
  get waiters(): number {
    return this.waiting.length;
  }

  /** Takes `bytes` if they fit now; the caller gives them back with {@link release}. */
  tryAcquire(bytes: number): boolean {
    if (!this.fits(bytes)) return false;
    this.held += bytes;
    return true;
  }

  /**
   * Takes `bytes` once they fit, the smallest waiting first; false when they did not fit within `waitMs` (nothing
   * taken then).
   */
  acquire(bytes: number, waitMs: number): Promise<boolean> {
    if (this.tryAcquire(bytes)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        bytes,
        admit: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        const i = this.waiting.indexOf(waiter);
        if (i >= 0) this.waiting.splice(i, 1);
        resolve(false);
      }, waitMs);
      this.waiting.push(waiter);
    });
  }

  /** Gives back bytes taken, and lets in what fits of the waiting requests, the smallest first. */
  release(bytes: number): void {
    this.held = Math.max(0, this.held - bytes);
    while (this.waiting.length > 0) {
      let smallest = 0;
      for (let i = 1; i < this.waiting.length; i++)
        if (this.waiting[i]!.bytes < this.waiting[smallest]!.bytes) smallest = i;
      const next = this.waiting[smallest]!;
      if (!this.tryAcquire(next.bytes)) return;
      this.waiting.splice(smallest, 1);
      next.admit();
    }
  }

  private fits(bytes: number): boolean {
    if (this.held === 0) return true;
    const room = this.maxBytes - (bytes > this.smallBytes ? this.reserveBytes : 0);
    return this.held + bytes <= room;
  }
}
