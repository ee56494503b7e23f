/**
 * `up` started the way a script starts it, through npx (npm exec → a shell → node): a signal to the npx pid stops it
 * cleanly, so does a terminal's Ctrl-C (the group's SIGINT plus npm's forwarded one), and so does the end of its
 * parents when the signal never reaches it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/system/project.js';
import { alive, pidsMentioning } from '../support/processes.js';
import { waitFor } from '../support/wait.js';

interface NpxUp {
  readonly npx: ChildProcess;
  readonly kubeconfig: string;
  output(): string;
  exited: Promise<void>;
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/**
 * A folder where `npx gardener-ipv6` finds this checkout's command, as in a project that depends on it; with the
 * checkout's .npmrc (its script shell) when `withProjectNpmrc`, else npm's default shell.
 */
function npxProject(withProjectNpmrc: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'gardener-ipv6-npx-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'npx-user', version: '1.0.0', private: true }));
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(join(projectRoot(), 'bin', 'gardener-ipv6.js'), join(dir, 'node_modules', '.bin', 'gardener-ipv6'));
  if (withProjectNpmrc) copyFileSync(join(projectRoot(), '.npmrc'), join(dir, '.npmrc'));
  return dir;
}

/** `detached`: npx leads a process group of its own, which a test can signal as a terminal signals its foreground group. */
function startNpxUp(withProjectNpmrc: boolean, opts: { detached?: boolean } = {}): NpxUp {
  const dir = npxProject(withProjectNpmrc);
  const kubeconfig = join(dir, 'admin.kubeconfig');
  // No seed Nodes: up.test.ts runs `up` with the example seed's node network in this namespace meanwhile, and two
  // networks with the same addresses can't both be reached from here.
  const npx = spawn(
    'npx',
    ['--no-install', 'gardener-ipv6', 'up', '--seed-nodes', '0', '--kubeconfig-out', kubeconfig],
    {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, npm_config_update_notifier: 'false' },
      detached: opts.detached ?? false,
    },
  );
  let output = '';
  npx.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  npx.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((resolve) => npx.once('exit', () => resolve()));
  // Whatever happens, nothing of this `up` stays behind.
  cleanups.push(() => {
    for (const pid of pidsMentioning(kubeconfig)) process.kill(pid, 'SIGKILL');
  });
  return { npx, kubeconfig, output: () => output, exited };
}

/** The node process running `up` (a grandchild of npx), and the processes of its control plane. */
async function readyUp(up: NpxUp): Promise<{ upPid: number; dir: string; controlPlane: number[] }> {
  await waitFor(() => /^ready: /m.test(up.output()), {
    timeoutMs: 150_000,
    intervalMs: 200,
    message: 'up to print its ready line',
  }).catch((e: unknown) => {
    throw new Error(`${(e as Error).message}\n${up.output()}`);
  });
  const dir = /control plane files \(removed on stop\): (\S+)/.exec(up.output())![1]!;
  const upPid = pidsMentioning(`--kubeconfig-out\u0000${up.kubeconfig}`).find((pid) => pid !== up.npx.pid)!;
  return { upPid, dir, controlPlane: [...pidsMentioning(dir), ...pidsMentioning(`--kubeconfig=${up.kubeconfig}`)] };
}

async function expectStoppedCleanly(up: NpxUp, ready: Awaited<ReturnType<typeof readyUp>>): Promise<void> {
  await waitFor(() => !alive(ready.upPid), { timeoutMs: 60_000, message: 'up to exit' });
  expect(ready.controlPlane.filter(alive)).toEqual([]);
  expect(existsSync(ready.dir)).toBe(false);
  expect(existsSync(up.kubeconfig)).toBe(false);
  expect(up.output()).toContain('stopped; removed the control plane and its files');
}

describe('gardener-ipv6 up through npx', () => {
  it('stops cleanly on SIGINT to the npx pid', { timeout: 240_000 }, async () => {
    const up = startNpxUp(true);
    const ready = await readyUp(up);
    expect(ready.controlPlane.length).toBeGreaterThan(0);
    up.npx.kill('SIGINT');
    await expectStoppedCleanly(up, ready);
    expect(up.output()).toContain('SIGINT: stopping');
    await up.exited;
  });

  it(
    'stops cleanly on Ctrl-C in a terminal: SIGINT to the whole group, which npm passes on once more',
    {
      timeout: 240_000,
    },
    async () => {
      const up = startNpxUp(true, { detached: true });
      const ready = await readyUp(up);
      // As a terminal does: every process of the foreground group (npm, its shell, node) gets the signal.
      process.kill(-up.npx.pid!, 'SIGINT');
      await expectStoppedCleanly(up, ready);
      expect(up.output()).toContain('SIGINT: stopping');
      expect(up.output()).not.toContain('exiting without a graceful stop');
      await up.exited;
    },
  );

  it('stops cleanly when its parents end without passing a SIGTERM on', { timeout: 240_000 }, async () => {
    // npm's default shell (dash) waits for the command and does not pass the signal on; npm and it exit.
    const up = startNpxUp(false);
    const ready = await readyUp(up);
    up.npx.kill('SIGTERM');
    await expectStoppedCleanly(up, ready);
    await up.exited;
  });
});
