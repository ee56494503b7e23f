import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeExit, startProcess } from '../../src/system/process.js';

const dir = mkdtempSync(join(tmpdir(), 'gardener-ipv6-process-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('managed processes', () => {
  it('logs output to a file and reports the exit with a tail of it', async () => {
    const p = startProcess({
      name: 'sh',
      command: 'sh',
      args: ['-c', 'echo one; echo two >&2; exit 3'],
      logFile: join(dir, 'a.log'),
    });
    expect(await p.exited).toEqual({ code: 3, signal: null });
    expect(p.tail()).toBe('one\ntwo');
    expect(p.tail(1)).toBe('two');
    expect(describeExit(p.exit()!)).toBe('exited with code 3');
  });

  it('stops with SIGTERM, and with SIGKILL when SIGTERM is ignored', async () => {
    const polite = startProcess({ name: 'sleep', command: 'sleep', args: ['60'], logFile: join(dir, 'b.log') });
    await polite.stop(5_000);
    expect(polite.exit()?.signal).toBe('SIGTERM');

    const stubborn = startProcess({
      name: 'stubborn',
      command: 'sh',
      args: ['-c', "trap '' TERM; echo started; while :; do sleep 0.1; done"],
      logFile: join(dir, 'c.log'),
    });
    // Wait until the trap is installed (the shell printed), not for a fixed time.
    while (!stubborn.tail().includes('started')) await new Promise((r) => setTimeout(r, 20));
    const started = Date.now();
    await stubborn.stop(300);
    expect(stubborn.exit()?.signal).toBe('SIGKILL');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('reports a binary that cannot be started', async () => {
    const p = startProcess({
      name: 'missing',
      command: join(dir, 'does-not-exist'),
      args: [],
      logFile: join(dir, 'd.log'),
    });
    const exit = await p.exited;
    expect(exit.code === -1 || exit.code === 127 || exit.code === 126).toBe(true);
  });
});
