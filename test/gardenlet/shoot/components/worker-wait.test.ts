import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { Shoot } from '../../../../src/apis/core/v1beta1/shoot.js';
import type { ResourceClient } from '../../../../src/runtime/client.js';
import { WORKER_POOL_LABEL } from '../../../../src/gardenlet/shoot/components/operating-system-config.js';
import { ErrorWithCodes, errorCodesOf, NotReadyError, StepError } from '../../../../src/gardenlet/component.js';
import { ShootWorker, notReadyNodes } from '../../../../src/gardenlet/shoot/components/worker.js';
import { machinePodsHealth, withWorkerProgress } from '../../../../src/gardenlet/shoot/care/machines.js';

const shoot = {
  metadata: { name: 'local', namespace: 'garden-local' },
  spec: { provider: { type: 'local', workers: [{ name: 'w', minimum: 1 }] } },
} as unknown as Shoot;

/** A client that only knows the shoot's Worker, with this status. */
const withWorker = (status: Record<string, unknown>, generation = 2) =>
  ({
    get: async () => ({ metadata: { name: 'local', generation }, status }) as KubernetesObject,
  }) as unknown as ResourceClient;

const ctx = { signal: AbortSignal.timeout(5_000) };
const MACHINE = 'pool w: 0/1 machines ready; machine machine-w-0: kubelet keeps exiting (4 times), last exited 1';

describe("waiting for the shoot's Worker", () => {
  it("fails with the provider's last error and its codes, naming the machine and its cause", async () => {
    const client = withWorker({
      observedGeneration: 2,
      lastOperation: { type: 'Create', state: 'Error', description: MACHINE },
      lastError: { description: MACHINE, codes: ['ERR_CONFIGURATION_PROBLEM'] },
    });
    const error = await new ShootWorker(client, shoot, {}).wait(ctx).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ErrorWithCodes);
    expect((error as Error).message).toBe(`Worker shoot--local--local/local reports Error: ${MACHINE}`);
    // The shoot's lastErrors take the codes from the step's cause.
    expect(errorCodesOf(new StepError('waiting for the Worker', error))).toEqual(['ERR_CONFIGURATION_PROBLEM']);
  });

  it('is not ready while the provider makes progress, its description carried along', async () => {
    const client = withWorker({
      observedGeneration: 2,
      lastOperation: { type: 'Create', state: 'Processing', description: MACHINE },
    });
    const error = await new ShootWorker(client, shoot, {}).wait(ctx).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotReadyError);
    expect((error as Error).message).toBe(`Worker: Processing: ${MACHINE}`);
  });

  it('is not ready while an error is of an older generation: the provider has not looked at the new one', async () => {
    const client = withWorker(
      {
        observedGeneration: 1,
        lastOperation: { type: 'Create', state: 'Error', description: MACHINE },
        lastError: { description: MACHINE },
      },
      2,
    );
    expect(await new ShootWorker(client, shoot, {}).wait(ctx).catch((e: unknown) => e)).toBeInstanceOf(NotReadyError);
  });
});

describe("EveryNodeReady's message", () => {
  const missing = { ok: false, reason: 'MissingNodes', message: '1 of 2 machines have a Node' };

  it('carries what the provider says of the machines while it is not done', () => {
    const worker = { status: { lastOperation: { type: 'Create', state: 'Error', description: MACHINE } } };
    expect(withWorkerProgress(missing, worker as never)).toEqual({
      ...missing,
      message: `1 of 2 machines have a Node (Worker: Error: ${MACHINE})`,
    });
  });

  it('is left alone when the Nodes are fine, or the provider is done or silent', () => {
    const done = { status: { lastOperation: { type: 'Create', state: 'Succeeded', description: 'ready' } } };
    const ok = { ok: true, reason: 'EveryNodeReady', message: 'All 2 Nodes are Ready.' };
    expect(withWorkerProgress(ok, { status: { lastOperation: { state: 'Error', description: 'x' } } } as never)).toBe(
      ok,
    );
    expect(withWorkerProgress(missing, done as never)).toBe(missing);
    expect(withWorkerProgress(missing, undefined)).toBe(missing);
  });
});

describe("the Nodes of machines that go: the provider's to delete, never the gardenlet's", () => {
  /** A shoot client with these Nodes that records deletions. */
  const shootWith = (nodes: { name: string; ready: boolean; pool?: string }[], deleted: string[]) => async () =>
    ({
      list: async () => ({
        items: nodes.map((n) => ({
          metadata: { name: n.name, ...(n.pool ? { labels: { [WORKER_POOL_LABEL]: n.pool } } : {}) },
          status: { conditions: [{ type: 'Ready', status: n.ready ? 'True' : 'False' }] },
        })),
      }),
      delete: async (_ref: unknown, name: string) => void deleted.push(name),
      close: () => {},
    }) as unknown as ResourceClient;

  it("waits for a hibernated shoot until the provider deleted its machines' Nodes, deleting none", async () => {
    const deleted: string[] = [];
    const reconciled = {
      metadata: { name: 'local', generation: 2 },
      status: { observedGeneration: 2, lastOperation: { state: 'Succeeded', description: 'ready' } },
    };
    const seed = {
      get: async (ref: { kind: string }) =>
        ref.kind === 'Worker' ? reconciled : { metadata: { name: 'kube-apiserver' }, status: { readyReplicas: 1 } },
    } as unknown as ResourceClient;
    // The machines' Nodes are those of a pool (their worker.gardener.cloud/pool label), whatever their names.
    const nodes = [
      { name: 'n-0', ready: true, pool: 'w' },
      { name: 'not-a-machine', ready: true },
    ];
    const error = await new ShootWorker(seed, shoot, {}, { shootClient: shootWith(nodes, deleted) })
      .waitHibernated(ctx)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotReadyError);
    expect((error as Error).message).toBe('waiting for the provider to delete the Nodes of the machines: n-0');
    expect(deleted).toEqual([]);
    await new ShootWorker(seed, shoot, {}, { shootClient: shootWith([], deleted) }).waitHibernated(ctx);
    await new ShootWorker(seed, shoot, {}, { shootClient: shootWith([nodes[1]!], deleted) }).waitHibernated(ctx);
  });

  it("waits for a hibernated shoot's Worker until the provider reconciled it since it was asked to", async () => {
    const patches: unknown[] = [];
    let worker: Record<string, unknown> | undefined = {
      metadata: { name: 'local', generation: 2 },
      status: { observedGeneration: 2, lastOperation: { state: 'Succeeded', description: 'ready' } },
    };
    const seed = {
      get: async (ref: { kind: string }) => (ref.kind === 'Worker' ? worker : undefined),
      mergePatch: async (_ref: unknown, _name: string, _ns: string, patch: unknown) => {
        patches.push(patch);
        worker = {
          ...worker,
          metadata: { name: 'local', generation: 2, annotations: { 'gardener.cloud/operation': 'reconcile' } },
        };
      },
    } as unknown as ResourceClient;
    const machines = new ShootWorker(seed, shoot, {}, { shootClient: shootWith([], []) });
    await machines.stopMachines(ctx);
    expect(patches).toEqual([{ metadata: { annotations: { 'gardener.cloud/operation': 'reconcile' } } }]);
    // The earlier success is not this one's.
    expect(((await machines.waitHibernated(ctx).catch((e: unknown) => e)) as Error).message).toBe(
      'Worker: not reconciled yet since it was last asked to',
    );
    worker = {
      ...worker,
      status: {
        observedGeneration: 2,
        lastOperation: { state: 'Processing', description: 'pool w: 1 machine stopping' },
      },
    };
    expect(((await machines.waitHibernated(ctx).catch((e: unknown) => e)) as Error).message).toBe(
      'Worker: Processing: pool w: 1 machine stopping',
    );
    worker = {
      metadata: { name: 'local', generation: 2 },
      status: { observedGeneration: 2, lastOperation: { state: 'Succeeded', description: 'no machines' } },
    };
    await machines.waitHibernated(ctx);
    // No Worker (hibernated before it had one): nothing to ask, nothing to wait for.
    worker = undefined;
    await machines.stopMachines(ctx);
    expect(patches).toHaveLength(1);
    await machines.waitHibernated(ctx);
  });

  it('counts the Node of a machine scaled away as not Ready while it is there, deleting none', async () => {
    const deleted: string[] = [];
    const seed = {
      get: async () => ({
        metadata: { name: 'local', generation: 2 },
        status: { observedGeneration: 2, lastOperation: { state: 'Succeeded', description: 'ready' } },
      }),
      list: async () => ({ items: [{ metadata: { name: 'machine-w-0' } }] }),
    } as unknown as ResourceClient;
    const nodes = [
      { name: 'machine-w-0', ready: true },
      { name: 'machine-w-1', ready: false },
    ];
    const error = await new ShootWorker(seed, shoot, {}, { shootClient: shootWith(nodes, deleted) })
      .wait(ctx)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotReadyError);
    expect((error as Error).message).toBe('Nodes not Ready yet: machine-w-1');
    expect(deleted).toEqual([]);
  });
});

describe('the Nodes not Ready, with what their other conditions say', () => {
  const node = (name: string, conditions: { type: string; status: string; message?: string }[]) => ({
    metadata: { name },
    status: { conditions },
  });
  const looping = {
    type: 'MachineProcessCrashLooping',
    status: 'True',
    message: 'kubelet keeps exiting (5 times), last exited with code 1: failed to load kubelet config file',
  };

  it("names a NotReady Node's True conditions besides Ready with their messages, and no healthy ones", () => {
    expect(
      notReadyNodes([
        node('machine-w-0', [
          { type: 'Ready', status: 'Unknown', message: 'Kubelet stopped posting node status.' },
          looping,
        ]),
        node('machine-w-1', [{ type: 'Ready', status: 'True' }, looping]),
        node('machine-w-2', [
          { type: 'Ready', status: 'False' },
          { type: 'MemoryPressure', status: 'False', message: 'kubelet has sufficient memory available' },
          { ...looping, status: 'False', message: 'containerd, kubelet, kube-proxy running' },
        ]),
      ]),
    ).toEqual([`machine-w-0 (MachineProcessCrashLooping: ${looping.message})`, 'machine-w-2']);
  });

  it("puts it into EveryNodeReady's message", async () => {
    const seed = { get: async () => undefined } as unknown as ResourceClient;
    const shootClient = {
      list: async () => ({
        items: [node('machine-w-0', [{ type: 'Ready', status: 'Unknown' }, looping])],
      }),
      get: async () => undefined,
      close: () => {},
    } as unknown as ResourceClient;
    const health = await machinePodsHealth(
      seed,
      shoot,
      async () => [],
      async () => shootClient,
    );
    expect(health.nodes).toEqual({
      ok: false,
      reason: 'NodeUnhealthy',
      message: `Nodes not Ready: machine-w-0 (MachineProcessCrashLooping: ${looping.message})`,
    });
  });
});
