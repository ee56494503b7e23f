import type { Clock } from '../runtime/clock.js';

/**
 * A component has one job ("the DNS records of a shoot") and Gardener's tiny interface: deploy what it manages,
 * destroy it, and wait until the world matches.
 */
export interface ComponentContext {
  readonly signal: AbortSignal;
}

export interface DeployWaiter {
  deploy(ctx: ComponentContext): Promise<void>;
  destroy(ctx: ComponentContext): Promise<void>;
  /** Resolves when what `deploy` created is ready; throws NotReadyError when it isn't yet. */
  wait?(ctx: ComponentContext): Promise<void>;
  /** Resolves when what `destroy` removed is gone; throws NotReadyError when it isn't yet. */
  waitCleanup?(ctx: ComponentContext): Promise<void>;
}

/** Something is still on its way: not a failure, the reconcile comes back later. */
export class NotReadyError extends Error {}

/**
 * `check` again every `intervalMs` while it throws {@link NotReadyError}, for up to `forMs`: what a component waits for
 * in place (a load balancer's address, a replica ready). Its last NotReadyError when the time is up; any other error,
 * or the signal's abort, at once.
 */
export async function retryWhileNotReady<T>(
  check: () => Promise<T>,
  opts: { readonly clock: Clock; readonly forMs: number; readonly intervalMs: number; readonly signal: AbortSignal },
): Promise<T> {
  const deadline = opts.clock.now() + opts.forMs;
  for (;;) {
    try {
      return await check();
    } catch (e) {
      if (!(e instanceof NotReadyError) || opts.clock.now() >= deadline) throw e;
    }
    await opts.clock.sleep(opts.intervalMs, opts.signal);
    opts.signal.throwIfAborted();
  }
}

/** A failure with Gardener's error codes (`gardencorev1beta1.ErrorCode`), for the Shoot's `lastErrors`. */
export class ErrorWithCodes extends Error {
  constructor(
    message: string,
    readonly codes: readonly string[],
  ) {
    super(message);
  }
}

/** The error codes of a failure: its own, or those of what caused it. */
export function errorCodesOf(e: unknown): readonly string[] {
  if (e instanceof ErrorWithCodes) return e.codes;
  if (e instanceof Error && e.cause !== undefined) return errorCodesOf(e.cause);
  return [];
}

/** A failed step, with what the step was about so the shoot's last operation can name it. */
export class StepError extends Error {
  constructor(
    readonly step: string,
    cause: unknown,
  ) {
    super(`${step}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}
