/**
 * The webhook's Seed and CloudProfile lookups of the runtime (syncedLookup on a shared reader) against the fake API
 * server: once the cache has synced, a name it lacks is none with no API call, and the cache's answers count as hits.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { syncedLookup } from '../../src/app/readers.js';
import { Refs } from '../../src/apis/refs.js';
import { CachedReader } from '../../src/runtime/cached-reader.js';
import { ResourceClient } from '../../src/runtime/client.js';
import { Informer } from '../../src/runtime/informer.js';
import { silentLogger } from '../../src/runtime/log.js';
import { Metrics } from '../../src/runtime/metrics.js';
import { waitFor } from '../support/wait.js';
import { FakeApiServer } from '../runtime/fake-apiserver.js';

const ref = Refs.cloudProfile;
const profile = (name: string) =>
  ({ apiVersion: 'core.gardener.cloud/v1beta1', kind: 'CloudProfile', metadata: { name } }) as KubernetesObject;

let server: FakeApiServer;
let client: ResourceClient;
let informer: Informer;
let metrics: Metrics;
let lookup: (name: string) => unknown;

beforeEach(async () => {
  server = await FakeApiServer.start();
  client = new ResourceClient(server.kubeConfig());
  informer = new Informer({ client, ref, logger: silentLogger(), timeoutSeconds: 3600 });
  metrics = new Metrics();
  lookup = syncedLookup(new CachedReader({ informer, client, ref, reads: metrics.cachedReads }));
});

afterEach(async () => {
  informer.stop();
  await informer.stopped();
  client.close();
  await server.close();
});

/** GETs of single CloudProfiles (not the informer's list and watch). */
const reads = () =>
  server.requestsWhere({ method: 'GET', watch: false }).filter((r) => /cloudprofiles\/./.test(r.path));
/** `cached_reader_reads_total` as a scrape reads it, by result. */
const counted = async () => {
  const m = (await metrics.registry.getMetricsAsJSON()).find((x) => x.name === 'cached_reader_reads_total')!;
  return Object.fromEntries(m.values.map((v) => [v.labels.result, v.value]));
};

describe('syncedLookup', () => {
  it('answers a name the synced cache lacks as none at once, without a GET, and counts the answers as hits', async () => {
    server.upsert(ref, profile('local'));
    await informer.start();
    expect((lookup('local') as KubernetesObject).metadata?.name).toBe('local');
    for (let i = 0; i < 3; i++) expect(lookup('missing')).toBeUndefined();
    expect(reads()).toEqual([]);
    expect(await counted()).toEqual({ hit: 4 });
  });

  it('reads from the API server before the first list, counted as a miss', async () => {
    server.upsert(ref, profile('local'));
    server.addFault({
      method: 'GET',
      watch: false,
      pathPrefix: '/apis/core.gardener.cloud/v1beta1/cloudprofiles',
      times: 1,
      fault: { kind: 'status', code: 500 },
    });
    void informer.start();
    expect(informer.hasSynced()).toBe(false);
    const early = lookup('local');
    expect(early).toBeInstanceOf(Promise);
    expect(((await early) as KubernetesObject).metadata?.name).toBe('local');
    expect(reads()).toHaveLength(1);
    expect(await counted()).toEqual({ miss: 1 });
    await waitFor(() => informer.hasSynced(), { message: 'the cache to sync' });
    expect(lookup('missing')).toBeUndefined();
    expect(reads()).toHaveLength(1);
    // The counter adds up: the one miss before, the one hit since.
    expect(await counted()).toEqual({ miss: 1, hit: 1 });
  });
});
