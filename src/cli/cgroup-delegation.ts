/**
 * `gardener-ipv6 cgroup-delegation`: the cgroup delegation of a seed Node (extensions/provider-local/machine/
 * cgroup-delegation.ts) as files, for node images that are not a machine of this project (kind's).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CGROUP_DELEGATION_HOOK,
  containerdBaseRuntimeSpec,
} from '../extensions/provider-local/machine/cgroup-delegation.js';
import type { CliIO } from './io.js';

export const CGROUP_DELEGATION_FILES = {
  hook: 'cgroup-delegation-hook',
  baseRuntimeSpec: 'base-runtime-spec.json',
} as const;

export async function runCgroupDelegation(
  io: CliIO,
  flags: { defaultSpec: string; hookPath: string; out: string },
): Promise<number> {
  let spec: unknown;
  try {
    spec = JSON.parse(await readFile(flags.defaultSpec, 'utf8'));
  } catch (e) {
    io.err(`--default-spec: ${(e as Error).message}\n`);
    return 2;
  }
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    io.err('--default-spec: not a runtime spec (a JSON object)\n');
    return 2;
  }
  if (!flags.hookPath.startsWith('/')) {
    io.err(`--hook-path: ${JSON.stringify(flags.hookPath)} is not an absolute path\n`);
    return 2;
  }
  await mkdir(flags.out, { recursive: true });
  await writeFile(join(flags.out, CGROUP_DELEGATION_FILES.hook), CGROUP_DELEGATION_HOOK, { mode: 0o755 });
  const base = containerdBaseRuntimeSpec(spec as Record<string, unknown>, flags.hookPath);
  await writeFile(join(flags.out, CGROUP_DELEGATION_FILES.baseRuntimeSpec), `${JSON.stringify(base, null, 2)}\n`);
  return 0;
}
