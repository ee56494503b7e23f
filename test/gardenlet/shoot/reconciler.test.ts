/**
 * The shoot's reconcile and delete flows on a fake API server and a fake clock (objects-only: no control plane, no
 * Worker): what each flow writes, what a task not ready yet or failing reports, and the order deletion keeps.
 */
import type { KubernetesObject, V1Service } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CloudProfile } from '../../../src/apis/core/v1beta1/cloudprofile.js';
import type { Shoot } from '../../../src/apis/core/v1beta1/shoot.js';
import type { Cluster } from '../../../src/apis/extensions/v1alpha1/cluster.js';
import { localCloudProfile } from '../../../src/extensions/provider-local/cloudprofile.js';
import { SHOOT_FINALIZER } from '../../../src/apis/core/v1beta1/names.js';
import { Refs } from '../../../src/apis/refs.js';
import { localDNSProvider } from '../../../src/gardenlet/dns-provider.js';
import { LOAD_BALANCER_WAIT_MS } from '../../../src/gardenlet/shoot/components/apiserver-service.js';
import { ShootReconciler, type ShootReader } from '../../../src/gardenlet/shoot/reconciler.js';
import { ResourceClient } from '../../../src/runtime/client.js';
import { FakeClock } from '../../../src/runtime/clock.js';
import { silentLogger } from '../../../src/runtime/log.js';
import { ipv6ShootObject, seedIPv6Networks, seedObject } from '../../fixtures/objects.js';
import { FakeApiServer } from '../../runtime/fake-apiserver.js';
import { waitFor } from '../../support/wait.js';

const SEED_NAMESPACE = 'shoot--dev--crazy-botany';
const ctx = () => ({ signal: new AbortController().signal, logger: silentLogger() });
const req = { name: 'crazy-botany', namespace: 'garden-dev' };

let fake: FakeApiServer;
let client: ResourceClient;
let clock: FakeClock;
let reconciler: ShootReconciler;

/** Reads from the fake's store, as the informer caches would: no request, no real time. */
function storeReader(): ShootReader {
  const find = <T extends KubernetesObject>(items: T[], name: string, namespace?: string) =>
    items.find((o) => o.metadata?.name === name && (namespace === undefined || o.metadata?.namespace === namespace));
  return {
    shoot: async (name, namespace) => find(fake.objects(Refs.shoot), name, namespace),
    seed: async (name) => find(fake.objects(Refs.seed), name),
    cloudProfile: async (name) => find(fake.objects(Refs.cloudProfile), name),
    service: async (name, namespace) => find(fake.objects<V1Service & KubernetesObject>(Refs.service), name, namespace),
  };
}

const shoot = () => fake.objects<Shoot & KubernetesObject>(Refs.shoot)[0]!;
const names = (ref: Parameters<FakeApiServer['objects']>[0]) =>
  fake
    .objects(ref)
    .filter((o) => o.metadata?.namespace === SEED_NAMESPACE || ref.namespaced === false)
    .map((o) => o.metadata?.name)
    .sort();

/** The API server's Service with a load-balancer address, as provider-local's service controller sets it. */
function setLoadBalancerAddress(): void {
  const service = fake.objects(Refs.service).find((s) => s.metadata?.namespace === SEED_NAMESPACE)!;
  fake.upsert(Refs.service, { ...service, status: { loadBalancer: { ingress: [{ ip: 'fd00:ff::10' }] } } });
}

beforeEach(async () => {
  fake = await FakeApiServer.start();
  client = new ResourceClient(fake.kubeConfig());
  clock = new FakeClock();
  fake.upsert(Refs.seed, seedObject({}, { name: 'local', base: seedIPv6Networks }) as KubernetesObject);
  fake.upsert(Refs.shoot, {
    ...ipv6ShootObject({ seedName: 'local' }),
    metadata: { name: 'crazy-botany', namespace: 'garden-dev', uid: 'uid-1', generation: 1 },
  } as KubernetesObject);
  reconciler = new ShootReconciler({
    client,
    reader: storeReader(),
    dns: localDNSProvider(),
    waitForExtensions: false,
    clock,
    // Each wait reported at once: these tests follow the reconcile one requeue at a time.
    notReadyRetryMs: 0,
  });
});

afterEach(async () => {
  client.close();
  await fake.close();
});

describe('the shoot reconcile flow', () => {
  it('writes what needs no load balancer address while it waits for one, then reports the wait', async () => {
    const reconciling = reconciler.reconcile(req, ctx());
    // The load balancer wait polls on the clock: once it sleeps, its whole bound passes.
    await waitFor(() => clock.pendingTimers() > 0, { timeoutMs: 10_000, intervalMs: 5, message: 'the wait' });
    await clock.advance(LOAD_BALANCER_WAIT_MS + 100);
    expect(await reconciling).toEqual({ requeueAfter: 1_000 });

    expect(shoot().metadata?.finalizers).toContain(SHOOT_FINALIZER);
    const op = shoot().status?.lastOperation;
    expect(op).toMatchObject({ type: 'Create', state: 'Processing' });
    expect(op?.description).toBe(
      `waiting for the kube-apiserver load balancer: service ${SEED_NAMESPACE}/kube-apiserver has no IPv6 load ` +
        'balancer address yet',
    );
    expect(op?.progress).toBeGreaterThan(0);
    expect(op?.progress).toBeLessThan(100);
    expect(shoot().status?.lastErrors).toBeUndefined();
    // Everything that doesn't need the address is there; the DNS records are not.
    expect(names(Refs.namespace)).toContain(SEED_NAMESPACE);
    expect(names(Refs.network)).toEqual(['crazy-botany']);
    expect(names(Refs.operatingSystemConfig).length).toBeGreaterThan(0);
    expect(names(Refs.networkPolicy).length).toBeGreaterThan(0);
    expect(names(Refs.dnsRecord)).toEqual([]);
    expect(shoot().status?.networking?.pods).toEqual([shoot().spec.networking?.pods]);
  });

  it('succeeds once the address is there: AAAA records for it, the networks in the status', async () => {
    const first = reconciler.reconcile(req, ctx());
    await waitFor(() => clock.pendingTimers() > 0, { timeoutMs: 10_000, intervalMs: 5, message: 'the wait' });
    setLoadBalancerAddress();
    await clock.advance(LOAD_BALANCER_WAIT_MS);
    expect(await first).toEqual({ requeueAfter: 60 * 60_000 });

    expect(shoot().status?.lastOperation).toMatchObject({ type: 'Create', state: 'Succeeded', progress: 100 });
    const records = fake.objects<KubernetesObject & { spec: { recordType: string; values: string[] } }>(Refs.dnsRecord);
    expect(records.map((r) => `${r.spec.recordType} ${r.spec.values.join(',')}`)).toEqual([
      'AAAA fd00:ff::10',
      'AAAA fd00:ff::10',
    ]);
    // Up to date: the next request runs nothing until the sync period is over.
    const requests = fake.requests.length;
    expect(await reconciler.reconcile(req, ctx())).toEqual({ requeueAfter: 60 * 60_000 });
    expect(fake.requests.length).toBe(requests);
  });

  it("hands the shoot's CloudProfile to its Cluster, and runs again when the CloudProfile changes", async () => {
    const profile = (generation: number, cpu: string) =>
      ({
        ...localCloudProfile(),
        metadata: { name: 'local', generation },
        spec: { ...localCloudProfile().spec, machineTypes: [{ name: 'local', cpu, memory: '8Gi' }] },
      }) as KubernetesObject;
    fake.upsert(Refs.cloudProfile, profile(1, '1'));
    const first = reconciler.reconcile(req, ctx());
    await waitFor(() => clock.pendingTimers() > 0, { timeoutMs: 10_000, intervalMs: 5, message: 'the wait' });
    setLoadBalancerAddress();
    await clock.advance(LOAD_BALANCER_WAIT_MS);
    expect(await first).toEqual({ requeueAfter: 60 * 60_000 });
    const machineTypes = () =>
      (fake.objects<Cluster & KubernetesObject>(Refs.cluster)[0]?.spec.cloudProfile as CloudProfile).spec.machineTypes;
    expect(machineTypes()).toEqual([{ name: 'local', cpu: '1', memory: '8Gi' }]);
    // Up to date: nothing runs.
    const requests = fake.requests.length;
    expect(await reconciler.reconcile(req, ctx())).toEqual({ requeueAfter: 60 * 60_000 });
    expect(fake.requests.length).toBe(requests);
    // A machine type resized: the flow runs, and the Cluster says so (provider-local resizes the machines).
    fake.upsert(Refs.cloudProfile, profile(2, '2'));
    expect(await reconciler.reconcile(req, ctx())).toEqual({ requeueAfter: 60 * 60_000 });
    expect(machineTypes()).toEqual([{ name: 'local', cpu: '2', memory: '8Gi' }]);
  });

  it('names the task that failed in lastOperation and lastErrors, and the independent tasks still ran', async () => {
    setUpServiceFirst();
    fake.addFault({
      method: 'PATCH',
      pathPrefix: '/apis/extensions.gardener.cloud/v1alpha1/namespaces/shoot--dev--crazy-botany/networks',
      fault: { kind: 'status', code: 422, message: 'refused' },
    });
    await expect(reconciler.reconcile(req, ctx())).rejects.toThrow(/deploying the Network: .*refused/);
    const status = shoot().status!;
    expect(status.lastOperation).toMatchObject({ state: 'Error' });
    expect(status.lastErrors?.[0]).toMatchObject({ taskID: 'deploying the Network' });
    expect(names(Refs.operatingSystemConfig).length).toBeGreaterThan(0);
    expect(names(Refs.dnsRecord).length).toBe(2);
  });
});

describe('the shoot delete flow', () => {
  it('deletes every seed object, then the namespace, then lets the shoot go', async () => {
    setUpServiceFirst();
    await reconciler.reconcile(req, ctx());
    expect(shoot().status?.lastOperation?.state).toBe('Succeeded');
    fake.upsert(Refs.shoot, {
      ...shoot(),
      metadata: { ...shoot().metadata, deletionTimestamp: new Date().toISOString() as unknown as Date },
    });

    const result = await reconciler.reconcile(req, ctx());
    expect(result, JSON.stringify(shoot().status?.lastOperation)).toBeUndefined();
    expect(names(Refs.network)).toEqual([]);
    expect(names(Refs.dnsRecord)).toEqual([]);
    expect(names(Refs.operatingSystemConfig)).toEqual([]);
    expect(names(Refs.networkPolicy)).toEqual([]);
    expect(names(Refs.namespace)).not.toContain(SEED_NAMESPACE);
    expect(shoot().metadata?.finalizers ?? []).not.toContain(SHOOT_FINALIZER);
    // The namespace only after everything in it.
    const deletes = fake.requestsWhere({ method: 'DELETE' }).map((r) => r.path);
    const namespaceDelete = deletes.indexOf(`/api/v1/namespaces/${SEED_NAMESPACE}`);
    expect(namespaceDelete).toBeGreaterThan(0);
    for (const kind of ['networks', 'dnsrecords', 'operatingsystemconfigs', 'networkpolicies']) {
      const at = deletes.findIndex((p) => p.includes(`/${kind}`));
      expect(at, kind).toBeGreaterThanOrEqual(0);
      expect(at, kind).toBeLessThan(namespaceDelete);
    }
  });
});

/** The seed namespace's Service with an address before the flow runs: the reconcile passes in one go. */
function setUpServiceFirst(): void {
  fake.upsert(Refs.service, {
    metadata: { name: 'kube-apiserver', namespace: SEED_NAMESPACE },
    status: { loadBalancer: { ingress: [{ ip: 'fd00:ff::10' }] } },
  } as KubernetesObject);
}
