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

/** A failed step, with what the step was about so the shoot's last operation can name it. */
export class StepError extends Error {
  constructor(
    readonly step: string,
    cause: unknown,
  ) {
    super(`${step}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}
