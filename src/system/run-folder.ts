/**
 * The folder of one run of `up` or `run`: `$TMPDIR/gardener-ipv6-run-<pid>`, below which everything it writes lives
 * (the control plane's files with the CA and service-account keys, BIND9's with the TSIG key, the webhook's, the seed
 * Nodes' and machines' state). A run that ends normally removes it; one that was killed can't, so the next start of
 * either removes the folders whose pid is gone.
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pidAlive } from './process.js';

export const RUN_FOLDER_PREFIX = 'gardener-ipv6-run-';

/** Creates the run's folder (mode 0700) below `parent`. */
export function createRunFolder(parent: string, pid = process.pid): string {
  const dir = join(parent, `${RUN_FOLDER_PREFIX}${pid}`);
  // A leftover of an earlier process with the same pid holds nothing of ours.
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

/** Removes the run folders below `parent` whose process is gone; returns their paths. */
export function removeDeadRunFolders(parent: string): string[] {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const pid = new RegExp(`^${RUN_FOLDER_PREFIX}(\\d+)$`).exec(name)?.[1];
    if (pid === undefined || Number(pid) === process.pid || pidAlive(Number(pid))) continue;
    const dir = join(parent, name);
    try {
      rmSync(dir, { recursive: true, force: true });
      removed.push(dir);
    } catch {
      // Not ours to remove (another user's, a read-only file system): the run goes on.
    }
  }
  return removed;
}

export interface RunFolder {
  readonly dir: string;
  /** Removes the folder and gives back the process its previous `$GARDENER_IPV6_TMPDIR`. */
  leave(): void;
}

/**
 * Removes the folders of runs that are gone below `$GARDENER_IPV6_TMPDIR` (or the OS's temporary folder), saying
 * which through `log`; returns that parent folder.
 */
export function sweepRunFolders(log: (line: string) => void): string {
  const parentDir = process.env.GARDENER_IPV6_TMPDIR || tmpdir();
  const leftovers = removeDeadRunFolders(parentDir);
  if (leftovers.length > 0) log(`removed what runs that were killed left: ${leftovers.join(', ')}`);
  return parentDir;
}

/** After {@link sweepRunFolders}, creates this run's folder and makes it the `$GARDENER_IPV6_TMPDIR` of the run. */
export function enterRunFolder(log: (line: string) => void): RunFolder {
  const dir = createRunFolder(sweepRunFolders(log));
  const previousTmpDir = process.env.GARDENER_IPV6_TMPDIR;
  process.env.GARDENER_IPV6_TMPDIR = dir;
  return {
    dir,
    leave() {
      rmSync(dir, { recursive: true, force: true });
      if (previousTmpDir === undefined) delete process.env.GARDENER_IPV6_TMPDIR;
      else process.env.GARDENER_IPV6_TMPDIR = previousTmpDir;
    },
  };
}
