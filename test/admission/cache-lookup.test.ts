/**
 * The webhook's Seed and CloudProfile lookups on the shared informer cache against the fake API server: a map read,
 * and no API call for a name the synced cache doesn't hold.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cacheLookup } from '../../src/admission/cache-lookup.js';
import { Refs } from '../../src/apis/refs.js';
import { CachedReader } from '../../src/runtime/cached-reader.js';
import { ResourceClient } from '../../src/runtime/client.js';
import { Informer } from '../../src/runtime/informer.js';
import { silentLogger } from '../../src/runtime/log.js';
import { waitFor } from '../support/wait.js';
import { FakeApiServer } from '../runtime/fake-apiserver.js';

const ref = Refs.seed;
const seed = (name: string) =>
  ({ apiVersion: 'core.gardener.cloud/v1beta1', kind: 'Seed', metadata: { name } }) as KubernetesObject;

let server: FakeApiServer;
let client: ResourceClient;
let informer: Informer;
let lookup: (name: string) => unknown;

beforeEach(async () => {
  server = await FakeApiServer.start();
  client = new ResourceClient(server.kubeConfig());
  informer = new Informer({ client, ref, logger: silentLogger(), timeoutSeconds: 3600 });
  const reader = new CachedReader({ informer, client, ref });
  lookup = cacheLookup(informer, (name) => reader.read(name));
});

afterEach(async () => {
  informer.stop();
  await informer.stopped();
  client.close();
  await server.close();
});

/** Requests other than the informer's list and watch. */
const reads = () =>
  server
    .requestsWhere({ method: 'GET', watch: false })
    .filter((r) => r.path.endsWith('/seeds/a') || r.path.endsWith('/seeds/missing'));

describe('cacheLookup', () => {
  it('answers from the synced cache, a name it lacks as none, without an API call', async () => {
    server.upsert(ref, seed('a'));
    await informer.start();
    const found = lookup('a');
    // A hit is the object itself, not a promise: the review goes on in the same turn.
    expect(found).not.toBeInstanceOf(Promise);
    expect((found as KubernetesObject).metadata?.name).toBe('a');
    for (let i = 0; i < 5; i++) expect(lookup('missing')).toBeUndefined();
    expect(reads()).toEqual([]);
  });

  it('follows the watch: a deleted object is gone from the lookup, a new one there, without an API call', async () => {
    await informer.start();
    expect(lookup('a')).toBeUndefined();
    server.upsert(ref, seed('a'));
    await waitFor(() => lookup('a') !== undefined, { message: 'the seed in the cache' });
    server.remove(ref, 'a');
    await waitFor(() => lookup('a') === undefined, { message: 'the deletion in the cache' });
    expect(reads()).toEqual([]);
  });

  it('reads from the API server only until the cache has synced', async () => {
    server.upsert(ref, seed('a'));
    // The first list fails: the informer retries after its backoff, unsynced meanwhile.
    server.failNextList('/apis/core.gardener.cloud/v1beta1/seeds');
    void informer.start();
    expect(informer.hasSynced()).toBe(false);
    const early = lookup('a');
    expect(early).toBeInstanceOf(Promise);
    expect(((await early) as KubernetesObject).metadata?.name).toBe('a');
    expect(reads()).toHaveLength(1);
    await waitFor(() => informer.hasSynced(), { message: 'the cache to sync' });
    expect(lookup('missing')).toBeUndefined();
    expect((lookup('a') as KubernetesObject).metadata?.name).toBe('a');
    expect(reads()).toHaveLength(1);
  });

  it('answers undefined before sync too when given no live read', () => {
    const never = { get: () => undefined, hasSynced: () => false };
    expect(cacheLookup(never)('a')).toBeUndefined();
  });
});
