/**
 * One garden and a second seed cluster, each a real API server of its own: the garden runs the webhook, the
 * scheduler and the gardenlet of seed `ipv6` (garden and seed at once, as `up`), the second cluster runs the
 * gardenlet of seed `dual` with the network and DNS extensions, reaching the garden with a kubeconfig of its own
 * (`run --garden-kubeconfig`) whose credentials are a gardenlet's own (`gardener.cloud:system:seed:dual`), and
 * registering its Seed from its configuration (`run --seed-config`), as Gardener's gardenlet does. Shoots
 * created without a seed land by their IP families; each one's seed objects are written to its own seed's cluster
 * only, its status to the garden, and its DNS names reach the one BIND9. Those credentials are refused (403) what
 * belongs to the other seed. Stopping the second gardenlet turns its Seed and its shoots' conditions `Unknown` (the
 * garden's seed lifecycle, its periods shortened), nothing of the other seed; a new gardenlet heals the Seed and
 * brings it to its changed configuration.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { startRuntime, type Runtime } from '../../src/app/runtime.js';
import { deploySeedAccess, seedSubject, writeSeedKubeconfig } from '../../src/app/seed-access.js';
import { issueClientCertificate } from '../../src/localenv/certs.js';
import { decodeSeed } from '../../src/apis/admission.js';
import type { Seed } from '../../src/apis/core/v1beta1/seed.js';
import { registeredSeed, SEED_REGISTRATION_FIELD_MANAGER } from '../../src/gardenlet/seed/registration.js';
import { ApiError } from '../../src/runtime/errors.js';
import { readFileSync } from 'node:fs';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import { CONDITION_GARDENLET_READY, SEED_LEASE_NAMESPACE } from '../../src/apis/core/v1beta1/seed-lease.js';
import type { Condition } from '../../src/apis/meta/schemas.js';
import { Refs } from '../../src/apis/refs.js';
import { featureGates } from '../../src/featuregate/featuregate.js';
import { localDNSProvider } from '../../src/gardenlet/dns-provider.js';
import { startBind9, type Bind9 } from '../../src/localenv/bind9.js';
import { startControlPlane, type ControlPlane } from '../../src/localenv/control-plane.js';
import { ResourceClient } from '../../src/runtime/client.js';
import { silentLogger } from '../../src/runtime/log.js';
import { seedDualStackMigrationNetworks, seedIPv6Networks } from '../fixtures/objects.js';
import { createProjectAndSeeds } from '../support/shoot.js';
import { queryDNS } from '../support/dns.js';
import { waitFor } from '../support/wait.js';

const NAMESPACE = 'garden-dev';
/** The garden's Seeds: `dual` is its gardenlet's to register (`dualSeedConfig`). */
const SEEDS = { ipv6: seedIPv6Networks };
let dualSeedConfig: Seed = decodeSeed({
  apiVersion: 'core.gardener.cloud/v1beta1',
  kind: 'Seed',
  metadata: { name: 'dual', labels: { 'seed.gardener.cloud/purpose': 'e2e' } },
  spec: { provider: { type: 'local', region: 'local' }, networks: seedDualStackMigrationNetworks },
});
const gates = featureGates({ IPv6SingleStack: true, DualStack: true });
const extensions = {
  dns: { resyncIntervalMs: 1_000, dnsTimeoutMs: 500, backoff: { baseDelayMs: 100, maxDelayMs: 1_000 } },
};

let garden: ControlPlane;
let seedCluster: ControlPlane;
let bind: Bind9;
let gardenRuntime: Runtime;
let seedRuntime: Runtime | undefined;
/** The second seed's gardenlet (with the network and DNS extensions), as `run --garden-kubeconfig` starts it. */
let startSeedGardenlet: () => Promise<Runtime>;
/** Gardener's periods, shortened: a Lease is stale after 3 s, its seed's shoots Unknown 3 s later. */
const LEASE_RESYNC_MS = 500;
const LIFECYCLE = { monitorPeriodMs: 3_000, shootMonitorPeriodMs: 3_000, syncPeriodMs: 250 };
let gardenClient: ResourceClient;
let seedClient: ResourceClient;
/** The garden as the second seed's gardenlet reaches it. */
let asSeedDual: ResourceClient;

beforeAll(async () => {
  [garden, seedCluster, bind] = await Promise.all([startControlPlane(), startControlPlane(), startBind9()]);
  const dns = localDNSProvider({ server: bind.server, tsigKeyName: bind.tsigKeyName, tsigSecret: bind.tsigSecret });
  gardenClient = new ResourceClient(garden.kubeConfig());
  seedClient = new ResourceClient(seedCluster.kubeConfig());
  await deploySeedAccess(gardenClient);
  const dualCredentials = await issueClientCertificate(garden.certs, { file: 'seed-dual', ...seedSubject('dual') });
  const dualGardenKubeConfig = await writeSeedKubeconfig(join(garden.dir, 'seed-dual.kubeconfig'), {
    server: garden.server,
    caPEM: readFileSync(garden.certs.caCert, 'utf8'),
    seedName: 'dual',
    ...dualCredentials,
  });
  asSeedDual = new ResourceClient(dualGardenKubeConfig);
  gardenRuntime = await startRuntime({
    kubeConfig: garden.kubeConfig(),
    gates,
    logger: silentLogger(),
    webhook: { host: '::1', port: 0, advertiseHost: '::1' },
    gardenlet: { dns, seedName: 'ipv6', seedLeaseResyncMs: LEASE_RESYNC_MS },
    seedLifecycle: LIFECYCLE,
    extensions,
  });
  startSeedGardenlet = () =>
    startRuntime({
      kubeConfig: seedCluster.kubeConfig(),
      garden: dualGardenKubeConfig,
      components: ['gardenlet', 'network', 'dns'],
      gates,
      logger: silentLogger(),
      gardenlet: { dns, seedName: 'dual', seedConfig: dualSeedConfig, seedLeaseResyncMs: LEASE_RESYNC_MS },
      extensions,
    });
  await createProjectAndSeeds(gardenClient, NAMESPACE, SEEDS);
  seedRuntime = await startSeedGardenlet();
}, 120_000);

afterAll(async () => {
  await Promise.all([seedRuntime?.stop(), gardenRuntime?.stop()]);
  gardenClient?.close();
  seedClient?.close();
  asSeedDual?.close();
  await Promise.all([bind?.stop(), seedCluster?.stop(), garden?.stop()]);
});

function shootObject(name: string, networking: Record<string, unknown>): KubernetesObject {
  return {
    apiVersion: 'core.gardener.cloud/v1beta1',
    kind: 'Shoot',
    metadata: { name, namespace: NAMESPACE },
    spec: {
      cloudProfile: { name: 'local' },
      region: 'local',
      provider: { type: 'local', workers: [{ name: 'w', machine: { type: 'local' }, minimum: 1, maximum: 1 }] },
      networking: { type: 'calico', ...networking },
    },
  } as KubernetesObject;
}

async function succeeded(name: string): Promise<Shoot> {
  let last = 'no status';
  try {
    return await waitFor(
      async () => {
        const s = await gardenClient.get<Shoot & KubernetesObject>(Refs.shoot, name, NAMESPACE);
        const op = s?.status?.lastOperation;
        if (op) last = `${op.state} ${op.progress}%: ${op.description}`;
        return op?.state === 'Succeeded' ? s : undefined;
      },
      { timeoutMs: 60_000, message: `shoot ${name} to succeed` },
    );
  } catch (e) {
    throw new Error(`${(e as Error).message}; last operation: ${last}`);
  }
}

const query = (type: 'A' | 'AAAA', name: string) => queryDNS(bind.server, type, name);

type WithStatus = KubernetesObject & { status?: { conditions?: Condition[]; ipFamilies?: string[] } };

describe('a garden with a second seed cluster', () => {
  it("registers the second seed's gardenlet: its Seed from its configuration, its Lease and GardenletReady", async () => {
    const registered = await waitFor(() => gardenClient.get<KubernetesObject & { spec?: unknown }>(Refs.seed, 'dual'), {
      timeoutMs: 30_000,
      message: 'seed dual registered by its gardenlet',
    });
    expect(registered.metadata?.labels?.['seed.gardener.cloud/purpose']).toBe('e2e');
    expect(registered.spec).toEqual(
      expect.objectContaining({ networks: expect.objectContaining(seedDualStackMigrationNetworks) }),
    );
    expect(registered.metadata?.managedFields?.map((f) => f.manager)).toContain(SEED_REGISTRATION_FIELD_MANAGER);
    await waitFor(
      async () =>
        (await gardenClient.get<WithStatus>(Refs.seed, 'dual'))?.status?.conditions?.find(
          (c) => c.type === CONDITION_GARDENLET_READY,
        )?.status === 'True',
      { timeoutMs: 30_000, message: 'seed dual to be GardenletReady' },
    );
    expect(await gardenClient.get(Refs.lease, 'dual', SEED_LEASE_NAMESPACE)).toBeDefined();
    // The seed's own namespace garden, with its egress policies, is written to the seed's cluster.
    await waitFor(async () => (await seedClient.get(Refs.namespace, 'garden')) !== undefined, {
      message: "the namespace garden in the second seed's cluster",
    });
  });

  it("places shoots by IP family and writes each shoot's seed objects to its seed's cluster only", async () => {
    // The IPv6 shoot last: both seeds fit it, and the scheduler takes the one with fewer shoots.
    const shoots = {
      four: { ipFamilies: ['IPv4'], nodes: '10.10.0.0/16', pods: '10.3.0.0/16', services: '10.4.0.0/16' },
      both: { ipFamilies: ['IPv4', 'IPv6'], nodes: '10.11.0.0/16', pods: '10.5.0.0/16', services: '10.6.0.0/16' },
      six: { ipFamilies: ['IPv6'], nodes: 'fd00:10:1:100::/56' },
    };
    for (const [name, networking] of Object.entries(shoots)) {
      await gardenClient.create(Refs.shoot, shootObject(name, networking));
      await waitFor(
        async () => (await gardenClient.get<Shoot & KubernetesObject>(Refs.shoot, name, NAMESPACE))?.spec.seedName,
        { message: `shoot ${name} to be scheduled` },
      );
    }
    for (const name of Object.keys(shoots)) {
      const shoot = await succeeded(name);
      const seedName = shoot.spec.seedName!;
      const networks = seedName === 'dual' ? seedDualStackMigrationNetworks : SEEDS[seedName as keyof typeof SEEDS];
      const families = (networks.ipFamilies ?? []) as string[];
      expect(families).toEqual(expect.arrayContaining(shoot.spec.networking!.ipFamilies!));
      expect(shoot.status?.seedName).toBe(seedName);

      const namespace = `shoot--dev--${name}`;
      const [own, other] = seedName === 'dual' ? [seedClient, gardenClient] : [gardenClient, seedClient];
      expect(await own.get(Refs.namespace, namespace), `${namespace} in seed ${seedName}'s cluster`).toBeDefined();
      expect(await other.get(Refs.namespace, namespace), `${namespace} in the other cluster`).toBeUndefined();
      // The network extension of the shoot's seed read the shoot from its Cluster and reports its families.
      const network = await own.get<WithStatus>(Refs.network, name, namespace);
      expect(network?.status?.ipFamilies?.slice().sort()).toEqual(shoot.spec.networking!.ipFamilies!.slice().sort());
      const cluster = await own.get<KubernetesObject & { spec?: { shoot?: Shoot } }>(Refs.cluster, namespace);
      expect(cluster?.spec?.shoot?.status?.networking).toEqual(shoot.status?.networking);

      const apiName = `api.${name}.dev.external.local.gardener.cloud`;
      const wantA = shoot.spec.networking!.ipFamilies!.includes('IPv4') ? ['127.0.0.1'] : 'ENODATA';
      const wantAAAA = shoot.spec.networking!.ipFamilies!.includes('IPv6') ? ['::1'] : 'ENODATA';
      expect(await query('A', apiName)).toEqual(wantA);
      expect(await query('AAAA', apiName)).toEqual(wantAAAA);
    }
    expect((await gardenClient.get<Shoot & KubernetesObject>(Refs.shoot, 'four', NAMESPACE))?.spec.seedName).toBe(
      'dual',
    );
    expect((await gardenClient.get<Shoot & KubernetesObject>(Refs.shoot, 'both', NAMESPACE))?.spec.seedName).toBe(
      'dual',
    );
    expect((await gardenClient.get<Shoot & KubernetesObject>(Refs.shoot, 'six', NAMESPACE))?.spec.seedName).toBe(
      'ipv6',
    );
    // The garden holds no seed namespace of a shoot on the second seed, the second seed no Shoot.
    expect((await seedClient.list(Refs.shoot)).items).toEqual([]);
  });

  it("refuses (403) the second seed's credentials what belongs to the other seed", async () => {
    const refusal = async (write: Promise<unknown>) => {
      const e = await write.then(
        () => undefined,
        (err: unknown) => err,
      );
      return e instanceof ApiError ? { code: e.code, message: e.message } : e;
    };
    const forbidden = { code: 403, message: expect.stringContaining('seed "dual"') };
    const six = await gardenClient.get<Shoot & KubernetesObject>(Refs.shoot, 'six', NAMESPACE);
    expect(six?.spec.seedName).toBe('ipv6');
    const annotate = (name: string) =>
      asSeedDual.mergePatch(Refs.shoot, name, NAMESPACE, { metadata: { annotations: { probe: 'x' } } });
    expect(await refusal(annotate('six'))).toEqual(forbidden);
    expect(
      await refusal(
        asSeedDual.mergePatch(
          Refs.shoot,
          'six',
          NAMESPACE,
          { status: { seedName: 'dual' } },
          { subresource: 'status' },
        ),
      ),
    ).toEqual(forbidden);
    const secret = (name: string) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: NAMESPACE },
      stringData: { key: 'value' },
    });
    expect(await refusal(asSeedDual.create(Refs.secret, secret('six.ssh-keypair') as KubernetesObject))).toEqual(
      forbidden,
    );
    expect(await refusal(asSeedDual.create(Refs.secret, secret('no-shoot') as KubernetesObject))).toEqual(forbidden);
    expect(
      await refusal(asSeedDual.mergePatch(Refs.seed, 'ipv6', undefined, { metadata: { labels: { probe: 'x' } } })),
    ).toEqual(forbidden);
    const lease = (await gardenClient.get(Refs.lease, 'ipv6', SEED_LEASE_NAMESPACE))!;
    expect(await refusal(asSeedDual.update(Refs.lease, { ...lease, metadata: { ...lease.metadata } }))).toEqual(
      forbidden,
    );
    expect(await gardenClient.get(Refs.secret, 'six.ssh-keypair', NAMESPACE)).toBeUndefined();

    // Its own shoot's objects are its to write.
    await annotate('both');
    await asSeedDual.create(Refs.secret, secret('both.ssh-keypair') as KubernetesObject);
    await asSeedDual.delete(Refs.secret, 'both.ssh-keypair', NAMESPACE);
  });

  it('a stopped gardenlet turns its own Seed and shoots Unknown, nothing of the other seed; a new one heals the Seed', async () => {
    const conditionOf = async (ref: typeof Refs.seed | typeof Refs.shoot, name: string, type: string) =>
      (
        await gardenClient.get<WithStatus>(ref, name, ref === Refs.shoot ? NAMESPACE : undefined)
      )?.status?.conditions?.find((c) => c.type === type)?.status;
    // The shoots' health as a care controller would have written it (objects-only shoots have no care controller).
    for (const name of ['both', 'six']) {
      const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      await gardenClient.mergePatch(
        Refs.shoot,
        name,
        NAMESPACE,
        {
          status: {
            conditions: [
              {
                type: 'APIServerAvailable',
                status: 'True',
                reason: 'HealthzRequestSucceeded',
                message: 'API server /healthz endpoint responded with success status code.',
                lastTransitionTime: now,
                lastUpdateTime: now,
              },
            ],
          },
        },
        { subresource: 'status' },
      );
    }
    await seedRuntime!.stop();
    seedRuntime = undefined;
    await waitFor(async () => (await conditionOf(Refs.seed, 'dual', CONDITION_GARDENLET_READY)) === 'Unknown', {
      timeoutMs: 20_000,
      message: "seed dual's GardenletReady to turn Unknown",
    });
    await waitFor(async () => (await conditionOf(Refs.shoot, 'both', 'APIServerAvailable')) === 'Unknown', {
      timeoutMs: 20_000,
      message: "the condition of seed dual's shoot to turn Unknown",
    });
    expect(await conditionOf(Refs.seed, 'ipv6', CONDITION_GARDENLET_READY)).toBe('True');
    expect(await conditionOf(Refs.shoot, 'six', 'APIServerAvailable')).toBe('True');

    // Started again with a changed configuration: the Seed follows it, its status stays the garden's.
    dualSeedConfig = decodeSeed({
      ...registeredSeed(dualSeedConfig),
      metadata: { name: 'dual', labels: { 'seed.gardener.cloud/purpose': 'e2e', tier: 'second' } },
    });
    seedRuntime = await startSeedGardenlet();
    await waitFor(async () => (await conditionOf(Refs.seed, 'dual', CONDITION_GARDENLET_READY)) === 'True', {
      timeoutMs: 20_000,
      message: "seed dual's GardenletReady to be True again",
    });
    await waitFor(async () => (await gardenClient.get(Refs.seed, 'dual'))?.metadata?.labels?.tier === 'second', {
      timeoutMs: 20_000,
      message: "seed dual's label from its changed configuration",
    });
  });

  it('deletes a shoot of the second seed there and lets the garden forget it', async () => {
    await gardenClient.delete(Refs.shoot, 'four', NAMESPACE);
    await waitFor(async () => (await gardenClient.get(Refs.shoot, 'four', NAMESPACE)) === undefined, {
      timeoutMs: 60_000,
      message: 'the shoot to be gone from the garden',
    });
    await waitFor(
      async () => {
        const ns = await seedClient.get(Refs.namespace, 'shoot--dev--four');
        return ns === undefined || ns.metadata?.deletionTimestamp !== undefined;
      },
      { timeoutMs: 30_000, message: "the shoot's seed namespace to go from the second seed" },
    );
    expect(await query('A', 'api.four.dev.external.local.gardener.cloud')).toBe('ENOTFOUND');
  });
});
