import { ApiException, KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ResourceClient } from '../../src/runtime/client.js';
import { resourcePath } from '../../src/runtime/paths.js';
import { retryOnConflict } from '../../src/runtime/retry.js';
import { ApiError, asApiError, isAlreadyExists, isConflict, isGone, isNotFound } from '../../src/runtime/errors.js';
import { Refs, type ResourceRef } from '../../src/apis/refs.js';
import { FakeClock } from '../../src/runtime/clock.js';
import { waitFor } from '../support/wait.js';
import { FakeApiServer } from './fake-apiserver.js';

const SERVER = 'http://[fd00:10::1]:6443';
const widgets: ResourceRef = {
  group: 'example.gardener.cloud',
  version: 'v1alpha1',
  plural: 'widgets',
  kind: 'Widget',
  namespaced: true,
};

function status(code: number, reason: string, message: string) {
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message };
}

function client(): ResourceClient {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: SERVER, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'secret-token' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
    currentContext: 'c',
  });
  return new ResourceClient(kc);
}

beforeAll(() => nock.disableNetConnect());
afterEach(() => {
  const pending = nock.pendingMocks();
  nock.cleanAll();
  expect(pending).toEqual([]);
});
afterAll(() => nock.enableNetConnect());

describe('resourcePath', () => {
  it('builds core, group, namespaced, cluster-scoped and subresource paths', () => {
    expect(resourcePath(Refs.configMap, { namespace: 'ns', name: 'a' })).toBe('/api/v1/namespaces/ns/configmaps/a');
    expect(resourcePath(Refs.configMap)).toBe('/api/v1/configmaps');
    expect(resourcePath(Refs.namespace, { namespace: 'ignored', name: 'x' })).toBe('/api/v1/namespaces/x');
    expect(resourcePath(widgets, { namespace: 'ns', name: 'w', subresource: 'status' })).toBe(
      '/apis/example.gardener.cloud/v1alpha1/namespaces/ns/widgets/w/status',
    );
  });
});

describe('ResourceClient against nock (IPv6 server URL)', () => {
  it('get returns the object with bearer auth, and undefined on 404', async () => {
    nock(SERVER, { reqheaders: { authorization: 'Bearer secret-token' } })
      .get('/api/v1/namespaces/ns/configmaps/a')
      .reply(200, { metadata: { name: 'a', namespace: 'ns' }, data: { k: 'v' } })
      .get('/api/v1/namespaces/ns/configmaps/missing')
      .reply(404, status(404, 'NotFound', 'configmaps "missing" not found'));
    const c = client();
    const a = await c.get<KubernetesObject & { data?: unknown }>(Refs.configMap, 'a', 'ns');
    expect(a).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap', data: { k: 'v' } });
    expect(await c.get(Refs.configMap, 'missing', 'ns')).toBeUndefined();
  });

  it('surfaces 409 Conflict as ApiError with the Status, and retryOnConflict re-runs the read-modify-write', async () => {
    const path = '/apis/example.gardener.cloud/v1alpha1/namespaces/ns/widgets/w';
    nock(SERVER)
      .get(path)
      .reply(200, { metadata: { name: 'w', namespace: 'ns', resourceVersion: '1' } })
      .put(path, (body: KubernetesObject) => body.metadata?.resourceVersion === '1')
      .reply(409, status(409, 'Conflict', 'Operation cannot be fulfilled on widgets "w": the object has been modified'))
      .get(path)
      .reply(200, { metadata: { name: 'w', namespace: 'ns', resourceVersion: '2' } })
      .put(path, (body: KubernetesObject) => body.metadata?.resourceVersion === '2')
      .reply(200, { metadata: { name: 'w', namespace: 'ns', resourceVersion: '3' } });
    const c = client();
    const errors: unknown[] = [];
    let attempts = 0;
    const updated = await retryOnConflict(async () => {
      attempts++;
      const w = (await c.get<KubernetesObject>(widgets, 'w', 'ns'))!;
      try {
        return await c.update(widgets, w);
      } catch (e) {
        errors.push(e);
        throw e;
      }
    });
    expect(attempts).toBe(2);
    expect(updated.metadata?.resourceVersion).toBe('3');
    const conflict = errors[0];
    expect(conflict).toBeInstanceOf(ApiError);
    expect(isConflict(conflict)).toBe(true);
    expect(isAlreadyExists(conflict)).toBe(false);
    expect((conflict as ApiError).reason).toBe('Conflict');
    expect((conflict as ApiError).message).toContain('the object has been modified');
    expect((conflict as ApiError).request).toBe(`PUT ${path}`);
  });

  it('retryOnConflict gives up after its attempts and does not retry other errors', async () => {
    const clock = new FakeClock();
    let conflicts = 0;
    const gaveUp = retryOnConflict(
      async () => {
        conflicts++;
        throw new ApiError(409, 'conflict', { status: status(409, 'Conflict', 'conflict') });
      },
      { clock, steps: 3 },
    );
    const outcome = gaveUp.catch((e: unknown) => e);
    await clock.advance(1000);
    expect(isConflict(await outcome)).toBe(true);
    expect(conflicts).toBe(3);

    let others = 0;
    await expect(
      retryOnConflict(async () => {
        others++;
        throw new ApiError(500, 'boom');
      }),
    ).rejects.toThrow('boom');
    expect(others).toBe(1);
  });

  it('puts the Status message of a 500 into the ApiError, and falls back to the HTTP reason', async () => {
    nock(SERVER)
      .post('/api/v1/namespaces/ns/configmaps')
      .reply(500, status(500, 'InternalError', 'Internal error occurred: etcdserver: request timed out'))
      .post('/api/v1/namespaces/ns/configmaps')
      .reply(502, '<html>bad gateway</html>');
    const c = client();
    const obj = { metadata: { name: 'a', namespace: 'ns' } };
    const err = await c.create(Refs.configMap, obj).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe(500);
    expect((err as ApiError).message).toBe('Internal error occurred: etcdserver: request timed out');
    expect((err as ApiError).status?.reason).toBe('InternalError');
    const plain = await c.create(Refs.configMap, obj).catch((e: unknown) => e);
    expect((plain as ApiError).code).toBe(502);
    expect((plain as ApiError).message).toBe('Bad Gateway');
  });

  it('tells AlreadyExists from Conflict', async () => {
    nock(SERVER)
      .post('/api/v1/namespaces/ns/configmaps')
      .reply(409, status(409, 'AlreadyExists', 'configmaps "a" already exists'));
    const err = await client()
      .create(Refs.configMap, { metadata: { name: 'a', namespace: 'ns' } })
      .catch((e: unknown) => e);
    expect(isAlreadyExists(err)).toBe(true);
    expect(isConflict(err)).toBe(false);
  });

  it('understands the ApiException of @kubernetes/client-node (body as JSON string)', () => {
    const e = new ApiException(404, 'Not Found', JSON.stringify(status(404, 'NotFound', 'leases "x" not found')), {});
    expect(isNotFound(e)).toBe(true);
    expect(asApiError(e)?.message).toBe('leases "x" not found');
    expect(isNotFound(new Error('ECONNREFUSED'))).toBe(false);
    expect(isGone(new ApiError(410, 'too old resource version'))).toBe(true);
  });

  it('server-side apply sends application/apply-patch+yaml with fieldManager and force', async () => {
    const path = '/apis/example.gardener.cloud/v1alpha1/namespaces/ns/widgets/w/status';
    nock(SERVER, { reqheaders: { 'content-type': 'application/apply-patch+yaml' } })
      .patch(path, {
        apiVersion: 'example.gardener.cloud/v1alpha1',
        kind: 'Widget',
        metadata: { name: 'w', namespace: 'ns' },
        status: { ready: true },
      })
      .query({ fieldManager: 'gardenlet', force: 'true' })
      .reply(200, (_uri, body) => body as object);
    const applied = await client().apply(
      widgets,
      { metadata: { name: 'w', namespace: 'ns' }, status: { ready: true } } as KubernetesObject,
      { fieldManager: 'gardenlet', force: true, subresource: 'status' },
    );
    expect(applied.kind).toBe('Widget');
  });

  it('merge-patches with application/merge-patch+json', async () => {
    nock(SERVER, { reqheaders: { 'content-type': 'application/merge-patch+json' } })
      .patch('/api/v1/namespaces/ns/configmaps/a', { metadata: { labels: { x: null } } })
      .reply(200, { metadata: { name: 'a', namespace: 'ns' } });
    const patched = await client().mergePatch(Refs.configMap, 'a', 'ns', { metadata: { labels: { x: null } } });
    expect(patched.metadata?.name).toBe('a');
  });

  it('delete sends the propagation policy and returns false when already gone', async () => {
    nock(SERVER)
      .delete('/api/v1/namespaces/ns/configmaps/a', {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        propagationPolicy: 'Foreground',
      })
      .reply(200, { kind: 'Status', status: 'Success' })
      .delete('/api/v1/namespaces/ns/configmaps/b')
      .reply(404, status(404, 'NotFound', 'configmaps "b" not found'));
    const c = client();
    expect(await c.delete(Refs.configMap, 'a', 'ns', { propagationPolicy: 'Foreground' })).toBe(true);
    expect(await c.delete(Refs.configMap, 'b', 'ns')).toBe(false);
  });

  it('lists across pages and fills in apiVersion and kind of the items', async () => {
    nock(SERVER)
      .get('/api/v1/configmaps')
      .query({ labelSelector: 'app=x', limit: '500' })
      .reply(200, { metadata: { resourceVersion: '7', continue: 'next' }, items: [{ metadata: { name: 'a' } }] })
      .get('/api/v1/configmaps')
      .query({ labelSelector: 'app=x', limit: '500', continue: 'next' })
      .reply(200, { metadata: { resourceVersion: '7' }, items: [{ metadata: { name: 'b' } }] });
    const { items, resourceVersion } = await client().list(Refs.configMap, { labelSelector: 'app=x' });
    expect(resourceVersion).toBe('7');
    expect(items.map((i) => [i.kind, i.apiVersion, i.metadata?.name])).toEqual([
      ['ConfigMap', 'v1', 'a'],
      ['ConfigMap', 'v1', 'b'],
    ]);
  });

  it('aborts a request when its signal aborts', async () => {
    const scope = nock(SERVER).get('/api/v1/namespaces/ns/configmaps/slow').delay(10_000).reply(200, {});
    const abort = new AbortController();
    scope.on('request', () => abort.abort());
    const started = Date.now();
    await expect(client().get(Refs.configMap, 'slow', 'ns', { signal: abort.signal })).rejects.toThrow(/abort/i);
    expect(Date.now() - started).toBeLessThan(5000);
    await expect(client().get(Refs.configMap, 'x', 'ns', { signal: abort.signal })).rejects.toThrow(/abort/i);
  });

  it('shares one abort listener among the requests of a signal: no MaxListenersExceededWarning, all abort', async () => {
    const names = Array.from({ length: 30 }, (_, i) => `slow-${i}`);
    for (const name of names) nock(SERVER).get(`/api/v1/namespaces/ns/configmaps/${name}`).delay(10_000).reply(200, {});
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const abort = new AbortController();
      const c = client();
      const calls = names.map((name) => c.get(Refs.configMap, name, 'ns', { signal: abort.signal }));
      // Every request on its way (nock consumed its interceptor), then all aborted at once.
      await waitFor(() => nock.pendingMocks().length === 0, { message: 'the requests to reach the server' });
      abort.abort();
      const outcomes = await Promise.allSettled(calls);
      expect(outcomes.map((o) => o.status === 'rejected' && (o.reason as Error).name)).toEqual(
        names.map(() => 'AbortError'),
      );
      // Warnings are emitted on the next tick.
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      nock.cleanAll();
    }
  });
});

describe('ResourceClient against the fake API server', () => {
  let server: FakeApiServer;
  let c: ResourceClient;
  beforeAll(async () => {
    nock.enableNetConnect('[::1]');
    server = await FakeApiServer.start();
    c = new ResourceClient(server.kubeConfig());
  });
  afterAll(async () => {
    c.close();
    await server.close();
    nock.disableNetConnect();
  });

  it('creates, updates with optimistic concurrency, and deletes', async () => {
    const created = await c.create(widgets, { metadata: { name: 'w', namespace: 'ns' } } as KubernetesObject);
    expect(created.metadata?.resourceVersion).toBeDefined();
    const updated = await c.update(widgets, { ...created, spec: { size: 2 } } as KubernetesObject);
    const stale = await c.update(widgets, created).catch((e: unknown) => e);
    expect(isConflict(stale)).toBe(true);
    expect(updated.metadata?.resourceVersion).not.toBe(created.metadata?.resourceVersion);
    expect(await c.delete(widgets, 'w', 'ns')).toBe(true);
    expect(await c.get(widgets, 'w', 'ns')).toBeUndefined();
  });

  it('streams watch events and reports an ERROR event as ApiError (410 Gone)', async () => {
    const { resourceVersion } = await c.list(widgets, { namespace: 'ns' });
    const events: string[] = [];
    let done: unknown = 'not yet';
    const handle = await c.watch(
      widgets,
      { namespace: 'ns', resourceVersion, allowWatchBookmarks: true },
      (type, obj) => events.push(`${type} ${obj.metadata?.name}`),
      (err) => (done = err),
    );
    await waitFor(() => server.openWatches() === 1, { timeoutMs: 5000, intervalMs: 2 });
    server.upsert(widgets, { metadata: { name: 'x', namespace: 'ns' } });
    server.remove(widgets, 'x', 'ns');
    server.bookmark();
    await waitFor(() => events.length === 3, { timeoutMs: 5000, intervalMs: 2 });
    expect(events).toEqual(['ADDED x', 'DELETED x', 'BOOKMARK undefined']);
    handle.abort();
    await waitFor(() => server.openWatches() === 0, { timeoutMs: 5000, intervalMs: 2 });
    expect(done).toBe('not yet'); // abort does not call onDone

    server.compact();
    await c.watch(
      widgets,
      { namespace: 'ns', resourceVersion, allowWatchBookmarks: true },
      () => {},
      (err) => (done = err),
    );
    await waitFor(() => done !== 'not yet', { timeoutMs: 5000, intervalMs: 2 });
    expect(isGone(done)).toBe(true);
  });
});
