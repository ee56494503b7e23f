/**
 * `gardener-ipv6 up` as a user runs it, from a test: start it, wait for its `ready` line, stop it, and look at its
 * process tree and the sockets that tree listens on.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../src/system/project.js';
import { allProcStats, readProcStat } from '../../src/system/proc-stat.js';
import { which } from '../../src/system/process.js';
import { waitFor } from './wait.js';

export interface UpProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
}

export function startUp(args: string[], env: NodeJS.ProcessEnv = process.env): UpProcess {
  // The real command line, as a user runs it (bin/ runs the sources through tsx in a checkout).
  const child = spawn(process.execPath, [join('bin', 'gardener-ipv6.js'), 'up', ...args], {
    cwd: projectRoot(),
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exit };
}

/**
 * After a failed assertion: SIGTERM, so that `up` still removes its namespace and files (a SIGKILL would leave the
 * namespace behind); SIGKILL only if it does not exit in time.
 */
export async function stopUp(up: UpProcess): Promise<void> {
  if (up.child.exitCode !== null || up.child.signalCode !== null) return;
  up.child.kill('SIGTERM');
  const timer = setTimeout(() => up.child.kill('SIGKILL'), 20_000);
  await up.exit;
  clearTimeout(timer);
}

export async function waitForReady(up: UpProcess): Promise<void> {
  let exited = false;
  void up.exit.then(() => (exited = true));
  try {
    // With root, the example shoot gets its control plane (and machines) before `ready`.
    await waitFor(() => /\bready\b/.test(up.stdout()) || exited, { timeoutMs: 300_000, intervalMs: 100 });
  } catch {
    throw new Error(`up printed no ready line in 300s:\n${up.stdout()}\n${up.stderr()}`);
  }
  if (exited) throw new Error(`up exited early:\n${up.stdout()}\n${up.stderr()}`);
}

/** `pid` and every process below it (children of children, ...), from /proc. */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const stat of allProcStats()) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), stat.pid]);
  const tree: number[] = [];
  const visit = (p: number) => {
    tree.push(p);
    for (const c of children.get(p) ?? []) visit(c);
  };
  visit(pid);
  return tree;
}

/** The command name of a process (`etcd`, `node`, ...), or undefined once it exited. */
export function commandName(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

export interface Listener {
  readonly protocol: 'tcp' | 'udp';
  /** As `ss` prints it, without brackets: `::1`, `fd00:ff::1`, `*`, `0.0.0.0`, `::`, `127.0.0.1`. */
  readonly address: string;
  readonly port: number;
  readonly pid: number;
  readonly process: string;
}

/** The TCP and UDP sockets of this network namespace that listen (or are bound, for UDP), with their processes. */
export function listeners(): Listener[] {
  const out = execFileSync(which('ss') ?? 'ss', ['-H', '-l', '-n', '-p', '-t', '-u'], { encoding: 'utf8' });
  const result: Listener[] = [];
  for (const line of out.split('\n')) {
    // udp   UNCONN 0 0 [fd00:ff::1]:53 [::]:* users:(("named",pid=123,fd=20),...)
    const fields = line.trim().split(/\s+/);
    if (fields.length < 6) continue;
    const local = fields[4]!;
    const colon = local.lastIndexOf(':');
    const address = local
      .slice(0, colon)
      .replace(/^\[|\]$/g, '')
      .replace(/%.*$/, '');
    const port = Number(local.slice(colon + 1));
    for (const m of line.matchAll(/\("([^"]*)",pid=(\d+),/g)) {
      result.push({ protocol: fields[0] as 'tcp' | 'udp', address, port, pid: Number(m[2]), process: m[1]! });
    }
  }
  return result;
}

/** Whether the process still runs (a zombie, dead and waiting for its parent to reap it, does not). */
export function running(pid: number): boolean {
  const stat = readProcStat(pid);
  return stat !== undefined && stat.state !== 'Z';
}

/** The sockets of `pid`'s process tree in this network namespace that are bound to an address not in `allowed`. */
export function listenersOutside(pid: number, allowed: readonly string[]): Listener[] {
  const tree = new Set(processTree(pid));
  return listeners().filter((l) => tree.has(l.pid) && !allowed.includes(l.address));
}
