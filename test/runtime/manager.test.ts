import type { KubernetesObject } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Refs } from '../../src/apis/refs.js';
import type { Request } from '../../src/runtime/controller.js';
import { silentLogger } from '../../src/runtime/log.js';
import { LeadershipLostError, Manager, type ManagerComponent, type ManagerOptions } from '../../src/runtime/manager.js';
import { Metrics } from '../../src/runtime/metrics.js';
import { waitFor } from '../support/wait.js';
import { FakeApiServer } from './fake-apiserver.js';
import { fastLeaderElection } from '../support/leader-election.js';

const wait = { timeoutMs: 5000, intervalMs: 5 };
const cm = Refs.configMap;

let server: FakeApiServer;
let managers: Manager[];

beforeEach(async () => {
  server = await FakeApiServer.start();
  managers = [];
});

afterEach(async () => {
  server.clearFaults();
  await Promise.all(managers.map((m) => m.stop()));
  await server.close();
});

/** A manager with one controller on configmaps in `default`, recording what it reconciled. */
function newManager(identity: string, opts: Partial<ManagerOptions> = {}) {
  const reconciled: Request[] = [];
  const manager = new Manager({
    kubeConfig: server.kubeConfig(),
    logger: silentLogger(),
    metrics: new Metrics(),
    health: { host: '::1', port: 0 },
    ...opts,
  });
  managers.push(manager);
  const informer = manager.informer(cm, { namespace: 'default' });
  manager
    .controller({
      name: 'configmaps',
      reconciler: {
        reconcile: async (req) => {
          reconciled.push(req);
        },
      },
    })
    .watch(informer);
  return { manager, reconciled, identity };
}

describe('Manager', () => {
  it('starts health server, informers and controllers; stops in reverse order', async () => {
    server.upsert(cm, { metadata: { name: 'a', namespace: 'default' } } as KubernetesObject);
    const { manager, reconciled } = newManager('m');
    expect(manager.isReady()).toBe(false);
    await manager.start();
    expect(manager.isReady()).toBe(true);
    const base = `http://[::1]:${manager.healthPort()}`;
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    await waitFor(() => reconciled.length === 1, wait);
    expect(reconciled[0]).toEqual({ namespace: 'default', name: 'a' });

    server.upsert(cm, { metadata: { name: 'b', namespace: 'default' } } as KubernetesObject);
    await waitFor(() => reconciled.some((r) => r.name === 'b'), wait);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain('controller_runtime_reconcile_total{controller="configmaps",result="success"}');

    await manager.stop();
    await manager.done;
    await waitFor(() => server.openWatches() === 0, wait);
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  });

  it('returns from start() when stopped while its informers sync (a signal during start), and leaves nothing', async () => {
    server.addFault({ fault: { kind: 'hang' } });
    const { manager } = newManager('m', { syncTimeoutMs: 60_000 });
    const starting = manager.start();
    await waitFor(() => manager.healthPort() !== undefined, wait);
    const base = `http://[::1]:${manager.healthPort()}`;
    const started = Date.now();
    await manager.stop();
    await starting;
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(manager.isReady()).toBe(false);
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  });

  it('shares one informer per resource, namespace and selector', () => {
    const { manager } = newManager('m');
    expect(manager.informer(cm, { namespace: 'default' })).toBe(manager.informer(cm, { namespace: 'default' }));
    expect(manager.informer(cm, { namespace: 'other' })).not.toBe(manager.informer(cm, { namespace: 'default' }));
  });

  it("watches a second cluster's objects with its own client, synced before controllers run", async () => {
    const other = await FakeApiServer.start();
    try {
      server.upsert(cm, { metadata: { name: 'here', namespace: 'default' } } as KubernetesObject);
      other.upsert(cm, { metadata: { name: 'there', namespace: 'default' } } as KubernetesObject);
      const { manager, reconciled } = newManager('m');
      const cluster = manager.cluster(other.kubeConfig());
      const remote = cluster.informer(cm, { namespace: 'default' });
      expect(remote).toBe(cluster.informer(cm, { namespace: 'default' }));
      expect(remote).not.toBe(manager.informer(cm, { namespace: 'default' }));
      const seenRemotely: string[] = [];
      manager
        .controller({
          name: 'remote',
          reconciler: {
            reconcile: async (req) => {
              // Synced before any controller ran: the cache holds the other cluster's object already.
              if (remote.get(req.name, req.namespace)) seenRemotely.push(req.name);
            },
          },
        })
        .watch(remote);
      await manager.start();
      expect(manager.isReady()).toBe(true);
      await waitFor(() => reconciled.length === 1 && seenRemotely.length === 1, wait);
      expect(reconciled.map((r) => r.name)).toEqual(['here']);
      expect(seenRemotely).toEqual(['there']);
      await cluster.client.create(cm, { metadata: { name: 'written', namespace: 'default' } } as KubernetesObject);
      expect(other.objects(cm).map((o) => o.metadata?.name)).toContain('written');
      expect(server.objects(cm).map((o) => o.metadata?.name)).not.toContain('written');
    } finally {
      await Promise.all(managers.map((m) => m.stop()));
      await other.close();
    }
  });

  it('runs controllers only on the leader; a standby with warm caches takes over on release', async () => {
    server.upsert(cm, { metadata: { name: 'a', namespace: 'default' } } as KubernetesObject);
    const one = newManager('one', { leaderElection: fastLeaderElection('one') });
    await one.manager.start();
    await waitFor(() => one.manager.isLeader(), wait);
    await waitFor(() => one.reconciled.length === 1, wait);

    const two = newManager('two', { leaderElection: fastLeaderElection('two') });
    await two.manager.start();
    expect(two.manager.isReady()).toBe(true); // caches synced on the standby too
    server.upsert(cm, { metadata: { name: 'b', namespace: 'default' } } as KubernetesObject);
    await waitFor(() => one.reconciled.some((r) => r.name === 'b'), wait);
    expect(two.manager.isLeader()).toBe(false);
    expect(two.reconciled).toEqual([]);

    await one.manager.stop();
    await waitFor(() => two.manager.isLeader(), { ...wait, message: 'the standby to take over' });
    await waitFor(() => two.reconciled.length === 2, wait);
    expect(
      server.objects<KubernetesObject & { spec?: { holderIdentity?: string } }>(Refs.lease)[0]?.spec?.holderIdentity,
    ).toBe('two');
  });

  it('stops everything and rejects done when the lease is lost', async () => {
    const { manager } = newManager('m', { leaderElection: fastLeaderElection('m') });
    await manager.start();
    await waitFor(() => manager.isLeader(), wait);
    server.addFault({ method: 'PUT', pathPrefix: '/apis/coordination.k8s.io', fault: { kind: 'status', code: 500 } });
    await expect(manager.done).rejects.toBeInstanceOf(LeadershipLostError);
    expect(manager.isLeader()).toBe(false);
    await waitFor(() => server.openWatches() === 0, wait);
  });
});

/** A component that logs its start and stop, and what of the manager it saw then. */
function loggedComponent(log: string[], what: () => string, overrides: Partial<ManagerComponent> = {}) {
  const component: ManagerComponent & { stopping?: AbortSignal } = {
    name: 'webhook',
    start: async (stopping) => {
      component.stopping = stopping;
      stopping.addEventListener('abort', () => log.push(`stopping told (${what()})`), { once: true });
      log.push(`start (${what()})`);
    },
    stop: async ({ timeoutMs }) => void log.push(`stop ${timeoutMs} ms (${what()})`),
    ...overrides,
  };
  return component;
}

describe('Manager components', () => {
  it('start after the health server and before the informers list; are told at the stop, stopped after the informers', async () => {
    const log: string[] = [];
    const { manager } = newManager('m', { gracefulShutdownMs: 1234 });
    const lists = () => `${server.requestsWhere({ method: 'GET', watch: false }).length} lists`;
    let informerStopped = false;
    manager.addComponent(
      loggedComponent(
        log,
        () => `health ${manager.healthPort() !== undefined}, ${lists()}, informer stopped ${informerStopped}`,
      ),
    );
    await manager.start();
    expect(log).toEqual(['start (health true, 0 lists, informer stopped false)']);
    void manager
      .informer(cm, { namespace: 'default' })
      .stopped()
      .then(() => (informerStopped = true));
    await manager.stop();
    expect(log.slice(1)).toEqual([
      // Before the controllers stop: what the component lets go of first.
      'stopping told (health true, 1 lists, informer stopped false)',
      'stop 1234 ms (health true, 1 lists, informer stopped true)',
    ]);
    expect(() => manager.addComponent(loggedComponent([], () => ''))).toThrow(/before start/);
  });

  it('run on a standby replica too: only the controllers wait for the lease', async () => {
    const one = newManager('one', { leaderElection: fastLeaderElection('one') });
    await one.manager.start();
    await waitFor(() => one.manager.isLeader(), wait);
    const log: string[] = [];
    const two = newManager('two', { leaderElection: fastLeaderElection('two') });
    two.manager.addComponent(loggedComponent(log, () => `leader ${two.manager.isLeader()}`));
    await two.manager.start();
    expect(log).toEqual(['start (leader false)']);
    expect(two.manager.isLeader()).toBe(false);
  });

  it('one that fails to start: start() rejects with its error, after stopping it and the health server', async () => {
    const log: string[] = [];
    const { manager } = newManager('m');
    const failing = loggedComponent(log, () => '', {
      start: async () => {
        log.push('start');
        throw new Error('listen EADDRINUSE');
      },
    });
    manager.addComponent(failing);
    manager.addComponent(loggedComponent(log, () => 'second'));
    await expect(manager.start()).rejects.toThrow('listen EADDRINUSE');
    expect(log).toEqual(['start', 'stop 30000 ms ()']);
    await manager.done;
    expect(server.requestsWhere({ method: 'GET' })).toEqual([]);
  });

  it('stopped while one starts: its start is cut short through `stopping`, it is stopped, start() returns', async () => {
    const log: string[] = [];
    const { manager } = newManager('m');
    const component = loggedComponent(log, () => '', {
      start: (stopping) =>
        new Promise<void>((_, reject) => {
          log.push('start');
          stopping.addEventListener('abort', () => reject(stopping.reason), { once: true });
        }),
    });
    manager.addComponent(component);
    const starting = manager.start();
    await waitFor(() => log.includes('start'), wait);
    await manager.stop();
    await starting;
    expect(log).toEqual(['start', 'stop 30000 ms ()']);
    expect(manager.isReady()).toBe(false);
    expect(server.requestsWhere({ method: 'GET' })).toEqual([]);
  });
});
