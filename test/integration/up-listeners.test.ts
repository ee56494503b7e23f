/**
 * What `up` exposes and how it ends: every socket of its process tree in this namespace listens on [::1] or on an
 * address of the environment it made (the garden's API server on the seed node network's gateway, BIND9 on the
 * load-balancer bridge's gateway), never on a wildcard or an IPv4 address (the seed's Nodes, and on them the
 * shoot's control plane and machines, listen in namespaces of their own); and it stops within seconds after a part
 * of it died (its etcd, SIGKILLed), leaving no process or namespace behind.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { netnsUnsupportedReason } from '../../src/system/netns.js';
import { alive } from '../support/processes.js';
import {
  commandName,
  listeners,
  listenersOutside,
  processTree,
  running,
  startUp,
  stopUp,
  waitForReady,
  type UpProcess,
} from '../support/up.js';
import { waitFor } from '../support/wait.js';

/**
 * How long `up` may take from SIGTERM to its exit, whatever died before (docs/local-control-plane.md, "Stopping"):
 * its seed's two Nodes stop with it, their machines and files included.
 */
const STOP_BOUND_MS = 10_000;

function commandLine(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
}

/** Whether a TCP connection to `host`:`port` is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 2_000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

// Root for the load-balancer bridge and the shoot's control plane; the IPv4 side of the bridge exists only then.
describe.skipIf(netnsUnsupportedReason() !== undefined)('gardener-ipv6 up: listeners and stop', () => {
  let up: UpProcess;

  beforeAll(async () => {
    up = startUp([]);
    await waitForReady(up);
  }, 320_000);

  afterAll(async () => {
    if (up) await stopUp(up);
  }, 30_000);

  it('listens only on [::1] and on the addresses of its own environment, never on a wildcard or IPv4', async () => {
    const dnsAddress = /^DNS server: BIND9 at \[([0-9a-f:]+)\]:\d+ /m.exec(up.stdout())?.[1];
    expect(dnsAddress).toBe('fd00:ff::1');
    const apiServerAddress = /^seed cluster \(the garden's API server https:\/\/\[([0-9a-f:]+)\]:\d+\)/m.exec(
      up.stdout(),
    )?.[1];
    expect(apiServerAddress).toBe('fd00:10::1');
    const tree = new Set(processTree(up.child.pid!));
    const own = listeners().filter((l) => tree.has(l.pid));
    // etcd, kube-apiserver, BIND9 and the webhook at least (the seed's Nodes are in their own namespaces).
    for (const name of ['etcd', 'kube-apiserver', 'named', 'node']) {
      expect(own.map((l) => l.process)).toContain(name);
    }
    expect(listenersOutside(up.child.pid!, ['::1', dnsAddress!, apiServerAddress!])).toEqual([]);

    // The webhook (with the aggregated API shoots/adminkubeconfig) listens where the API server does, and does not
    // answer on the bridge's IPv4 gateway, which a dual-stack socket on `::` would.
    const webhook = /^webhook: https:\/\/\[([0-9a-f:]+)\]:(\d+)/m.exec(up.stdout());
    expect(webhook?.[1]).toBe(apiServerAddress);
    const webhookPort = Number(webhook?.[2]);
    expect(webhookPort).toBeGreaterThan(0);
    expect(await accepts(apiServerAddress!, webhookPort)).toBe(true);
    const ipv4 = execFileSync('ip', ['-4', '-o', 'addr', 'show'], { encoding: 'utf8' })
      .split('\n')
      .map((line) => /\binet (\d+\.\d+\.\d+\.\d+)\//.exec(line)?.[1])
      .filter((a): a is string => a !== undefined);
    expect(ipv4.length).toBeGreaterThan(0); // the load-balancer bridge's IPv4 gateway
    for (const address of ipv4) expect(await accepts(address, webhookPort)).toBe(false);
  });

  it(`stops within ${STOP_BOUND_MS / 1000} s of SIGTERM after its etcd died, and leaves nothing behind`, async () => {
    const upPid = up.child.pid!;
    const tree = processTree(upPid);
    const dir = /control plane files \(removed on stop\): (\S+)/.exec(up.stderr())?.[1];
    expect(dir).toBeDefined();
    // The garden's etcd (the shoot's runs in a pod on a seed Node, its data elsewhere).
    const etcd = tree.filter((pid) => commandName(pid) === 'etcd' && commandLine(pid).includes(dir!));
    expect(etcd).toHaveLength(1);
    for (const pid of etcd) process.kill(pid, 'SIGKILL');
    await waitFor(() => etcd.every((pid) => !alive(pid)), { message: 'etcd to die' });

    const start = Date.now();
    up.child.kill('SIGTERM');
    let exited = false;
    void up.exit.then(() => (exited = true));
    await waitFor(() => exited, { timeoutMs: STOP_BOUND_MS, intervalMs: 20, message: `up to exit` }).catch(
      async (e: unknown) => {
        // What held it: up's last line says how long each part took, once it is out.
        await waitFor(() => exited, { timeoutMs: 60_000, intervalMs: 100 }).catch(() => {});
        const parts = up
          .stderr()
          .split('\n')
          .filter((l) => l.startsWith('stopped'));
        throw new Error(`${(e as Error).message} after SIGTERM: ${parts.join('; ')}\n${up.stderr().slice(-3000)}`);
      },
    );
    const stopMs = Date.now() - start;
    process.stderr.write(`[up-listeners] stopped ${stopMs} ms after SIGTERM\n`);
    expect(stopMs).toBeLessThanOrEqual(STOP_BOUND_MS);
    expect(tree.filter(running).map((pid) => `${pid} ${commandName(pid)}`)).toEqual([]);
    expect(existsSync(dir!)).toBe(false);
    expect(execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })).not.toMatch(new RegExp(`^gv6-${upPid}-`, 'm'));
  });
});

describe.skipIf(netnsUnsupportedReason() !== undefined)('gardener-ipv6 up: after a kill -9', () => {
  it("the next up removes the killed run's folder with its keys, and says so", async () => {
    const killed = startUp(['--no-machines']);
    let next: ReturnType<typeof startUp> | undefined;
    try {
      await waitForReady(killed);
      const dir = /control plane files \(removed on stop\): (\S+)/.exec(killed.stderr())?.[1];
      const runDir = dirname(dir!);
      expect(basename(runDir)).toBe(`gardener-ipv6-run-${killed.child.pid}`);
      expect(existsSync(join(dir!, 'ca.key'))).toBe(true);
      killed.child.kill('SIGKILL');
      await killed.exit;
      expect(existsSync(runDir)).toBe(true);
      next = startUp(['--no-machines']);
      await waitFor(() => /^kubeconfig: /m.test(next!.stdout()) || next!.child.exitCode !== null, {
        timeoutMs: 120_000,
        message: 'the next up to start',
      });
      expect(existsSync(runDir)).toBe(false);
      expect(next.stderr()).toContain(`removed what runs that were killed left: ${runDir}`);
    } finally {
      await stopUp(killed);
      if (next) await stopUp(next);
    }
  }, 360_000);
});

describe.skipIf(netnsUnsupportedReason() !== undefined)('gardener-ipv6 up: stop while starting', () => {
  it(`stops within ${STOP_BOUND_MS / 1000} s of SIGTERM while it waits for the example shoot`, async () => {
    const up = startUp(['--no-machines']);
    try {
      // The webhook and the controllers run; the example shoot is applied next and takes a while to succeed.
      await waitFor(() => /^webhook: /m.test(up.stdout()) || up.child.exitCode !== null, {
        timeoutMs: 300_000,
        intervalMs: 20,
        message: 'the webhook line',
      });
      const tree = processTree(up.child.pid!);
      up.child.kill('SIGTERM');
      let exited = false;
      void up.exit.then(() => (exited = true));
      await waitFor(() => exited, { timeoutMs: STOP_BOUND_MS, intervalMs: 20, message: 'up to exit' }).catch(
        (e: unknown) => {
          throw new Error(`${(e as Error).message} after SIGTERM:\n${up.stderr().slice(-3000)}`);
        },
      );
      expect(await up.exit).toBe(0);
      expect(tree.filter(running).map((pid) => `${pid} ${commandName(pid)}`)).toEqual([]);
    } finally {
      await stopUp(up);
    }
  }, 360_000);
});
