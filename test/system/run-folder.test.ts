import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRunFolder, removeDeadRunFolders, RUN_FOLDER_PREFIX } from '../../src/system/run-folder.js';

const parents: string[] = [];
afterEach(() => parents.splice(0).forEach((p) => rmSync(p, { recursive: true, force: true })));

function parent(): string {
  const dir = mkdtempSync(join(process.env.GARDENER_IPV6_TMPDIR || tmpdir(), 'run-folder-test-'));
  parents.push(dir);
  return dir;
}

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync('sh', ['-c', 'echo $$'], { encoding: 'utf8' });
  return Number(child.stdout.trim());
}

describe('run folders', () => {
  it('creates the folder of this run, private to its owner', () => {
    const dir = createRunFolder(parent(), 4242);
    expect(dir.endsWith(`${RUN_FOLDER_PREFIX}4242`)).toBe(true);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  it("removes the folders of dead runs with what they hold, and keeps live runs' and other folders", () => {
    const p = parent();
    const dead = join(p, `${RUN_FOLDER_PREFIX}${deadPid()}`);
    mkdirSync(join(dead, 'gardener-ipv6-cp-x'), { recursive: true });
    writeFileSync(join(dead, 'gardener-ipv6-cp-x', 'ca.key'), 'key');
    const live = createRunFolder(p, process.ppid);
    const mine = createRunFolder(p);
    const other = join(p, 'gardener-ipv6-cp-abc');
    mkdirSync(other);
    expect(removeDeadRunFolders(p)).toEqual([dead]);
    expect(existsSync(dead)).toBe(false);
    expect([live, mine, other].every(existsSync)).toBe(true);
  });

  it('finds nothing in a folder that does not exist', () => {
    expect(removeDeadRunFolders(join(parent(), 'missing'))).toEqual([]);
  });
});
