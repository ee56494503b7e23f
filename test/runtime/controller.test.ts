import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { FakeClock, settle } from '../../src/runtime/clock.js';
import { Controller, TerminalError, type Reconciler, type Request, type Result } from '../../src/runtime/controller.js';
import { newLogger, silentLogger } from '../../src/runtime/log.js';
import { ApiError } from '../../src/runtime/errors.js';
import { Metrics } from '../../src/runtime/metrics.js';

/** A promise with its resolve function, to hold a reconcile in flight. */
function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

function setup(reconcile: Reconciler['reconcile'], opts: { workers?: number; reconcileTimeoutMs?: number } = {}) {
  const clock = new FakeClock();
  const metrics = new Metrics();
  const controller = new Controller({
    name: 'test',
    reconciler: { reconcile },
    logger: silentLogger(),
    metrics,
    clock,
    ...opts,
  });
  return { clock, metrics, controller };
}

async function metricValue(metrics: Metrics, name: string, labels: Record<string, string>): Promise<number> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  const value = metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return value?.value ?? 0;
}

describe('Controller', () => {
  it('retries an erroring reconcile with growing backoff and forgets the backoff on success', async () => {
    const calls: number[] = [];
    let failures = 2;
    const { clock, controller, metrics } = setup(async () => {
      calls.push(clock.now());
      if (failures-- > 0) throw new Error('boom');
    });
    const t0 = clock.now();
    await controller.start();
    controller.enqueue({ namespace: 'ns', name: 'a' });
    await settle();
    expect(calls).toHaveLength(1);
    await clock.advance(99);
    expect(calls).toHaveLength(1);
    await clock.advance(1);
    expect(calls).toHaveLength(2);
    await clock.advance(199);
    expect(calls).toHaveLength(2);
    await clock.advance(1);
    expect(calls.map((t) => t - t0)).toEqual([0, 100, 300]);

    // Success forgot the backoff: the next failure is retried after the base delay again.
    failures = 1;
    controller.enqueue({ namespace: 'ns', name: 'a' });
    await settle();
    expect(calls).toHaveLength(4);
    await clock.advance(100);
    expect(calls).toHaveLength(5);

    expect(await metricValue(metrics, 'controller_runtime_reconcile_total', { result: 'error' })).toBe(3);
    expect(await metricValue(metrics, 'controller_runtime_reconcile_total', { result: 'success' })).toBe(2);
    expect(await metricValue(metrics, 'controller_runtime_reconcile_errors_total', { controller: 'test' })).toBe(3);
    await controller.stop();
  });

  it('logs a conflict (also as the cause of another error) at debug without a stack, other errors at error', async () => {
    const lines: { level: string; msg: string; err?: unknown; reason?: string }[] = [];
    const logger = newLogger({
      level: 'debug',
      destination: new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number]);
          done();
        },
      }),
    });
    const conflict = new ApiError(409, 'Operation cannot be fulfilled on shoots "s": the object has been modified', {
      status: { reason: 'Conflict' },
    });
    const errors = [
      new Error('the shoot changed while its conditions were written; retrying', { cause: conflict }),
      new ApiError(409, 'already there', { status: { reason: 'AlreadyExists' } }),
      new Error('boom'),
    ];
    const clock = new FakeClock();
    const controller = new Controller({
      name: 'test',
      reconciler: {
        reconcile: async () => {
          const e = errors.shift();
          if (e) throw e;
        },
      },
      logger,
      metrics: new Metrics(),
      clock,
    });
    await controller.start();
    controller.enqueue({ namespace: 'ns', name: 'a' });
    await settle();
    await clock.advance(100);
    await clock.advance(200);
    const failures = lines.filter((l) => l.msg === 'reconcile failed' || l.msg === 'reconcile retried');
    expect(failures.map((l) => [l.level, l.msg])).toEqual([
      ['debug', 'reconcile retried'],
      ['error', 'reconcile failed'],
      ['error', 'reconcile failed'],
    ]);
    expect(failures[0]!.err).toBeUndefined();
    expect(failures[0]!.reason).toBe('the shoot changed while its conditions were written; retrying');
    await controller.stop();
  });

  it('does not retry a TerminalError', async () => {
    let calls = 0;
    const { clock, controller } = setup(async () => {
      calls++;
      throw new TerminalError('invalid spec');
    });
    await controller.start();
    controller.enqueue({ name: 'a' });
    await clock.advance(120_000);
    expect(calls).toBe(1);
    await controller.stop();
  });

  it('requeues after requeueAfter, and on requeue: true with backoff', async () => {
    const calls: Array<{ req: Request; at: number }> = [];
    const results: Result[] = [{ requeueAfter: 5000 }, {}, { requeue: true }, {}];
    const { clock, controller } = setup(async (req) => {
      calls.push({ req, at: clock.now() });
      return results.shift();
    });
    const t0 = clock.now();
    await controller.start();
    controller.enqueue({ namespace: 'ns', name: 'a' });
    await clock.advance(4999);
    expect(calls).toHaveLength(1);
    await clock.advance(1);
    expect(calls).toHaveLength(2);
    controller.enqueue({ namespace: 'ns', name: 'a' });
    await settle();
    await clock.advance(100);
    expect(calls.map((c) => c.at - t0)).toEqual([0, 5000, 5000, 5100]);
    expect(calls[0]?.req).toEqual({ namespace: 'ns', name: 'a' });
    await controller.stop();
  });

  it('runs at most `workers` reconciles at once and never one key twice at once', async () => {
    const gates = new Map<string, { resolve: () => void }>();
    let running = 0;
    let maxRunning = 0;
    const runningKeys = new Set<string>();
    let overlap = false;
    const { controller } = setup(
      async (req) => {
        if (runningKeys.has(req.name)) overlap = true;
        runningKeys.add(req.name);
        running++;
        maxRunning = Math.max(maxRunning, running);
        const gate = deferred();
        gates.set(req.name, gate);
        await gate.promise;
        running--;
        runningKeys.delete(req.name);
      },
      { workers: 2 },
    );
    await controller.start();
    for (const name of ['a', 'b', 'c', 'd']) controller.enqueue({ name });
    await settle();
    expect(running).toBe(2);
    expect(controller.queueLength()).toBe(2);
    controller.enqueue({ name: 'a' }); // in flight: must wait for its own reconcile to end
    for (let i = 0; i < 10 && (running > 0 || controller.queueLength() > 0); i++) {
      for (const gate of gates.values()) gate.resolve();
      await settle();
    }
    expect(maxRunning).toBe(2);
    expect(overlap).toBe(false);
    expect(running).toBe(0);
    await controller.stop();
  });

  it('aborts the signal of a reconcile that exceeds its timeout and counts an error', async () => {
    let aborted: unknown;
    const { clock, controller, metrics } = setup(
      (_req, { signal }) =>
        new Promise<void>((_resolve, reject) => {
          signal.addEventListener('abort', () => {
            aborted = signal.reason;
            reject(signal.reason as Error);
          });
        }),
      { reconcileTimeoutMs: 1000 },
    );
    await controller.start();
    controller.enqueue({ name: 'slow' });
    await clock.advance(999);
    expect(aborted).toBeUndefined();
    await clock.advance(1);
    expect(String(aborted)).toContain('timed out');
    expect(await metricValue(metrics, 'controller_runtime_reconcile_errors_total', { controller: 'test' })).toBe(1);
    await controller.stop({ timeoutMs: 0 });
  });

  it('stops gracefully: takes no new work and waits for reconciles in flight', async () => {
    const gate = deferred();
    const started: string[] = [];
    const { controller } = setup(
      async (req) => {
        started.push(req.name);
        await gate.promise;
      },
      { workers: 1 },
    );
    await controller.start();
    controller.enqueue({ name: 'a' });
    controller.enqueue({ name: 'b' });
    await settle();
    expect(started).toEqual(['a']);
    let stopped = false;
    const stopping = controller.stop().then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(false);
    expect(controller.inFlight()).toBe(1);
    gate.resolve();
    await stopping;
    expect(started).toEqual(['a']);
    controller.enqueue({ name: 'c' });
    await settle();
    expect(started).toEqual(['a']);
  });

  it('tells reconciles in flight that it stops (their `stopping`) at once, and aborts their signal only later', async () => {
    let ctxSeen: { signal: AbortSignal; stopping?: AbortSignal } | undefined;
    const { clock, controller } = setup((_, ctx) => {
      ctxSeen = ctx;
      return new Promise<void>(() => {});
    });
    await controller.start();
    controller.enqueue({ name: 'waiting' });
    await settle();
    expect(ctxSeen?.stopping?.aborted).toBe(false);
    const stopping = controller.stop({ timeoutMs: 500 });
    expect(ctxSeen?.stopping?.aborted).toBe(true);
    expect(ctxSeen?.signal.aborted).toBe(false);
    await clock.advance(500);
    await stopping;
    expect(ctxSeen?.signal.aborted).toBe(true);
  });

  it('stop with a timeout returns although a reconcile hangs', async () => {
    const { clock, controller } = setup(() => new Promise<void>(() => {}));
    await controller.start();
    controller.enqueue({ name: 'stuck' });
    await settle();
    let stopped = false;
    const stopping = controller.stop({ timeoutMs: 500 }).then(() => (stopped = true));
    await clock.advance(499);
    expect(stopped).toBe(false);
    await clock.advance(1);
    await stopping;
    expect(stopped).toBe(true);
  });

  it('stop aborts the signal of a reconcile it stopped waiting for, not before', async () => {
    let signal: AbortSignal | undefined;
    const { clock, controller } = setup((_, ctx) => {
      signal = ctx.signal;
      return new Promise<void>(() => {});
    });
    await controller.start();
    controller.enqueue({ name: 'stuck' });
    await settle();
    const stopping = controller.stop({ timeoutMs: 500 });
    await clock.advance(499);
    expect(signal?.aborted).toBe(false);
    await clock.advance(1);
    await stopping;
    expect(signal?.aborted).toBe(true);
    expect((signal?.reason as Error).message).toBe('controller test stopped');
  });

  it('reports queue depth, active workers and reconcile time', async () => {
    const gate = deferred();
    const { controller, metrics } = setup(() => gate.promise, { workers: 1 });
    await controller.start();
    controller.enqueue({ name: 'a' });
    controller.enqueue({ name: 'b' });
    controller.enqueue({ name: 'c' });
    await settle();
    const text = await metrics.registry.metrics();
    expect(text).toContain('workqueue_depth{name="test"} 2');
    expect(text).toContain('controller_runtime_active_workers{controller="test"} 1');
    expect(text).toContain('controller_runtime_max_concurrent_reconciles{controller="test"} 1');
    gate.resolve();
    await controller.stop();
    expect(await metrics.registry.metrics()).toContain(
      'controller_runtime_reconcile_time_seconds_count{controller="test"} 1',
    );
  });
});
