/**
 * Reconcile throughput: N IPv6 Shoots created up front, then the time until the gardenlet has taken all of them to
 * Succeeded; next to it, the time the same API server needs for the same number of writes from a plain client at
 * the same concurrency: the very same writes replayed into a copy of the objects (what the server itself costs),
 * and as many small ConfigMap applies. The ratios say whether the controllers or the server are the bottleneck.
 */
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import type { Shoot } from '../src/apis/core/v1beta1/shoot.js';
import { localDNSProvider } from '../src/gardenlet/dns-provider.js';
import { addGardenletControllers } from '../src/gardenlet/gardenlet.js';
import { addProviderLocalControllers } from '../src/extensions/provider-local/controller.js';
import { Refs, type ResourceRef } from '../src/apis/refs.js';
import { startControlPlane } from '../src/localenv/control-plane.js';
import { ResourceClient, type CallOptions } from '../src/runtime/client.js';
import { silentLogger } from '../src/runtime/log.js';
import { Manager } from '../src/runtime/manager.js';

/** Reconciles (and plain writers) running at once. */
const CONCURRENCY = 8;

/** One write the controllers made, to replay it from a plain client. */
interface RecordedWrite {
  readonly method: 'apply' | 'create' | 'update' | 'mergePatch' | 'delete';
  readonly ref: ResourceRef;
  readonly name: string;
  readonly namespace: string | undefined;
  readonly body?: unknown;
  readonly subresource?: 'status';
}

/** Counts and records the writes that go through it. */
class RecordingClient extends ResourceClient {
  readonly writes: RecordedWrite[] = [];
  override async apply<T extends KubernetesObject>(
    ref: ResourceRef,
    obj: T,
    opts: CallOptions & { fieldManager: string },
  ) {
    this.writes.push({
      method: 'apply',
      ref,
      name: obj.metadata?.name ?? '',
      namespace: obj.metadata?.namespace,
      body: obj,
    });
    return super.apply(ref, obj, opts);
  }
  override async create<T extends KubernetesObject>(ref: ResourceRef, obj: T, opts?: CallOptions) {
    this.writes.push({
      method: 'create',
      ref,
      name: obj.metadata?.name ?? '',
      namespace: obj.metadata?.namespace,
      body: obj,
    });
    return super.create(ref, obj, opts);
  }
  override async update<T extends KubernetesObject>(ref: ResourceRef, obj: T, opts?: CallOptions) {
    this.writes.push({
      method: 'update',
      ref,
      name: obj.metadata?.name ?? '',
      namespace: obj.metadata?.namespace,
      body: obj,
    });
    return super.update(ref, obj, opts);
  }
  override async mergePatch<T extends KubernetesObject = KubernetesObject>(
    ref: ResourceRef,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    opts?: CallOptions & { subresource?: 'status' },
  ): Promise<T> {
    this.writes.push({
      method: 'mergePatch',
      ref,
      name,
      namespace,
      body: patch,
      ...(opts?.subresource ? { subresource: opts.subresource } : {}),
    });
    return super.mergePatch<T>(ref, name, namespace, patch, opts);
  }
  override async delete(ref: ResourceRef, name: string, namespace?: string, opts?: CallOptions) {
    this.writes.push({ method: 'delete', ref, name, namespace });
    return super.delete(ref, name, namespace, opts);
  }
}

/** The same write aimed at the replay copy: every name carrying the round's token gets the replay token. */
function retarget(write: RecordedWrite, from: string, to: string): RecordedWrite {
  const json = JSON.stringify(write).split(from).join(to);
  const copy = JSON.parse(json) as RecordedWrite;
  // A merge patch that carried a resourceVersion precondition (finalizers) would conflict on the copy.
  const body = copy.body as { metadata?: { resourceVersion?: unknown } } | undefined;
  if (copy.method === 'mergePatch' && body?.metadata) delete body.metadata.resourceVersion;
  return copy;
}

async function replay(client: ResourceClient, write: RecordedWrite): Promise<unknown> {
  switch (write.method) {
    case 'apply':
      return client.apply(write.ref, write.body as KubernetesObject, { fieldManager: 'bench-replay', force: true });
    case 'create':
      return client.create(write.ref, write.body as KubernetesObject).catch(() => undefined);
    case 'update':
      return client.update(write.ref, write.body as KubernetesObject).catch(() => undefined);
    case 'mergePatch':
      return client.mergePatch(
        write.ref,
        write.name,
        write.namespace,
        write.body,
        write.subresource ? { subresource: write.subresource } : {},
      );
    case 'delete':
      return client.delete(write.ref, write.name, write.namespace);
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
  /** The same writes, replayed by a plain client into a copy of the objects. */
  replaySeconds: number;
  /** As many server-side applies of small ConfigMaps. */
  configMapSeconds: number;
}

async function createShootsAndSeed(client: ResourceClient, token: string, shoots: number): Promise<string> {
  const namespace = `garden-${token}`;
  await client.create(Refs.namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  await client.create(Refs.seed, {
    apiVersion: 'core.gardener.cloud/v1beta1',
    kind: 'Seed',
    metadata: { name: `seed-${token}` },
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
        seedName: `seed-${token}`,
        provider: { type: 'local', workers: [{ name: 'w', machine: { type: 'local' } }] },
        networking: { type: 'calico', ipFamilies: ['IPv6'], pods: 'fd00:10:3::/56', services: 'fd00:10:4::/112' },
      },
    } as KubernetesObject),
  );
  return namespace;
}

/** The shoot a write is about (its seed namespace or its own name), or '' for the seed's writes. */
function shootOf(write: RecordedWrite): string {
  // The seed namespace itself, or an object in it.
  const namespace = write.ref.kind === 'Namespace' ? write.name : write.namespace;
  const seedNamespace = /^shoot--[^-]+--(.+)$/.exec(namespace ?? '');
  if (seedNamespace) return seedNamespace[1]!;
  return write.ref.kind === 'Shoot' ? write.name : '';
}

async function benchOnce(
  client: ResourceClient,
  kc: KubeConfig,
  shoots: number,
  round: number,
): Promise<ReconcileBenchResult> {
  // Every name of this round carries the token, so the replay can aim the same writes at a copy.
  const token = `b${round}x`;
  const replayToken = `b${round}y`;
  const namespace = await createShootsAndSeed(client, token, shoots);
  await createShootsAndSeed(client, replayToken, shoots);

  const recording = new RecordingClient(kc);
  const manager = new Manager({ kubeConfig: kc, client: recording, logger: silentLogger(), gracefulShutdownMs: 5_000 });
  addGardenletControllers(manager, {
    dns: localDNSProvider(),
    seedName: `seed-${token}`,
    waitForExtensions: false,
    workers: CONCURRENCY,
  });
  addProviderLocalControllers(manager, { workers: CONCURRENCY });
  const started = performance.now();
  await manager.start();
  for (;;) {
    const { items } = await client.list<Shoot & KubernetesObject>(Refs.shoot, { namespace });
    if (items.filter((s) => s.status?.lastOperation?.state === 'Succeeded').length === shoots) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const reconcileSeconds = (performance.now() - started) / 1000;
  await manager.stop();
  const writes = recording.writes.length;

  // Baseline 1: the same writes from a plain client, each shoot's in their order, as many shoots at once as there
  // were workers.
  const byShoot = new Map<string, RecordedWrite[]>();
  for (const write of recording.writes) {
    const key = shootOf(write);
    byShoot.set(key, [...(byShoot.get(key) ?? []), retarget(write, token, replayToken)]);
  }
  const replayStarted = performance.now();
  await pool([...byShoot.values()], CONCURRENCY, async (group) => {
    for (const write of group) await replay(client, write);
  });
  const replaySeconds = (performance.now() - replayStarted) / 1000;

  // Baseline 2: as many server-side applies of small ConfigMaps, at the same concurrency.
  const configMapNamespace = `bench-raw-${round}`;
  await client.create(Refs.namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: configMapNamespace } });
  const configMaps = Array.from({ length: writes }, (_, i) => `cm${i}`);
  const configMapRef: ResourceRef = {
    group: '',
    version: 'v1',
    plural: 'configmaps',
    kind: 'ConfigMap',
    namespaced: true,
  };
  const configMapStarted = performance.now();
  await pool(configMaps, CONCURRENCY, (name) =>
    client.apply(
      configMapRef,
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: configMapNamespace },
        data: { family: 'IPv6' },
      },
      { fieldManager: 'bench', force: true },
    ),
  );
  const configMapSeconds = (performance.now() - configMapStarted) / 1000;
  return { shoots, writes, reconcileSeconds, replaySeconds, configMapSeconds };
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
