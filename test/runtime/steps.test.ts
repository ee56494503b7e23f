import { describe, expect, it } from 'vitest';
import { Steps, undoGroups, type Step, type UndoFailure } from '../../src/runtime/steps.js';

/** Steps that log what they do and undo into the state. */
function logged(name: string, extra: Partial<Step<string[]>> = {}): Step<string[]> {
  return {
    name,
    run: (log) => void log.push(`run ${name}`),
    undo: (log, opts) => void log.push(`undo ${name} (${opts.reason})`),
    ...extra,
  };
}

describe('Steps', () => {
  it('runs the steps in order and undoes them last first on stop', async () => {
    const steps = new Steps('test', [logged('a'), logged('b'), logged('c')], []);
    await steps.run();
    expect(steps.completed).toEqual(['a', 'b', 'c']);
    expect(await steps.undo({ reason: 'stop' })).toEqual([]);
    expect(steps.state).toEqual(['run a', 'run b', 'run c', 'undo c (stop)', 'undo b (stop)', 'undo a (stop)']);
  });

  it('undoes the steps done, the failed one first, when one fails, and rejects with its error', async () => {
    const failing = logged('b', {
      run: (log) => {
        log.push('run b');
        throw new Error('b failed');
      },
    });
    const steps = new Steps('test', [logged('a'), failing, logged('c')], []);
    await expect(steps.run()).rejects.toThrow('b failed');
    expect(steps.state).toEqual(['run a', 'run b', 'undo b (failure)', 'undo a (failure)']);
    // Undone once: the stop after a failed run has nothing left.
    expect(await steps.undo({ reason: 'stop' })).toEqual([]);
    expect(steps.state).toHaveLength(4);
  });

  it('runs the other undos when one fails, and reports it', async () => {
    const reported: UndoFailure[] = [];
    const broken = new Error('cannot undo b');
    const steps = new Steps(
      'test',
      [
        logged('a'),
        logged('b', {
          undo: () => {
            throw broken;
          },
        }),
        logged('c'),
      ],
      [],
      { onUndoFailure: (f) => reported.push(f) },
    );
    await steps.run();
    const failures = await steps.undo({ reason: 'stop' });
    expect(failures).toEqual([{ step: 'b', error: broken }]);
    expect(reported).toEqual(failures);
    expect(steps.state.slice(3)).toEqual(['undo c (stop)', 'undo a (stop)']);
  });

  it('undoes once: a second stop gets the first one', async () => {
    const steps = new Steps('test', [logged('a')], []);
    await steps.run();
    const first = steps.undo({ reason: 'stop', deadline: 1 });
    expect(steps.undo({ reason: 'stop' })).toBe(first);
    await first;
    expect(steps.state).toEqual(['run a', 'undo a (stop)']);
  });

  it('passes the deadline to the undos', async () => {
    const deadlines: (number | undefined)[] = [];
    const steps = new Steps('test', [logged('a', { undo: (_, opts) => void deadlines.push(opts.deadline) })], []);
    await steps.run();
    await steps.undo({ reason: 'stop', deadline: 42 });
    expect(deadlines).toEqual([42]);
  });

  it('stops between steps once the signal aborts, undoes, and rejects with its reason', async () => {
    const stop = new AbortController();
    const steps = new Steps(
      'test',
      [logged('a', { run: (log) => void (log.push('run a'), stop.abort(new Error('SIGINT'))) }), logged('b')],
      [],
    );
    await expect(steps.run({ signal: stop.signal })).rejects.toThrow('SIGINT');
    expect(steps.state).toEqual(['run a', 'undo a (failure)']);
  });

  it('tells of the failure before the undos run', async () => {
    const steps = new Steps(
      'test',
      [
        logged('a'),
        logged('b', {
          run: () => {
            throw new Error('b failed');
          },
        }),
      ],
      [],
    );
    await expect(steps.run({ onFailure: (e) => steps.state.push(`failed: ${(e as Error).message}`) })).rejects.toThrow(
      'b failed',
    );
    expect(steps.state).toEqual(['run a', 'failed: b failed', 'undo b (failure)', 'undo a (failure)']);
  });

  it('undoes the steps marked alongside together with the one before them', async () => {
    const events: string[] = [];
    const slow = (name: string, extra: Partial<Step<string[]>> = {}): Step<string[]> => ({
      name,
      run: () => {},
      undo: async () => {
        events.push(`begin ${name}`);
        await new Promise((r) => setTimeout(r, 5));
        events.push(`end ${name}`);
      },
      ...extra,
    });
    const steps = new Steps(
      'test',
      [slow('a'), slow('b'), { name: 'no undo', run: () => {} }, slow('c', { undoAlongsidePrevious: true })],
      [],
    );
    await steps.run();
    await steps.undo({ reason: 'stop' });
    expect(events).toEqual(['begin c', 'begin b', 'end c', 'end b', 'begin a', 'end a']);
  });
});

describe('undoGroups', () => {
  it('groups, last first, the steps with an undo', () => {
    const names = (groups: Step<unknown>[][]) => groups.map((g) => g.map((s) => s.name));
    const step = (name: string, extra: Partial<Step<unknown>> = {}): Step<unknown> => ({
      name,
      run: () => {},
      undo: () => {},
      ...extra,
    });
    expect(
      names(
        undoGroups([
          step('a'),
          step('b', { undoAlongsidePrevious: true }),
          step('c', { undo: undefined }),
          step('d'),
          step('e', { undoAlongsidePrevious: true }),
          step('f', { undoAlongsidePrevious: true }),
        ]),
      ),
    ).toEqual([
      ['f', 'e', 'd'],
      ['b', 'a'],
    ]);
  });
});
