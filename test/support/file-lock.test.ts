/** The lock the integration files take turns through (test/support/one-file-at-a-time.ts). */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireFileLock } from './file-lock.js';

const dir = mkdtempSync(join(tmpdir(), 'file-lock-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('acquireFileLock', () => {
  it('gives the lock to one holder at a time, the next when the first releases it', async () => {
    const path = join(dir, 'a.lock');
    const events: string[] = [];
    const first = await acquireFileLock(path);
    const second = acquireFileLock(path).then((release) => {
      events.push('second');
      return release;
    });
    // The second stays waiting while the first holds the lock (it would have its turn in well under this).
    await new Promise((r) => setTimeout(r, 300));
    events.push('first releases');
    await first();
    await (
      await second
    )();
    expect(events).toEqual(['first releases', 'second']);
  });

  it('passes the lock on when the process that holds it is killed without releasing it', async () => {
    const path = join(dir, 'b.lock');
    const script = `import { acquireFileLock } from ${JSON.stringify(join(import.meta.dirname, 'file-lock.ts'))};
      await acquireFileLock(${JSON.stringify(path)}); console.log('held'); setInterval(() => {}, 1000);`;
    const owner = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise((held) => owner.stdout.once('data', held));
    let acquired = false;
    const next = acquireFileLock(path).then((release) => {
      acquired = true;
      return release;
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(acquired).toBe(false);
    owner.kill('SIGKILL');
    await (
      await next
    )();
    expect(acquired).toBe(true);
  });
});
