/**
 * A task graph, as Gardener's `flow` package: tasks with ids, names and dependencies, run in parallel wherever the
 * graph allows. A task may return a value; its dependents read it through the task's handle, typed.
 *
 * Failure, as a reconcile needs it: once a task fails, no new task starts and the running ones are waited for. A
 * failure other than {@link NotReadyError} wins and is thrown as a {@link StepError} naming its task; otherwise the
 * first NotReadyError is thrown with the task's name in front (the reconcile comes back later). Either way the
 * error carries the flow's progress: the share of tasks that had completed.
 *
 * With {@link FlowRunOptions.retryNotReady}, a task that is not ready yet runs again in place, as Gardener's flow
 * tasks wait for what they deployed, while the tasks beside it go on: the flow doesn't start over (and write every
 * object again) for each look at one object.
 */
import type { Clock } from '../runtime/clock.js';
import { NotReadyError, StepError, type ComponentContext } from './component.js';

/** A task's place in the graph, and what its dependents read from it. */
export interface TaskHandle<T> {
  readonly id: string;
  /** Phantom: the type of the task's output. */
  readonly __output?: T;
}

/** What a task reads its dependencies' outputs with. */
export type Outputs = <T>(task: TaskHandle<T>) => T;

export interface TaskSpec<T> {
  /** Unique in the flow; the graph's key. */
  readonly id: string;
  /** What the task does, as the shoot's last operation and `lastErrors[].taskID` say it ("deploying the Network"). */
  readonly name: string;
  readonly dependencies?: readonly TaskHandle<unknown>[];
  run(ctx: ComponentContext, outputs: Outputs): Promise<T>;
}

/** A flow's error: a StepError or NotReadyError, with the progress (0–100) the flow had reached. */
export interface FlowFailure {
  readonly error: StepError | NotReadyError;
  readonly progress: number;
}

/** How a run ended: every task done (their outputs readable), or a failure. */
export type FlowOutcome =
  { readonly failure: FlowFailure } | { readonly failure?: undefined; readonly output: Outputs };

/** How a run treats a task that is not ready yet. */
export interface FlowRunOptions {
  /**
   * A task that throws NotReadyError runs again every `intervalMs` while no other task failed, until it is ready
   * or `forMs` have passed since it first ran; then its NotReadyError ends the run. Without it, the first
   * NotReadyError does.
   */
  readonly retryNotReady?: {
    readonly forMs: number;
    readonly intervalMs: number;
    readonly clock: Clock;
    /** No more looking again once it aborts (the controller stops): a task not ready then ends the run. */
    readonly until?: AbortSignal;
  };
}

interface Task {
  readonly id: string;
  readonly name: string;
  readonly dependencies: readonly string[];
  run(ctx: ComponentContext, outputs: Outputs): Promise<unknown>;
}

export class Flow {
  private readonly tasks: Task[] = [];

  constructor(readonly name: string) {}

  /** Adds a task; its dependencies must have been added before (so the graph has no cycle by construction). */
  task<T>(spec: TaskSpec<T>): TaskHandle<T> {
    if (this.tasks.some((t) => t.id === spec.id)) throw new Error(`flow ${this.name}: task ${spec.id} added twice`);
    const dependencies = (spec.dependencies ?? []).map((d) => d.id);
    for (const d of dependencies) {
      if (!this.tasks.some((t) => t.id === d)) throw new Error(`flow ${this.name}: task ${spec.id} needs unknown ${d}`);
    }
    this.tasks.push({ id: spec.id, name: spec.name, dependencies, run: spec.run });
    return { id: spec.id };
  }

  /** The tasks' ids and dependencies, in the order they were added: the flow in one screen. */
  describe(): string[] {
    return this.tasks.map((t) => `${t.id}${t.dependencies.length ? ` <- ${t.dependencies.join(', ')}` : ''}`);
  }

  /** The tasks as data (id, name, the ids they depend on), in the order they were added: what the docs' tables show. */
  graph(): { readonly id: string; readonly name: string; readonly dependencies: readonly string[] }[] {
    return this.tasks.map(({ id, name, dependencies }) => ({ id, name, dependencies }));
  }

  /** Runs the graph; resolves when every task did, or returns the failure (see the file's comment). */
  async run(ctx: ComponentContext, opts: FlowRunOptions = {}): Promise<FlowOutcome> {
    const outputs = new Map<string, unknown>();
    const read: Outputs = <T>(task: TaskHandle<T>): T => {
      if (!outputs.has(task.id)) throw new Error(`flow ${this.name}: output of ${task.id} read before it completed`);
      return outputs.get(task.id) as T;
    };
    const pending = new Set(this.tasks);
    const running = new Map<Task, Promise<void>>();
    const failures: { task: Task; error: unknown }[] = [];
    const retry = opts.retryNotReady;
    const stopped = (): boolean => retry?.until?.aborted === true;
    const attempt = async (task: Task): Promise<unknown> => {
      const began = retry?.clock.now() ?? 0;
      for (;;) {
        try {
          return await task.run(ctx, read);
        } catch (error) {
          const again =
            retry !== undefined &&
            error instanceof NotReadyError &&
            failures.length === 0 &&
            !ctx.signal.aborted &&
            !stopped() &&
            retry.clock.now() + retry.intervalMs - began <= retry.forMs;
          if (!again) throw error;
          await retry.clock.sleep(
            retry.intervalMs,
            retry.until ? AbortSignal.any([ctx.signal, retry.until]) : ctx.signal,
          );
          if (stopped()) throw error;
        }
      }
    };
    const start = (task: Task) => {
      pending.delete(task);
      running.set(
        task,
        attempt(task).then(
          (value) => {
            outputs.set(task.id, value);
          },
          (error: unknown) => {
            failures.push({ task, error });
          },
        ),
      );
    };
    for (;;) {
      if (failures.length === 0) {
        for (const task of [...pending]) {
          if (task.dependencies.every((d) => outputs.has(d))) start(task);
        }
      }
      if (running.size === 0) break;
      // The next task to settle; then look again at what may start.
      const settled = await Promise.race([...running].map(([task, done]) => done.then(() => task)));
      running.delete(settled);
    }
    if (failures.length === 0) {
      if (pending.size > 0) throw new Error(`flow ${this.name}: tasks never started: ${[...pending].map((t) => t.id)}`);
      return { output: read };
    }
    const progress = Math.floor((outputs.size / this.tasks.length) * 100);
    const failed = failures.find((f) => !(f.error instanceof NotReadyError));
    if (failed) {
      // A task that ran a flow of its own already names its innermost task.
      const error = failed.error instanceof StepError ? failed.error : new StepError(failed.task.name, failed.error);
      return { failure: { error, progress } };
    }
    const first = failures[0]!;
    return {
      failure: { error: new NotReadyError(`${first.task.name}: ${(first.error as Error).message}`), progress },
    };
  }
}
