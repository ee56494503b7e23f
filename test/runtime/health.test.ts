import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock, settle } from '../../src/runtime/clock.js';
import { Controller } from '../../src/runtime/controller.js';
import { startHealthServer, type HealthServer } from '../../src/runtime/health.js';
import { silentLogger } from '../../src/runtime/log.js';
import { Metrics } from '../../src/runtime/metrics.js';

let server: HealthServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('startHealthServer', () => {
  it('serves /healthz, /readyz (503 until ready) and /metrics on [::1]', async () => {
    const metrics = new Metrics();
    const controller = new Controller({
      name: 'dnsrecord',
      reconciler: { reconcile: async () => {} },
      logger: silentLogger(),
      metrics,
      clock: new FakeClock(),
    });
    await controller.start();
    controller.enqueue({ namespace: 'shoot--a', name: 'api' });
    await settle();
    await controller.stop();

    let ready = false;
    server = await startHealthServer({ host: '::1', port: 0, readiness: () => ready, registry: metrics.registry });
    const base = `http://[::1]:${server.port}`;

    const healthz = await fetch(`${base}/healthz`);
    expect(healthz.status).toBe(200);
    expect(await healthz.text()).toBe('ok\n');
    expect((await fetch(`${base}/readyz`)).status).toBe(503);
    ready = true;
    expect((await fetch(`${base}/readyz`)).status).toBe(200);

    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    expect(text).toContain('controller_runtime_reconcile_total{controller="dnsrecord",result="success"} 1');
    expect(text).toContain('controller_runtime_reconcile_errors_total');
    expect(text).toContain('controller_runtime_reconcile_time_seconds_bucket{le="0.005",controller="dnsrecord"} 1');
    expect(text).toContain('workqueue_depth{name="dnsrecord"} 0');

    expect((await fetch(`${base}/nope`)).status).toBe(404);
    expect((await fetch(`${base}/healthz`, { method: 'POST' })).status).toBe(405);
  });

  it('reports a failing liveness or a throwing readiness check as 503', async () => {
    server = await startHealthServer({
      host: '::1',
      port: 0,
      liveness: () => false,
      readiness: () => {
        throw new Error('broken check');
      },
      registry: new Registry(),
    });
    const base = `http://[::1]:${server.port}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(503);
    expect((await fetch(`${base}/readyz`)).status).toBe(503);
  });

  it('fails to start on a port in use', async () => {
    server = await startHealthServer({ host: '::1', port: 0, readiness: () => true, registry: new Registry() });
    await expect(
      startHealthServer({ host: '::1', port: server.port, readiness: () => true, registry: new Registry() }),
    ).rejects.toThrow(/EADDRINUSE/);
  });
});
