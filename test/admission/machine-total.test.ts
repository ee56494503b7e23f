/**
 * The installation's machine total kept by Shoot events: after every add, update and delete it equals a full recount
 * over the stored Shoots, as provider-local's installation check counts them (hibernated Shoots count, Shoots of other
 * providers don't), both with events made up here and with a real informer's.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { MachineTotal, type ShootEvents } from '../../src/admission/machine-total.js';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import { Refs } from '../../src/apis/refs.js';
import { validateInstallationMachines } from '../../src/extensions/provider-local/admission.js';
import { ResourceClient } from '../../src/runtime/client.js';
import { Informer } from '../../src/runtime/informer.js';
import { silentLogger } from '../../src/runtime/log.js';
import { waitFor } from '../support/wait.js';
import { FakeApiServer } from '../runtime/fake-apiserver.js';

/** provider-local's machine slots of a stored Shoot of its type: each pool's larger of minimum and maximum. */
function localSlots(shoot: KubernetesObject): number {
  const provider = (shoot as { spec?: { provider?: { type?: unknown; workers?: unknown } } }).spec?.provider;
  if (provider?.type !== 'local' || !Array.isArray(provider.workers)) return 0;
  const count = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) ? n : 0);
  return (provider.workers as { minimum?: unknown; maximum?: unknown }[]).reduce(
    (sum, pool) => sum + Math.max(0, count(pool?.minimum), count(pool?.maximum)),
    0,
  );
}

/**
 * The machines of the stored Shoots other than the one of that namespace and name, as provider-local's check counts
 * them over the whole list: a Shoot of that name growing past any limit reports them in its refusal.
 */
function recount(stored: readonly KubernetesObject[], namespace: string, name: string): number {
  const candidate = {
    metadata: { namespace, name },
    spec: { provider: { type: 'local', workers: [{ name: 'w', minimum: 1, maximum: 1e9 }] } },
  } as unknown as Shoot;
  const [error] = validateInstallationMachines(candidate, stored, 0);
  const others = /other shoots have (\d+) machines?/.exec(error?.detail ?? '');
  if (!others) throw new Error(`unexpected refusal: ${JSON.stringify(error)}`);
  return Number(others[1]);
}

/** Events made up here: handlers called as an informer calls them. */
class Events implements ShootEvents {
  readonly store = new Map<string, KubernetesObject>();
  private readonly handlers = {
    add: [] as ((o: KubernetesObject) => void)[],
    update: [] as ((o: KubernetesObject, old: KubernetesObject) => void)[],
    delete: [] as ((o: KubernetesObject) => void)[],
  };
  onAdd(h: (o: KubernetesObject) => void) {
    this.handlers.add.push(h);
  }
  onUpdate(h: (o: KubernetesObject, old: KubernetesObject) => void) {
    this.handlers.update.push(h);
  }
  onDelete(h: (o: KubernetesObject) => void) {
    this.handlers.delete.push(h);
  }
  put(shoot: KubernetesObject) {
    const key = `${shoot.metadata!.namespace}/${shoot.metadata!.name}`;
    const old = this.store.get(key);
    this.store.set(key, shoot);
    if (old) for (const h of this.handlers.update) h(shoot, old);
    else for (const h of this.handlers.add) h(shoot);
  }
  delete(namespace: string, name: string) {
    const old = this.store.get(`${namespace}/${name}`);
    if (!old) return;
    this.store.delete(`${namespace}/${name}`);
    for (const h of this.handlers.delete) h(old);
  }
}

const count = fc.oneof(fc.integer({ min: 0, max: 12 }), fc.constantFrom(undefined, -3, '4', null));
const pool = fc.record({ name: fc.constant('p'), minimum: count, maximum: count });
const shoot = fc.record({
  namespace: fc.constantFrom('garden-a', 'garden-b'),
  name: fc.constantFrom('s1', 's2', 's3', 's4'),
  type: fc.constantFrom('local', 'local', 'aws'),
  hibernated: fc.boolean(),
  workers: fc.oneof(fc.array(pool, { maxLength: 3 }), fc.constant(undefined)),
});
const event = fc.oneof(
  shoot.map((s) => ({ op: 'put' as const, ...s })),
  shoot.map((s) => ({ op: 'delete' as const, ...s })),
);

interface ShootFields {
  readonly namespace: string;
  readonly name: string;
  readonly type: string;
  readonly hibernated: boolean;
  readonly workers?: readonly unknown[] | undefined;
}

const shootObject = (s: ShootFields) =>
  ({
    apiVersion: 'core.gardener.cloud/v1beta1',
    kind: 'Shoot',
    metadata: { namespace: s.namespace, name: s.name },
    spec: {
      hibernation: { enabled: s.hibernated },
      provider: { type: s.type, ...(s.workers ? { workers: s.workers } : {}) },
    },
  }) as KubernetesObject;

describe('MachineTotal', () => {
  it('equals a full recount after every add, update and delete (property)', () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), (events) => {
        const source = new Events();
        const total = new MachineTotal(localSlots).attach(source);
        for (const e of events) {
          if (e.op === 'put') source.put(shootObject(e));
          else source.delete(e.namespace, e.name);
          const stored = [...source.store.values()];
          expect(total.total).toBe(stored.reduce((sum, s) => sum + localSlots(s), 0));
          for (const namespace of ['garden-a', 'garden-b']) {
            for (const name of ['s1', 's4', 'none']) {
              expect(total.othersThan(namespace, name)).toBe(recount(stored, namespace, name));
            }
          }
        }
      }),
      { numRuns: 200 },
    );
  });

  it('counts hibernated shoots and leaves shoots of other providers out', () => {
    const source = new Events();
    const total = new MachineTotal(localSlots).attach(source);
    const workers = [{ name: 'p', minimum: 2, maximum: 5 }];
    source.put(shootObject({ namespace: 'garden-a', name: 's1', type: 'local', hibernated: true, workers }));
    source.put(shootObject({ namespace: 'garden-a', name: 's2', type: 'aws', hibernated: false, workers }));
    expect(total.total).toBe(5);
    expect(total.othersThan('garden-a', 's1')).toBe(0);
    expect(total.othersThan('garden-a', 's2')).toBe(5);
    // A shoot changing its provider type leaves the count, and comes back.
    source.put(shootObject({ namespace: 'garden-a', name: 's1', type: 'aws', hibernated: true, workers }));
    expect(total.total).toBe(0);
    source.put(shootObject({ namespace: 'garden-a', name: 's2', type: 'local', hibernated: false, workers }));
    expect(total.total).toBe(5);
  });
});

describe('MachineTotal on an informer', () => {
  let server: FakeApiServer | undefined;
  let client: ResourceClient | undefined;
  let informer: Informer | undefined;
  afterEach(async () => {
    informer?.stop();
    await informer?.stopped();
    client?.close();
    await server?.close();
  });

  it('follows the list, then the watch, and equals a recount over the cache', async () => {
    server = await FakeApiServer.start();
    client = new ResourceClient(server.kubeConfig());
    informer = new Informer({ client, ref: Refs.shoot, logger: silentLogger(), timeoutSeconds: 3600 });
    const workers = (n: number) => [{ name: 'p', minimum: 1, maximum: n }];
    const put = (name: string, type: string, n: number) =>
      server!.upsert(
        Refs.shoot,
        shootObject({ namespace: 'garden-a', name, type, hibernated: false, workers: workers(n) }),
      );
    put('s1', 'local', 3);
    put('s2', 'aws', 7);
    await informer.start();
    // Attached after the first list: onAdd replays the store.
    const total = new MachineTotal(localSlots).attach(informer);
    const recounted = () => informer!.list().reduce((sum, s) => sum + localSlots(s), 0);
    expect(total.total).toBe(3);
    put('s3', 'local', 4);
    await waitFor(() => total.total === 7, { message: 'the added shoot counted' });
    put('s1', 'local', 1);
    await waitFor(() => total.total === 5, { message: 'the updated shoot counted' });
    server.remove(Refs.shoot, 's3', 'garden-a');
    await waitFor(() => total.total === 1, { message: 'the deleted shoot gone from the count' });
    expect(total.total).toBe(recounted());
    expect(total.othersThan('garden-a', 's1')).toBe(recount(informer.list(), 'garden-a', 's1'));
  });
});
