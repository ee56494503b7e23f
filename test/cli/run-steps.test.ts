import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it, vi } from 'vitest';
import type { RuntimeOptions } from '../../src/app/runtime.js';
import { featureGates } from '../../src/featuregate/featuregate.js';
import { InputError } from '../../src/cli/io.js';
import type { RunOptions } from '../../src/cli/run-checks.js';
import { runSteps, runToExitCode, type RunParts, type RunState } from '../../src/cli/run-steps.js';

const OPTIONS = {
  components: ['admission', 'gardenlet'],
  gates: featureGates({}),
  webhookHost: '::1',
  webhookPort: 0,
  webhookRegister: true,
  webhookAdvertiseHost: '::1',
  healthHost: '::1',
  healthPort: 0,
  leaderElect: false,
  leaderElectionNamespace: 'garden',
  leaderElectionID: 'gardener-ipv6',
  dnsServer: '[::1]:53',
  domain: 'local.gardener.cloud',
  hostIPs: {},
  controlPlaneWorkloads: 'auto',
  logLevel: 'silent',
  extensionTypes: { provider: ['local'], networking: ['calico'], dns: ['local'] },
} as unknown as RunOptions;

function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://[::1]:6443' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
    currentContext: 'c',
  });
  return kc;
}

/** Parts that log what they do; `overrides` make one fail, hang or end. */
function fakeRun(overrides: Partial<RunParts> = {}, options: RunOptions = OPTIONS) {
  const log: string[] = [];
  const stop = new AbortController();
  let ended: (e?: Error) => void = () => {};
  const done = new Promise<void>((resolve, reject) => (ended = (e) => (e ? reject(e) : resolve())));
  done.catch(() => {});
  let started: RuntimeOptions | undefined;
  const parts: RunParts = {
    check: async () => (log.push('check'), { kubeConfig: kubeConfig() }),
    runFolder: () => (log.push('run folder'), { remove: () => void log.push('remove run folder') }),
    workloads: async () => (log.push('ask for Nodes'), true),
    startRuntime: async (opts) => {
      log.push('start runtime');
      started = opts;
      return { manager: { done }, stop: async () => void log.push('stop runtime') };
    },
    ...overrides,
  };
  let err = '';
  const state: RunState = { options, io: { out: () => {}, err: (t) => (err += t) }, stop: stop.signal };
  const code = runToExitCode(state, runSteps(parts));
  return { log, stop, ended, code, state, err: () => err, started: () => started };
}

/** Resolves once `log` has `entry`; fails after the deadline. */
async function until(log: string[], entry: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!log.includes(entry)) {
    if (Date.now() > deadline) throw new Error(`no ${entry} in ${JSON.stringify(log)}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('run as ordered steps', () => {
  it('checks, makes its folder, asks for Nodes, starts; a signal stops the runtime, then removes the folder: 0', async () => {
    const run = fakeRun();
    await until(run.log, 'start runtime');
    expect(run.err()).toMatch(/^running admission, gardenlet against https:\/\/\[::1\]:6443\n$/);
    expect(run.started()).toMatchObject({ providerLocal: { machinePods: true }, signal: run.state.stop });
    run.stop.abort(new Error('SIGTERM'));
    expect(await run.code).toBe(0);
    expect(run.log).toEqual([
      'check',
      'run folder',
      'ask for Nodes',
      'start runtime',
      'stop runtime',
      'remove run folder',
    ]);
  });

  it('the runtime ending by itself: 1, and everything undone', async () => {
    const run = fakeRun();
    await until(run.log, 'start runtime');
    run.ended(new Error('lost the lease'));
    expect(await run.code).toBe(1);
    expect(run.log.slice(-2)).toEqual(['stop runtime', 'remove run folder']);
  });

  it('a start that fails: 1 with one error line, the folder removed', async () => {
    const run = fakeRun({
      startRuntime: async () => {
        throw new Error('connect ECONNREFUSED');
      },
    });
    expect(await run.code).toBe(1);
    expect(run.err()).toBe('error: starting admission, gardenlet failed: connect ECONNREFUSED\n');
    expect(run.log).toEqual(['check', 'run folder', 'ask for Nodes', 'remove run folder']);
  });

  it('asking for Nodes fails like the start', async () => {
    const run = fakeRun({
      workloads: async () => {
        throw new Error('no route');
      },
    });
    expect(await run.code).toBe(1);
    expect(run.err()).toBe('error: starting admission, gardenlet failed: no route\n');
    expect(run.log).toEqual(['check', 'run folder', 'remove run folder']);
  });

  it('a signal while it starts: 0, no error line, nothing left', async () => {
    const run = fakeRun({
      startRuntime: (opts) =>
        new Promise((_, reject) => {
          opts.signal!.addEventListener('abort', () => reject(opts.signal!.reason), { once: true });
        }),
    });
    await until(run.log, 'ask for Nodes');
    run.stop.abort(new Error('SIGTERM'));
    expect(await run.code).toBe(0);
    expect(run.err()).toBe('');
    expect(run.log).toEqual(['check', 'run folder', 'ask for Nodes', 'remove run folder']);
  });

  it('bad flags: the InputError is the caller’s (exit 2), nothing made', async () => {
    const run = fakeRun({
      check: async () => {
        throw new InputError('--webhook-host "x": not an IP address');
      },
    });
    await expect(run.code).rejects.toBeInstanceOf(InputError);
    expect(run.log).toEqual([]);
    expect(run.err()).toBe('');
  });

  it('without the gardenlet it does not ask for Nodes', async () => {
    const run = fakeRun({}, { ...OPTIONS, components: ['admission'] });
    await until(run.log, 'start runtime');
    run.stop.abort(new Error('SIGINT'));
    expect(await run.code).toBe(0);
    expect(run.log).not.toContain('ask for Nodes');
    expect(run.started()).toMatchObject({ providerLocal: { hostIPs: {} } });
  });

  it('a runtime that fails to stop: rejects with that, the folder removed all the same', async () => {
    const run = fakeRun({
      startRuntime: async () => ({
        manager: { done: new Promise<void>(() => {}) },
        stop: async () => {
          throw new Error('unregistering timed out');
        },
      }),
    });
    await until(run.log, 'ask for Nodes');
    // Running: what the start step says last.
    await vi.waitFor(() => expect(run.err()).toContain('running '), { timeout: 5_000, interval: 5 });
    run.stop.abort(new Error('SIGTERM'));
    await expect(run.code).rejects.toThrow('unregistering timed out');
    expect(run.log.at(-1)).toBe('remove run folder');
  });
});
