/**
 * Child processes (etcd, kube-apiserver, a machine's containerd and kubelet): output to a log file, a tail of it for
 * error messages, a graceful stop with a deadline, and a synchronous kill for exit handlers.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Whether a process with this pid exists (EPERM: it does, under another user). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** When it was started (ms since epoch). */
  readonly startedAt: number;
  /** Resolves when the process has exited, for whatever reason. */
  readonly exited: Promise<ProcessExit>;
  /** The exit, once it happened. */
  exit(): ProcessExit | undefined;
  /** The last lines of the process's output, for error messages. */
  tail(lines?: number): string;
  /** SIGTERM, then SIGKILL after graceMs; resolves when the process is gone. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL without waiting: for `exit` handlers, which can't wait. */
  killNow(): void;
}

export interface StartOptions {
  name: string;
  command: string;
  args: string[];
  logFile: string;
  /** Run inside this network namespace (`ip netns exec`); needs root. */
  netns?: string;
  /**
   * Commands the process is started through after setpriv, each exec'ing the next (e.g. `nsenter --target PID
   * --mount --net --`), so the pid stays the process's.
   */
  wrap?: string[];
  env?: NodeJS.ProcessEnv;
}

/** Finds an executable on PATH (also the sbin folders, where Debian keeps `ip` for non-login shells). */
export function which(command: string, path = process.env.PATH ?? ''): string | undefined {
  const dirs = [...path.split(delimiter), '/usr/local/sbin', '/usr/sbin', '/sbin'];
  for (const dir of dirs) {
    if (dir && existsSync(join(dir, command))) return join(dir, command);
  }
  return undefined;
}

const setpriv = which('setpriv');

export function startProcess(opts: StartOptions): ManagedProcess {
  // setpriv --pdeathsig makes the kernel kill the child when we die without cleaning up (SIGKILL of the test
  // runner): no etcd left holding ports. `ip netns exec` and setpriv both exec, so the pid stays the child's.
  const argv = [
    ...(opts.netns !== undefined ? [which('ip') ?? 'ip', 'netns', 'exec', opts.netns] : []),
    ...(setpriv !== undefined ? [setpriv, '--pdeathsig', 'SIGKILL', '--'] : []),
    ...(opts.wrap ?? []),
    opts.command,
    ...opts.args,
  ];
  const fd = openSync(opts.logFile, 'a');
  const startedAt = Date.now();
  // detached: a process group of its own, so a Ctrl-C in the terminal reaches us, not the children, and we stop
  // them in order (API server before etcd).
  const child = spawn(argv[0]!, argv.slice(1), {
    stdio: ['ignore', fd, fd],
    detached: true,
    env: opts.env ?? process.env,
  });
  closeSync(fd);

  let exit: ProcessExit | undefined;
  let tailError = '';
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      resolve(exit);
    });
    child.once('error', (error) => {
      // spawn failed (ENOENT, EACCES): there is no process; report it through the log tail.
      exit = { code: -1, signal: null };
      tailError = `${opts.name}: cannot start ${argv[0]}: ${error.message}`;
      resolve(exit);
    });
  });

  const signalGroup = (signal: NodeJS.Signals) => {
    if (exit !== undefined || child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // Already gone.
    }
  };

  return {
    name: opts.name,
    pid: child.pid ?? -1,
    logFile: opts.logFile,
    startedAt,
    exited,
    exit: () => exit,
    tail(lines = 30) {
      let text = '';
      try {
        text = readFileSync(opts.logFile, 'utf8');
      } catch {
        // No log yet.
      }
      const tail = text.trimEnd().split('\n').slice(-lines).join('\n');
      return [tailError, tail].filter(Boolean).join('\n');
    },
    async stop(graceMs = 10_000) {
      if (exit !== undefined) return;
      signalGroup('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        exited.then(() => false),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), graceMs))),
      ]);
      clearTimeout(timer);
      if (timedOut) {
        signalGroup('SIGKILL');
        await exited;
      }
    },
    killNow() {
      signalGroup('SIGKILL');
    },
  };
}

/**
 * The grace period a process gets from SIGTERM to SIGKILL when everything must be stopped by `deadline` (ms since
 * epoch): `graceMs`, or less when the deadline is closer (0 once it passed: SIGKILL at once).
 */
export function graceBefore(deadline: number | undefined, graceMs: number): number {
  return deadline === undefined ? graceMs : Math.max(0, Math.min(graceMs, deadline - Date.now()));
}

/** Describes how a process ended, for messages. */
export function describeExit(exit: ProcessExit): string {
  return exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
}
