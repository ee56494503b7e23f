/**
 * LeaderElector against the real kube-apiserver of the shared control plane: the server accepts our Lease
 * (MicroTime with six fractional digits), two electors never lead at once, and a released lease is taken over at
 * the successor's next try.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { ResourceClient } from '../../src/runtime/client.js';
import { Refs } from '../../src/apis/refs.js';
import { LeaderElector, type Lease } from '../../src/runtime/leader-election.js';
import { silentLogger } from '../../src/runtime/log.js';
import { kubeConfig, newTestNamespace } from '../support/kube.js';
import { waitFor } from '../support/wait.js';

const timings = { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 250 };

describe('LeaderElector on a real API server', () => {
  it('keeps one leader at a time and hands over quickly on release', async () => {
    const namespace = await newTestNamespace('leader-election');
    const client = new ResourceClient(kubeConfig());
    onTestFinished(() => client.close());
    const electors: LeaderElector[] = [];
    const leading = new Map<string, number>();
    let overlaps = 0;
    const start = (identity: string) => {
      const e = new LeaderElector({ client, name: 'lock', namespace, identity, logger: silentLogger(), ...timings });
      electors.push(e);
      void e.run(
        () => {
          leading.set(identity, Date.now());
          if (leading.size > 1) overlaps++;
        },
        () => {
          leading.delete(identity);
        },
      );
      return e;
    };
    onTestFinished(async () => {
      await Promise.all(electors.map((e) => e.stop()));
    });

    const a = start('a');
    await waitFor(() => a.isLeader(), { timeoutMs: 5000, message: 'a to lead' });
    const b = start('b');
    await waitFor(() => b.leader() === 'a', { timeoutMs: 5000, message: 'b to see a as leader' });

    // Longer than the lease duration: a keeps renewing, b keeps waiting.
    const until = Date.now() + 4000;
    await waitFor(() => Date.now() > until || b.isLeader(), { timeoutMs: 6000, intervalMs: 50 });
    expect(b.isLeader()).toBe(false);
    expect(a.isLeader()).toBe(true);

    const held = await client.get<Lease>(Refs.lease, 'lock', namespace);
    expect(held?.spec).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 3, leaseTransitions: 0 });
    expect(held?.spec?.renewTime).toMatch(/\.\d{6}Z$/);

    const released = Date.now();
    await a.stop();
    const afterRelease = await client.get<Lease>(Refs.lease, 'lock', namespace);
    expect(afterRelease?.spec?.leaseDurationSeconds === 1 || afterRelease?.spec?.holderIdentity === 'b').toBe(true);
    await waitFor(() => b.isLeader(), { timeoutMs: 5000, intervalMs: 10, message: 'b to take over' });
    // Next try after the release, not after the lease duration (3 s): at most retryPeriod × 2.2 plus latency.
    expect(Date.now() - released).toBeLessThan(1500);
    expect(overlaps).toBe(0);
    const taken = await client.get<Lease>(Refs.lease, 'lock', namespace);
    expect(taken?.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  });
});
