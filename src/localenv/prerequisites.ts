/**
 * The machine's prerequisites, checked by the one list in hack/check-prerequisites.sh (which the build and the tests
 * run too), so that `up` names everything missing at once, before it starts anything.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { cacheBinDir, prebuiltBinary, type BinaryName } from './binaries.js';
import { projectRoot } from './project.js';

/** What `up` starts from binaries: without them, it builds them (and needs Go). */
const CONTROL_PLANE_BINARIES: readonly BinaryName[] = ['etcd', 'kube-apiserver', 'kube-controller-manager'];

export function controlPlaneBinariesPresent(env: NodeJS.ProcessEnv = process.env): boolean {
  return CONTROL_PLANE_BINARIES.every((name) => prebuiltBinary(name, env) ?? existsSync(join(cacheBinDir(), name)));
}

/**
 * The message naming what `up` misses (with the command that installs it), or undefined when nothing is missing or
 * the check can't run here (an installed package has no hack/; `up` then fails on the first missing piece).
 */
export function missingUpPrerequisites(opts: { ipv6Only: boolean; env?: NodeJS.ProcessEnv }): string | undefined {
  const script = join(projectRoot(), 'hack', 'check-prerequisites.sh');
  if (!existsSync(script)) return undefined;
  const env = opts.env ?? process.env;
  const args = [script, 'up'];
  if (opts.ipv6Only) args.push('--ipv6-only');
  if (!controlPlaneBinariesPresent(env)) args.push('--build-binaries');
  const check = spawnSync('bash', args, { encoding: 'utf8', env, stdio: ['ignore', 'ignore', 'pipe'] });
  if (check.error) return undefined;
  return check.status === 0 ? undefined : check.stderr;
}
