/**
 * The resource manager against a real API server, with ManagedResources of class `seed` (the target is the same
 * server): objects applied in dependency order with the injected labels and the origin annotation, the finalizer,
 * `status.resources` and the conditions (a Deployment that can't get ready makes ResourcesHealthy False and says
 * which), pruning of what the Secret no longer holds (unless `keep-object`), a CustomResourceDefinition and an object
 * of its kind in one ManagedResource, invalid manifests reported without touching anything, and deletion with and
 * without `keepObjects`.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ManagedResource } from '../../src/apis/resources/v1alpha1/managedresource.js';
import { Refs, type ResourceRef } from '../../src/apis/refs.js';
import {
  CONDITION_APPLIED,
  CONDITION_HEALTHY,
  ManagedResourceReconciler,
} from '../../src/gardenlet/resourcemanager/reconciler.js';
import { FINALIZER, ORIGIN_ANNOTATION } from '../../src/gardenlet/resourcemanager/objects.js';
import { requestFor } from '../../src/runtime/controller.js';
import { silentLogger } from '../../src/runtime/log.js';
import { Manager } from '../../src/runtime/manager.js';
import { kubeConfig, newTestNamespace, uniqueSuffix } from '../support/kube.js';
import { waitFor } from '../support/wait.js';

const CRD_REF: ResourceRef = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  plural: 'customresourcedefinitions',
  kind: 'CustomResourceDefinition',
  namespaced: false,
};
const DEPLOYMENT: ResourceRef = {
  group: 'apps',
  version: 'v1',
  plural: 'deployments',
  kind: 'Deployment',
  namespaced: true,
};

let manager: Manager;

beforeAll(async () => {
  manager = new Manager({ kubeConfig: kubeConfig(), logger: silentLogger() });
  manager
    .controller({
      name: 'resource-manager-test',
      reconciler: new ManagedResourceReconciler({
        client: manager.client,
        target: async (mr) => (mr.spec.class === 'seed' ? { client: manager.client, cluster: 'seed' } : undefined),
        healthSyncPeriodMs: 300,
      }),
      backoff: { baseDelayMs: 100, maxDelayMs: 1_000 },
    })
    .watch(manager.informer<KubernetesObject>(Refs.managedResource), (mr) => [requestFor(mr)]);
  await manager.start();
});

afterAll(async () => {
  await manager?.stop();
});

const encode = (objects: object[]) =>
  Object.fromEntries(objects.map((o, i) => [`object-${i}.yaml`, Buffer.from(stringify(o)).toString('base64')]));

async function writeSecret(namespace: string, name: string, data: Record<string, string>): Promise<void> {
  await manager.client.apply(
    Refs.secret,
    { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, type: 'Opaque', data } as KubernetesObject,
    { fieldManager: 'test', force: true },
  );
}

async function createManagedResource(namespace: string, name: string, spec: Partial<ManagedResource['spec']> = {}) {
  await manager.client.create(Refs.managedResource, {
    apiVersion: 'resources.gardener.cloud/v1alpha1',
    kind: 'ManagedResource',
    metadata: { name, namespace },
    spec: { class: 'seed', secretRefs: [{ name }], ...spec },
  } as KubernetesObject);
}

const getMR = (namespace: string, name: string) =>
  manager.client.get<ManagedResource & KubernetesObject>(Refs.managedResource, name, namespace);
const conditionOf = (mr: ManagedResource | undefined, type: string) =>
  (mr?.status?.conditions ?? []).find((c) => c.type === type);
const configMap = (namespace: string, name: string, annotations: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace, annotations },
  data: { name },
});

describe('the resource manager', () => {
  it('applies, reports, prunes and deletes the objects of a ManagedResource', async () => {
    const ns = await newTestNamespace('mr');
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'never-ready', namespace: ns },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'x' } },
        template: {
          metadata: { labels: { app: 'x' } },
          spec: { containers: [{ name: 'x', image: 'example.invalid/x' }] },
        },
      },
    };
    await writeSecret(
      ns,
      'objects',
      encode([
        configMap(ns, 'a'),
        configMap(ns, 'b'),
        configMap(ns, 'c', { 'resources.gardener.cloud/keep-object': 'true' }),
        deployment,
      ]),
    );
    await createManagedResource(ns, 'objects', { injectLabels: { 'origin.test/injected': 'yes' } });

    const applied = await waitFor(
      async () => {
        const mr = await getMR(ns, 'objects');
        return conditionOf(mr, CONDITION_APPLIED)?.status === 'True' && conditionOf(mr, CONDITION_HEALTHY)
          ? mr
          : undefined;
      },
      { timeoutMs: 15_000, message: 'ResourcesApplied=True' },
    );
    expect(applied.metadata.finalizers).toContain(FINALIZER);
    expect(
      (applied.status!.resources as { kind: string; name: string }[]).map((r) => `${r.kind}/${r.name}`).sort(),
    ).toEqual(['ConfigMap/a', 'ConfigMap/b', 'ConfigMap/c', 'Deployment/never-ready']);
    const healthy = conditionOf(applied, CONDITION_HEALTHY)!;
    expect(healthy.status).toBe('False');
    expect(healthy.message).toContain(`Deployment ${ns}/never-ready: 0/1 replicas ready`);
    const a = await manager.client.get(Refs.configMap, 'a', ns);
    expect(a?.metadata?.labels?.['origin.test/injected']).toBe('yes');
    expect(a?.metadata?.annotations?.[ORIGIN_ANNOTATION]).toBe(`seed:${ns}/objects`);

    // b and c leave the Secret: b is pruned, c is kept.
    await writeSecret(ns, 'objects', encode([configMap(ns, 'a'), deployment]));
    await waitFor(async () => (await manager.client.get(Refs.configMap, 'b', ns)) === undefined, {
      timeoutMs: 10_000,
      message: 'b pruned',
    });
    expect(await manager.client.get(Refs.configMap, 'c', ns)).toBeDefined();

    // Invalid manifests: reported, nothing touched.
    await writeSecret(ns, 'objects', {
      'broken.yaml': Buffer.from('kind: ConfigMap\napiVersion: v1\nmetadata: [').toString('base64'),
    });
    const broken = await waitFor(
      async () => {
        const mr = await getMR(ns, 'objects');
        return conditionOf(mr, CONDITION_APPLIED)?.reason === 'DecodingFailed' ? mr : undefined;
      },
      { timeoutMs: 10_000, message: 'DecodingFailed' },
    );
    expect(conditionOf(broken, CONDITION_APPLIED)!.message).toContain('secret objects key broken.yaml');
    expect(await manager.client.get(Refs.configMap, 'a', ns)).toBeDefined();

    // Deleting it deletes what it applied, then itself.
    await writeSecret(ns, 'objects', encode([configMap(ns, 'a'), deployment]));
    await waitFor(async () => conditionOf(await getMR(ns, 'objects'), CONDITION_APPLIED)?.status === 'True', {
      timeoutMs: 10_000,
      message: 'applied again',
    });
    await manager.client.delete(Refs.managedResource, 'objects', ns);
    await waitFor(async () => (await getMR(ns, 'objects')) === undefined, { timeoutMs: 15_000, message: 'MR gone' });
    expect(await manager.client.get(Refs.configMap, 'a', ns)).toBeUndefined();
    expect(await manager.client.get(DEPLOYMENT, 'never-ready', ns)).toBeUndefined();
    expect(await manager.client.get(Refs.configMap, 'c', ns)).toBeDefined();
  }, 60_000);

  it('applies a CustomResourceDefinition and an object of its kind together, and keeps them with keepObjects', async () => {
    const ns = await newTestNamespace('mr-crd');
    const group = `rm${uniqueSuffix()}.test.gardener-ipv6.dev`;
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `widgets.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    };
    const widget = { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w', namespace: ns }, size: 3 };
    // The widget first in the Secret: the order of applying is the manager's.
    await writeSecret(ns, 'crd', encode([widget, crd]));
    await createManagedResource(ns, 'crd', { keepObjects: true });
    await waitFor(
      async () => {
        const mr = await getMR(ns, 'crd');
        return (
          conditionOf(mr, CONDITION_APPLIED)?.status === 'True' && conditionOf(mr, CONDITION_HEALTHY)?.status === 'True'
        );
      },
      { timeoutMs: 20_000, message: 'CRD and widget applied, CRD established' },
    );
    const widgetRef: ResourceRef = { group, version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true };
    expect((await manager.client.get<KubernetesObject & { size?: number }>(widgetRef, 'w', ns))?.size).toBe(3);

    await manager.client.delete(Refs.managedResource, 'crd', ns);
    await waitFor(async () => (await getMR(ns, 'crd')) === undefined, { timeoutMs: 15_000, message: 'MR gone' });
    expect(await manager.client.get(widgetRef, 'w', ns)).toBeDefined();
    await manager.client.delete(CRD_REF, `widgets.${group}`);
  }, 60_000);
});
