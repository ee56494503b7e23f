import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ResourceClient } from '../../src/runtime/client.js';
import { Refs } from '../../src/apis/refs.js';
import { FakeClock, settle } from '../../src/runtime/clock.js';
import { metav1MicroTime } from '../../src/apis/meta/time.js';
import { LeaderElector, type Lease } from '../../src/runtime/leader-election.js';
import { silentLogger } from '../../src/runtime/log.js';
import { Metrics } from '../../src/runtime/metrics.js';
import { waitFor } from '../support/wait.js';
import { FakeApiServer } from './fake-apiserver.js';

/** Counts calls in flight, so the test can wait until every elector is asleep before moving the fake clock. */
class CountingClient extends ResourceClient {
  inFlight = 0;
  override async get<T>(...args: Parameters<ResourceClient['get']>): Promise<T | undefined> {
    return this.count(() => super.get(...args) as Promise<T | undefined>);
  }
  override async create<T>(...args: Parameters<ResourceClient['create']>): Promise<T> {
    return this.count(() => super.create(...args) as Promise<T>);
  }
  override async update<T>(...args: Parameters<ResourceClient['update']>): Promise<T> {
    return this.count(() => super.update(...args) as Promise<T>);
  }
  private async count<T>(fn: () => Promise<T>): Promise<T> {
    this.inFlight++;
    try {
      return await fn();
    } finally {
      this.inFlight--;
    }
  }
}

let server: FakeApiServer;
let clock: FakeClock;
let clients: CountingClient[];
let electors: LeaderElector[];

beforeEach(async () => {
  server = await FakeApiServer.start();
  clock = new FakeClock();
  clients = [];
  electors = [];
});

afterEach(async () => {
  server.clearFaults();
  await Promise.all(electors.map((e) => e.stop()));
  for (const c of clients) c.close();
  await server.close();
});

function elector(identity: string, metrics?: Metrics) {
  const client = new CountingClient(server.kubeConfig());
  clients.push(client);
  const e = new LeaderElector({
    client,
    name: 'controller-lock',
    namespace: 'garden',
    identity,
    logger: silentLogger(),
    clock,
    random: () => 0, // acquire retries exactly every retryPeriod
    ...(metrics ? { metrics } : {}),
  });
  electors.push(e);
  const state = { started: 0, stopped: 0, signal: undefined as AbortSignal | undefined, done: false };
  const running = e.run(
    (signal) => {
      state.started++;
      state.signal = signal;
    },
    () => {
      state.stopped++;
    },
  );
  void running.then(() => (state.done = true));
  return { elector: e, state, running };
}

/** Waits until no elector has a request in flight and all follow-up work is done. */
async function quiesce(): Promise<void> {
  for (;;) {
    await waitFor(() => clients.every((c) => c.inFlight === 0), { timeoutMs: 5000, intervalMs: 1 });
    await settle();
    if (clients.every((c) => c.inFlight === 0)) return;
  }
}

/**
 * Moves the fake clock from timer to timer (letting the electors finish their requests in between) until `cond`
 * holds; `check` runs after every step. Fails when `limitMs` of fake time pass first.
 */
async function runUntil(cond: () => boolean, limitMs: number, check: () => void = () => {}): Promise<number> {
  const start = clock.now();
  await quiesce();
  while (!cond()) {
    const next = clock.nextTimerAt();
    if (next === undefined || next - start > limitMs) throw new Error(`condition not reached within ${limitMs} ms`);
    await clock.advance(next - clock.now());
    await quiesce();
    check();
  }
  return clock.now() - start;
}

const lease = (): Lease | undefined => server.objects<Lease>(Refs.lease)[0];

describe('LeaderElector', () => {
  it('formats MicroTime with exactly six fractional digits', () => {
    expect(metav1MicroTime(Date.UTC(2026, 10, 21, 20, 0, 0, 123))).toBe('2026-11-21T20:00:00.123000Z');
    expect(metav1MicroTime(Date.UTC(2026, 10, 21, 20, 0, 0, 0))).toBe('2026-11-21T20:00:00.000000Z');
  });

  it('rejects timings where the leader could outlive its lease', () => {
    const base = { client: new ResourceClient(server.kubeConfig()), name: 'l', namespace: 'n', identity: 'i' };
    const logger = silentLogger();
    expect(() => new LeaderElector({ ...base, logger, leaseDurationMs: 10_000, renewDeadlineMs: 10_000 })).toThrow();
    expect(() => new LeaderElector({ ...base, logger, renewDeadlineMs: 2_000, retryPeriodMs: 2_000 })).toThrow();
    expect(() => new LeaderElector({ ...base, logger, identity: '' })).toThrow();
  });

  it('keeps one leader at a time, and a released lease is taken over at the next try', async () => {
    const metrics = new Metrics();
    const a = elector('a', metrics);
    await runUntil(() => a.elector.isLeader(), 1000);
    expect(a.state.started).toBe(1);
    const created = lease()!;
    expect(created.spec).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 0 });
    expect(created.spec?.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(await metrics.registry.metrics()).toContain('leader_election_master_status{name="controller-lock"} 1');

    const b = elector('b');
    const oneLeader = () => expect(a.elector.isLeader() && b.elector.isLeader()).toBe(false);
    // Well beyond the lease duration: a renews every 2 s, so b never gets it.
    await expect(runUntil(() => b.elector.isLeader(), 45_000, oneLeader)).rejects.toThrow(/not reached/);
    expect(a.elector.isLeader()).toBe(true);
    expect(b.elector.leader()).toBe('a');
    expect(Date.parse(lease()!.spec!.renewTime!)).toBeGreaterThan(clock.now() - 2000 - 1);

    await a.elector.stop();
    expect(a.state).toMatchObject({ stopped: 1, done: true });
    expect(a.state.signal?.aborted).toBe(true);
    expect(lease()!.spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
    expect(await metrics.registry.metrics()).toContain('leader_election_master_status{name="controller-lock"} 0');

    const tookMs = await runUntil(() => b.elector.isLeader(), 10_000, oneLeader);
    expect(tookMs).toBeLessThanOrEqual(2000);
    expect(lease()!.spec).toMatchObject({ holderIdentity: 'b', leaseDurationSeconds: 15, leaseTransitions: 1 });
  });

  it('takes over a lease whose holder stopped renewing only after the lease duration', async () => {
    const stale = metav1MicroTime(clock.now() - 3_600_000);
    server.upsert(Refs.lease, {
      metadata: { name: 'controller-lock', namespace: 'garden' },
      spec: { holderIdentity: 'crashed', leaseDurationSeconds: 15, renewTime: stale, acquireTime: stale },
    } as Lease);
    const a = elector('a');
    // The timestamps are not trusted (clock skew): the 15 s count from when a first saw the record.
    const tookMs = await runUntil(() => a.elector.isLeader(), 60_000);
    expect(tookMs).toBeGreaterThanOrEqual(15_000);
    expect(tookMs).toBeLessThanOrEqual(15_000 + 2000);
    expect(lease()!.spec).toMatchObject({ holderIdentity: 'a', leaseTransitions: 1 });
  });

  it('stops leading when renewing fails for the renew deadline, without releasing', async () => {
    const a = elector('a');
    await runUntil(() => a.elector.isLeader(), 1000);
    const lastRenew = clock.now();
    server.addFault({ method: 'PUT', pathPrefix: '/apis/coordination.k8s.io', fault: { kind: 'status', code: 500 } });
    await runUntil(() => a.state.done, 30_000);
    const lostAfter = clock.now() - lastRenew;
    // The renewal round starts one retry period after the last success and gives up after the renew deadline,
    // before the lease (15 s) could expire for others.
    expect(lostAfter).toBe(2000 + 10_000);
    expect(a.elector.isLeader()).toBe(false);
    expect(a.state).toMatchObject({ started: 1, stopped: 1 });
    expect(a.state.signal?.aborted).toBe(true);
    expect(lease()!.spec?.holderIdentity).toBe('a');
  });

  it('stop before acquiring ends run without callbacks', async () => {
    server.upsert(Refs.lease, {
      metadata: { name: 'controller-lock', namespace: 'garden' },
      spec: { holderIdentity: 'other', leaseDurationSeconds: 15, renewTime: metav1MicroTime(clock.now()) },
    } as Lease);
    const a = elector('a');
    await runUntil(() => clock.pendingTimers() > 0, 1000);
    await a.elector.stop();
    expect(a.state).toMatchObject({ started: 0, stopped: 0, done: true });
    expect(lease()!.spec?.holderIdentity).toBe('other');
  });
});
