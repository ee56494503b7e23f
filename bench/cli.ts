/**
 * Start-up of the command line as a user meets it: `--help`, `--version` and a one-object `validate`, each a whole
 * process timed from outside, against `node -e 0` (the floor any Node program pays) measured in turn with it.
 *
 * The CLI runs compiled, as installed (`npm ci` builds dist/ through `prepare`): this builds the package into a
 * temporary folder (tsc) so a checkout's stale or missing dist/ does not matter.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../src/system/project.js';

/** What `--help` and a one-object `validate` should stay under (issue: the first hour). */
export const CLI_TARGET_MS = 400;

export interface CliBenchResult {
  readonly name: string;
  /** Median wall time of the command, ms. */
  readonly medianMs: number;
  /** Median wall time of `node -e 0` in the same pairs, ms. */
  readonly baselineMs: number;
  readonly ratio: number;
}

/** The package as npm installs it: dist/, bin/, package.json, and the dependencies. */
function installedPackage(): { dir: string; remove(): void } {
  const root = projectRoot();
  const dir = mkdtempSync(join(tmpdir(), 'gardener-ipv6-bench-cli-'));
  execFileSync(
    process.execPath,
    [
      join(root, 'node_modules', 'typescript', 'bin', 'tsc'),
      '-p',
      join(root, 'tsconfig.build.json'),
      '--outDir',
      join(dir, 'dist'),
    ],
    {
      stdio: 'inherit',
    },
  );
  cpSync(join(root, 'bin'), join(dir, 'bin'), { recursive: true });
  cpSync(join(root, 'package.json'), join(dir, 'package.json'));
  cpSync(join(root, 'examples'), join(dir, 'examples'), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

function wallMs(args: readonly string[]): number {
  const start = process.hrtime.bigint();
  const run = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (run.status !== 0) throw new Error(`node ${args.join(' ')} exited ${run.status}: ${run.stderr.toString()}`);
  return ms;
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

export async function runCliBench(runs = 15): Promise<CliBenchResult[]> {
  const pkg = installedPackage();
  try {
    const bin = join(pkg.dir, 'bin', 'gardener-ipv6.js');
    const commands: [string, string[]][] = [
      ['--help', [bin, '--help']],
      ['--version', [bin, '--version']],
      ['validate (one object)', [bin, 'validate', '-f', join(pkg.dir, 'examples', 'seed-ipv4.yaml')]],
    ];
    const baseline = ['-e', '0'];
    const results: CliBenchResult[] = [];
    for (const [name, args] of commands) {
      wallMs(args); // warm-up: the file system cache
      const own: number[] = [];
      const floor: number[] = [];
      // In turn, so a machine that speeds up or slows down during the run affects both alike.
      for (let i = 0; i < runs; i++) {
        own.push(wallMs(args));
        floor.push(wallMs(baseline));
      }
      const medianMs = median(own);
      const baselineMs = median(floor);
      results.push({ name, medianMs, baselineMs, ratio: medianMs / baselineMs });
    }
    return results;
  } finally {
    pkg.remove();
  }
}
