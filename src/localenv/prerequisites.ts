/**
 * The machine's prerequisites, checked by the one list in hack/check-prerequisites.sh (which the build and the tests
 * run too), so that `up` names everything missing at once, before it starts anything: the tools, what the machines
 * need as root, and what building the binaries `up` lacks needs.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { cacheBinDir, NODE_BINARY_NAMES, prebuiltBinary, type BinaryName } from './binaries.js';
import { projectRoot } from '../system/project.js';

/** What `up` starts from binaries: the garden's control plane. */
const CONTROL_PLANE_BINARIES: readonly BinaryName[] = ['etcd', 'kube-apiserver', 'kube-controller-manager'];
/** As root also the shoots' control planes (and the seed's Nodes) with their scheduler. */
const ROOT_CONTROL_PLANE_BINARIES: readonly BinaryName[] = [...CONTROL_PLANE_BINARIES, 'kube-scheduler'];

function present(name: BinaryName, env: NodeJS.ProcessEnv): boolean {
  return prebuiltBinary(name, env) !== undefined || existsSync(join(cacheBinDir(), name));
}

export function controlPlaneBinariesPresent(env: NodeJS.ProcessEnv = process.env): boolean {
  return CONTROL_PLANE_BINARIES.every((name) => present(name, env));
}

/**
 * The binaries `up` uses that are neither ready-made nor built yet: as root with machines the machines' too. (A
 * cached binary whose pinned version changed is rebuilt by hack/ensure-binaries.sh, which checks again first.)
 */
export function upBinariesToBuild(opts: { root: boolean; machines: boolean; env?: NodeJS.ProcessEnv }): BinaryName[] {
  const env = opts.env ?? process.env;
  const names = opts.root
    ? [...ROOT_CONTROL_PLANE_BINARIES, ...(opts.machines ? NODE_BINARY_NAMES : [])]
    : CONTROL_PLANE_BINARIES;
  return names.filter((name) => !present(name, env));
}

/**
 * The message naming what `up` misses (with the command that installs it), or undefined when nothing is missing or
 * the check can't run here (an installed package has no hack/; `up` then fails on the first missing piece). Warnings
 * of a check that passed (kernel settings too low for the machines) go to `warn`.
 */
export function missingUpPrerequisites(opts: {
  ipv6Only: boolean;
  /** Machines for the shoots and Nodes for the seed (as root). @default true, as `up` */
  machines?: boolean;
  env?: NodeJS.ProcessEnv;
  /** @default writes to stderr */
  warn?: (s: string) => void;
}): string | undefined {
  const script = join(projectRoot(), 'hack', 'check-prerequisites.sh');
  if (!existsSync(script)) return undefined;
  const env = opts.env ?? process.env;
  const machines = opts.machines ?? true;
  const args = [script, 'up'];
  if (opts.ipv6Only) args.push('--ipv6-only');
  if (!machines) args.push('--no-machines');
  // As root, `up` raises kernel settings too low for its machines (inotify limits) rather than failing on them later.
  else if (process.getuid?.() === 0) args.push('--raise-sysctls');
  const toBuild = upBinariesToBuild({ root: process.getuid?.() === 0, machines, env });
  if (toBuild.length > 0) args.push(`--build-binaries=${toBuild.join(',')}`);
  // The node `up` runs on, which need not be the first on PATH.
  const check = spawnSync('bash', args, {
    encoding: 'utf8',
    env: { ...env, GARDENER_IPV6_NODE: env.GARDENER_IPV6_NODE ?? process.execPath },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  if (check.error) return undefined;
  if (check.status === 0) {
    if (check.stderr) (opts.warn ?? ((s: string) => process.stderr.write(s)))(check.stderr);
    return undefined;
  }
  return check.stderr;
}
