/**
 * The shoot hibernation controller against a real API server, its clock faked: a Shoot with a schedule gets
 * `spec.hibernation.enabled: true` at the start time (the location's wall clock) and `false` at the end time, with
 * `status.lastHibernationTriggerTime` each time; in between nothing changes, a time already acted on is not acted
 * on again, and the requeue points at the next schedule time.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import { nextTime, parseCron } from '../../src/apis/core/v1beta1/hibernation.js';
import { ShootHibernationReconciler } from '../../src/controllermanager/shoot-hibernation.js';
import { Refs } from '../../src/apis/refs.js';
import { ResourceClient } from '../../src/runtime/client.js';
import { FakeClock } from '../../src/runtime/clock.js';
import { silentLogger } from '../../src/runtime/log.js';
import { kubeConfig, newTestNamespace } from '../support/kube.js';

let client: ResourceClient;

beforeAll(() => {
  client = new ResourceClient(kubeConfig());
});

afterAll(() => client?.close());

describe('the shoot hibernation controller', () => {
  it('hibernates at the start time and wakes up at the end time, in the location', async () => {
    const name = 'sched';
    const namespace = await newTestNamespace('hibsched');
    await client.create(Refs.shoot, {
      apiVersion: 'core.gardener.cloud/v1beta1',
      kind: 'Shoot',
      metadata: { name, namespace },
      spec: {
        cloudProfile: { name: 'local' },
        region: 'local',
        provider: { type: 'local' },
        hibernation: { schedules: [{ start: '0 20 * * *', end: '0 6 * * *', location: 'Europe/Berlin' }] },
      },
    } as KubernetesObject);
    const get = async () => (await client.get<Shoot & KubernetesObject>(Refs.shoot, name, namespace))!;
    const created = Date.parse((await get()).metadata.creationTimestamp!);
    // The first start and end times after the shoot's creation, on Berlin's wall clock.
    const start = nextTime(parseCron('0 20 * * *'), 'Europe/Berlin', created)!;
    const end = nextTime(parseCron('0 6 * * *'), 'Europe/Berlin', start)!;
    const clock = new FakeClock(start - 60_000);
    const reconciler = new ShootHibernationReconciler({
      client,
      clock,
      shoot: (n, ns) => client.get(Refs.shoot, n, ns),
    });
    const ctx = { signal: AbortSignal.timeout(30_000), logger: silentLogger() };
    const reconcile = () => reconciler.reconcile({ name, namespace }, ctx);

    // A minute before: nothing, and a look again at the start time.
    expect(await reconcile()).toEqual({ requeueAfter: 60_000 });
    expect((await get()).spec.hibernation?.enabled).toBeUndefined();

    await clock.advance(90_000);
    const atStart = await reconcile();
    let shoot = await get();
    expect(shoot.spec.hibernation?.enabled).toBe(true);
    expect(shoot.status?.lastHibernationTriggerTime).toBe(
      new Date(start + 30_000).toISOString().replace(/\.\d+Z$/, 'Z'),
    );
    // Next: 06:00 in Berlin.
    expect(atStart).toEqual({ requeueAfter: end - start - 30_000 });

    // Acted on once: a later reconcile before the end time changes nothing, not even a hand-set value.
    await client.mergePatch(Refs.shoot, name, namespace, { spec: { hibernation: { enabled: false } } });
    await clock.advance(3600_000);
    await reconcile();
    expect((await get()).spec.hibernation?.enabled).toBe(false);

    // The end time wakes it up.
    await client.mergePatch(Refs.shoot, name, namespace, { spec: { hibernation: { enabled: true } } });
    await clock.advance(end + 30_000 - clock.now());
    await reconcile();
    shoot = await get();
    expect(shoot.spec.hibernation?.enabled).toBe(false);
    expect(Date.parse(shoot.status!.lastHibernationTriggerTime!)).toBe(Math.floor(clock.now() / 1000) * 1000);
  });
});
