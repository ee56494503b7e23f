/**
 * The node agent of a local machine, as gardener-node-agent does on a real node: it writes the files of the
 * worker's OperatingSystemConfig into the machine and applies the kernel settings of its `/etc/sysctl.d/` files,
 * with the worker pool's `sysctls` from the Shoot overriding them.
 *
 * A machine is a network namespace of the host, not a VM: only settings that belong to a network namespace can be
 * the machine's own (../sysctls.ts, the rule the Shoot's admission refuses a worker pool's `sysctls` by). Others are
 * reported as skipped, never written, since writing them would change the host and every other machine.
 *
 * The agent is pure apart from its `NodeAgentTarget` (where files go, how sysctls are set), so it is tested
 * without a machine; `directoryTarget` is the target of a machine (its root seen from outside) and of the tests.
 */
import { execFile } from 'node:child_process';
import { mkdir, writeFile, chmod } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { promisify } from 'node:util';
import type { File } from '../../../apis/extensions/v1alpha1/operatingsystemconfig.js';
import { which } from '../../../system/process.js';
import { machineSysctlRefusal, sysctlKey } from '../sysctls.js';

const run = promisify(execFile);

export const SYSCTL_DIR = '/etc/sysctl.d';
/** Where the worker's `sysctls` are written: sorts after the OSC's `99-k8s-general.conf`, as it overrides it. */
export const WORKER_SYSCTL_FILE = '/etc/sysctl.d/99-worker-sysctls.conf';

export interface NodeAgentTarget {
  /** Writes a file at an absolute path as the machine sees it, creating parent folders. */
  writeFile(path: string, content: Buffer, mode: number): Promise<void>;
  /** Sets kernel parameters in the machine's network namespace, in order. */
  setSysctls(values: readonly (readonly [string, string])[]): Promise<void>;
}

export interface DecodedFile {
  path: string;
  content: Buffer;
  mode: number;
}

export interface FieldError {
  field: string;
  detail: string;
}

export class OperatingSystemConfigError extends Error {
  constructor(readonly errors: FieldError[]) {
    super(errors.map((e) => `${e.field}: ${e.detail}`).join('; '));
    this.name = 'OperatingSystemConfigError';
  }
}

/** The files of an OSC with their content decoded; every problem reported with its field path. */
export function decodeFiles(files: readonly File[] | undefined): { files: DecodedFile[]; errors: FieldError[] } {
  const decoded: DecodedFile[] = [];
  const errors: FieldError[] = [];
  (files ?? []).forEach((file, i) => {
    const field = `spec.files[${i}]`;
    const path = typeof file.path === 'string' ? file.path : '';
    if (!path.startsWith('/') || posix.normalize(path) !== path || path === '/') {
      errors.push({
        field: `${field}.path`,
        detail: `must be an absolute, normalized file path, got ${JSON.stringify(file.path)}`,
      });
      return;
    }
    const inline = file.content?.inline;
    if (inline === undefined) {
      errors.push({
        field: `${field}.content`,
        detail: file.content?.secretRef
          ? 'secretRef is not supported by the local node agent; use inline'
          : 'inline content is required',
      });
      return;
    }
    let content: Buffer;
    if (inline.encoding === '' || inline.encoding === undefined) content = Buffer.from(inline.data ?? '', 'utf8');
    else if (inline.encoding === 'b64' || inline.encoding === 'base64')
      content = Buffer.from(inline.data ?? '', 'base64');
    else {
      errors.push({
        field: `${field}.content.inline.encoding`,
        detail: `unsupported encoding ${JSON.stringify(inline.encoding)} (supported: "", "b64")`,
      });
      return;
    }
    const mode = file.permissions ?? 0o644;
    if (!Number.isInteger(mode) || mode < 0 || mode > 0o7777) {
      errors.push({ field: `${field}.permissions`, detail: `must be a file mode (0-07777), got ${mode}` });
      return;
    }
    decoded.push({ path, content, mode });
  });
  return { files: decoded, errors };
}

/** `key = value` lines of a sysctl.d file; comments (`#`, `;`), blanks and `-` (ignore-failure) prefixes handled. */
export function parseSysctlFile(text: string): Map<string, string> {
  const values = new Map<string, string>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const eq = line.indexOf('=');
    if (eq < 0) continue;
    const key = sysctlKey(line.slice(0, eq).trim().replace(/^-/, ''));
    const value = line.slice(eq + 1).trim();
    if (key) values.set(key, value);
  }
  return values;
}

export function renderSysctlFile(values: ReadonlyMap<string, string> | Record<string, string>): string {
  const entries = values instanceof Map ? [...values] : Object.entries(values);
  return entries.map(([k, v]) => `${k} = ${v}`).join('\n') + '\n';
}

export interface SysctlPlan {
  /** What the machine's network namespace gets, in application order. */
  apply: [string, string][];
  /** Parameters a machine can't own (the host's), with why. */
  skipped: { key: string; value: string; reason: string }[];
}

/**
 * The effective kernel parameters: the OSC's files under /etc/sysctl.d in file-name order (later files win, as
 * systemd-sysctl does), then the worker's `sysctls` on top.
 */
export function sysctlPlan(
  files: readonly DecodedFile[],
  overrides: Readonly<Record<string, string>> = {},
): SysctlPlan {
  const merged = new Map<string, string>();
  const sysctlFiles = files
    .filter((f) => posix.dirname(f.path) === SYSCTL_DIR && f.path.endsWith('.conf'))
    .sort((a, b) => posix.basename(a.path).localeCompare(posix.basename(b.path)));
  for (const f of sysctlFiles) for (const [k, v] of parseSysctlFile(f.content.toString('utf8'))) merged.set(k, v);
  for (const [k, v] of Object.entries(overrides)) merged.set(sysctlKey(k), String(v));
  const plan: SysctlPlan = { apply: [], skipped: [] };
  for (const [key, value] of merged) {
    const reason = machineSysctlRefusal(key);
    if (reason === undefined) plan.apply.push([key, value]);
    else plan.skipped.push({ key, value, reason });
  }
  return plan;
}

export interface ApplyResult {
  filesWritten: string[];
  sysctls: SysctlPlan;
}

/**
 * Applies an OperatingSystemConfig: validates all files first (nothing written when one is invalid), writes them
 * and the worker's sysctls file, then sets the network namespace's kernel parameters.
 */
export async function applyOperatingSystemConfig(
  osc: { spec: { files?: File[] } },
  target: NodeAgentTarget,
  workerSysctls: Readonly<Record<string, string>> = {},
): Promise<ApplyResult> {
  const { files, errors } = decodeFiles(osc.spec.files);
  if (errors.length > 0) throw new OperatingSystemConfigError(errors);
  const all = [...files];
  if (Object.keys(workerSysctls).length > 0) {
    all.push({ path: WORKER_SYSCTL_FILE, content: Buffer.from(renderSysctlFile(workerSysctls)), mode: 0o644 });
  }
  for (const f of all) await target.writeFile(f.path, f.content, f.mode);
  const plan = sysctlPlan(files, workerSysctls);
  if (plan.apply.length > 0) await target.setSysctls(plan.apply);
  return { filesWritten: all.map((f) => f.path), sysctls: plan };
}

/**
 * A target whose root is a folder seen from here (for a machine: `/proc/<pid>/root` of a process in its mount
 * namespace) and whose sysctls are set in a named network namespace (`ip netns exec`), or in ours without one.
 */
export function directoryTarget(opts: { rootDir: string; netns?: string }): NodeAgentTarget {
  return {
    async writeFile(path, content, mode) {
      const dest = join(opts.rootDir, path);
      await mkdir(dirname(dest), { recursive: true });
      await writeFile(dest, content, { mode });
      await chmod(dest, mode);
    },
    async setSysctls(values) {
      const sysctl = which('sysctl') ?? 'sysctl';
      const args = ['-q', '-w', ...values.map(([k, v]) => `${k}=${v}`)];
      const argv =
        opts.netns !== undefined
          ? [which('ip') ?? 'ip', 'netns', 'exec', opts.netns, sysctl, ...args]
          : [sysctl, ...args];
      try {
        await run(argv[0]!, argv.slice(1));
      } catch (e) {
        const error = e as Error & { stderr?: string };
        // sysctl names the key it could not set: the list of all of them would hide it.
        const stderr = error.stderr?.trim();
        const what = stderr ? 'kernel parameters' : values.map(([k]) => k).join(', ');
        throw new Error(`setting ${what}${opts.netns ? ` in ${opts.netns}` : ''}: ${stderr || error.message}`);
      }
    },
  };
}
