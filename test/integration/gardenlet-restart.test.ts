/**
 * The gardenlet survives an API server restart in the middle of a reconcile and concurrent writers on its Shoot.
 * This file runs its own control plane: restarting the shared one would disturb the other test files.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import { Refs } from '../../src/apis/refs.js';
import { startControlPlane, type ControlPlane } from '../../src/localenv/control-plane.js';
import { ResourceClient } from '../../src/runtime/client.js';
import { startGardenlet, type RunningControllers } from '../support/gardenlet.js';
import { waitFor } from '../support/wait.js';

let cp: ControlPlane;
let client: ResourceClient;
let gardenlet: RunningControllers;

beforeAll(async () => {
  cp = await startControlPlane();
  client = new ResourceClient(cp.kubeConfig());
  await client.create(Refs.namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'garden-dev' } });
  await client.create(Refs.seed, {
    apiVersion: 'core.gardener.cloud/v1beta1',
    kind: 'Seed',
    metadata: { name: 'local' },
    spec: {
      networks: { ipFamilies: ['IPv6'], nodes: 'fd00:10::/64', pods: 'fd00:10:1::/56', services: 'fd00:10:2::/112' },
    },
  } as KubernetesObject);
  gardenlet = await startGardenlet(cp.kubeConfig());
}, 120_000);

afterAll(async () => {
  await gardenlet?.stop();
  await cp?.stop();
});

function shoot(name: string): KubernetesObject {
  return {
    apiVersion: 'core.gardener.cloud/v1beta1',
    kind: 'Shoot',
    metadata: { name, namespace: 'garden-dev' },
    spec: {
      seedName: 'local',
      provider: { type: 'local', workers: [{ name: 'w', machine: { type: 'local' } }] },
      networking: { type: 'calico', ipFamilies: ['IPv6'], pods: 'fd00:10:3::/56', services: 'fd00:10:4::/112' },
    },
  } as KubernetesObject;
}

async function succeeded(name: string): Promise<Shoot> {
  return waitFor(
    async () => {
      const s = await client.get<Shoot & KubernetesObject>(Refs.shoot, name, 'garden-dev');
      return s?.status?.lastOperation?.state === 'Succeeded' ? s : undefined;
    },
    { timeoutMs: 60_000, message: `shoot ${name} to succeed` },
  );
}

describe('gardenlet resilience', () => {
  it('converges to the same objects when the API server restarts in the middle of a reconcile (its watches closed)', async () => {
    await client.create(Refs.shoot, shoot('restart'));
    // Restart as soon as the reconcile has begun (the seed namespace exists), before it could finish.
    await waitFor(() => client.get(Refs.namespace, 'shoot--dev--restart'), { message: 'the seed namespace' });
    const stopped = cp.processes.find((p) => p.name === 'kube-apiserver')!;
    await cp.restartAPIServer();
    // It exited on SIGTERM by itself, the gardenlet's watches open: closed, not waited for until the SIGKILL.
    expect(stopped.exit()).toEqual({ code: 0, signal: null });
    const done = await succeeded('restart');
    expect(done.status?.lastOperation?.progress).toBe(100);
    const records = (await client.list(Refs.dnsRecord, { namespace: 'shoot--dev--restart' })).items;
    expect(records.map((r) => r.metadata?.name).sort()).toEqual(['restart-external-v6', 'restart-internal-v6']);
    const policies = (await client.list(Refs.networkPolicy, { namespace: 'shoot--dev--restart' })).items;
    expect(policies.map((p) => p.metadata?.name).sort()).toEqual([
      'allow-to-dns',
      'allow-to-private-networks',
      'allow-to-public-networks',
      'deny-all',
    ]);
    expect((await client.list(Refs.network, { namespace: 'shoot--dev--restart' })).items).toHaveLength(1);
  });

  it('keeps a concurrent writer’s changes and its own finalizer while both write the Shoot', async () => {
    await client.create(Refs.shoot, shoot('busy'));
    // Another client labels the Shoot over and over while the gardenlet adds its finalizer and writes status.
    let writes = 0;
    let stop = false;
    const writer = (async () => {
      while (!stop && writes < 200) {
        await client.mergePatch(Refs.shoot, 'busy', 'garden-dev', {
          metadata: { labels: { touched: String(++writes) } },
        });
      }
    })();
    const done = await succeeded('busy');
    stop = true;
    await writer;
    const final = (await client.get<Shoot & KubernetesObject>(Refs.shoot, 'busy', 'garden-dev'))!;
    expect(done.metadata.finalizers).toContain('gardener');
    expect(final.metadata.finalizers).toContain('gardener');
    expect(final.metadata.labels?.touched).toBe(String(writes));
    expect(writes).toBeGreaterThan(0);
  });
});
