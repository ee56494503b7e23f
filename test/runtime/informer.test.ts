import type { KubernetesObject } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ResourceClient } from '../../src/runtime/client.js';
import { Refs } from '../../src/apis/refs.js';
import { FakeClock, type Clock } from '../../src/runtime/clock.js';
import { Informer, type InformerOptions } from '../../src/runtime/informer.js';
import { silentLogger } from '../../src/runtime/log.js';
import { waitFor } from '../support/wait.js';
import { FakeApiServer } from './fake-apiserver.js';

const cm = Refs.configMap;
const wait = { timeoutMs: 5000, intervalMs: 2 };

function configMap(name: string, data: Record<string, string> = {}, namespace = 'default'): KubernetesObject {
  return { metadata: { name, namespace }, data } as KubernetesObject;
}

type Event = [type: 'add' | 'update' | 'delete', name: string];

let server: FakeApiServer;
let client: ResourceClient;
let informer: Informer | undefined;

beforeEach(async () => {
  server = await FakeApiServer.start();
  client = new ResourceClient(server.kubeConfig());
});

afterEach(async () => {
  informer?.stop();
  await informer?.stopped();
  informer = undefined;
  client.close();
  await server.close();
});

/** An informer on configmaps in `default` with deterministic backoff (1 s doubling to 8 s, no jitter). */
function newInformer(clock: Clock | undefined, opts: Partial<InformerOptions> = {}) {
  const events: Event[] = [];
  informer = new Informer({
    client,
    ref: cm,
    namespace: 'default',
    logger: silentLogger(),
    clock,
    watchdogMs: 60_000,
    timeoutSeconds: 3600,
    backoff: { initialMs: 1000, maxMs: 8000, jitter: 0 },
    ...opts,
  });
  informer.onAdd((o) => events.push(['add', o.metadata!.name!]));
  informer.onUpdate((o) => events.push(['update', o.metadata!.name!]));
  informer.onDelete((o) => events.push(['delete', o.metadata!.name!]));
  return { informer, events };
}

const lists = () =>
  server.requestsWhere({ method: 'GET', watch: false, pathPrefix: '/api/v1/namespaces/default/configmaps' });
const watches = () => server.requestsWhere({ watch: true });

/** Waits until the informer sleeps for exactly `ms` (its backoff), with the fake clock standing still. */
async function sleepingFor(clock: FakeClock, ms: number): Promise<void> {
  await waitFor(() => clock.nextTimerAt() === clock.now() + ms, { ...wait, message: `a ${ms} ms sleep` });
}

describe('Informer', () => {
  it('lists, then watches from the list resourceVersion with bookmarks, and keeps the store current', async () => {
    server.upsert(cm, configMap('a'));
    server.upsert(cm, configMap('b'));
    server.upsert(cm, configMap('other', {}, 'elsewhere'));
    const listRv = server.resourceVersion();
    const { informer, events } = newInformer(new FakeClock());
    await informer.start();
    expect(informer.hasSynced()).toBe(true);
    expect(
      informer
        .list()
        .map((o) => o.metadata?.name)
        .sort(),
    ).toEqual(['a', 'b']);
    expect(events).toEqual([
      ['add', 'a'],
      ['add', 'b'],
    ]);

    await waitFor(() => server.openWatches() === 1, wait);
    const w = watches()[0]!;
    expect(w.query.get('resourceVersion')).toBe(listRv);
    expect(w.query.get('allowWatchBookmarks')).toBe('true');
    expect(w.query.get('timeoutSeconds')).toBe('3600');

    server.upsert(cm, configMap('c'));
    server.upsert(cm, configMap('a', { changed: 'yes' }));
    server.remove(cm, 'b', 'default');
    server.upsert(cm, configMap('ignored', {}, 'elsewhere'));
    await waitFor(() => events.length === 5, wait);
    expect(events.slice(2)).toEqual([
      ['add', 'c'],
      ['update', 'a'],
      ['delete', 'b'],
    ]);
    expect((informer.get('a', 'default') as { data?: unknown }).data).toEqual({ changed: 'yes' });
    expect(informer.get('b', 'default')).toBeUndefined();

    server.bookmark();
    await waitFor(() => informer.resourceVersion() === server.resourceVersion(), wait);
    expect(lists()).toHaveLength(1);
  });

  it('replays the store to an add handler registered after the first list', async () => {
    server.upsert(cm, configMap('a'));
    const { informer } = newInformer(new FakeClock());
    await informer.start();
    const late: string[] = [];
    informer.onAdd((o) => late.push(o.metadata!.name!));
    expect(late).toEqual(['a']);
  });

  it('lists again on 410 Gone and emits deletes for objects that vanished meanwhile', async () => {
    const clock = new FakeClock();
    for (const name of ['a', 'b', 'c']) server.upsert(cm, configMap(name));
    const { informer, events } = newInformer(clock);
    await informer.start();
    await waitFor(() => server.openWatches() === 1, wait);
    events.length = 0;

    // While the watch is down, objects change and the history is compacted: resuming gets 410 Gone.
    server.dropWatches();
    server.remove(cm, 'b', 'default');
    server.upsert(cm, configMap('c', { v: '2' }));
    server.upsert(cm, configMap('d'));
    server.compact();
    await sleepingFor(clock, 1000); // the dropped watch was short-lived: backoff
    await clock.advance(1000);

    await waitFor(() => lists().length === 2, { ...wait, message: 'a relist' });
    await waitFor(() => events.length === 3, wait);
    expect(events).toEqual([
      ['delete', 'b'],
      ['update', 'c'],
      ['add', 'd'],
    ]);
    expect(
      informer
        .list()
        .map((o) => o.metadata?.name)
        .sort(),
    ).toEqual(['a', 'c', 'd']);
    await waitFor(() => server.openWatches() === 1, wait);
    expect(watches().at(-1)?.query.get('resourceVersion')).toBe(server.resourceVersion());
  });

  it('answers a watch that starts with 410 by relisting at once', async () => {
    server.upsert(cm, configMap('a'));
    server.addFault({ watch: true, times: 1, fault: { kind: 'gone' } });
    const { informer } = newInformer(new FakeClock());
    await informer.start();
    await waitFor(() => server.openWatches() === 1, wait);
    expect(lists()).toHaveLength(2);
  });

  it('resumes the watch from the last resourceVersion after the connection drops', async () => {
    const clock = new FakeClock();
    server.upsert(cm, configMap('a'));
    const { informer, events } = newInformer(clock);
    await informer.start();
    await waitFor(() => server.openWatches() === 1, wait);
    server.upsert(cm, configMap('b'));
    await waitFor(() => events.length === 2, wait);
    const seen = informer.resourceVersion();

    server.dropWatches();
    server.upsert(cm, configMap('missed-while-down'));
    await sleepingFor(clock, 1000);
    await clock.advance(1000);
    await waitFor(() => events.length === 3, wait);
    expect(events[2]).toEqual(['add', 'missed-while-down']);
    expect(watches()).toHaveLength(2);
    expect(watches()[1]!.query.get('resourceVersion')).toBe(seen);
    expect(lists()).toHaveLength(1);
  });

  it('restarts a healthy watch at once when the server ends it', async () => {
    const clock = new FakeClock();
    const { informer } = newInformer(clock);
    await informer.start();
    await waitFor(() => server.openWatches() === 1, wait);
    await clock.advance(5000); // ran long enough to count as healthy
    server.endWatches();
    await waitFor(() => watches().length === 2 && server.openWatches() === 1, wait);
    expect(lists()).toHaveLength(1);
  });

  it('restarts a watch that went silent once the watchdog fires', async () => {
    const clock = new FakeClock();
    server.addFault({ watch: true, times: 1, fault: { kind: 'hang' } });
    const { informer, events } = newInformer(clock, { watchdogMs: 10_000 });
    await informer.start();
    await waitFor(() => watches().length === 1, wait);
    await clock.advance(9_999);
    expect(watches()).toHaveLength(1);
    await clock.advance(1);
    await waitFor(() => server.openWatches() === 1, { ...wait, message: 'a second, working watch' });
    expect(watches()).toHaveLength(2);
    server.upsert(cm, configMap('after-restart'));
    await waitFor(() => events.length === 1, wait);

    // Bookmarks count as activity: a quiet but live watch is left alone.
    for (let i = 0; i < 5; i++) {
      await clock.advance(5_000);
      server.bookmark();
      const rv = server.resourceVersion();
      await waitFor(() => informer.resourceVersion() === rv, wait);
    }
    expect(watches()).toHaveLength(2);
  });

  it('backs off failing lists: 1 s, 2 s, 4 s, 8 s, 8 s, and recovers', async () => {
    const clock = new FakeClock();
    const removeFault = server.addFault({ method: 'GET', watch: false, fault: { kind: 'status', code: 500 } });
    const { informer } = newInformer(clock);
    let synced = false;
    void informer.start().then(() => (synced = true));
    for (const [i, delay] of [1000, 2000, 4000, 8000, 8000].entries()) {
      await sleepingFor(clock, delay);
      expect(lists()).toHaveLength(i + 1);
      await clock.advance(delay);
      await waitFor(() => lists().length === i + 2, wait);
    }
    removeFault();
    await sleepingFor(clock, 8000);
    await clock.advance(8000);
    await waitFor(() => synced, wait);
  });

  it('backs off failing and dropped watches without listing again', async () => {
    const clock = new FakeClock();
    server.addFault({ watch: true, times: 2, fault: { kind: 'status', code: 503 } });
    server.addFault({ watch: true, times: 1, fault: { kind: 'drop' } });
    const { informer } = newInformer(clock);
    await informer.start();
    for (const [i, delay] of [1000, 2000, 4000].entries()) {
      await sleepingFor(clock, delay);
      expect(watches()).toHaveLength(i + 1);
      await clock.advance(delay);
    }
    await waitFor(() => server.openWatches() === 1, wait);
    expect(lists()).toHaveLength(1);
  });

  it('never floods a server that keeps failing (real clock, small backoff)', async () => {
    server.addFault({ watch: true, fault: { kind: 'drop' } });
    newInformer(undefined, { backoff: { initialMs: 20, maxMs: 160 } });
    await informer!.start();
    const windowMs = 600;
    const from = Date.now();
    await new Promise((r) => setTimeout(r, windowMs)); // a measuring window, not a wait for luck
    const inWindow = watches().filter((r) => r.at >= from).length;
    // Delays of 10–20, 20–40, 40–80, 80–160 and then 80–160 ms: at most ~11 watches in 600 ms.
    expect(inWindow).toBeGreaterThanOrEqual(3);
    expect(inWindow).toBeLessThanOrEqual(12);
  });

  it('stops: closes the watch and sends nothing more', async () => {
    const clock = new FakeClock();
    const { informer } = newInformer(clock);
    await informer.start();
    await waitFor(() => server.openWatches() === 1, wait);
    informer.stop();
    await informer.stopped();
    await waitFor(() => server.openWatches() === 0, wait);
    const count = server.requests.length;
    await clock.advance(120_000);
    expect(server.requests.length).toBe(count);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('resolves start when stopped before the first list succeeds', async () => {
    server.addFault({ method: 'GET', fault: { kind: 'status', code: 500 } });
    const { informer } = newInformer(new FakeClock());
    const started = informer.start();
    await waitFor(() => lists().length === 1, wait);
    informer.stop();
    await started;
    expect(informer.hasSynced()).toBe(false);
  });

  it('keeps going when a handler throws', async () => {
    const { informer, events } = newInformer(new FakeClock());
    informer.onAdd(() => {
      throw new Error('handler bug');
    });
    await informer.start();
    await waitFor(() => server.openWatches() === 1, wait);
    server.upsert(cm, configMap('a'));
    server.upsert(cm, configMap('b'));
    await waitFor(() => events.length === 2, wait);
  });
});
