/**
 * The webhook's Seed and CloudProfile lookups of the runtime (syncedLookup on a shared reader) against the fake API
 * server: once the cache has synced, a name it lacks is waited for on the watch, then none, with no API call, and the
 * cache's answers count as hits.
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
/** The grace for a name the synced cache lacks (the webhook's is ARRIVAL_GRACE_MS). */
const GRACE_MS = 300;

beforeEach(async () => {
  server = await FakeApiServer.start();
  client = new ResourceClient(server.kubeConfig());
  informer = new Informer({ client, ref, logger: silentLogger(), timeoutSeconds: 3600 });
  metrics = new Metrics();
  lookup = syncedLookup(new CachedReader({ informer, client, ref, reads: metrics.cachedReads }), GRACE_MS);
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
  it('answers a name the synced cache lacks as none after the grace, without a GET, and counts answers as hits', async () => {
    server.upsert(ref, profile('local'));
    await informer.start();
    expect((lookup('local') as KubernetesObject).metadata?.name).toBe('local');
    const started = Date.now();
    expect(await Promise.all([lookup('missing'), lookup('missing'), lookup('other')])).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(GRACE_MS - 5);
    expect(reads()).toEqual([]);
    expect(await counted()).toEqual({ hit: 4 });
  });

  it('answers with an object the watch delivers within the grace: one created just before the review', async () => {
    await informer.start();
    const pending = [lookup('new'), lookup('new')];
    expect(pending[0]).toBeInstanceOf(Promise);
    server.upsert(ref, profile('new'));
    const answers = (await Promise.all(pending)) as KubernetesObject[];
    expect(answers.map((a) => a.metadata?.name)).toEqual(['new', 'new']);
    // From the cache from then on, at once.
    expect((lookup('new') as KubernetesObject).metadata?.name).toBe('new');
    expect(reads()).toEqual([]);
  });

  it('reads from the API server before the first list, counted as a miss', async () => {
    server.upsert(ref, profile('local'));
    server.failNextList('/apis/core.gardener.cloud/v1beta1/cloudprofiles');
    void informer.start();
    expect(informer.hasSynced()).toBe(false);
    const early = lookup('local');
    expect(early).toBeInstanceOf(Promise);
    expect(((await early) as KubernetesObject).metadata?.name).toBe('local');
    expect(reads()).toHaveLength(1);
    expect(await counted()).toEqual({ miss: 1 });
    await waitFor(() => informer.hasSynced(), { message: 'the cache to sync' });
    expect(await lookup('missing')).toBeUndefined();
    expect(reads()).toHaveLength(1);
    // The counter adds up: the one miss before, the one hit since.
    expect(await counted()).toEqual({ miss: 1, hit: 1 });
  });
});
