/**
 * The gardenlet against the real API server: what an IPv6, IPv4 and dual-stack Shoot yields in the seed, the
 * migration between them, deletion, and convergence after a controller restart.
 */
import type { KubernetesObject, V1NetworkPolicy, V1Service } from '@kubernetes/client-node';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import type { DNSRecord } from '../../src/apis/extensions/v1alpha1/dnsrecord.js';
import type { Network } from '../../src/apis/extensions/v1alpha1/network.js';
import type { OperatingSystemConfig } from '../../src/apis/extensions/v1alpha1/operatingsystemconfig.js';
import { Refs } from '../../src/apis/refs.js';
import { ResourceClient } from '../../src/runtime/client.js';
import { retryOnConflict } from '../../src/runtime/retry.js';
import { newLogger } from '../../src/runtime/log.js';
import { OBJECTS_ONLY_DESCRIPTION } from '../../src/gardenlet/shoot/reconciler.js';
import { createSeed as createSeedOf, startGardenlet, type RunningControllers } from '../support/gardenlet.js';
import { kubeConfig, newTestNamespace } from '../support/kube.js';
import { seedDualStackMigrationNetworks, seedIPv6Networks } from '../fixtures/objects.js';
import { waitFor } from '../support/wait.js';

const client = new ResourceClient(kubeConfig());
let gardenlet: RunningControllers;

beforeAll(async () => {
  gardenlet = await startGardenlet(kubeConfig());
});
afterAll(async () => {
  await gardenlet?.stop();
});

const SEED_NETWORKS = { ipv6: seedIPv6Networks, dual: seedDualStackMigrationNetworks };

const createSeed = (networks: Record<string, unknown>) => createSeedOf(client, networks);

async function createShoot(namespace: string, seedName: string, networking: Record<string, unknown>): Promise<Shoot> {
  return client.create(Refs.shoot, {
    apiVersion: 'core.gardener.cloud/v1beta1',
    kind: 'Shoot',
    metadata: { name: 'alpha', namespace },
    spec: {
      seedName,
      region: 'local',
      provider: { type: 'local', workers: [{ name: 'w1', machine: { type: 'local' }, minimum: 1, maximum: 1 }] },
      networking: { type: 'calico', ...networking },
    },
  } as KubernetesObject) as Promise<Shoot>;
}

function seedNamespaceOf(namespace: string): string {
  return `shoot--${namespace.replace(/^garden-/, '')}--alpha`;
}

async function shootSucceeded(namespace: string, generation?: number): Promise<Shoot> {
  return waitFor(
    async () => {
      const shoot = await client.get<Shoot & KubernetesObject>(Refs.shoot, 'alpha', namespace);
      const op = shoot?.status?.lastOperation;
      const observed = shoot?.status?.observedGeneration;
      return op?.state === 'Succeeded' && (generation === undefined || observed === generation) ? shoot : undefined;
    },
    { timeoutMs: 30_000, message: `shoot ${namespace}/alpha to succeed` },
  );
}

async function records(seedNamespace: string): Promise<DNSRecord[]> {
  return (await client.list<DNSRecord & KubernetesObject>(Refs.dnsRecord, { namespace: seedNamespace })).items.sort(
    (a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
  );
}

async function sysctls(seedNamespace: string): Promise<string[]> {
  const osc = await client.get<OperatingSystemConfig & KubernetesObject>(
    Refs.operatingSystemConfig,
    'alpha-worker-w1',
    seedNamespace,
  );
  return osc?.spec.files?.[0]?.content.inline?.data.trim().split('\n') ?? [];
}

async function policyCIDRs(seedNamespace: string): Promise<Record<string, string[]>> {
  const policies = (await client.list<V1NetworkPolicy>(Refs.networkPolicy, { namespace: seedNamespace })).items;
  return Object.fromEntries(
    policies.map((p) => [
      p.metadata?.name ?? '',
      (p.spec?.egress ?? []).flatMap((r) => r.to ?? []).flatMap((t) => (t.ipBlock ? [t.ipBlock.cidr] : [])),
    ]),
  );
}

describe('gardenlet on the real API server', () => {
  it('reconciles an IPv6 shoot into IPv6-only networking objects', async () => {
    const namespace = await newTestNamespace('garden-e2e');
    const seedName = await createSeed(SEED_NETWORKS.ipv6);
    await createShoot(namespace, seedName, {
      ipFamilies: ['IPv6'],
      nodes: 'fd00:10:1:100::/56',
      pods: 'fd00:10:3::/56',
      services: 'fd00:10:4::/112',
    });
    const shoot = await shootSucceeded(namespace);
    expect(shoot.status?.lastOperation).toMatchObject({ type: 'Create', state: 'Succeeded', progress: 100 });
    // This gardenlet runs no control planes: the shoot says so.
    expect(shoot.status?.lastOperation?.description).toBe(OBJECTS_ONLY_DESCRIPTION);
    expect(shoot.metadata.finalizers).toContain('gardener');
    expect(shoot.status?.networking).toEqual({
      pods: ['fd00:10:3::/56'],
      services: ['fd00:10:4::/112'],
      nodes: ['fd00:10:1:100::/56'],
    });

    const seedNamespace = seedNamespaceOf(namespace);
    const network = await client.get<Network & KubernetesObject>(Refs.network, 'alpha', seedNamespace);
    expect(network?.spec).toMatchObject({
      type: 'calico',
      ipFamilies: ['IPv6'],
      podCIDR: 'fd00:10:3::/56',
      serviceCIDR: 'fd00:10:4::/112',
    });

    const service = await client.get<V1Service>(Refs.service, 'kube-apiserver', seedNamespace);
    expect(service?.spec?.ipFamilies).toEqual(['IPv6']);
    expect(service?.spec?.clusterIPs?.every((ip) => ip.includes(':'))).toBe(true);
    const ingress = service?.status?.loadBalancer?.ingress?.map((i) => i.ip);
    expect(ingress).toEqual(['::1']);

    expect((await records(seedNamespace)).map((r) => [r.metadata.name, r.spec.recordType, r.spec.values])).toEqual([
      ['alpha-external-v6', 'AAAA', ingress],
      ['alpha-internal-v6', 'AAAA', ingress],
    ]);
    expect(await sysctls(seedNamespace)).toEqual([
      'net.ipv6.conf.all.forwarding = 1',
      'net.ipv6.conf.default.forwarding = 1',
    ]);
    const cidrs = await policyCIDRs(seedNamespace);
    expect(cidrs['allow-to-public-networks']).toEqual(['::/0']);
    expect(cidrs['allow-to-private-networks']).toEqual(['fe80::/10', 'fc00::/7']);
    expect(
      Object.values(cidrs)
        .flat()
        .every((c) => c.includes(':')),
    ).toBe(true);
  });

  it('reconciles an IPv4 shoot into IPv4 objects, migrates it to dual-stack and back', async () => {
    const namespace = await newTestNamespace('garden-e2e');
    const seedName = await createSeed(SEED_NETWORKS.dual);
    const created = await createShoot(namespace, seedName, {
      nodes: '10.10.0.0/16',
      pods: '10.3.0.0/16',
      services: '10.4.0.0/16',
    });
    await shootSucceeded(namespace, created.metadata.generation);
    const seedNamespace = seedNamespaceOf(namespace);

    const v4 = await records(seedNamespace);
    expect(v4.map((r) => [r.metadata.name, r.spec.recordType, r.spec.values])).toEqual([
      ['alpha-external', 'A', ['127.0.0.1']],
      ['alpha-internal', 'A', ['127.0.0.1']],
    ]);
    expect(await sysctls(seedNamespace)).toEqual([
      'net.ipv4.conf.all.forwarding = 1',
      'net.ipv4.conf.default.forwarding = 1',
    ]);
    expect(
      (await client.get<Network & KubernetesObject>(Refs.network, 'alpha', seedNamespace))?.spec.ipFamilies,
    ).toEqual(['IPv4']);

    // [IPv4] → [IPv4, IPv6]
    const migrated = await retryOnConflict(async () => {
      const shoot = (await client.get<Shoot & KubernetesObject>(Refs.shoot, 'alpha', namespace))!;
      shoot.spec.networking!.ipFamilies = ['IPv4', 'IPv6'];
      return client.update(Refs.shoot, shoot as KubernetesObject);
    });
    const dual = await shootSucceeded(namespace, migrated.metadata?.generation);
    expect(dual.status?.networking?.pods).toEqual(['10.3.0.0/16', 'fd00:10:3::/56']);
    const both = await records(seedNamespace);
    expect(both.map((r) => [r.metadata.name, r.spec.recordType, r.spec.values])).toEqual([
      ['alpha-external', 'A', ['127.0.0.1']],
      ['alpha-external-v6', 'AAAA', ['::1']],
      ['alpha-internal', 'A', ['127.0.0.1']],
      ['alpha-internal-v6', 'AAAA', ['::1']],
    ]);
    // The A records were left alone: same objects, same generation.
    for (const before of v4) {
      const after = both.find((r) => r.metadata.name === before.metadata.name)!;
      expect([after.metadata.uid, after.metadata.generation]).toEqual([
        before.metadata.uid,
        before.metadata.generation,
      ]);
    }
    expect(await sysctls(seedNamespace)).toEqual([
      'net.ipv4.conf.all.forwarding = 1',
      'net.ipv4.conf.default.forwarding = 1',
      'net.ipv6.conf.all.forwarding = 1',
      'net.ipv6.conf.default.forwarding = 1',
    ]);
    const service = await client.get<V1Service>(Refs.service, 'kube-apiserver', seedNamespace);
    expect(service?.spec).toMatchObject({ ipFamilies: ['IPv4', 'IPv6'], ipFamilyPolicy: 'RequireDualStack' });

    // [IPv4, IPv6] → [IPv4]
    const back = await retryOnConflict(async () => {
      const shoot = (await client.get<Shoot & KubernetesObject>(Refs.shoot, 'alpha', namespace))!;
      shoot.spec.networking!.ipFamilies = ['IPv4'];
      return client.update(Refs.shoot, shoot as KubernetesObject);
    });
    await shootSucceeded(namespace, back.metadata?.generation);
    expect((await records(seedNamespace)).map((r) => r.metadata.name)).toEqual(['alpha-external', 'alpha-internal']);
    expect(await sysctls(seedNamespace)).toEqual([
      'net.ipv4.conf.all.forwarding = 1',
      'net.ipv4.conf.default.forwarding = 1',
    ]);
  });

  it('deletes everything it created when the shoot is deleted', async () => {
    const namespace = await newTestNamespace('garden-e2e');
    const seedName = await createSeed(SEED_NETWORKS.ipv6);
    await createShoot(namespace, seedName, {
      ipFamilies: ['IPv6'],
      pods: 'fd00:10:3::/56',
      services: 'fd00:10:4::/112',
    });
    await shootSucceeded(namespace);
    const seedNamespace = seedNamespaceOf(namespace);
    await client.delete(Refs.shoot, 'alpha', namespace);
    await waitFor(async () => (await client.get(Refs.shoot, 'alpha', namespace)) === undefined, {
      timeoutMs: 60_000,
      message: 'the shoot to be gone',
    });
    expect(await client.get(Refs.namespace, seedNamespace)).toBeUndefined();
    expect((await client.list(Refs.dnsRecord, { namespace: seedNamespace })).items).toEqual([]);
    expect((await client.list(Refs.network, { namespace: seedNamespace })).items).toEqual([]);
  });

  it('converges to the same objects after the controllers restart in the middle of a reconcile', async () => {
    const namespace = await newTestNamespace('garden-e2e');
    const seedName = await createSeed(SEED_NETWORKS.ipv6);
    await gardenlet.stop();
    const created = await createShoot(namespace, seedName, {
      ipFamilies: ['IPv6'],
      pods: 'fd00:10:3::/56',
      services: 'fd00:10:4::/112',
    });
    // Run until the namespace exists, then stop: the reconcile is cut short.
    gardenlet = await startGardenlet(kubeConfig());
    const seedNamespace = seedNamespaceOf(namespace);
    await waitFor(() => client.get(Refs.namespace, seedNamespace), { message: 'the seed namespace' });
    await gardenlet.stop();
    gardenlet = await startGardenlet(kubeConfig());
    await shootSucceeded(namespace, created.metadata.generation);
    expect((await records(seedNamespace)).map((r) => r.metadata.name)).toEqual([
      'alpha-external-v6',
      'alpha-internal-v6',
    ]);
    expect(Object.keys(await policyCIDRs(seedNamespace)).sort()).toEqual([
      'allow-to-dns',
      'allow-to-private-networks',
      'allow-to-public-networks',
      'deny-all',
    ]);
    expect((await client.list(Refs.network, { namespace: seedNamespace })).items).toHaveLength(1);
  });

  it('runs a succeeded shoot again for the operation annotation or its sync period, not for any event', async () => {
    const namespace = await newTestNamespace('garden-e2e');
    const seedName = await createSeed(SEED_NETWORKS.ipv6);
    // The shared gardenlet again, logging at debug into `lines`: a request that runs nothing says so there.
    const lines: { msg?: string; namespace?: string; reason?: string }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(
          ...chunk
            .toString()
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l) as (typeof lines)[number]),
        );
        done();
      },
    });
    const restart = async (options: { shootSyncPeriodMs?: number } = {}) => {
      await gardenlet.stop();
      gardenlet = await startGardenlet(kubeConfig(), options, newLogger({ level: 'debug', destination: sink }));
    };
    const ours = (msg: string) => lines.filter((l) => l.msg === msg && l.namespace === namespace);
    const setMetadata = (metadata: Record<string, unknown>) =>
      client.mergePatch(Refs.shoot, 'alpha', namespace, { metadata });
    await restart();
    const created = await createShoot(namespace, seedName, {
      ipFamilies: ['IPv6'],
      pods: 'fd00:10:3::/56',
      services: 'fd00:10:4::/112',
    });
    const done = await shootSucceeded(namespace, created.metadata.generation);
    expect(done.status?.lastOperation?.type).toBe('Create');
    // The reconcile is logged once the flow's status is written and its inputs are read again: a moment later.
    await waitFor(() => ours('shoot reconciled').length > 0, { message: 'the reconcile logged' });
    expect(ours('shoot reconciled').map((l) => l.reason)).toEqual(['not reconciled by this gardenlet yet']);

    // An event of the shoot that changes none of its inputs: the request runs nothing.
    const upToDate = ours('shoot is up to date').length;
    const runs = ours('reconciling shoot').length;
    await setMetadata({ labels: { team: 'network' } });
    await waitFor(() => ours('shoot is up to date').length > upToDate, {
      message: 'the labelled shoot to be looked at',
    });
    expect(ours('reconciling shoot')).toHaveLength(runs);
    const after = await client.get<Shoot & KubernetesObject>(Refs.shoot, 'alpha', namespace);
    expect(after?.status?.lastOperation).toEqual(done.status?.lastOperation);
    expect(ours('shoot reconciled')).toHaveLength(1);

    // gardener.cloud/operation=reconcile runs it, as a Reconcile, and is taken away.
    await setMetadata({ annotations: { 'gardener.cloud/operation': 'reconcile' } });
    const again = await waitFor(
      async () => {
        const s = await client.get<Shoot & KubernetesObject>(Refs.shoot, 'alpha', namespace);
        const op = s?.status?.lastOperation;
        return op?.type === 'Reconcile' && op.state === 'Succeeded' && ours('shoot reconciled').length === 2
          ? s
          : undefined;
      },
      { message: 'the annotated shoot to be reconciled' },
    );
    expect(again.metadata.annotations?.['gardener.cloud/operation']).toBeUndefined();
    expect(ours('shoot reconciled')[1]?.reason).toBe('operation annotation reconcile');

    // A restarted gardenlet runs it once; with a sync period of 1 s, again a second later.
    await restart({ shootSyncPeriodMs: 1_000 });
    await waitFor(() => ours('shoot reconciled').some((l) => l.reason === 'sync period'), {
      timeoutMs: 20_000,
      message: 'a reconcile for the sync period',
    });
    expect(
      ours('shoot reconciled')
        .slice(2, 4)
        .map((l) => l.reason),
    ).toEqual(['not reconciled by this gardenlet yet', 'sync period']);
    await restart();
  });
});
