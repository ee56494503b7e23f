/**
 * Ordered steps with their undo: how the local environment, the control plane and the runtime process start and
 * stop. Each step does one thing and says how it is undone (what it started is stopped, what it created removed);
 * the steps share a state object in which each records what it made, for the steps after it and for its undo.
 *
 * On a failure (or a stop asked for through the run's signal) the undos of the steps done so far (the failed one
 * included, as far as it got) run, last first, and the run rejects; a later {@link Steps.undo} (the stop) does the
 * same for a run that completed. An undo that fails doesn't keep the others from running: it is reported
 * (`onUndoFailure`) and returned.
 *
 * Unlike the gardenlet's task graph (src/gardenlet/flow.ts), which runs a reconcile's tasks in parallel and comes back
 * later for what was not ready, these run once and in order: what they start must be stopped again, in reverse.
 */

export interface UndoOptions {
  /** Why the steps are undone: one of them failed (or the run was stopped while starting), or the stop. */
  readonly reason: 'failure' | 'stop';
  /** When what still runs is killed (ms since the epoch); none: each part's own grace period. */
  readonly deadline?: number;
}

export interface Step<S> {
  /** What the step does ("start etcd"): what a failed undo is reported with. */
  readonly name: string;
  /** Does the step, recording in `state` what it made as it makes it. */
  run(state: S): Promise<void> | void;
  /**
   * Undoes what run did; none: nothing to undo. Runs for the step that failed too: it undoes what the state records,
   * as far as the run got.
   */
  undo?(state: S, opts: UndoOptions): Promise<void> | void;
  /**
   * The undo runs at the same time as that of the step before it (the undo-able one): the two are independent, and
   * the stop should not take their sum.
   */
  readonly undoAlongsidePrevious?: boolean;
}

/** An undo that threw: the others ran all the same. */
export interface UndoFailure {
  readonly step: string;
  readonly error: unknown;
}

export interface StepsOptions {
  /** Told of each undo that failed, as it fails. */
  readonly onUndoFailure?: (failure: UndoFailure) => void;
}

export interface RunOptions {
  /**
   * Checked before each step and after the last: once aborted, the steps done are undone and the run rejects with
   * its reason.
   */
  readonly signal?: AbortSignal;
  /** Told of the failure before the undos run (so that what failed is said before what the stop says). */
  readonly onFailure?: (error: unknown) => void;
}

/** One run of a list of steps over one state: run it once, undo it once. */
export class Steps<S> {
  private readonly done: Step<S>[] = [];
  private undoing: Promise<UndoFailure[]> | undefined;

  constructor(
    readonly name: string,
    private readonly steps: readonly Step<S>[],
    readonly state: S,
    private readonly opts: StepsOptions = {},
  ) {}

  /** Runs the steps in order. On a failure, undoes the steps done and rejects with the failure. */
  async run(opts: RunOptions = {}): Promise<void> {
    try {
      for (const step of this.steps) {
        opts.signal?.throwIfAborted();
        if (this.undoing !== undefined) throw new Error(`${this.name}: undone while starting`);
        this.done.push(step);
        await step.run(this.state);
      }
      opts.signal?.throwIfAborted();
    } catch (error) {
      opts.onFailure?.(error);
      await this.undo({ reason: 'failure' });
      throw error;
    }
  }

  /** The names of the steps begun and not undone, in order. */
  get completed(): string[] {
    return this.done.map((s) => s.name);
  }

  /**
   * Undoes the steps done, last first, each group of {@link Step.undoAlongsidePrevious} together; resolves with the
   * undos that failed. Once: a second call gets the first one's result.
   */
  undo(opts: UndoOptions): Promise<UndoFailure[]> {
    return (this.undoing ??= this.undoAll(opts));
  }

  private async undoAll(opts: UndoOptions): Promise<UndoFailure[]> {
    const failures: UndoFailure[] = [];
    for (const group of undoGroups(this.done.splice(0))) {
      await Promise.all(
        group.map(async (step) => {
          try {
            await step.undo!(this.state, opts);
          } catch (error) {
            const failure = { step: step.name, error };
            failures.push(failure);
            this.opts.onUndoFailure?.(failure);
          }
        }),
      );
    }
    return failures;
  }
}

/** The steps with an undo, last first, in the groups whose undos run together. */
export function undoGroups<S>(done: readonly Step<S>[]): Step<S>[][] {
  const groups: Step<S>[][] = [];
  let joinNext = false;
  for (const step of [...done].reverse()) {
    if (step.undo === undefined) continue;
    if (joinNext) groups[groups.length - 1]!.push(step);
    else groups.push([step]);
    joinNext = step.undoAlongsidePrevious === true;
  }
  return groups;
}
