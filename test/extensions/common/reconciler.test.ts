/**
 * The generic extension reconciler against a small real HTTP API server (test/runtime/fake-apiserver.ts) with a
 * scripted actuator: what it reads and leaves alone, the finalizer, the status of each outcome, and the result it
 * hands the controller (a requeue, the actuator's error, nothing).
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Refs } from '../../../src/apis/refs.js';
import {
  ExtensionReconciler,
  hasExtensionType,
  type Actuator,
  type ActuatorOutcome,
  type ExtensionReconcilerOptions,
  type ExtensionResource,
} from '../../../src/extensions/common/reconciler.js';
import { ResourceClient } from '../../../src/runtime/client.js';
import { FakeClock } from '../../../src/runtime/clock.js';
import { TerminalError } from '../../../src/runtime/controller.js';
import { silentLogger } from '../../../src/runtime/log.js';
import { FakeApiServer } from '../../runtime/fake-apiserver.js';

const NS = 'shoot--dev--a';
const FINALIZER = 'extensions.gardener.cloud/test';
const ref = Refs.network;
const NOW = '2026-11-21T20:00:00Z';

type TestObject = ExtensionResource & { spec: { type: string; size?: number } };

function network(overrides: { type?: string; finalizers?: string[]; deleting?: boolean } = {}): KubernetesObject {
  return {
    apiVersion: 'extensions.gardener.cloud/v1alpha1',
    kind: 'Network',
    metadata: {
      name: 'a',
      namespace: NS,
      generation: 1,
      ...(overrides.finalizers ? { finalizers: overrides.finalizers } : {}),
      ...(overrides.deleting ? { deletionTimestamp: NOW } : {}),
    },
    spec: { type: overrides.type ?? 'test', size: 3 },
  } as unknown as KubernetesObject;
}

/** An actuator that answers what the test says and records what it was asked, with the finalizers it saw. */
class ScriptedActuator implements Actuator<TestObject, { size: number }> {
  reconcileOutcome: ActuatorOutcome<{ size: number }> = {
    state: 'Succeeded',
    description: 'done',
    result: { size: 3 },
  };
  deleteOutcome: ActuatorOutcome<{ size: number }> = { state: 'Succeeded', description: 'gone' };
  throws: Error | undefined;
  readonly calls: { op: 'reconcile' | 'delete'; finalizers: string[] | undefined }[] = [];

  constructor(private readonly api: () => FakeApiServer) {}

  async reconcile(_ctx: unknown, object: TestObject): Promise<ActuatorOutcome<{ size: number }>> {
    this.calls.push({ op: 'reconcile', finalizers: this.stored()?.metadata?.finalizers });
    expect(object.spec.type).toBe('test');
    if (this.throws) throw this.throws;
    return this.reconcileOutcome;
  }

  async delete(): Promise<ActuatorOutcome<{ size: number }>> {
    this.calls.push({ op: 'delete', finalizers: this.stored()?.metadata?.finalizers });
    return this.deleteOutcome;
  }

  statusFields(
    _object: TestObject,
    outcome: ActuatorOutcome<{ size: number }>,
    lastUpdateTime: string,
  ): Record<string, unknown> {
    return outcome.state === 'Succeeded' && outcome.result
      ? { size: outcome.result.size, seen: { lastUpdateTime } }
      : {};
  }

  private stored(): KubernetesObject | undefined {
    return this.api().objects(ref)[0];
  }
}

describe('ExtensionReconciler', () => {
  let api: FakeApiServer;
  let client: ResourceClient;
  let actuator: ScriptedActuator;
  let clock: FakeClock;
  const ctx = () => ({ signal: new AbortController().signal, logger: silentLogger() });
  const req = { namespace: NS, name: 'a' };
  const stored = () => api.objects<KubernetesObject & { status?: Record<string, unknown> }>(ref)[0];
  const statusWrites = () => api.requestsWhere({ method: 'PATCH' }).filter((r) => r.path.endsWith('/status')).length;
  const reconciler = (opts: Partial<ExtensionReconcilerOptions<TestObject, { size: number }>> = {}) =>
    new ExtensionReconciler<TestObject, { size: number }>({
      client,
      ref,
      extensionType: 'test',
      finalizer: FINALIZER,
      actuator,
      clock,
      ...opts,
    });

  beforeEach(async () => {
    api = await FakeApiServer.start();
    client = new ResourceClient(api.kubeConfig());
    actuator = new ScriptedActuator(() => api);
    clock = new FakeClock();
  });
  afterEach(async () => {
    client.close();
    await api.close();
  });

  it('leaves an object that is gone, or of another type, alone', async () => {
    expect(await reconciler().reconcile(req, ctx())).toBeUndefined();
    api.upsert(ref, network({ type: 'other' }));
    expect(await reconciler().reconcile(req, ctx())).toBeUndefined();
    expect(actuator.calls).toEqual([]);
    expect(stored()!.metadata?.finalizers).toBeUndefined();
    expect(api.requestsWhere({ method: 'PATCH' })).toEqual([]);
  });

  it('adds the finalizer before the actuator runs, then writes the status with its own fields', async () => {
    api.upsert(ref, network());
    expect(await reconciler().reconcile(req, ctx())).toBeUndefined();
    expect(actuator.calls).toEqual([{ op: 'reconcile', finalizers: [FINALIZER] }]);
    expect(stored()!.status).toEqual({
      lastOperation: { type: 'Create', state: 'Succeeded', progress: 100, description: 'done', lastUpdateTime: NOW },
      observedGeneration: 1,
      size: 3,
      seen: { lastUpdateTime: NOW },
    });
  });

  it('looks again after the resync interval once succeeded, without writing an unchanged status', async () => {
    api.upsert(ref, network());
    const resyncing = reconciler({ resyncIntervalMs: 60_000 });
    expect(await resyncing.reconcile(req, ctx())).toEqual({ requeueAfter: 60_000 });
    await resyncing.reconcile(req, ctx()); // Create → Reconcile
    const writes = statusWrites();
    await clock.advance(5_000);
    expect(await resyncing.reconcile(req, ctx())).toEqual({ requeueAfter: 60_000 });
    expect(statusWrites()).toBe(writes);
    expect(stored()!.status).toMatchObject({ lastOperation: { type: 'Reconcile', state: 'Succeeded' } });
  });

  it("answers the gardenlet's operation annotation once it succeeded, and not before", async () => {
    const asked = network();
    asked.metadata!.annotations = { 'gardener.cloud/operation': 'reconcile', other: 'kept' };
    api.upsert(ref, asked);
    actuator.reconcileOutcome = { state: 'Processing', progress: 40, description: 'on its way', requeueAfter: 5_000 };
    await reconciler().reconcile(req, ctx());
    expect(stored()!.metadata?.annotations).toEqual({ 'gardener.cloud/operation': 'reconcile', other: 'kept' });
    actuator.reconcileOutcome = { state: 'Succeeded', description: 'done' };
    await reconciler().reconcile(req, ctx());
    expect(stored()!.metadata?.annotations).toEqual({ other: 'kept' });
    expect(stored()!.status).toMatchObject({ lastOperation: { state: 'Succeeded' } });
  });

  it('reports progress and looks again after the time the actuator asks for', async () => {
    api.upsert(ref, network());
    actuator.reconcileOutcome = { state: 'Processing', progress: 40, description: 'on its way', requeueAfter: 5_000 };
    expect(await reconciler().reconcile(req, ctx())).toEqual({ requeueAfter: 5_000 });
    expect(stored()!.status).toEqual({
      lastOperation: {
        type: 'Create',
        state: 'Processing',
        progress: 40,
        description: 'on its way',
        lastUpdateTime: NOW,
      },
      observedGeneration: 1,
    });
  });

  it("writes an error with its codes and fails with the actuator's error; a success clears it", async () => {
    api.upsert(ref, network());
    const error = new TerminalError('broken');
    actuator.reconcileOutcome = { state: 'Error', description: 'broken', codes: ['ERR_CONFIGURATION_PROBLEM'], error };
    await expect(reconciler().reconcile(req, ctx())).rejects.toBe(error);
    expect(stored()!.metadata?.finalizers).toEqual([FINALIZER]);
    expect(stored()!.status).toEqual({
      lastOperation: { type: 'Create', state: 'Error', progress: 50, description: 'broken', lastUpdateTime: NOW },
      lastError: { description: 'broken', codes: ['ERR_CONFIGURATION_PROBLEM'], lastUpdateTime: NOW },
      observedGeneration: 1,
    });

    actuator.reconcileOutcome = { state: 'Succeeded', description: 'done' };
    await reconciler().reconcile(req, ctx());
    expect(stored()!.status).not.toHaveProperty('lastError');
    expect(stored()!.status).toMatchObject({ lastOperation: { type: 'Create', state: 'Succeeded' } });
  });

  it('looks again after an error that may go away by itself, without failing', async () => {
    api.upsert(ref, network());
    actuator.reconcileOutcome = { state: 'Error', description: 'a machine crashes', requeueAfter: 5_000 };
    expect(await reconciler().reconcile(req, ctx())).toEqual({ requeueAfter: 5_000 });
    expect(stored()!.status).toMatchObject({
      lastOperation: { state: 'Error', description: 'a machine crashes' },
      lastError: { description: 'a machine crashes' },
    });
  });

  it("fails with the actuator's error when the error can't be written, and with the write's error otherwise", async () => {
    api.upsert(ref, network());
    const statusPath = `/apis/extensions.gardener.cloud/v1alpha1/namespaces/${NS}/networks/a/status`;
    const removeFault = api.addFault({ method: 'PATCH', pathPrefix: statusPath, fault: { kind: 'status', code: 500 } });
    const error = new Error('unreachable');
    actuator.reconcileOutcome = { state: 'Error', description: 'unreachable', error };
    await expect(reconciler().reconcile(req, ctx())).rejects.toBe(error);

    actuator.reconcileOutcome = { state: 'Succeeded', description: 'done' };
    const failed = await reconciler()
      .reconcile(req, ctx())
      .catch((e: unknown) => e);
    expect(failed).not.toBe(error);
    expect(failed).toBeInstanceOf(Error);
    removeFault();
    await reconciler().reconcile(req, ctx());
    expect(stored()!.status).toMatchObject({ lastOperation: { state: 'Succeeded' } });
  });

  it('lets an error the actuator throws through without writing the status', async () => {
    api.upsert(ref, network());
    actuator.throws = new Error('connection reset');
    await expect(reconciler().reconcile(req, ctx())).rejects.toThrow('connection reset');
    expect(stored()!.metadata?.finalizers).toEqual([FINALIZER]);
    expect(stored()!.status).toBeUndefined();
  });

  it('hands the actuator the decoded object, and leaves one that does not decode alone', async () => {
    api.upsert(ref, network());
    const undecodable = reconciler({ decode: () => ({ errors: ['spec.size: not a number'] }) });
    expect(await undecodable.reconcile(req, ctx())).toBeUndefined();
    expect(actuator.calls).toEqual([]);
    expect(stored()!.metadata?.finalizers).toBeUndefined();

    const decoding = reconciler({
      decode: (o) => ({ value: { ...(o as unknown as TestObject), spec: { type: 'test', size: 7 } } }),
    });
    let seen: number | undefined;
    actuator.reconcile = async (_ctx, object) => {
      seen = object.spec.size;
      return { state: 'Succeeded', description: 'done' };
    };
    await decoding.reconcile(req, ctx());
    expect(seen).toBe(7);
  });

  it('is true for objects of its extension type only', () => {
    expect(hasExtensionType(network(), 'test')).toBe(true);
    expect(hasExtensionType(network({ type: 'other' }), 'test')).toBe(false);
    expect(hasExtensionType({}, 'test')).toBe(false);
  });

  describe('deletion', () => {
    it('calls delete and then removes the finalizer, writing no status', async () => {
      api.upsert(ref, network({ finalizers: ['other', FINALIZER], deleting: true }));
      expect(await reconciler().reconcile(req, ctx())).toBeUndefined();
      expect(actuator.calls).toEqual([{ op: 'delete', finalizers: ['other', FINALIZER] }]);
      expect(stored()!.metadata?.finalizers).toEqual(['other']);
      expect(stored()!.status).toBeUndefined();
    });

    it('does nothing without its finalizer', async () => {
      api.upsert(ref, network({ finalizers: ['other'], deleting: true }));
      expect(await reconciler().reconcile(req, ctx())).toBeUndefined();
      expect(actuator.calls).toEqual([]);
      expect(api.requestsWhere({ method: 'PATCH' })).toEqual([]);
    });

    it('keeps the finalizer while deleting goes on, reporting Delete Processing', async () => {
      api.upsert(ref, network({ finalizers: [FINALIZER], deleting: true }));
      actuator.deleteOutcome = { state: 'Processing', progress: 50, description: 'waiting', requeueAfter: 5_000 };
      expect(await reconciler().reconcile(req, ctx())).toEqual({ requeueAfter: 5_000 });
      expect(stored()!.metadata?.finalizers).toEqual([FINALIZER]);
      expect(stored()!.status).toMatchObject({ lastOperation: { type: 'Delete', state: 'Processing', progress: 50 } });
    });

    it('keeps the finalizer on an error, reporting Delete Error, and fails with it', async () => {
      api.upsert(ref, network({ finalizers: [FINALIZER], deleting: true }));
      const error = new Error('unreachable');
      actuator.deleteOutcome = { state: 'Error', description: 'unreachable', codes: ['ERR_X'], error };
      await expect(reconciler().reconcile(req, ctx())).rejects.toBe(error);
      expect(stored()!.metadata?.finalizers).toEqual([FINALIZER]);
      expect(stored()!.status).toMatchObject({
        lastOperation: { type: 'Delete', state: 'Error', description: 'unreachable' },
        lastError: { codes: ['ERR_X'] },
      });
    });
  });
});
