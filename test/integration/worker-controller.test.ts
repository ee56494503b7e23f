/**
 * provider-local's Worker controller on the real API server: a StatefulSet of machine pods per pool, the Worker's
 * status while they come up and once they are ready, a pool taken away, a pool it cannot serve, and deletion. The
 * shared control plane runs no StatefulSet controller, so the StatefulSets' status is written here, as the seed's
 * kube-controller-manager would.
 */
import type { KubernetesObject, V1StatefulSet } from '@kubernetes/client-node';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Worker } from '../../src/apis/extensions/v1alpha1/worker.js';
import { WorkerReconciler, WORKER_FINALIZER } from '../../src/extensions/provider-local/worker/reconciler.js';
import { JOIN_PROBLEM_CACHE_MS } from '../../src/extensions/provider-local/worker/machine-readiness.js';
import { Refs } from '../../src/apis/refs.js';
import { IMAGES } from '../../src/imagevector/images.js';
import { localCloudProfile } from '../../src/extensions/provider-local/cloudprofile.js';
import { MACHINES_STARTING_AT_ONCE } from '../../src/extensions/provider-local/worker/machine-pods.js';
import {
  MACHINE_FAMILIES_ANNOTATION,
  MACHINE_POD_USER_DATA_ANNOTATION,
  userDataChecksum,
  workerUserDataAnnotation,
} from '../../src/apis/provider-local/v1alpha1/machine-user-data.js';
import { KUBELET_KERNEL_DEFAULTS } from '../../src/extensions/provider-local/machine/kubelet-host.js';
import { ResourceClient } from '../../src/runtime/client.js';
import { TerminalError } from '../../src/runtime/controller.js';
import { silentLogger } from '../../src/runtime/log.js';
import { kubeConfig, newTestNamespace } from '../support/kube.js';
import { DRAIN_STARTED_ANNOTATION } from '../../src/extensions/provider-local/worker/drain.js';
import type { Clock } from '../../src/runtime/clock.js';

const client = new ResourceClient(kubeConfig());
const ctx = () => ({ signal: AbortSignal.timeout(30_000), logger: silentLogger() });
const reconciler = new WorkerReconciler({ client });

function worker(namespace: string, pools: Worker['spec']['pools']): Worker & KubernetesObject {
  return {
    apiVersion: 'extensions.gardener.cloud/v1alpha1',
    kind: 'Worker',
    metadata: { name: 'local', namespace },
    spec: { type: 'local', region: 'local', secretRef: { name: 'cloudprovider', namespace }, pools },
  } as Worker & KubernetesObject;
}

const pool = (name: string, minimum: number, key = 'userData') => ({
  name,
  machineType: 'local',
  machineImage: { name: 'local', version: '1.0.0' },
  minimum,
  maximum: minimum,
  userDataSecretRef: { name: `worker-user-data-${name}`, key },
});

/** The namespace's Cluster, as the gardenlet writes it: the shoot with its node range, its CloudProfile. */
async function createCluster(namespace: string, networking: Record<string, unknown>): Promise<void> {
  await client.create(Refs.cluster, {
    apiVersion: 'extensions.gardener.cloud/v1alpha1',
    kind: 'Cluster',
    metadata: { name: namespace },
    spec: {
      cloudProfile: localCloudProfile(),
      seed: {},
      shoot: {
        apiVersion: 'core.gardener.cloud/v1beta1',
        kind: 'Shoot',
        metadata: { name: 's' },
        spec: { networking },
      },
    },
  } as KubernetesObject);
}

const env = (set: V1StatefulSet) =>
  Object.fromEntries(
    (set.spec!.template.spec!.containers[0]!.env ?? [])
      .filter((e) => e.value !== undefined)
      .map((e) => [e.name, e.value]),
  );

async function get(namespace: string): Promise<(Worker & KubernetesObject) | undefined> {
  return client.get<Worker & KubernetesObject>(Refs.worker, 'local', namespace);
}

async function machineSets(namespace: string): Promise<V1StatefulSet[]> {
  return (await client.list<V1StatefulSet & KubernetesObject>(Refs.statefulSet, { namespace })).items.sort((a, b) =>
    (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
  );
}

/** What the seed's StatefulSet controller would write once every machine pod is ready. */
async function allReady(namespace: string): Promise<void> {
  for (const s of await machineSets(namespace)) {
    await client.mergePatch(
      Refs.statefulSet,
      s.metadata!.name!,
      namespace,
      {
        status: {
          observedGeneration: s.metadata?.generation,
          replicas: s.spec?.replicas,
          readyReplicas: s.spec?.replicas,
        },
      },
      { subresource: 'status' },
    );
  }
}

/**
 * The shared control plane doubles as the shoot: the `gardener` Secret points at it, and the shoot's API server runs
 * (its Deployment has a ready replica).
 */
async function shootAccess(namespace: string): Promise<void> {
  await client.create(Refs.secret, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'gardener', namespace },
    data: { kubeconfig: Buffer.from(kubeConfig().exportConfig()).toString('base64') },
  } as KubernetesObject);
  const labels = { app: 'kubernetes', role: 'apiserver' };
  await client.create(Refs.deployment, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'kube-apiserver', namespace },
    spec: {
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: 'k', image: 'k' }] } },
    },
  } as KubernetesObject);
  await client.mergePatch(
    Refs.deployment,
    'kube-apiserver',
    namespace,
    { status: { replicas: 1, readyReplicas: 1 } },
    { subresource: 'status' },
  );
  // The shared control plane runs no ServiceAccount controller.
  await client.create(
    { group: '', version: 'v1', plural: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace } } as KubernetesObject,
  );
}

describe("provider-local's Worker controller", () => {
  it('makes a StatefulSet per pool and succeeds once their machines are ready', async () => {
    const namespace = await newTestNamespace('worker');
    await client.create(Refs.worker, worker(namespace, [{ ...pool('a', 2), maximum: 4 }, pool('b', 1)]));
    const req = { namespace, name: 'local' };

    // Without the namespace's Cluster there are no node ranges to take the machines' addresses from.
    expect(await reconciler.reconcile(req, ctx())).toEqual({ requeueAfter: expect.any(Number) });
    expect((await get(namespace))?.status?.lastOperation?.description).toBe(`waiting for the Cluster ${namespace}`);
    expect(await machineSets(namespace)).toEqual([]);
    await createCluster(namespace, { ipFamilies: ['IPv6', 'IPv4'], nodes: 'fd00:10:1:100::/56' });

    expect(await reconciler.reconcile(req, ctx())).toEqual({ requeueAfter: expect.any(Number) });
    let current = await get(namespace);
    expect(current?.metadata.finalizers).toContain(WORKER_FINALIZER);
    expect(current?.status?.lastOperation).toMatchObject({ type: 'Create', state: 'Processing' });
    expect(current?.status?.lastOperation?.description).toBe('pool a: 0/2 machines ready, pool b: 0/1 machines ready');
    expect(current?.status?.machineDeployments).toEqual([
      { name: 'machine-a', minimum: 2, maximum: 4 },
      { name: 'machine-b', minimum: 1, maximum: 1 },
    ]);
    const sets = await machineSets(namespace);
    expect(sets.map((s) => [s.metadata?.name, s.spec?.replicas])).toEqual([
      ['machine-a', 2],
      ['machine-b', 1],
    ]);
    // The node ranges per family (the IPv4 one provider-local's default), pool b's machines after a's maximum; the
    // Worker's region, the Nodes' topology label (the pools have no zones).
    expect(sets.map(env)).toEqual([
      { NODE_CIDRS: 'fd00:10:1:100::/56,10.255.255.0/24', FIRST_MACHINE_INDEX: '0', REGION: 'local' },
      { NODE_CIDRS: 'fd00:10:1:100::/56,10.255.255.0/24', FIRST_MACHINE_INDEX: '4', REGION: 'local' },
    ]);
    const container = sets[0]!.spec!.template.spec!.containers[0]!;
    expect(container.image).toBe(IMAGES.machine);
    // Sized by the CloudProfile's `local` machine type (1 CPU, 8Gi): its limits, overcommitted requests.
    expect(container.resources).toEqual({
      requests: { cpu: '100m', memory: '1Gi' },
      limits: { cpu: '1', memory: '8Gi' },
    });
    expect(sets[0]!.spec!.template.spec!.volumes!.find((v) => v.name === 'user-data')?.secret?.secretName).toBe(
      'worker-user-data-a',
    );

    await allReady(namespace);
    expect(await reconciler.reconcile(req, ctx())).toBeUndefined();
    current = await get(namespace);
    expect(current?.status?.lastOperation).toMatchObject({
      type: 'Create',
      state: 'Succeeded',
      progress: 100,
      description: '3 machines of 2 pools are ready',
    });
    expect(current?.status?.observedGeneration).toBe(current?.metadata.generation);

    // A pool taken away loses its StatefulSet; the next reconcile is a `Reconcile`.
    await client.mergePatch(Refs.worker, 'local', namespace, { spec: { pools: [pool('a', 2)] } });
    await reconciler.reconcile(req, ctx());
    expect((await machineSets(namespace)).map((s) => s.metadata?.name)).toEqual(['machine-a']);
    current = await get(namespace);
    expect(current?.status?.lastOperation).toMatchObject({ type: 'Reconcile', state: 'Succeeded' });

    // Deletion: the StatefulSets go, then (no machine pod left) the finalizer, and with it the Worker.
    await client.delete(Refs.worker, 'local', namespace);
    expect(await reconciler.reconcile(req, ctx())).toEqual({ requeueAfter: expect.any(Number) });
    expect(await machineSets(namespace)).toEqual([]);
    expect((await get(namespace))?.status?.lastOperation).toMatchObject({ type: 'Delete', state: 'Processing' });
    expect(await reconciler.reconcile(req, ctx())).toBeUndefined();
    expect(await get(namespace)).toBeUndefined();
  });

  it('starts a large pool a few machines at a time, and scales down at once with nothing to drain', async () => {
    const namespace = await newTestNamespace('worker');
    await createCluster(namespace, { ipFamilies: ['IPv6'], nodes: 'fd00:10:1:100::/56' });
    await client.create(Refs.worker, worker(namespace, [pool('big', 7)]));
    const req = { namespace, name: 'local' };
    const replicas = async () => (await machineSets(namespace))[0]?.spec?.replicas;
    /** What the seed's StatefulSet controller would write once `ready` machine pods are ready. */
    const ready = async (n: number) => {
      const [s] = await machineSets(namespace);
      await client.mergePatch(
        Refs.statefulSet,
        s!.metadata!.name!,
        namespace,
        { status: { observedGeneration: s!.metadata?.generation, replicas: s!.spec?.replicas, readyReplicas: n } },
        { subresource: 'status' },
      );
    };

    await reconciler.reconcile(req, ctx());
    expect(await replicas()).toBe(MACHINES_STARTING_AT_ONCE);
    expect((await get(namespace))?.status?.lastOperation?.description).toBe(
      `pool big: 0/7 machines ready (machines start at most ${MACHINES_STARTING_AT_ONCE} at a time per pool)`,
    );
    // Nothing Ready yet: no more machines, and none of the starting ones taken away.
    await reconciler.reconcile(req, ctx());
    expect(await replicas()).toBe(3);
    await ready(2);
    await reconciler.reconcile(req, ctx());
    expect(await replicas()).toBe(5);
    await ready(5);
    await reconciler.reconcile(req, ctx());
    expect(await replicas()).toBe(7);
    await ready(7);
    expect(await reconciler.reconcile(req, ctx())).toBeUndefined();
    expect((await get(namespace))?.status?.lastOperation?.state).toBe('Succeeded');

    // Scaling down is not bounded.
    await client.mergePatch(Refs.worker, 'local', namespace, { spec: { pools: [{ ...pool('big', 1), maximum: 7 }] } });
    await reconciler.reconcile(req, ctx());
    expect(await replicas()).toBe(1);
  });

  it("tells each machine pod its pool's latest user data checksum, so the seed's kubelet refreshes it at once", async () => {
    const namespace = await newTestNamespace('worker');
    await createCluster(namespace, { ipFamilies: ['IPv6'], nodes: 'fd00:10:1:100::/56' });
    // The shared control plane runs no ServiceAccount controller.
    const serviceAccounts = {
      group: '',
      version: 'v1',
      plural: 'serviceaccounts',
      kind: 'ServiceAccount',
      namespaced: true,
    };
    await client.create(serviceAccounts, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'default', namespace },
    } as KubernetesObject);
    const machinePod = (name: string, pool: string) =>
      client.create(Refs.pod, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace, labels: { app: 'machine', 'worker.gardener.cloud/pool': pool } },
        spec: { containers: [{ name: 'machine', image: 'machine' }] },
      } as KubernetesObject);
    await machinePod('machine-a-0', 'a');
    await machinePod('machine-a-1', 'a');
    await machinePod('machine-b-0', 'b');
    const annotated = async () =>
      Object.fromEntries(
        (await client.list(Refs.pod, { namespace })).items.map((p) => [
          p.metadata?.name,
          p.metadata?.annotations?.[MACHINE_POD_USER_DATA_ANNOTATION],
        ]),
      );
    const [one, two] = [userDataChecksum('one'), userDataChecksum('two')];
    await client.create(Refs.worker, {
      ...worker(namespace, [pool('a', 2), pool('b', 1)]),
      metadata: { name: 'local', namespace, annotations: { [workerUserDataAnnotation('a')]: one } },
    } as KubernetesObject);
    const req = { namespace, name: 'local' };
    await reconciler.reconcile(req, ctx());
    // Pool b has no checksum on the Worker: its pod is left as it is.
    expect(await annotated()).toEqual({ 'machine-a-0': one, 'machine-a-1': one, 'machine-b-0': undefined });

    await client.mergePatch(Refs.worker, 'local', namespace, {
      metadata: { annotations: { [workerUserDataAnnotation('a')]: two, [workerUserDataAnnotation('b')]: one } },
    });
    const before = (await client.get(Refs.pod, 'machine-a-0', namespace))!.metadata!.resourceVersion;
    await reconciler.reconcile(req, ctx());
    expect(await annotated()).toEqual({ 'machine-a-0': two, 'machine-a-1': two, 'machine-b-0': one });
    const after = (await client.get(Refs.pod, 'machine-a-0', namespace))!.metadata!.resourceVersion;
    expect(after).not.toBe(before);
    // Nothing changed since: no pod is written again.
    await reconciler.reconcile(req, ctx());
    expect((await client.get(Refs.pod, 'machine-a-0', namespace))!.metadata!.resourceVersion).toBe(after);
  });

  it("names a machine that is not ready and why, from its pod's status: an error once it can't come up", async () => {
    const namespace = await newTestNamespace('worker');
    await createCluster(namespace, { ipFamilies: ['IPv6'], nodes: 'fd00:10:1:100::/56' });
    // The shared control plane runs no ServiceAccount controller.
    await client.create(
      { group: '', version: 'v1', plural: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace } } as KubernetesObject,
    );
    await client.create(Refs.worker, worker(namespace, [pool('a', 2)]));
    // What the seed's kubelet would report of the pool's two machine pods: one on its way, one whose agent failed.
    for (const name of ['machine-a-0', 'machine-a-1']) {
      await client.create(Refs.pod, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace, labels: { app: 'machine', 'worker.gardener.cloud/pool': 'a' } },
        spec: { containers: [{ name: 'machine', image: 'machine' }] },
      } as KubernetesObject);
    }
    const podStatus = (name: string, container: Record<string, unknown>, ready = false) =>
      client.mergePatch(
        Refs.pod,
        name,
        namespace,
        {
          status: {
            phase: 'Running',
            conditions: [
              { type: 'PodScheduled', status: 'True' },
              { type: 'Ready', status: ready ? 'True' : 'False' },
            ],
            containerStatuses: [
              { name: 'machine', image: 'machine', imageID: '', ready, restartCount: 0, ...container },
            ],
          },
        },
        { subresource: 'status' },
      );
    const sysctl = 'setting kernel parameters: sysctl: setting key "net.ipv4.ip_local_port_range": Invalid argument';
    await podStatus('machine-a-0', { state: { running: { startedAt: new Date().toISOString() } } });
    await podStatus('machine-a-1', {
      restartCount: 1,
      state: { running: { startedAt: new Date().toISOString() } },
      lastState: { terminated: { exitCode: 1, reason: 'Error', message: 'machine machine-a-1: containerd not up' } },
    });
    const req = { namespace, name: 'local' };

    // Failed once and trying again: progress, with the cause.
    expect(await reconciler.reconcile(req, ctx())).toEqual({ requeueAfter: expect.any(Number) });
    let current = await get(namespace);
    expect(current?.status?.lastOperation).toMatchObject({
      state: 'Processing',
      description: 'pool a: 0/2 machines ready; machine machine-a-1: containerd not up (restarted 1 time)',
    });
    expect(current?.status?.lastError).toBeUndefined();

    // Its configuration refused by the machine: an error with the code, and the controller keeps looking.
    await podStatus('machine-a-1', {
      restartCount: 1,
      state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s restarting failed container' } },
      lastState: { terminated: { exitCode: 3, reason: 'Error', message: `machine machine-a-1: ${sysctl}` } },
    });
    expect(await reconciler.reconcile(req, ctx())).toEqual({ requeueAfter: expect.any(Number) });
    current = await get(namespace);
    const description = `pool a: 0/2 machines ready; machine machine-a-1: ${sysctl} (restarted 1 time)`;
    expect(current?.status?.lastOperation).toMatchObject({ state: 'Error', description });
    expect(current?.status?.lastError).toMatchObject({ description, codes: ['ERR_CONFIGURATION_PROBLEM'] });

    // Fixed: both Ready, the error gone.
    await podStatus('machine-a-0', { state: { running: {} } }, true);
    await podStatus('machine-a-1', { restartCount: 2, state: { running: {} } }, true);
    await allReady(namespace);
    expect(await reconciler.reconcile(req, ctx())).toBeUndefined();
    current = await get(namespace);
    expect(current?.status?.lastOperation).toMatchObject({ state: 'Succeeded' });
    expect(current?.status?.lastError).toBeUndefined();
  });

  it("names a machine whose kubelet can't reach its API server as progress, from its agent's log", async () => {
    const namespace = await newTestNamespace('worker');
    await createCluster(namespace, { ipFamilies: ['IPv6'], nodes: 'fd00:10:1:100::/56' });
    await client.create(
      { group: '', version: 'v1', plural: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace } } as KubernetesObject,
    );
    await client.create(Refs.worker, worker(namespace, [pool('j', 2)]));
    const cause =
      "kubelet can't reach the API server at https://[fd00:10:2::1]:443: dial tcp [fd00:10:2::1]:443: connect: " +
      'connection refused';
    const logs: Record<string, string> = {
      'machine-j-0': `2026-11-29T03:03:00.000Z machine machine-j-0: not joined: ${cause}\n`,
      'machine-j-1': `2026-11-29T03:03:00.000Z machine machine-j-1: not joined: ${cause}\n`,
    };
    const read: string[] = [];
    let now = Date.now();
    const withLogs = new WorkerReconciler({
      client,
      clock: { now: () => now, sleep: async () => {} },
      podLog: async (ns, name) => {
        expect(ns).toBe(namespace);
        read.push(name);
        return logs[name];
      },
    });
    // Both running and not ready: one for 3 minutes (its agent has had time to say why), one for a few seconds.
    const startedAt = { 'machine-j-0': new Date(Date.now() - 3 * 60_000), 'machine-j-1': new Date() };
    for (const [name, started] of Object.entries(startedAt)) {
      await client.create(Refs.pod, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace, labels: { app: 'machine', 'worker.gardener.cloud/pool': 'j' } },
        spec: { containers: [{ name: 'machine', image: 'machine' }] },
      } as KubernetesObject);
      await client.mergePatch(
        Refs.pod,
        name,
        namespace,
        {
          status: {
            phase: 'Running',
            conditions: [{ type: 'Ready', status: 'False' }],
            containerStatuses: [
              {
                name: 'machine',
                image: 'machine',
                imageID: '',
                ready: false,
                restartCount: 0,
                state: { running: { startedAt: started.toISOString() } },
              },
            ],
          },
        },
        { subresource: 'status' },
      );
    }
    const req = { namespace, name: 'local' };
    expect(await withLogs.reconcile(req, ctx())).toEqual({ requeueAfter: expect.any(Number) });
    const current = await get(namespace);
    expect(current?.status?.lastOperation).toMatchObject({
      state: 'Processing',
      description: `pool j: 0/2 machines ready; machine machine-j-0: ${cause}`,
    });
    expect(current?.status?.lastError).toBeUndefined();
    // The young machine's log is not read, the old one's again only after JOIN_PROBLEM_CACHE_MS.
    expect(read).toEqual(['machine-j-0']);
    await withLogs.reconcile(req, ctx());
    expect(read).toEqual(['machine-j-0']);
    now += JOIN_PROBLEM_CACHE_MS;
    await withLogs.reconcile(req, ctx());
    expect(read).toEqual(['machine-j-0', 'machine-j-0']);
    // Through the seed's API server (the default) a pod without a Node has an empty log: no cause, no failure.
    expect(await client.getText(Refs.pod, 'machine-j-0', namespace, 'log', { sinceSeconds: 90 })).toBe('');
    expect(await reconciler.reconcile(req, ctx())).toEqual({ requeueAfter: expect.any(Number) });
    expect((await get(namespace))?.status?.lastOperation?.description).toBe('pool j: 0/2 machines ready');
  });

  it('says which pool it cannot serve, with the configuration-problem code, and does not retry', async () => {
    const namespace = await newTestNamespace('worker');
    await client.create(Refs.worker, worker(namespace, [pool('a', 1, '')]));
    const error = await reconciler.reconcile({ namespace, name: 'local' }, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TerminalError);
    const current = await get(namespace);
    expect(current?.status?.lastOperation?.state).toBe('Error');
    expect(current?.status?.lastError).toMatchObject({
      description: 'pool a: spec.pools[].userDataSecretRef needs name and key',
      codes: ['ERR_CONFIGURATION_PROBLEM'],
    });
    expect(await machineSets(namespace)).toEqual([]);
  });

  it('refuses kubelet settings this host cannot give a kubelet, naming the field and the kernel parameter', async () => {
    const namespace = await newTestNamespace('worker');
    await createCluster(namespace, { nodes: 'fd00:10:1:100::/56', ipFamilies: ['IPv6'] });
    const hostKernel = {
      sysctl: (key: string) => (key === 'kernel.panic' ? '0' : KUBELET_KERNEL_DEFAULTS[key]),
      swapOn: () => false,
    };
    await client.create(
      Refs.worker,
      worker(namespace, [pool('a', 1), { ...pool('b', 1), kubeletConfig: { protectKernelDefaults: true } }]),
    );
    const strict = new WorkerReconciler({ client, hostKernel });
    const error = await strict.reconcile({ namespace, name: 'local' }, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TerminalError);
    expect((await get(namespace))?.status?.lastError).toMatchObject({
      description:
        "pool b: spec.pools[1].kubeletConfig.protectKernelDefaults: true, but the host's kernel has kernel.panic = 0 " +
        "(needs 10): the kubelet would refuse to start, and a machine can't set host-wide kernel parameters (set " +
        'them on the host, or leave protectKernelDefaults false)',
      codes: ['ERR_CONFIGURATION_PROBLEM'],
    });
    expect(await machineSets(namespace)).toEqual([]);
  });

  it("refuses a pool whose machine type the shoot's CloudProfile lacks or gives no size", async () => {
    const namespace = await newTestNamespace('worker');
    await createCluster(namespace, { nodes: 'fd00:10:1:100::/56', ipFamilies: ['IPv6'] });
    await client.mergePatch(Refs.cluster, namespace, undefined, {
      spec: {
        cloudProfile: {
          spec: {
            machineTypes: [
              { name: 'local', cpu: '1', memory: '8Gi' },
              { name: 'tiny', cpu: '0', memory: '1Gi' },
            ],
          },
        },
      },
    });
    await client.create(
      Refs.worker,
      worker(namespace, [
        pool('a', 1),
        { ...pool('b', 1), machineType: 'large' },
        { ...pool('c', 1), machineType: 'tiny' },
      ]),
    );
    const error = await reconciler.reconcile({ namespace, name: 'local' }, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TerminalError);
    expect((await get(namespace))?.status?.lastError).toMatchObject({
      description:
        "pool b: machine type large is not in the shoot's CloudProfile local; pool c: machine type tiny has no CPU (cpu: 0)",
      codes: ['ERR_CONFIGURATION_PROBLEM'],
    });
    expect(await machineSets(namespace)).toEqual([]);
  });

  it("refuses pools that do not fit into the shoot's node range, naming the pool", async () => {
    const namespace = await newTestNamespace('worker');
    await createCluster(namespace, { nodes: '10.20.0.0/28' });
    await client.create(Refs.worker, worker(namespace, [pool('a', 2), { ...pool('b', 2), maximum: 5 }]));
    const error = await reconciler.reconcile({ namespace, name: 'local' }, ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TerminalError);
    expect((await get(namespace))?.status?.lastError).toMatchObject({
      description:
        "the shoot's node ranges: pool b: node range 10.20.0.0/28 has no room for machine 6 (its maximum is 5)",
      codes: ['ERR_CONFIGURATION_PROBLEM'],
    });
    expect(await machineSets(namespace)).toEqual([]);
  });

  it('drains the Node of a machine that goes: cordons it, evicts its pods as their PDB allows, then scales down', async () => {
    const namespace = await newTestNamespace('worker');
    // Node names are cluster-wide: a pool of its own for this test.
    const p = `d${namespace.slice(-5)}`;
    const [node0, node1] = [`machine-${p}-0`, `machine-${p}-1`];
    await createCluster(namespace, { ipFamilies: ['IPv6'], nodes: 'fd00:10:1:100::/56' });
    await shootAccess(namespace);
    const createPod = (name: string, podLabels: Record<string, string>, extra: Record<string, unknown> = {}) =>
      client.create(Refs.pod, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace, labels: podLabels, ...extra },
        spec: { containers: [{ name: 'c', image: 'c' }], ...(extra.spec as object) },
      } as KubernetesObject);
    // The machines (their pods, as the seed's StatefulSet controller would make them) and their Nodes.
    for (const [i, node] of [node0, node1].entries()) {
      await createPod(node, { app: 'machine', 'worker.gardener.cloud/pool': p, ordinal: String(i) });
      await client.create(Refs.node, { apiVersion: 'v1', kind: 'Node', metadata: { name: node } } as KubernetesObject);
      onTestFinished(() => client.delete(Refs.node, node).then(() => undefined));
    }
    // On machine 1: a web pod its PDB protects, and a DaemonSet's pod, which no drain evicts.
    const bound = (node: string) => ({ spec: { nodeName: node } });
    await createPod('web-1', { app: 'web' }, bound(node1));
    await createPod(
      'agent-1',
      { app: 'agent' },
      {
        ...bound(node1),
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: 'u1', controller: true }],
      },
    );
    await createPod('web-0', { app: 'web' }, bound(node0));
    // Running and Ready, as their kubelet would say: an eviction ignores the PDB of a Pending pod.
    for (const name of ['web-1', 'web-0']) {
      await client.mergePatch(
        Refs.pod,
        name,
        namespace,
        { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } },
        { subresource: 'status' },
      );
    }
    const pdb = Refs.podDisruptionBudget;
    const createWebPDB = () =>
      client.create(pdb, {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'web', namespace },
        spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } },
      } as KubernetesObject);
    // Without a disruption controller its status is never observed: every eviction of a web pod is refused (429).
    await createWebPDB();

    let now = Date.parse('2026-11-28T19:00:00Z');
    const clock: Clock = { now: () => now, sleep: async () => {} };
    const drainer = new WorkerReconciler({ client, clock, drainTimeoutMs: 60_000 });
    await client.create(Refs.worker, worker(namespace, [{ ...pool(p, 2), maximum: 2 }]));
    const req = { namespace, name: 'local' };
    await drainer.reconcile(req, ctx());
    await allReady(namespace);
    expect(await drainer.reconcile(req, ctx())).toBeUndefined();
    const replicas = async () => (await machineSets(namespace))[0]?.spec?.replicas;
    const node = (name: string) =>
      client.get<KubernetesObject & { spec?: { unschedulable?: boolean } }>(Refs.node, name);
    const pod = (name: string) => client.get(Refs.pod, name, namespace);
    const description = async () => (await get(namespace))?.status?.lastOperation?.description;

    // 2 → 1: machine 1's Node is cordoned, its web pod's eviction refused, nothing deleted, the machine stays.
    await client.mergePatch(Refs.worker, 'local', namespace, { spec: { pools: [{ ...pool(p, 1), maximum: 2 }] } });
    expect(await drainer.reconcile(req, ctx())).toEqual({ requeueAfter: expect.any(Number) });
    expect((await node(node1))?.spec?.unschedulable).toBe(true);
    expect((await node(node1))?.metadata?.annotations?.[DRAIN_STARTED_ANNOTATION]).toBe('2026-11-28T19:00:00Z');
    expect((await node(node0))?.spec?.unschedulable).toBeUndefined();
    expect((await pod('web-1'))?.metadata?.deletionTimestamp).toBeUndefined();
    expect(await replicas()).toBe(2);
    expect(await description()).toBe(`draining machine ${node1} (1 pod left)`);
    expect((await get(namespace))?.status?.lastOperation?.state).toBe('Processing');

    // Wanted again before it went: uncordoned, as it was.
    await client.mergePatch(Refs.worker, 'local', namespace, { spec: { pools: [{ ...pool(p, 2), maximum: 2 }] } });
    await drainer.reconcile(req, ctx());
    expect((await node(node1))?.spec?.unschedulable).toBeUndefined();
    expect((await node(node1))?.metadata?.annotations?.[DRAIN_STARTED_ANNOTATION]).toBeUndefined();

    // Down again, and the PDB allows it now: web-1 is evicted (terminating: its kubelet has yet to stop it).
    await client.mergePatch(Refs.worker, 'local', namespace, { spec: { pools: [{ ...pool(p, 1), maximum: 2 }] } });
    await drainer.reconcile(req, ctx());
    await client.delete(pdb, 'web', namespace);
    await drainer.reconcile(req, ctx());
    // No kubelet runs here: eviction deleted it gracefully, and it waits as terminating for its kubelet.
    expect((await pod('web-1'))?.metadata?.deletionTimestamp).toBeDefined();
    expect(await replicas()).toBe(2);
    expect(await description()).toBe(`draining machine ${node1} (1 pod left)`);
    // Its "kubelet" stops it: only the DaemonSet's pod is left, which the drain doesn't wait for.
    await client.delete(Refs.pod, 'web-1', namespace, { gracePeriodSeconds: 0 });
    await drainer.reconcile(req, ctx());
    expect(await replicas()).toBe(1);
    expect(await pod('agent-1')).toBeDefined();
    expect(await node(node1)).toBeDefined();
    // Not done while its pod stops: the Node goes after it, and the gardenlet leaves that to the provider.
    await allReady(namespace);
    expect(await drainer.reconcile(req, ctx())).toEqual({ requeueAfter: expect.any(Number) });
    expect(await description()).toBe(`waiting for machines to stop before their Nodes go: ${node1}`);
    expect((await get(namespace))?.status?.lastOperation?.state).toBe('Processing');
    // The machine pod gone (as the StatefulSet controller removes it): its Node goes, with the pods bound to it.
    await client.delete(Refs.pod, node1, namespace, { gracePeriodSeconds: 0 });
    await allReady(namespace);
    expect(await drainer.reconcile(req, ctx())).toBeUndefined();
    expect(await node(node1)).toBeUndefined();
    expect(await pod('agent-1')).toBeUndefined();
    expect(await node(node0)).toBeDefined();
    expect((await get(namespace))?.status?.lastOperation?.state).toBe('Succeeded');

    // 1 → 0 with a PDB that never allows it: the machine goes once the drain timeout has passed, not before.
    await createWebPDB();
    await client.mergePatch(Refs.worker, 'local', namespace, { spec: { pools: [{ ...pool(p, 0), maximum: 2 }] } });
    await drainer.reconcile(req, ctx());
    expect(await replicas()).toBe(1);
    now += 59_000;
    await drainer.reconcile(req, ctx());
    expect(await replicas()).toBe(1);
    now += 1_000;
    await drainer.reconcile(req, ctx());
    expect(await replicas()).toBe(0);
    // The eviction was never allowed: the pod was not deleted by the drain.
    expect((await pod('web-0'))?.metadata?.deletionTimestamp).toBeUndefined();

    // The Worker deleted (every machine goes): a forceful drain, as Gardener's, deletes the pods its PDB protects and,
    // as machine-controller-manager's, doesn't wait for them: the machine goes in the same look.
    await client.mergePatch(Refs.worker, 'local', namespace, { spec: { pools: [{ ...pool(p, 1), maximum: 2 }] } });
    await drainer.reconcile(req, ctx());
    expect((await node(node0))?.spec?.unschedulable).toBeUndefined();
    await client.delete(Refs.worker, 'local', namespace);
    expect(await drainer.reconcile(req, ctx())).toEqual({ requeueAfter: expect.any(Number) });
    expect((await node(node0))?.spec?.unschedulable).toBe(true);
    expect((await pod('web-0'))?.metadata?.deletionTimestamp).toBeDefined();
    expect(await description()).toBe('waiting for 1 machine pod to stop');
    expect(await machineSets(namespace)).toEqual([]);
    await client.delete(Refs.pod, node0, namespace, { gracePeriodSeconds: 0 });
    expect(await drainer.reconcile(req, ctx())).toBeUndefined();
    expect(await node(node0)).toBeUndefined();
    expect(await get(namespace)).toBeUndefined();
  });

  it('replaces machines of an outdated template one at a time: drained, their Node and pod deleted', async () => {
    const namespace = await newTestNamespace('worker');
    const p = `r${namespace.slice(-5)}`;
    const names = [`machine-${p}-0`, `machine-${p}-1`];
    await createCluster(namespace, { ipFamilies: ['IPv4'], nodes: '10.10.0.0/16' });
    await shootAccess(namespace);
    const req = { namespace, name: 'local' };
    const ready = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
    /** A machine as the StatefulSet controller makes it of `revision`, Running and Ready, and its Node. */
    const machine = async (name: string, revision: string) => {
      await client.create(Refs.pod, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name,
          namespace,
          labels: { app: 'machine', 'worker.gardener.cloud/pool': p, 'controller-revision-hash': revision },
        },
        spec: { containers: [{ name: 'machine', image: 'machine' }] },
      } as KubernetesObject);
      await client.mergePatch(Refs.pod, name, namespace, { status: ready }, { subresource: 'status' });
      await client.create(Refs.node, { apiVersion: 'v1', kind: 'Node', metadata: { name } } as KubernetesObject);
    };
    for (const name of names) onTestFinished(() => client.delete(Refs.node, name).then(() => undefined));
    /** What the StatefulSet controller would write: its current revision, every machine ready. */
    const observed = async (revision: string) => {
      const set = (await machineSets(namespace))[0]!;
      await client.mergePatch(
        Refs.statefulSet,
        set.metadata!.name!,
        namespace,
        {
          status: {
            observedGeneration: set.metadata?.generation,
            replicas: 2,
            readyReplicas: 2,
            updateRevision: revision,
            currentRevision: revision,
          },
        },
        { subresource: 'status' },
      );
    };
    const state = async () => (await get(namespace))?.status?.lastOperation;
    for (const name of names) await machine(name, 'r1');
    await client.create(Refs.worker, {
      ...worker(namespace, [pool(p, 2)]),
      metadata: { name: 'local', namespace, annotations: { [MACHINE_FAMILIES_ANNOTATION]: 'IPv4' } },
    } as KubernetesObject);
    await reconciler.reconcile(req, ctx());
    expect((await machineSets(namespace))[0]!.spec!.updateStrategy).toEqual({ type: 'OnDelete' });
    expect(env((await machineSets(namespace))[0]!).NODE_CIDRS).toBe('10.10.0.0/16');
    await observed('r1');
    expect(await reconciler.reconcile(req, ctx())).toBeUndefined();

    // The shoot gains IPv6 (its Cluster first): its machines are built as before until the gardenlet says both.
    await client.mergePatch(Refs.cluster, namespace, undefined, {
      spec: { shoot: { spec: { networking: { ipFamilies: ['IPv4', 'IPv6'] } } } },
    });
    await reconciler.reconcile(req, ctx());
    expect(env((await machineSets(namespace))[0]!).NODE_CIDRS).toBe('10.10.0.0/16');
    await client.mergePatch(Refs.worker, 'local', namespace, {
      metadata: { annotations: { [MACHINE_FAMILIES_ANNOTATION]: 'IPv4,IPv6' } },
    });
    await reconciler.reconcile(req, ctx());
    expect(env((await machineSets(namespace))[0]!).NODE_CIDRS).toBe('10.10.0.0/16,fd00:fe::/64');
    // Its controller has not said the new revision yet: nothing is replaced, the Worker is not done.
    expect(await reconciler.reconcile(req, ctx())).toEqual({ requeueAfter: expect.any(Number) });
    for (const name of names) expect(await client.get(Refs.pod, name, namespace)).toBeDefined();

    // The new revision: the highest machine goes first, drained (nothing on it), its Node and pod deleted.
    await observed('r2');
    expect(await reconciler.reconcile(req, ctx())).toEqual({ requeueAfter: expect.any(Number) });
    expect((await state())?.description).toBe(
      `pool ${p}: 2 machines of an outdated template left, replacing machine ${names[1]}: drained, its Node and its ` +
        'pod deleted',
    );
    expect(await client.get(Refs.node, names[1]!)).toBeUndefined();
    expect((await client.get(Refs.pod, names[1]!, namespace))?.metadata?.deletionTimestamp ?? 'gone').toBeTruthy();
    expect(await client.get(Refs.node, names[0]!)).toBeDefined();
    await client.delete(Refs.pod, names[1]!, namespace, { gracePeriodSeconds: 0 });
    // Until the new machine is there and Ready, the next one waits.
    await reconciler.reconcile(req, ctx());
    expect(await client.get(Refs.node, names[0]!)).toBeDefined();
    expect((await state())?.description).toBe(`pool ${p}: 1 machine of an outdated template left`);
    await machine(names[1]!, 'r2');
    await reconciler.reconcile(req, ctx());
    expect(await client.get(Refs.node, names[0]!)).toBeUndefined();
    await client.delete(Refs.pod, names[0]!, namespace, { gracePeriodSeconds: 0 });
    await machine(names[0]!, 'r2');
    expect(await reconciler.reconcile(req, ctx())).toBeUndefined();
    expect((await state())?.state).toBe('Succeeded');
    for (const name of names) expect(await client.get(Refs.node, name)).toBeDefined();
  });

  it('deletes the Nodes of every machine when the shoot hibernates, and is done only once they are gone', async () => {
    const namespace = await newTestNamespace('worker');
    const p = `h${namespace.slice(-5)}`;
    const nodes = [`machine-${p}-0`, `machine-${p}-1`];
    await createCluster(namespace, { ipFamilies: ['IPv6'], nodes: 'fd00:10:1:100::/56' });
    await shootAccess(namespace);
    for (const [i, node] of nodes.entries()) {
      await client.create(Refs.pod, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: node, namespace, labels: { app: 'machine', 'worker.gardener.cloud/pool': p, n: `${i}` } },
        spec: { containers: [{ name: 'c', image: 'c' }] },
      } as KubernetesObject);
      await client.create(Refs.node, { apiVersion: 'v1', kind: 'Node', metadata: { name: node } } as KubernetesObject);
      onTestFinished(() => client.delete(Refs.node, node).then(() => undefined));
    }
    await client.create(Refs.worker, worker(namespace, [pool(p, 2)]));
    const req = { namespace, name: 'local' };
    await reconciler.reconcile(req, ctx());
    await allReady(namespace);
    expect(await reconciler.reconcile(req, ctx())).toBeUndefined();

    // Hibernated (the Cluster says so): no machine wanted; their pods stop, their Nodes stay until the pods are gone.
    await client.mergePatch(Refs.cluster, namespace, undefined, {
      spec: { shoot: { spec: { hibernation: { enabled: true } } } },
    });
    await reconciler.reconcile(req, ctx());
    expect((await machineSets(namespace))[0]?.spec?.replicas).toBe(0);
    await allReady(namespace);
    expect(await reconciler.reconcile(req, ctx())).toEqual({ requeueAfter: expect.any(Number) });
    expect((await get(namespace))?.status?.lastOperation?.description).toBe(
      `waiting for machines to stop before their Nodes go: ${nodes.join(', ')}`,
    );
    for (const node of nodes) expect(await client.get(Refs.node, node)).toBeDefined();

    // The pods gone (as the StatefulSet controller and the seed's kubelet remove them): so are their Nodes.
    for (const node of nodes) await client.delete(Refs.pod, node, namespace, { gracePeriodSeconds: 0 });
    expect(await reconciler.reconcile(req, ctx())).toBeUndefined();
    for (const node of nodes) expect(await client.get(Refs.node, node)).toBeUndefined();
    expect((await get(namespace))?.status?.lastOperation?.state).toBe('Succeeded');
  });

  it('leaves Workers of other types alone', async () => {
    const namespace = await newTestNamespace('worker');
    await client.create(Refs.worker, { ...worker(namespace, [pool('a', 1)]), spec: { type: 'aws', pools: [] } });
    await reconciler.reconcile({ namespace, name: 'local' }, ctx());
    expect((await get(namespace))?.metadata.finalizers).toBeUndefined();
    expect(await machineSets(namespace)).toEqual([]);
  });
});
