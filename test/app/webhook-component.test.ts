import { request } from 'node:https';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WebhookConfigurationRefs } from '../../src/admission/webhook-configurations.js';
import { WebhookComponent } from '../../src/app/webhook-component.js';
import { webhookTLS, type WebhookTLS } from '../../src/app/webhook-tls.js';
import { featureGates } from '../../src/featuregate/featuregate.js';
import { silentLogger } from '../../src/runtime/log.js';
import { Manager, type ManagerOptions } from '../../src/runtime/manager.js';
import { Metrics } from '../../src/runtime/metrics.js';
import { waitFor } from '../support/wait.js';
import { FakeApiServer } from '../runtime/fake-apiserver.js';
import { fastLeaderElection } from '../support/leader-election.js';

const wait = { timeoutMs: 5000, intervalMs: 5 };

let tls: WebhookTLS;
let server: FakeApiServer;
let managers: Manager[];

beforeAll(async () => {
  tls = await webhookTLS({});
});
afterAll(() => tls.cleanup());

beforeEach(async () => {
  server = await FakeApiServer.start();
  managers = [];
});

afterEach(async () => {
  server.clearFaults();
  await Promise.all(managers.map((m) => m.stop()));
  await server.close();
});

/** A manager with the webhook as its component, registering at [::1]. */
function withWebhook(opts: Partial<ManagerOptions> = {}) {
  const manager = new Manager({
    kubeConfig: server.kubeConfig(),
    logger: silentLogger(),
    metrics: new Metrics(),
    ...opts,
  });
  managers.push(manager);
  const webhook = new WebhookComponent({
    server: () => ({
      tls: { cert: tls.cert, key: tls.key },
      gates: featureGates({}),
      lookupSeed: () => undefined,
      host: '::1',
      port: 0,
      logger: silentLogger(),
    }),
    client: manager.client,
    logger: silentLogger(),
    registration: { caBundle: tls.ca, advertiseHost: '::1', apiService: false },
    stopBudgetMs: () => 5_000,
  });
  manager.addComponent(webhook);
  return { manager, webhook };
}

/** The webhook's /healthz status, or the error that kept it from answering. */
function healthz(webhook: WebhookComponent): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(
      { host: '::1', port: webhook.server!.port, path: '/healthz', ca: tls.ca, agent: false },
      (res) => (res.resume(), resolve(res.statusCode ?? 0)),
    );
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    req.end();
  });
}

const registered = () =>
  server.objects(WebhookConfigurationRefs.mutating).length + server.objects(WebhookConfigurationRefs.validating).length;

describe('the webhook as a component of the manager', () => {
  it('serves and registers on a standby replica as on the leader', async () => {
    const one = withWebhook({ leaderElection: fastLeaderElection('one') });
    await one.manager.start();
    await waitFor(() => one.manager.isLeader(), wait);
    const two = withWebhook({ leaderElection: fastLeaderElection('two') });
    await two.manager.start();
    expect(two.manager.isLeader()).toBe(false);
    expect(await healthz(two.webhook)).toBe(200);
    expect(await healthz(one.webhook)).toBe(200);
    expect(registered()).toBe(2);
  });

  it('unregisters as the stop begins, while the controllers finish, and closes after them', async () => {
    const { manager, webhook } = withWebhook();
    let release = () => {};
    const inFlight = new Promise<void>((resolve) => (release = resolve));
    let reconciling = false;
    const controller = manager.controller({
      name: 'slow',
      reconciler: { reconcile: async () => ((reconciling = true), await inFlight) },
    });
    await manager.start();
    expect(registered()).toBe(2);
    controller.enqueue({ name: 'a' });
    await waitFor(() => reconciling, wait);

    const stopping = manager.stop();
    await waitFor(() => registered() === 0, { ...wait, message: 'the webhooks unregistered' });
    // The controllers still run: the webhook answers what they write.
    expect(await healthz(webhook)).toBe(200);
    release();
    await stopping;
    expect(await healthz(webhook)).toBe('ECONNREFUSED');
  });

  it('stopped while it registers: the registration is cut short and undone, the server closed', async () => {
    server.addFault({ method: 'PATCH', pathPrefix: '/apis/admissionregistration.k8s.io', fault: { kind: 'hang' } });
    const { manager, webhook } = withWebhook();
    const starting = manager.start();
    await waitFor(() => server.requestsWhere({ method: 'PATCH' }).length > 0, wait);
    server.clearFaults();
    await manager.stop();
    await starting;
    expect(server.requestsWhere({ method: 'DELETE' }).length).toBe(2);
    expect(registered()).toBe(0);
    expect(await healthz(webhook)).toBe('ECONNREFUSED');
  });

  it('stopped while the API server does not answer its first read: stops at once, nothing listens', async () => {
    server.addFault({ method: 'GET', pathPrefix: '/api/v1/namespaces/kube-system', fault: { kind: 'hang' } });
    const { manager, webhook } = withWebhook();
    const starting = manager.start();
    await waitFor(() => server.requestsWhere({ pathPrefix: '/api/v1/namespaces/kube-system' }).length > 0, wait);
    const started = Date.now();
    await manager.stop();
    await starting;
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(webhook.server).toBeUndefined();
    expect(server.requestsWhere({ method: 'PATCH' })).toEqual([]);
  });
});
