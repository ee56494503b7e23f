import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SupervisedProcess, type SupervisedState } from '../../src/system/supervisor.js';
import { waitFor } from '../support/wait.js';

const dirs: string[] = [];
const running: SupervisedProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((p) => p.stop(1_000)));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function supervise(script: string, onChange?: (s: SupervisedState) => void): SupervisedProcess {
  const dir = mkdtempSync(join(process.env.GARDENER_IPV6_TMPDIR || tmpdir(), 'gardener-ipv6-test-'));
  dirs.push(dir);
  const p = new SupervisedProcess(
    { name: 'worker', command: 'sh', args: ['-c', script], logFile: join(dir, 'worker.log') },
    { backoff: { initialMs: 50, maxMs: 200, jitter: 0 }, ...(onChange ? { onChange } : {}) },
  );
  running.push(p);
  return p;
}

describe('SupervisedProcess', () => {
  it('restarts a process that exits, with growing delays, and reports each start and exit', async () => {
    const events: string[] = [];
    const p = supervise('echo started; exit 3', (s) => events.push(s.running ? 'start' : `exit ${s.lastExit}`));
    p.start();
    const state = await waitFor(() => (p.state().restarts >= 3 ? p.state() : undefined), { timeoutMs: 10_000 });
    expect(state.lastExit).toBe('exited with code 3');
    expect(events.slice(0, 4)).toEqual(['start', 'exit exited with code 3', 'start', 'exit exited with code 3']);
    expect(p.tail()).toContain('started');
  });

  it('keeps a running process, reports its pid, and stops it without restarting', async () => {
    const p = supervise('exec sleep 60');
    p.start();
    p.start();
    const pid = await waitFor(() => p.state().pid);
    expect(p.state()).toMatchObject({ running: true, restarts: 0 });
    process.kill(pid, 'SIGKILL');
    const restarted = await waitFor(() => {
      const s = p.state();
      return s.running && s.pid !== pid ? s : undefined;
    });
    expect(restarted.restarts).toBe(1);
    expect(restarted.lastExit).toBe('was killed by SIGKILL');
    await p.stop(1_000);
    expect(p.state().running).toBe(false);
    expect(() => process.kill(restarted.pid!, 0)).toThrow();
    // No restart after a stop.
    await new Promise((r) => setTimeout(r, 300));
    expect(p.state()).toMatchObject({ running: false, restarts: 1 });
  });

  it('restarts a running process on request: SIGTERM, then a new process at once, no crash backoff', async () => {
    const events: string[] = [];
    const p = supervise('exec sleep 60', (s) => events.push(s.running ? 'start' : `exit ${s.lastExit}`));
    p.start();
    const pid = await waitFor(() => p.state().pid);
    await p.restart(2_000);
    const state = p.state();
    expect(state).toMatchObject({ running: true, restarts: 1, lastExit: 'was killed by SIGTERM' });
    expect(state.pid).not.toBe(pid);
    expect(() => process.kill(pid, 0)).toThrow();
    // The old process's exit was not taken for a crash: no second start from the supervisor's backoff.
    await new Promise((r) => setTimeout(r, 300));
    expect(p.state()).toMatchObject({ pid: state.pid, restarts: 1 });
    expect(events).toEqual(['start', 'start']);
  });
});
