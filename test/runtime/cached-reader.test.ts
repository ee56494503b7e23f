/**
 * The cached reader against the fake API server (a real HTTP server on [::1]): reads come from the informer's
 * cache; a miss reads from the server, once per name however many callers miss at the same time.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CachedReader } from '../../src/runtime/cached-reader.js';
import { ResourceClient } from '../../src/runtime/client.js';
import { Refs } from '../../src/apis/refs.js';
import { Informer } from '../../src/runtime/informer.js';
import { Metrics } from '../../src/runtime/metrics.js';
import { silentLogger } from '../../src/runtime/log.js';
import { waitFor } from '../support/wait.js';
import { FakeApiServer } from './fake-apiserver.js';

const cm = Refs.configMap;
const path = (name: string) => `/api/v1/namespaces/default/configmaps/${name}`;

let server: FakeApiServer;
let client: ResourceClient;
let informer: Informer;
let metrics: Metrics;
let reader: CachedReader;

beforeEach(async () => {
  server = await FakeApiServer.start();
  client = new ResourceClient(server.kubeConfig());
  informer = new Informer({ client, ref: cm, logger: silentLogger(), timeoutSeconds: 3600 });
  metrics = new Metrics();
  reader = new CachedReader({ informer, client, ref: cm, reads: metrics.cachedReads });
});

afterEach(async () => {
  informer.stop();
  await informer.stopped();
  client.close();
  await server.close();
});

const configMap = (name: string) => ({ metadata: { name, namespace: 'default' }, data: {} }) as KubernetesObject;
const gets = (name: string) => server.requests.filter((r) => r.method === 'GET' && r.path === path(name)).length;
/** `cached_reader_reads_total` as a scrape reads it, by result. */
const counted = async () => {
  const reads = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === 'cached_reader_reads_total')!;
  return Object.fromEntries(
    (reads.values as { labels: { result: string; resource: string }; value: number }[]).map((v) => {
      expect(v.labels.resource).toBe('configmaps');
      return [v.labels.result, v.value];
    }),
  );
};

describe('CachedReader', () => {
  it('reads a synced object from the cache, without asking the server', async () => {
    server.upsert(cm, configMap('a'));
    await informer.start();
    expect(reader.hasSynced()).toBe(true);
    expect((await reader.get('a', 'default'))?.metadata?.name).toBe('a');
    expect(gets('a')).toBe(0);
    expect(reader.list().map((o) => o.metadata?.name)).toEqual(['a']);
    expect(await counted()).toEqual({ hit: 1 });
    // Hits between two scrapes add to the counter; a scrape with none in between leaves it.
    await reader.get('a', 'default');
    reader.read('a', 'default');
    expect(await counted()).toEqual({ hit: 3 });
    expect(await counted()).toEqual({ hit: 3 });
  });

  it('hands a cache hit out as the object itself and only a miss as a promise (read)', async () => {
    server.upsert(cm, configMap('a'));
    // The watch stays silent after the list: what is created later is only on the server.
    server.addFault({ watch: true, fault: { kind: 'hang' } });
    await informer.start();
    const hit = reader.read('a', 'default');
    expect(hit).not.toBeInstanceOf(Promise);
    expect((hit as KubernetesObject).metadata?.name).toBe('a');
    server.upsert(cm, configMap('late'));
    const miss = reader.read('late', 'default');
    expect(miss).toBeInstanceOf(Promise);
    expect((await miss)?.metadata?.name).toBe('late');
    expect(gets('a')).toBe(0);
    expect(gets('late')).toBe(1);
  });

  it('reads an object the watch has not delivered yet from the server, once for concurrent callers', async () => {
    // The watch stays silent: whatever is created now is only on the server.
    server.addFault({ watch: true, fault: { kind: 'hang' } });
    await informer.start();
    server.upsert(cm, configMap('new'));
    const found = await Promise.all([1, 2, 3].map(() => reader.get('new', 'default')));
    expect(found.map((o) => o?.metadata?.name)).toEqual(['new', 'new', 'new']);
    expect(gets('new')).toBe(1);
    // What the GET found is not cached: the next miss asks again.
    await reader.get('new', 'default');
    expect(gets('new')).toBe(2);
    expect(await counted()).toEqual({ miss: 4 });
  });

  it('says undefined for an object that is gone, once the watch delivered the deletion', async () => {
    server.upsert(cm, configMap('gone'));
    await informer.start();
    expect(await reader.get('gone', 'default')).toBeDefined();
    server.remove(cm, 'gone', 'default');
    await waitFor(() => informer.get('gone', 'default') === undefined, { message: 'the deletion in the cache' });
    expect(await reader.get('gone', 'default')).toBeUndefined();
    expect(gets('gone')).toBe(1);
  });

  it('reads from the server until the cache has synced', async () => {
    server.upsert(cm, configMap('a'));
    // The first list fails: the informer retries after its backoff, unsynced meanwhile.
    server.failNextList('/api/v1/configmaps');
    void informer.start();
    expect(reader.hasSynced()).toBe(false);
    expect((await reader.get('a', 'default'))?.metadata?.name).toBe('a');
    expect(gets('a')).toBe(1);
    await waitFor(() => reader.hasSynced(), { message: 'the cache to sync' });
    await reader.get('a', 'default');
    expect(gets('a')).toBe(1);
  });

  it('passes the server errors of a miss on', async () => {
    server.addFault({ method: 'GET', watch: false, pathPrefix: path('x'), fault: { kind: 'status', code: 503 } });
    await expect(reader.get('x', 'default')).rejects.toMatchObject({ code: 503 });
    // The failed read is not remembered.
    server.clearFaults();
    server.upsert(cm, configMap('x'));
    expect(await reader.get('x', 'default')).toBeDefined();
  });
});
