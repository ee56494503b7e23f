import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Network } from '../../../src/apis/extensions/v1alpha1/network.js';
import { Refs } from '../../../src/apis/refs.js';
import { MANAGED_RESOURCE_NAME, SECRET_NAME } from '../../../src/extensions/network/actuator.js';
import { shootOf, type ShootNetworkingSource } from '../../../src/extensions/network/cluster.js';
import { FINALIZER, NetworkReconciler, networkRef } from '../../../src/extensions/network/reconciler.js';
import { MissingPodCIDRError } from '../../../src/extensions/network/values.js';
import { FakeClock } from '../../../src/runtime/clock.js';
import { TerminalError } from '../../../src/runtime/controller.js';
import { silentLogger } from '../../../src/runtime/log.js';
import { FakeClient } from './fake-client.js';
import { dualStackNetwork, ipv4Network, ipv6Network, IPV4_PODS, IPV6_PODS } from './fixtures.js';

const NS = 'shoot--dev--a';
const REQ = { namespace: NS, name: 'a' };

function setup(network?: Network, opts: { shoots?: ShootNetworkingSource; availableImages?: string[] } = {}) {
  const client = new FakeClient();
  if (network) client.seed(networkRef, network);
  const clock = new FakeClock();
  const reconciler = new NetworkReconciler({ client: client.asClient(), clock, ...opts });
  const ctx = { signal: new AbortController().signal, logger: silentLogger() };
  const reconcile = () => reconciler.reconcile(REQ, ctx);
  const current = () => client.peek<Network>(networkRef, 'a', NS);
  const secretObjects = () => {
    const secret = client.peek<{ data: Record<string, string> }>(Refs.secret, SECRET_NAME, NS);
    return Object.values(secret?.data ?? {}).map((d) => parse(Buffer.from(d, 'base64').toString('utf8')));
  };
  return { client, clock, reconcile, current, secretObjects };
}

const shoot = (pods?: string[]) => ({
  apiVersion: 'core.gardener.cloud/v1beta1',
  kind: 'Shoot',
  metadata: { name: 'a', namespace: 'garden-dev' },
  spec: {},
  ...(pods ? { status: { networking: { pods } } } : {}),
});

/** The shoot's Cluster in the seed, as the gardenlet writes it: named after the seed namespace. */
const cluster = (embedded: object) => ({
  apiVersion: 'extensions.gardener.cloud/v1alpha1',
  kind: 'Cluster',
  metadata: { name: NS },
  spec: { shoot: embedded, seed: {}, cloudProfile: {} },
});

describe('NetworkReconciler', () => {
  it('does nothing for a missing Network or one of another type', async () => {
    const missing = setup();
    await expect(missing.reconcile()).resolves.toBeUndefined();
    const cilium = setup(ipv4Network({ type: 'cilium' }));
    await cilium.reconcile();
    expect(cilium.client.calls.filter((c) => c.method !== 'get')).toEqual([]);
    expect(cilium.current()?.metadata.finalizers).toBeUndefined();
  });

  it('adds its finalizer, writes the Secret and the ManagedResource, and reports success', async () => {
    const { client, reconcile, current, secretObjects } = setup(ipv4Network());
    await expect(reconcile()).resolves.toBeUndefined();
    const network = current()!;
    expect(network.metadata.finalizers).toEqual([FINALIZER]);
    expect(network.status).toEqual({
      ipFamilies: ['IPv4'],
      providerStatus: { apiVersion: 'calico.networking.extensions.gardener.cloud/v1alpha1', kind: 'NetworkStatus' },
      observedGeneration: 1,
      lastOperation: {
        type: 'Create',
        state: 'Succeeded',
        progress: 100,
        description: `calico deployed for IPv4 (33 objects in ManagedResource ${MANAGED_RESOURCE_NAME})`,
        lastUpdateTime: '2026-11-21T20:00:00Z',
      },
      // No resource manager has looked at the ManagedResource yet.
      conditions: [
        {
          type: 'SystemComponentsHealthy',
          status: 'Unknown',
          reason: 'ResourcesPending',
          message: `ManagedResource ${MANAGED_RESOURCE_NAME} not checked yet`,
          lastTransitionTime: '2026-11-21T20:00:00Z',
          lastUpdateTime: '2026-11-21T20:00:00Z',
        },
      ],
    });
    const mr = client.peek(Refs.managedResource, MANAGED_RESOURCE_NAME, NS);
    expect(mr).toMatchObject({ spec: { secretRefs: [{ name: SECRET_NAME }] } });
    const objects = secretObjects();
    expect(objects).toHaveLength(33);
    // IPv4 without an overlay statement: calico-node creates the pool from its env, none is rendered.
    expect(objects.filter((o) => o.kind === 'IPPool')).toEqual([]);
    expect(objects.filter((o) => o.kind === 'Deployment').map((o) => o.metadata.name)).toEqual([
      'calico-typha',
      'calico-kube-controllers',
    ]);
  });

  it('withholds the workloads whose images the machines lack, and says so in SystemComponentsHealthy', async () => {
    const { reconcile, current, secretObjects } = setup(ipv4Network(), { availableImages: ['some/other:1'] });
    await expect(reconcile()).resolves.toBeUndefined();
    const objects = secretObjects();
    expect(objects.filter((o) => ['DaemonSet', 'Deployment'].includes(o.kind))).toEqual([]);
    expect(objects.some((o) => o.kind === 'CustomResourceDefinition')).toBe(true);
    const health = current()!.status!.conditions!.find((c) => c.type === 'SystemComponentsHealthy')!;
    expect(health).toMatchObject({ status: 'False', reason: 'ComponentsNotDeployed' });
    expect(health.message).toMatch(/DaemonSet kube-system\/calico-node \([^)]*calico\/node[^)]*\)/);
    expect(health.message).toContain('Deployment kube-system/calico-kube-controllers');
  });

  it('writes no status when nothing but timestamps would change', async () => {
    const { client, clock, reconcile, current } = setup(ipv6Network());
    const statusWrites = () => client.callsOf('mergePatch', 'Network', 'status').length;
    await reconcile();
    expect(statusWrites()).toBe(1);
    // The first success was a Create; from now on it is a Reconcile (one more write), then nothing changes.
    await clock.advance(60_000);
    await reconcile();
    expect(current()!.status!.lastOperation).toMatchObject({ type: 'Reconcile', state: 'Succeeded' });
    await clock.advance(60_000);
    await reconcile();
    expect(statusWrites()).toBe(2);
    // The manifests are applied every time (server-side apply is idempotent), so drift is corrected.
    expect(client.callsOf('apply', 'Secret')).toHaveLength(3);
  });

  it('takes the second pod range of a dual-stack Network from the Shoot status', async () => {
    const network = dualStackNetwork({ providerConfig: { overlay: { enabled: true } } });
    const { client, reconcile, current, secretObjects } = setup(network);
    client.seed(Refs.cluster, cluster(shoot([IPV4_PODS, 'fd00:10:3::/56', 'fd00:99::/56'])));
    await reconcile();
    expect(current()!.status).toMatchObject({ ipFamilies: ['IPv4', 'IPv6'], lastOperation: { state: 'Succeeded' } });
    const pools = secretObjects().filter((o) => o.kind === 'IPPool');
    expect(pools.map((p) => [p.metadata.name, p.spec.cidr])).toEqual([
      ['default-ipv4-ippool', IPV4_PODS],
      ['default-ipv6-ippool', IPV6_PODS],
    ]);
  });

  it('reports a missing second pod range as an error and retries until the Shoot has it', async () => {
    const { client, reconcile, current } = setup(dualStackNetwork());
    client.seed(Refs.cluster, cluster(shoot([IPV4_PODS])));
    const error = await reconcile().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MissingPodCIDRError);
    expect(error).not.toBeInstanceOf(TerminalError);
    expect(current()!.status).toMatchObject({
      lastOperation: { type: 'Create', state: 'Error', description: expect.stringContaining('IPv6 pod range') },
      lastError: { description: expect.stringContaining('IPv6 pod range') },
    });
    expect(current()!.status!.lastError!.codes).toBeUndefined();
    expect(client.peek(Refs.secret, SECRET_NAME, NS)).toBeUndefined();

    client.seed(Refs.cluster, cluster(shoot([IPV4_PODS, IPV6_PODS])));
    await reconcile();
    expect(current()!.status).toMatchObject({
      ipFamilies: ['IPv4', 'IPv6'],
      lastOperation: { type: 'Create', state: 'Succeeded' },
    });
    expect(current()!.status).not.toHaveProperty('lastError');
  });

  it("reads no shoot from a Cluster that embeds another shoot than the Network's", async () => {
    const { client, reconcile } = setup(dualStackNetwork());
    client.seed(
      Refs.cluster,
      cluster({ ...shoot([IPV4_PODS, IPV6_PODS]), metadata: { name: 'b', namespace: 'garden-dev' } }),
    );
    await expect(reconcile()).rejects.toBeInstanceOf(MissingPodCIDRError);
    client.seed(Refs.cluster, cluster(shoot([IPV4_PODS, IPV6_PODS])));
    await expect(reconcile()).resolves.toBeUndefined();
  });

  it('uses an injected source of the shoot networking', async () => {
    const asked: string[] = [];
    const shoots: ShootNetworkingSource = {
      shootNetworking: async (network) => {
        asked.push(network.metadata.name ?? '');
        return { statusPods: [IPV6_PODS, IPV4_PODS] };
      },
    };
    const network = dualStackNetwork({ ipFamilies: ['IPv6', 'IPv4'], podCIDR: IPV6_PODS });
    const { reconcile, current } = setup(network, { shoots });
    await reconcile();
    expect(asked).toEqual(['a']);
    expect(current()!.status!.ipFamilies).toEqual(['IPv4', 'IPv6']);
  });

  it("renders with the shoot's node ranges and reports kube-proxy off without ebpf as a configuration problem", async () => {
    const network = ipv4Network({ providerConfig: { overlay: { enabled: false } } });
    const { client, reconcile, secretObjects } = setup(network);
    client.seed(
      Refs.cluster,
      cluster({ ...shoot([IPV4_PODS]), spec: { networking: { type: 'calico', nodes: '10.250.0.0/16' } } }),
    );
    await reconcile();
    const pools = secretObjects().filter((o) => o.kind === 'IPPool');
    expect(pools.map((p) => [p.metadata.name, p.spec.cidr])).toEqual([
      ['default-ipv4-ippool', IPV4_PODS],
      ['no-snat-for-node-cidr', '10.250.0.0/16'],
    ]);

    const other = setup(ipv6Network());
    other.client.seed(
      Refs.cluster,
      cluster({
        ...shoot([IPV6_PODS]),
        spec: { networking: { type: 'calico' }, kubernetes: { kubeProxy: { enabled: false } } },
      }),
    );
    const error = await other.reconcile().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TerminalError);
    expect(other.current()!.status!.lastError).toMatchObject({
      description: expect.stringContaining('Disabling kube-proxy is forbidden'),
      codes: ['ERR_CONFIGURATION_PROBLEM'],
    });
  });

  it('reports an invalid providerConfig as a configuration problem and does not retry', async () => {
    const { client, reconcile, current } = setup(ipv6Network({ providerConfig: { ipv6: { pool: 'ipip' } } }));
    const error = await reconcile().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TerminalError);
    const status = current()!.status!;
    expect(status.lastOperation).toMatchObject({
      state: 'Error',
      description: expect.stringContaining('spec.providerConfig.ipv6.pool'),
    });
    expect(status.lastError).toMatchObject({ codes: ['ERR_CONFIGURATION_PROBLEM'] });
    expect(status.observedGeneration).toBe(1);
    expect(client.callsOf('apply')).toEqual([]);
  });

  it('reports a failed write and rethrows it for a retry', async () => {
    const { client, reconcile, current } = setup(ipv4Network());
    client.failures.push({ method: 'apply', kind: 'ManagedResource', error: new Error('connection reset') });
    await expect(reconcile()).rejects.toThrow('connection reset');
    expect(current()!.status!.lastOperation).toMatchObject({
      state: 'Error',
      description: 'cannot write the calico manifests: connection reset',
    });
    await reconcile();
    expect(current()!.status!.lastOperation).toMatchObject({ type: 'Create', state: 'Succeeded' });
  });

  it('switches from Create to Reconcile after the first success', async () => {
    const { client, reconcile, current } = setup(ipv4Network());
    await reconcile();
    const network = current()!;
    client.seed(networkRef, {
      ...network,
      spec: { ...network.spec, providerConfig: { ipv4: { mode: 'Never' } } },
      metadata: { ...network.metadata, generation: 2 },
    });
    await reconcile();
    expect(current()!.status).toMatchObject({
      observedGeneration: 2,
      lastOperation: { type: 'Reconcile', state: 'Succeeded' },
    });
  });

  describe('deletion', () => {
    it('deletes the ManagedResource, waits until it is gone, then deletes the Secret and drops the finalizer', async () => {
      const { client, reconcile, current } = setup(ipv4Network());
      await reconcile();
      // A resource manager holds the ManagedResource while it removes the objects from the shoot.
      const mr = client.peek(Refs.managedResource, MANAGED_RESOURCE_NAME, NS)!;
      client.seed(Refs.managedResource, {
        ...mr,
        metadata: { ...mr.metadata, finalizers: ['resources.gardener.cloud/gardener-resource-manager'] },
      });
      await client.delete(networkRef, 'a', NS);

      await expect(reconcile()).resolves.toEqual({ requeueAfter: 5000 });
      expect(current()!.metadata.finalizers).toEqual([FINALIZER]);
      expect(current()!.status!.lastOperation).toMatchObject({
        type: 'Delete',
        state: 'Processing',
        description: `waiting until ManagedResource ${MANAGED_RESOURCE_NAME} is deleted`,
      });
      expect(client.peek(Refs.secret, SECRET_NAME, NS)).toBeDefined();

      await client.mergePatch(Refs.managedResource, MANAGED_RESOURCE_NAME, NS, { metadata: { finalizers: null } });
      expect(client.peek(Refs.managedResource, MANAGED_RESOURCE_NAME, NS)).toBeUndefined();
      await expect(reconcile()).resolves.toBeUndefined();
      expect(client.peek(Refs.secret, SECRET_NAME, NS)).toBeUndefined();
      expect(current()).toBeUndefined();
    });

    it('finishes at once when nothing holds the ManagedResource', async () => {
      const { client, reconcile, current } = setup(ipv6Network());
      await reconcile();
      await client.delete(networkRef, 'a', NS);
      await reconcile();
      expect(current()).toBeUndefined();
      expect(client.peek(Refs.managedResource, MANAGED_RESOURCE_NAME, NS)).toBeUndefined();
      expect(client.peek(Refs.secret, SECRET_NAME, NS)).toBeUndefined();
    });

    it('leaves a Network without its finalizer alone', async () => {
      const { client, reconcile } = setup(ipv4Network());
      client.seed(networkRef, {
        ...ipv4Network(),
        metadata: { ...ipv4Network().metadata, finalizers: ['other'], deletionTimestamp: '2026-11-21T20:00:00Z' },
      });
      await reconcile();
      expect(client.calls.filter((c) => c.method !== 'get')).toEqual([]);
    });
  });
});

describe('shootOf', () => {
  it('reads the gardenlet labels', () => {
    expect(shootOf(ipv4Network())).toEqual({ namespace: 'garden-dev', name: 'a' });
    const garden = ipv4Network();
    garden.metadata.labels = { 'project.gardener.cloud/name': 'garden', 'shoot.gardener.cloud/name': 'x' };
    expect(shootOf(garden)).toEqual({ namespace: 'garden', name: 'x' });
  });
  it('falls back to the namespace shoot--<project>--<shoot>', () => {
    const network = ipv4Network();
    network.metadata = { name: 'b', namespace: 'shoot--my-proj--my-shoot' };
    expect(shootOf(network)).toEqual({ namespace: 'garden-my-proj', name: 'my-shoot' });
    network.metadata = { name: 'b', namespace: 'default' };
    expect(shootOf(network)).toBeUndefined();
  });
});
