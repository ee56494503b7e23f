/**
 * The project's CRDs in a real kube-apiserver (shared by the integration files, see test/support/global-setup.ts):
 * accepted, IPv6 objects round-trip through server-side apply, unknown fields are refused or pruned as the schemas
 * say, status goes through the status subresource, finalizers hold deletion, watches deliver events in order. Each
 * test uses its own namespace.
 */
import {
  ApiextensionsV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  Watch,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { FIELD_MANAGER, readCRDs } from '../../src/localenv/crds.js';
import { crdDir } from '../../src/system/project.js';
import { example, kubeConfig, newTestNamespace, statusCode, uniqueSuffix } from '../support/kube.js';
import { waitFor } from '../support/wait.js';

const TEST_MANAGER = 'gardener-ipv6-integration-test';

type Obj = KubernetesObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> };

const CORE = { group: 'core.gardener.cloud', version: 'v1beta1' };
const EXTENSIONS = { group: 'extensions.gardener.cloud', version: 'v1alpha1' };

/** Server-side apply, as controllers and `kubectl apply --server-side` do it. */
async function apply<T extends Obj>(object: T): Promise<T> {
  return KubernetesObjectApi.makeApiClient(kubeConfig()).patch(
    object,
    undefined,
    undefined,
    TEST_MANAGER,
    true,
    PatchStrategy.ServerSideApply,
  );
}

async function read<T extends Obj>(object: Obj): Promise<T> {
  return KubernetesObjectApi.makeApiClient(kubeConfig()).read<T>({
    apiVersion: object.apiVersion!,
    kind: object.kind!,
    metadata: {
      name: object.metadata!.name!,
      ...(object.metadata!.namespace ? { namespace: object.metadata!.namespace } : {}),
    },
  });
}

function applyManager(object: Obj): string[] {
  return (object.metadata?.managedFields ?? []).filter((f) => f.operation === 'Apply').map((f) => f.manager!);
}

describe('CRDs in a real API server', () => {
  it('accepts every CRD of the chart and serves them Established', async () => {
    const expected = (await readCRDs(crdDir())).map((crd) => crd.metadata!.name!);
    expect(expected).toEqual(
      expect.arrayContaining([
        'shoots.core.gardener.cloud',
        'seeds.core.gardener.cloud',
        'cloudprofiles.core.gardener.cloud',
        'networks.extensions.gardener.cloud',
        'dnsrecords.extensions.gardener.cloud',
        'workers.extensions.gardener.cloud',
      ]),
    );
    const ext = kubeConfig().makeApiClient(ApiextensionsV1Api);
    for (const name of expected) {
      const crd = await ext.readCustomResourceDefinition({ name });
      expect(crd.status?.conditions?.find((c) => c.type === 'Established')?.status, name).toBe('True');
      expect(crd.metadata?.managedFields?.map((f) => f.manager)).toContain(FIELD_MANAGER);
    }
  });

  it('creates and reads back an IPv6 Shoot with server-side apply', async () => {
    const namespace = await newTestNamespace('garden');
    const shoot = example<Obj>('shoot-ipv6.yaml');
    shoot.metadata = { name: 'ipv6', namespace };

    const created = await apply(shoot);
    expect(created.metadata?.uid).toBeTruthy();
    const back = await read<Obj>(shoot);
    expect(back.spec?.networking).toMatchObject({ ipFamilies: ['IPv6'], nodes: 'fd00:10:1:100::/56', type: 'calico' });
    expect(back.spec?.networking).toMatchObject({ providerConfig: { ipv6: { sourceNATEnabled: true } } });
    expect(applyManager(back)).toContain(TEST_MANAGER);

    // A second apply with a change is an update of the same object, owned by the same manager.
    const changed = structuredClone(shoot);
    (changed.spec!.networking as Record<string, unknown>).nodes = 'fd00:10:1:200::/56';
    const updated = await apply(changed);
    expect(updated.metadata?.uid).toBe(created.metadata?.uid);
    expect((await read<Obj>(shoot)).spec?.networking).toMatchObject({ nodes: 'fd00:10:1:200::/56' });
  });

  it('creates and reads back an IPv6 Seed (cluster-scoped) with server-side apply', async () => {
    const seed = example<Obj>('seed-ipv6.yaml');
    seed.metadata = { name: `ipv6-${uniqueSuffix()}` };
    try {
      await apply(seed);
      const back = await read<Obj>(seed);
      expect(back.metadata?.namespace).toBeUndefined();
      expect(back.spec?.networks).toMatchObject({
        ipFamilies: ['IPv6'],
        nodes: 'fd00:10::/64',
        pods: 'fd00:10:1::/56',
        services: 'fd00:10:2::/112',
        shootDefaults: { pods: 'fd00:10:3::/56', services: 'fd00:10:4::/112' },
        blockCIDRs: ['fd00:ec2::254/128'],
      });
      expect(applyManager(back)).toContain(TEST_MANAGER);
    } finally {
      await KubernetesObjectApi.makeApiClient(kubeConfig()).delete(seed);
    }
  });

  it('creates and reads back an IPv6 Network and an AAAA DNSRecord with server-side apply', async () => {
    const namespace = await newTestNamespace('shoot');
    const network = example<Obj>('network-ipv6.yaml');
    network.metadata = { name: 'local', namespace };
    const record = example<Obj>('dnsrecord-aaaa.yaml');
    record.metadata = { name: 'api-external', namespace };

    await apply(network);
    await apply(record);
    expect((await read<Obj>(network)).spec).toMatchObject({
      podCIDR: 'fd00:10:3::/56',
      serviceCIDR: 'fd00:10:4::/112',
      ipFamilies: ['IPv6'],
    });
    expect((await read<Obj>(record)).spec).toMatchObject({ recordType: 'AAAA', values: ['::1'], ttl: 120 });
  });

  it('creates and reads back a Worker: int-or-strings, quantities and base64 as Gardener writes them', async () => {
    const namespace = await newTestNamespace('shoot');
    const worker = example<Obj>('worker-local.yaml');
    worker.metadata = { name: 'local', namespace };
    const pool = (worker.spec!.pools as Record<string, unknown>[])[0]!;
    pool.maxSurge = '25%';
    worker.spec!.sshPublicKey = Buffer.from('ssh-ed25519 AAAA').toString('base64');

    await apply(worker);
    const back = await read<Obj>(worker);
    expect(back.spec).toMatchObject({ type: 'local', region: 'local', sshPublicKey: worker.spec!.sshPublicKey });
    expect((back.spec!.pools as unknown[])[0]).toMatchObject({
      maxSurge: '25%',
      maxUnavailable: 0,
      nodeTemplate: { capacity: { cpu: 2, memory: '4Gi' } },
      userDataSecretRef: { name: 'worker-local-userdata', key: 'userData' },
    });

    // The CRD's `format: byte` is checked by the API server, as Gardener's is.
    const invalid = structuredClone(worker);
    invalid.spec!.sshPublicKey = 'not base64!';
    await expect(apply(invalid)).rejects.toMatchObject({ code: 422 });
  });

  it('refuses unknown Shoot fields under strict field validation, drops them otherwise, keeps raw extensions', async () => {
    const namespace = await newTestNamespace('garden');
    const custom = kubeConfig().makeApiClient(CustomObjectsApi);
    const shoot = example<Obj>('shoot-ipv6.yaml');
    shoot.metadata = { name: 'typos', namespace };
    const networking = shoot.spec!.networking as Record<string, unknown>;
    networking.ipFamily = ['IPv6'];
    const worker = (shoot.spec!.provider as { workers: Record<string, unknown>[] }).workers[0]!;
    worker.minimun = 2;
    // A raw extension: its content is its extension's, whatever fields it has.
    const providerConfig = { ...(networking.providerConfig as object), futureField: { nested: [1, 'two'] } };
    networking.providerConfig = providerConfig;
    const create = (fieldValidation: 'Strict' | 'Ignore') =>
      custom.createNamespacedCustomObject({ ...CORE, namespace, plural: 'shoots', body: shoot, fieldValidation });

    // As kubectl sends it (--validate=strict, its default): the whole path of each unknown field.
    const refused: unknown = await create('Strict').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(statusCode(refused)).toBe(400);
    const message = (JSON.parse((refused as { body: string }).body) as { message: string }).message;
    expect(message).toContain('unknown field "spec.networking.ipFamily"');
    expect(message).toContain('unknown field "spec.provider.workers[0].minimun"');
    expect(message).not.toContain('futureField');

    // Without strict validation the API server prunes them, and keeps the raw extension as it is.
    const stored = (await create('Ignore')) as Obj;
    const storedNetworking = stored.spec!.networking as Record<string, unknown>;
    expect(storedNetworking).not.toHaveProperty('ipFamily');
    expect((stored.spec!.provider as { workers: Record<string, unknown>[] }).workers[0]).not.toHaveProperty('minimun');
    expect(storedNetworking.providerConfig).toEqual(providerConfig);
    expect(storedNetworking.ipFamilies).toEqual(['IPv6']);
  });

  it('refuses unknown CloudProfile fields under strict field validation, keeps its providerConfig', async () => {
    const custom = kubeConfig().makeApiClient(CustomObjectsApi);
    const profile = example<Obj>('cloudprofile-local.yaml');
    profile.metadata = { name: `typos-${uniqueSuffix()}` };
    const machineType = (profile.spec!.machineTypes as Record<string, unknown>[])[0]!;
    machineType.cpus = '2';
    const providerConfig = { apiVersion: 'local.provider.extensions.gardener.cloud/v1alpha1', anything: [1, 'two'] };
    profile.spec!.providerConfig = providerConfig;
    const create = (fieldValidation: 'Strict' | 'Ignore') =>
      custom.createClusterCustomObject({ ...CORE, plural: 'cloudprofiles', body: profile, fieldValidation });

    const refused: unknown = await create('Strict').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(statusCode(refused)).toBe(400);
    const message = (JSON.parse((refused as { body: string }).body) as { message: string }).message;
    expect(message).toContain('unknown field "spec.machineTypes[0].cpus"');
    expect(message).not.toContain('anything');

    const stored = (await create('Ignore')) as Obj;
    try {
      expect((stored.spec!.machineTypes as Record<string, unknown>[])[0]).not.toHaveProperty('cpus');
      expect(stored.spec!.providerConfig).toEqual(providerConfig);
      expect(stored.spec!.kubernetes).toEqual(profile.spec!.kubernetes);
    } finally {
      await custom.deleteClusterCustomObject({ ...CORE, plural: 'cloudprofiles', name: profile.metadata.name! });
    }
  });

  it('updates status only through the status subresource', async () => {
    const namespace = await newTestNamespace('garden');
    const shoot = example<Obj>('shoot-ipv6.yaml');
    shoot.metadata = { name: 'status', namespace };
    const created = await apply(shoot);
    const custom = kubeConfig().makeApiClient(CustomObjectsApi);
    const ref = { ...CORE, namespace, plural: 'shoots', name: 'status' };
    const lastOperation = {
      type: 'Create',
      state: 'Succeeded',
      progress: 100,
      description: 'Shoot cluster has been successfully reconciled.',
      lastUpdateTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    };

    // The main resource ignores status ...
    await apply({ ...shoot, status: { lastOperation } });
    expect((await read<Obj>(shoot)).status?.lastOperation).toBeUndefined();

    // ... the status subresource takes it, and ignores spec changes.
    const current = (await custom.getNamespacedCustomObject(ref)) as Obj;
    const body = structuredClone(current);
    body.status = { lastOperation, observedGeneration: current.metadata!.generation };
    (body.spec!.networking as Record<string, unknown>).nodes = 'fd00:10:1:300::/56';
    const updated = (await custom.replaceNamespacedCustomObjectStatus({ ...ref, body })) as Obj;
    expect(updated.status).toMatchObject({ lastOperation, observedGeneration: created.metadata!.generation });
    expect(updated.spec?.networking).toMatchObject({ nodes: 'fd00:10:1:100::/56' });
    expect(updated.metadata?.generation).toBe(created.metadata?.generation);
    expect(Number(updated.metadata?.resourceVersion)).toBeGreaterThan(Number(current.metadata?.resourceVersion));
  });

  it('keeps an object with a finalizer until the finalizer is removed', async () => {
    const namespace = await newTestNamespace('shoot');
    const finalizer = 'gardener-ipv6.test/keep';
    const network = example<Obj>('network-ipv6.yaml');
    network.metadata = { name: 'finalized', namespace, finalizers: [finalizer] };
    await apply(network);
    const custom = kubeConfig().makeApiClient(CustomObjectsApi);
    const ref = { ...EXTENSIONS, namespace, plural: 'networks', name: 'finalized' };

    await custom.deleteNamespacedCustomObject(ref);
    const terminating = (await custom.getNamespacedCustomObject(ref)) as Obj;
    expect(terminating.metadata?.deletionTimestamp).toBeTruthy();
    expect(terminating.metadata?.finalizers).toEqual([finalizer]);

    // Removing the finalizer (JSON patch, guarded by a test op) lets the deletion finish.
    await custom.patchNamespacedCustomObject({
      ...ref,
      body: [
        { op: 'test', path: '/metadata/finalizers/0', value: finalizer },
        { op: 'remove', path: '/metadata/finalizers' },
      ],
    });
    await waitFor(
      async () => {
        try {
          await custom.getNamespacedCustomObject(ref);
          return false;
        } catch (e) {
          if (statusCode(e) === 404) return true;
          throw e;
        }
      },
      { message: 'the Network to be gone after its finalizer was removed' },
    );
  });

  it('delivers watch events in order: ADDED, MODIFIED, DELETED', async () => {
    const namespace = await newTestNamespace('shoot');
    const kc = kubeConfig();
    const custom = kc.makeApiClient(CustomObjectsApi);
    const list = (await custom.listNamespacedCustomObject({ ...EXTENSIONS, namespace, plural: 'dnsrecords' })) as {
      metadata: { resourceVersion: string };
    };

    const events: { type: string; name: string; ttl: unknown; resourceVersion: string }[] = [];
    let watchError: unknown;
    const controller = await new Watch(kc).watch(
      `/apis/${EXTENSIONS.group}/${EXTENSIONS.version}/namespaces/${namespace}/dnsrecords`,
      { resourceVersion: list.metadata.resourceVersion, allowWatchBookmarks: true },
      (type, object: Obj) => {
        if (type === 'BOOKMARK') return;
        events.push({
          type,
          name: object.metadata!.name!,
          ttl: object.spec?.ttl,
          resourceVersion: object.metadata!.resourceVersion!,
        });
      },
      (err) => (watchError = err),
    );
    try {
      const record = example<Obj>('dnsrecord-aaaa.yaml');
      record.metadata = { name: 'watched', namespace };
      await apply(record);
      await apply({ ...record, spec: { ...record.spec, ttl: 300 } });
      await custom.deleteNamespacedCustomObject({ ...EXTENSIONS, namespace, plural: 'dnsrecords', name: 'watched' });

      await waitFor(() => events.length >= 3 || watchError !== undefined, { message: 'three watch events' });
      expect(watchError).toBeUndefined();
      expect(events.map((e) => [e.type, e.name, e.ttl])).toEqual([
        ['ADDED', 'watched', 120],
        ['MODIFIED', 'watched', 300],
        ['DELETED', 'watched', 300],
      ]);
      const versions = events.map((e) => BigInt(e.resourceVersion));
      expect(versions[0]! < versions[1]! && versions[1]! < versions[2]!).toBe(true);
    } finally {
      controller.abort();
    }
  });
});
