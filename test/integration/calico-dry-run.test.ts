/**
 * The calico Network extension against the real API server: every rendered object passes a server-side dry-run
 * apply (after installing the CRDs it renders), for IPv4, IPv6 and dual-stack Networks; and the reconciler writes
 * the Secret, the ManagedResource and the Network status, and cleans up on deletion.
 */
import {
  KubernetesObjectApi,
  PatchStrategy,
  type KubernetesObject,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { CoreV1Api } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { parse } from 'yaml';
import type { Network } from '../../src/apis/extensions/v1alpha1/network.js';
import { MANAGED_RESOURCE_NAME, SECRET_NAME } from '../../src/extensions/network/actuator.js';
import { managedResourceCRD } from '../../src/apis/resources/v1alpha1/managedresource-crd.js';
import { Refs } from '../../src/apis/refs.js';
import { addNetworkExtension } from '../../src/extensions/network/controller.js';
import { FINALIZER, NetworkReconciler, networkRef } from '../../src/extensions/network/reconciler.js';
import { installCRDs } from '../../src/localenv/crds.js';
import { ResourceClient } from '../../src/runtime/client.js';
import { silentLogger } from '../../src/runtime/log.js';
import type { NetworkConfig } from '../../src/apis/calico/v1alpha1/config.js';
import type { ShootNetworking } from '../../src/extensions/network/values.js';
import {
  IPV4_NODES,
  IPV6_NODES,
  IPV6_PODS,
  networkOf,
  renderFamily,
  type Family,
} from '../extensions/network/fixtures.js';
import { startManager } from '../support/gardenlet.js';
import { kubeConfig, newTestNamespace, uniqueSuffix } from '../support/kube.js';
import { waitFor } from '../support/wait.js';

const DRY_RUN_MANAGER = 'calico-dry-run-test';

beforeAll(async () => {
  const crds = renderFamily('dual').filter((m) => m.kind === 'CustomResourceDefinition');
  await installCRDs(
    kubeConfig(),
    [...crds, managedResourceCRD] as unknown as V1CustomResourceDefinition[],
    Date.now() + 60_000,
  );
});

/** Server-side apply with dryRun=All: admission and validation run, nothing is stored. */
async function dryRunApply(object: object): Promise<KubernetesObject> {
  return KubernetesObjectApi.makeApiClient(kubeConfig()).patch(
    object as KubernetesObject,
    undefined,
    'All',
    DRY_RUN_MANAGER,
    true,
    PatchStrategy.ServerSideApply,
  );
}

/** Realistic configs per family: every kind of object the chart renders appears in one of them. */
const DRY_RUN_CASES: [string, Family, NetworkConfig, ShootNetworking][] = [
  ['ipv4, defaults', 'ipv4', {}, {}],
  [
    'ipv4, overlay off, typha off',
    'ipv4',
    { overlay: { enabled: false }, typha: { enabled: false } },
    { nodes: IPV4_NODES },
  ],
  [
    'ipv4, vxlan overlay, static requests',
    'ipv4',
    {
      overlay: { enabled: true },
      vxlan: { enabled: true },
      autoScaling: { mode: 'static', resources: { node: { cpu: '500m' } } },
    },
    {},
  ],
  ['ipv6, defaults', 'ipv6', {}, {}],
  [
    'ipv6, overlay off, typha off, SNAT to upstream DNS',
    'ipv6',
    {
      overlay: { enabled: false },
      typha: { enabled: false },
      snatToUpstreamDNS: { enabled: true },
      ipv6: { sourceNATEnabled: true },
    },
    { nodes: IPV6_NODES, statusNodes: [IPV6_NODES] },
  ],
  [
    'ipv6, overlay on, ebpf, wireguard',
    'ipv6',
    {
      overlay: { enabled: true },
      ebpfDataplane: { enabled: true },
      wireguardEncryption: true,
      serviceLoopPrevention: 'Reject',
    },
    { kubeProxy: { enabled: false } },
  ],
  ['dual, defaults', 'dual', {}, {}],
  [
    'dual, overlay off with pod routes',
    'dual',
    { overlay: { enabled: false, createPodRoutes: true } },
    { nodes: IPV4_NODES },
  ],
];

describe('server-side dry-run apply of the rendered calico manifests', () => {
  it.each(DRY_RUN_CASES)('%s: the API server accepts every object', async (_name, family, config, shoot) => {
    const manifests = renderFamily(family, config, shoot);
    const rejected: string[] = [];
    for (const manifest of manifests) {
      try {
        const answer: KubernetesObject = await dryRunApply(manifest);
        expect(answer.metadata?.name).toBe(manifest.metadata.name);
      } catch (e) {
        const body = (e as { body?: unknown }).body;
        rejected.push(`${manifest.kind} ${manifest.metadata.name}: ${typeof body === 'string' ? body : String(e)}`);
      }
    }
    expect(rejected).toEqual([]);
  });
});

describe('NetworkReconciler against the API server', () => {
  it('writes the Secret and the ManagedResource, reports the status, and cleans up on deletion', async () => {
    const namespace = await newTestNamespace('shoot--calico');
    const client = new ResourceClient(kubeConfig());
    // With an overlay statement both pools are rendered (without one, calico-node makes the IPv4 pool itself).
    const network = networkOf('dual', { providerConfig: { overlay: { enabled: true } } });
    network.metadata = { name: 'a', namespace };
    await client.create(networkRef, network as unknown as KubernetesObject);

    const reconciler = new NetworkReconciler({
      client,
      shoots: { shootNetworking: async () => ({ statusPods: [IPV6_PODS] }) },
    });
    const ctx = { signal: new AbortController().signal, logger: silentLogger() };
    await reconciler.reconcile({ namespace, name: 'a' }, ctx);

    const reconciled = (await client.get(networkRef, 'a', namespace)) as unknown as Network;
    expect(reconciled.metadata.finalizers).toEqual([FINALIZER]);
    expect(reconciled.status).toMatchObject({
      ipFamilies: ['IPv4', 'IPv6'],
      providerStatus: { apiVersion: 'calico.networking.extensions.gardener.cloud/v1alpha1', kind: 'NetworkStatus' },
      observedGeneration: 1,
      lastOperation: { type: 'Create', state: 'Succeeded', progress: 100 },
    });
    const mr = await client.get(Refs.managedResource, MANAGED_RESOURCE_NAME, namespace);
    expect(mr).toMatchObject({ spec: { secretRefs: [{ name: SECRET_NAME }] } });
    const secret = (await client.get(Refs.secret, SECRET_NAME, namespace)) as unknown as {
      data: Record<string, string>;
    };
    const pools = Object.values(secret.data)
      .map((d) => parse(Buffer.from(d, 'base64').toString('utf8')))
      .filter((o) => o.kind === 'IPPool');
    expect(pools.map((p) => p.spec.cidr)).toEqual(['100.96.0.0/11', IPV6_PODS]);

    await client.delete(networkRef, 'a', namespace);
    await reconciler.reconcile({ namespace, name: 'a' }, ctx);
    expect(await client.get(networkRef, 'a', namespace)).toBeUndefined();
    expect(await client.get(Refs.managedResource, MANAGED_RESOURCE_NAME, namespace)).toBeUndefined();
    expect(await client.get(Refs.secret, SECRET_NAME, namespace)).toBeUndefined();
  });
});

describe('the network extension on a manager', () => {
  /** A namespace deleted when the test ends. */
  async function namespace(name: string): Promise<void> {
    const core = kubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name } } });
    onTestFinished(async () => {
      await core.deleteNamespace({ name }).catch(() => undefined);
    });
  }

  it('reconciles a dual-stack Network once its Cluster carries the IPv6 pod range, and deletes it', async () => {
    const project = `c${uniqueSuffix()}`;
    const seedNamespace = `shoot--${project}--a`;
    await namespace(`garden-${project}`);
    await namespace(seedNamespace);
    const client = new ResourceClient(kubeConfig());
    const running = await startManager(kubeConfig(), (manager) => addNetworkExtension(manager));
    onTestFinished(() => running.stop());

    // The Shoot as the gardenlet hands it to the extensions: in the seed namespace's Cluster.
    const shoot = {
      apiVersion: 'core.gardener.cloud/v1beta1',
      kind: 'Shoot',
      metadata: { name: 'a', namespace: `garden-${project}` },
      spec: {
        cloudProfile: { name: 'local' },
        region: 'local',
        provider: { type: 'local' },
        networking: { type: 'calico' },
      },
    };
    const cluster = (embedded: object) =>
      ({
        apiVersion: 'extensions.gardener.cloud/v1alpha1',
        kind: 'Cluster',
        metadata: { name: seedNamespace },
        spec: { cloudProfile: {}, seed: {}, shoot: embedded },
      }) as KubernetesObject;
    await client.create(Refs.cluster, cluster(shoot));
    onTestFinished(async () => {
      await client.delete(Refs.cluster, seedNamespace);
    });
    const network = networkOf('dual');
    network.metadata = {
      name: 'a',
      namespace: seedNamespace,
      labels: { 'project.gardener.cloud/name': project, 'shoot.gardener.cloud/name': 'a' },
    };
    await client.create(networkRef, network as unknown as KubernetesObject);
    const status = async () => ((await client.get(networkRef, 'a', seedNamespace)) as unknown as Network)?.status;

    const failed = await waitFor(
      async () => ((await status())?.lastOperation?.state === 'Error' ? status() : undefined),
      {
        message: 'the Network to report the missing IPv6 pod range',
      },
    );
    expect(failed?.lastOperation?.description).toContain('IPv6 pod range');

    await client.apply(
      Refs.cluster,
      cluster({ ...shoot, status: { networking: { pods: ['100.96.0.0/11', IPV6_PODS] } } }),
      { fieldManager: 'gardenlet', force: true },
    );
    const succeeded = await waitFor(
      async () => ((await status())?.lastOperation?.state === 'Succeeded' ? status() : undefined),
      { message: 'the Network to succeed' },
    );
    expect(succeeded?.ipFamilies).toEqual(['IPv4', 'IPv6']);
    expect(succeeded).not.toHaveProperty('lastError');
    expect(await client.get(Refs.managedResource, MANAGED_RESOURCE_NAME, seedNamespace)).toBeDefined();

    await client.delete(networkRef, 'a', seedNamespace);
    await waitFor(async () => (await client.get(networkRef, 'a', seedNamespace)) === undefined, {
      message: 'the Network to be deleted',
    });
    expect(await client.get(Refs.secret, SECRET_NAME, seedNamespace)).toBeUndefined();
  });
});
