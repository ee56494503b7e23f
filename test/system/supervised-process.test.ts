import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startProcess } from '../../src/localenv/process.js';
import { SupervisedProcess } from '../../src/system/supervised-process.js';
import { waitFor } from '../support/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'supervised-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('supervised processes', () => {
  it('restarts a crashing process with growing delays and stops for good on stop()', async () => {
    const log = join(dir, 'crash.log');
    const delays: number[] = [];
    const p = new SupervisedProcess({
      name: 'crasher',
      start: () => startProcess({ name: 'crasher', command: 'sh', args: ['-c', 'echo run; exit 2'], logFile: log }),
      backoff: { initialMs: 20, maxMs: 200, jitter: 0 },
      onExit: (_, delay) => delays.push(delay),
    });
    p.start();
    await waitFor(() => p.restarts >= 3, { timeoutMs: 5_000, message: 'three restarts' });
    await p.stop();
    const runs = readFileSync(log, 'utf8').split('\n').filter(Boolean).length;
    expect(delays.slice(0, 3)).toEqual([20, 40, 80]);
    expect(p.lastExit).toBe('crasher exited with code 2');
    // Nothing starts after stop().
    await new Promise((r) => setTimeout(r, 300));
    expect(readFileSync(log, 'utf8').split('\n').filter(Boolean).length).toBe(runs);
  });

  it('stop() ends a running process and does not restart it', async () => {
    const p = new SupervisedProcess({
      name: 'sleeper',
      start: () => startProcess({ name: 'sleeper', command: 'sleep', args: ['60'], logFile: join(dir, 's.log') }),
    });
    p.start();
    expect(p.running).toBe(true);
    await p.stop(2_000);
    expect(p.running).toBe(false);
    expect(p.restarts).toBe(0);
  });
});
