/**
 * Reconcile throughput: N IPv6 Shoots created up front, then the time until the gardenlet has taken all of them to
 * Succeeded; next to it, the time the same API server needs for the same number of writes from a plain client at
 * the same concurrency (the baseline). The ratio says whether the controllers or the server are the bottleneck.
 */
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import type { Shoot } from '../src/apis/core/v1beta1/shoot.js';
import { localDNSProvider } from '../src/gardenlet/dns-provider.js';
import { addGardenletControllers } from '../src/gardenlet/gardenlet.js';
import { Refs } from '../src/gardenlet/resources.js';
import { startControlPlane } from '../src/localenv/control-plane.js';
import { ResourceClient, type CallOptions, type ResourceRef } from '../src/runtime/client.js';
import { silentLogger } from '../src/runtime/log.js';
import { Manager } from '../src/runtime/manager.js';

/** Reconciles (and plain writers) running at once. */
const CONCURRENCY = 8;

/** Counts the writes that go through it. */
class CountingClient extends ResourceClient {
  writes = 0;
  override async apply<T extends KubernetesObject>(ref: ResourceRef, obj: T, opts: CallOptions & { fieldManager: string }) {
    this.writes++;
    return super.apply(ref, obj, opts);
  }
  override async create<T extends KubernetesObject>(ref: ResourceRef, obj: T, opts?: CallOptions) {
    this.writes++;
    return super.create(ref, obj, opts);
  }
  override async update<T extends KubernetesObject>(ref: ResourceRef, obj: T, opts?: CallOptions) {
    this.writes++;
    return super.update(ref, obj, opts);
  }
  override async mergePatch<T extends KubernetesObject = KubernetesObject>(
    ref: ResourceRef,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    opts?: CallOptions & { subresource?: 'status' },
  ): Promise<T> {
    this.writes++;
    return super.mergePatch<T>(ref, name, namespace, patch, opts);
  }
  override async delete(ref: ResourceRef, name: string, namespace?: string, opts?: CallOptions) {
    this.writes++;
    return super.delete(ref, name, namespace, opts);
  }
}

async function pool<T>(items: readonly T[], concurrency: number, run: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await run(items[next++]!);
    }),
  );
}

export interface ReconcileBenchResult {
  shoots: number;
  writes: number;
  reconcileSeconds: number;
  baselineSeconds: number;
}

async function benchOnce(client: ResourceClient, kc: KubeConfig, shoots: number, round: number): Promise<ReconcileBenchResult> {
  const project = `bench${round}`;
  const namespace = `garden-${project}`;
  await client.create(Refs.namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  const seedName = `bench-seed-${round}`;
  await client.create(Refs.seed, {
    apiVersion: 'core.gardener.cloud/v1beta1',
    kind: 'Seed',
    metadata: { name: seedName },
    spec: {
      provider: { type: 'local', region: 'local' },
      networks: { ipFamilies: ['IPv6'], nodes: 'fd00:10::/64', pods: 'fd00:10:1::/56', services: 'fd00:10:2::/112' },
    },
  } as KubernetesObject);
  const names = Array.from({ length: shoots }, (_, i) => `s${i}`);
  await pool(names, CONCURRENCY, (name) =>
    client.create(Refs.shoot, {
      apiVersion: 'core.gardener.cloud/v1beta1',
      kind: 'Shoot',
      metadata: { name, namespace },
      spec: {
        seedName,
        provider: { type: 'local', workers: [{ name: 'w', machine: { type: 'local' } }] },
        networking: { type: 'calico', ipFamilies: ['IPv6'], pods: 'fd00:10:3::/56', services: 'fd00:10:4::/112' },
      },
    } as KubernetesObject),
  );

  const counting = new CountingClient(kc);
  const manager = new Manager({ kubeConfig: kc, client: counting, logger: silentLogger(), gracefulShutdownMs: 5_000 });
  addGardenletControllers(manager, { dns: localDNSProvider(), seedName, waitForExtensions: false, workers: CONCURRENCY });
  const started = performance.now();
  await manager.start();
  for (;;) {
    const { items } = await client.list<Shoot & KubernetesObject>(Refs.shoot, { namespace });
    if (items.filter((s) => s.status?.lastOperation?.state === 'Succeeded').length === shoots) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const reconcileSeconds = (performance.now() - started) / 1000;
  await manager.stop();
  const writes = counting.writes;

  // Baseline: as many server-side applies of small ConfigMaps, at the same concurrency.
  const baselineNamespace = `bench-raw-${round}`;
  await client.create(Refs.namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: baselineNamespace } });
  const configMaps = Array.from({ length: writes }, (_, i) => `cm${i}`);
  const configMapRef: ResourceRef = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };
  const baselineStarted = performance.now();
  await pool(configMaps, CONCURRENCY, (name) =>
    client.apply(
      configMapRef,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: baselineNamespace }, data: { family: 'IPv6' } },
      { fieldManager: 'bench', force: true },
    ),
  );
  const baselineSeconds = (performance.now() - baselineStarted) / 1000;
  return { shoots, writes, reconcileSeconds, baselineSeconds };
}

export async function runReconcileBench(sizes: readonly number[]): Promise<ReconcileBenchResult[]> {
  const cp = await startControlPlane({ log: () => {} });
  try {
    const kc = cp.kubeConfig();
    const client = new ResourceClient(kc);
    const results: ReconcileBenchResult[] = [];
    for (const [round, size] of sizes.entries()) results.push(await benchOnce(client, kc, size, round));
    return results;
  } finally {
    await cp.stop();
  }
}
