import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SupervisedProcess, type SupervisedState } from '../../src/system/supervisor.js';
import { waitFor } from '../support/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'supervisor-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean).length;

describe('supervised processes', () => {
  it('restarts a crashing process and stops for good on stop()', async () => {
    const log = join(dir, 'crash.log');
    const states: SupervisedState[] = [];
    const p = new SupervisedProcess(
      { name: 'crasher', command: 'sh', args: ['-c', 'echo run; exit 2'], logFile: log },
      { backoff: { initialMs: 20, maxMs: 100, jitter: 0 }, onChange: (s) => states.push(s) },
    );
    p.start();
    await waitFor(() => p.state().restarts >= 3, { timeoutMs: 5_000, message: 'three restarts' });
    await p.stop();
    expect(states.map((s) => s.lastExit)).toContain('exited with code 2');
    expect(states.some((s) => s.running) && states.some((s) => !s.running)).toBe(true);
    const runs = lines(log);
    // Nothing starts after stop(): wait longer than the largest delay.
    await new Promise((r) => setTimeout(r, 300));
    expect(lines(log)).toBe(runs);
  });

  it('stop() ends a running process and does not restart it', async () => {
    const p = new SupervisedProcess({ name: 'sleeper', command: 'sleep', args: ['60'], logFile: join(dir, 's.log') });
    p.start();
    expect(p.state().running).toBe(true);
    await p.stop(2_000);
    expect(p.state()).toMatchObject({ running: false, restarts: 0 });
  });
});
