/**
 * A gardenlet's heartbeat and the garden's seed lifecycle controller against a real API server, their clock faked:
 * the gardenlet's seed lease reconciler renews its Seed's Lease in `gardener-system-seed-lease` (creating both) and
 * sets `GardenletReady: True`; while the Lease is fresh the lifecycle controller changes nothing; 40 s without a
 * renewal turn the Seed `Unknown`, and 200 s more turn the conditions and constraints of its Shoots `Unknown` (those
 * they have) while a Shoot of another seed keeps its own; a renewal turns the Seed `True` again.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONDITION_GARDENLET_READY,
  SEED_LEASE_NAMESPACE,
  SEED_MONITOR_PERIOD_MS,
  SHOOT_MONITOR_PERIOD_MS,
} from '../../src/apis/core/v1beta1/seed-lease.js';
import type { Condition } from '../../src/apis/meta/schemas.js';
import { Refs } from '../../src/apis/refs.js';
import { SeedLifecycleReconciler } from '../../src/controllermanager/seed-lifecycle.js';
import { SeedLeaseReconciler } from '../../src/gardenlet/seed/lease.js';
import { ResourceClient } from '../../src/runtime/client.js';
import { FakeClock } from '../../src/runtime/clock.js';
import type { Lease } from '../../src/runtime/leader-election.js';
import { silentLogger } from '../../src/runtime/log.js';
import { seedObject } from '../fixtures/objects.js';
import { kubeConfig, newTestNamespace } from '../support/kube.js';

type WithConditions = KubernetesObject & { status?: { conditions?: Condition[]; constraints?: Condition[] } };

let client: ResourceClient;

beforeAll(() => {
  client = new ResourceClient(kubeConfig());
});

afterAll(() => client?.close());

describe('the seed lease and the seed lifecycle', () => {
  it("turns a silent gardenlet's Seed Unknown, then its Shoots, and a renewal heals the Seed", async () => {
    const seedName = `lease-${process.pid}`;
    const otherSeed = `${seedName}-other`;
    for (const name of [seedName, otherSeed]) {
      await client.create(Refs.seed, seedObject({}, { name }) as unknown as KubernetesObject);
    }
    const namespace = await newTestNamespace('seedlease');
    const healthy = (type: string): Condition => ({
      type,
      status: 'True',
      lastTransitionTime: '2026-12-01T00:00:00Z',
      lastUpdateTime: '2026-12-01T00:00:00Z',
      reason: 'Healthy',
      message: 'fine',
    });
    for (const [name, seed] of [
      ['on-seed', seedName],
      ['elsewhere', otherSeed],
    ] as const) {
      await client.create(Refs.shoot, {
        apiVersion: 'core.gardener.cloud/v1beta1',
        kind: 'Shoot',
        metadata: { name, namespace },
        spec: { cloudProfile: { name: 'local' }, region: 'local', provider: { type: 'local' }, seedName: seed },
      } as KubernetesObject);
      await client.mergePatch(
        Refs.shoot,
        name,
        namespace,
        {
          status: {
            conditions: ['APIServerAvailable', 'ControlPlaneHealthy', 'EveryNodeReady'].map(healthy),
            constraints: [healthy('HibernationPossible')],
          },
        },
        { subresource: 'status' },
      );
    }
    const seed = () => client.get<WithConditions>(Refs.seed, seedName);
    const shoot = (name: string) => client.get<WithConditions>(Refs.shoot, name, namespace);
    const statusOf = (o: WithConditions | undefined, type: string) =>
      [...(o?.status?.conditions ?? []), ...(o?.status?.constraints ?? [])].find((c) => c.type === type)?.status;

    const clock = new FakeClock(Date.now());
    const ctx = { signal: AbortSignal.timeout(30_000), logger: silentLogger() };
    // The gardenlet reads its Seed from its cache: here from the server.
    let cached = await seed();
    const lease = new SeedLeaseReconciler({ client, clock, seed: () => cached, seedName });
    const heartbeat = () => lease.reconcile({ name: seedName }, ctx);
    // Another seed's request is not this gardenlet's.
    expect(await lease.reconcile({ name: otherSeed }, ctx)).toBeUndefined();
    expect(await heartbeat()).toEqual({ requeueAfter: 10_000 });
    const renewed = await client.get<Lease>(Refs.lease, seedName, SEED_LEASE_NAMESPACE);
    expect(renewed?.spec).toMatchObject({ holderIdentity: seedName, leaseDurationSeconds: 40 });
    expect(Date.parse(renewed!.spec!.renewTime!)).toBe(clock.now());
    expect(renewed?.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Seed', name: seedName, uid: cached?.metadata?.uid }),
    ]);
    expect(statusOf(await seed(), CONDITION_GARDENLET_READY)).toBe('True');

    const lifecycle = new SeedLifecycleReconciler({
      client,
      clock,
      seed: () => cached,
      shoots: () => shoots,
    });
    let shoots = [(await shoot('on-seed'))!, (await shoot('elsewhere'))!];
    const look = async () => {
      cached = await seed();
      shoots = [(await shoot('on-seed'))!, (await shoot('elsewhere'))!];
      return lifecycle.reconcile({ name: seedName }, ctx);
    };

    // Fresh: nothing changes.
    await clock.advance(SEED_MONITOR_PERIOD_MS - 5_000);
    expect(await look()).toEqual({ requeueAfter: 10_000 });
    expect(statusOf(await seed(), CONDITION_GARDENLET_READY)).toBe('True');

    // Silent for the monitor period: the Seed is Unknown, its shoots not yet.
    await clock.advance(10_000);
    await look();
    const unknown = (await seed())?.status?.conditions?.find((c) => c.type === CONDITION_GARDENLET_READY);
    expect(unknown).toMatchObject({
      status: 'Unknown',
      reason: 'SeedStatusUnknown',
      message: 'Gardenlet stopped posting seed status.',
    });
    expect(statusOf(await shoot('on-seed'), 'APIServerAvailable')).toBe('True');

    // Unknown for the shoot monitor period: the conditions and constraints its shoots have, and only theirs.
    await clock.advance(SHOOT_MONITOR_PERIOD_MS + 1_000);
    await look();
    const onSeed = await shoot('on-seed');
    expect(onSeed?.status?.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['APIServerAvailable', 'Unknown', 'StatusUnknown'],
      ['ControlPlaneHealthy', 'Unknown', 'StatusUnknown'],
      ['EveryNodeReady', 'Unknown', 'StatusUnknown'],
    ]);
    expect(onSeed?.status?.constraints?.map((c) => [c.type, c.status])).toEqual([['HibernationPossible', 'Unknown']]);
    expect(onSeed?.status?.conditions?.[0]?.message).toBe('Gardenlet stopped sending heartbeats.');
    const elsewhere = await shoot('elsewhere');
    expect(elsewhere?.status?.conditions?.map((c) => c.status)).toEqual(['True', 'True', 'True']);
    // Done once: a second look writes nothing.
    const version = onSeed?.metadata?.resourceVersion;
    await look();
    expect((await shoot('on-seed'))?.metadata?.resourceVersion).toBe(version);

    // The gardenlet is back: its Lease is fresh, its Seed True again, and the lifecycle leaves it so.
    cached = await seed();
    await heartbeat();
    await look();
    const back = (await seed())?.status?.conditions?.find((c) => c.type === CONDITION_GARDENLET_READY);
    expect(back).toMatchObject({ status: 'True', reason: 'GardenletReady' });
    expect(Date.parse(back!.lastTransitionTime!)).toBeGreaterThanOrEqual(Date.parse(unknown!.lastTransitionTime!));

    for (const name of [seedName, otherSeed]) await client.delete(Refs.seed, name);
    await client.delete(Refs.lease, seedName, SEED_LEASE_NAMESPACE);
  });
});
