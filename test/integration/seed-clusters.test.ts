/**
 * Two seed clusters under one garden, as `up --seeds ipv6,dual-stack` builds them: the garden's own API server with
 * its Nodes as seed `local-ipv6` (the webhook, the scheduler and that seed's gardenlet beside it), and seed
 * `local-dual`, a cluster of its own with its own API server, Nodes, load-balancer network and gardenlet, which
 * reaches the garden with a gardenlet's credentials. An IPv4, a dual-stack and an IPv6 shoot are created without a
 * seed: the first two land on the only seed with IPv4, the IPv6 one on the seed with fewer shoots. Each succeeds with
 * its control plane and machine on its seed's Nodes; its API server answers at the addresses its A/AAAA names have in
 * BIND9, with an admin kubeconfig from the garden; its Node is Ready with addresses of its families; pods talk to
 * each other. Stopping `local-dual`'s gardenlet turns that Seed's `GardenletReady` and its shoots' conditions
 * `Unknown` while the IPv6 shoot stays healthy; starting it again heals both.
 */
import { KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { example, machinesOptions, startLocalServices, type LocalServices } from '../../src/app/local-environment.js';
import { localSeed } from '../../src/app/local-seeds.js';
import { SeedCluster } from '../../src/app/seed-cluster.js';
import { SeedNodeNetwork, SeedNodes } from '../../src/app/seed-nodes.js';
import { ADMIN_KUBECONFIG_SUBRESOURCE, AdminKubeconfigShootRef } from '../../src/admission/admin-kubeconfig-api.js';
import {
  API_VERSION,
  KIND,
  type AdminKubeconfigRequest,
} from '../../src/apis/authentication/v1alpha1/adminkubeconfigrequest.js';
import { apiServerDomain, DEFAULT_DOMAIN } from '../../src/apis/core/v1beta1/names.js';
import { CONDITION_GARDENLET_READY } from '../../src/apis/core/v1beta1/seed-lease.js';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import type { Condition } from '../../src/apis/meta/schemas.js';
import { Refs } from '../../src/apis/refs.js';
import { localCloudProfile } from '../../src/extensions/provider-local/cloudprofile.js';
import { describeNode, nodeReady, type NodeInfo } from '../../src/extensions/provider-local/machine/api-client.js';
import { podToPodCheck } from '../../src/extensions/provider-local/worker/pod-check.js';
import { featureGates } from '../../src/featuregate/featuregate.js';
import { shootGet } from '../../src/gardenlet/shoot/shoot-get.js';
import { startControlPlane, type ControlPlane } from '../../src/localenv/control-plane.js';
import { parseIP, type IPFamily } from '../../src/net/cidr.js';
import { urlHost } from '../../src/system/net.js';
import type { CertificatePair } from '../../src/pki/certificates.js';
import { ResourceClient } from '../../src/runtime/client.js';
import { silentLogger } from '../../src/runtime/log.js';
import { machinesUnsupportedReason } from '../extensions/provider-local/machine/shoot-env.js';
import { queryDNS } from '../support/dns.js';
import { waitFor } from '../support/wait.js';

const unsupported = machinesUnsupportedReason();
const gates = featureGates({ IPv6SingleStack: true, DualStack: true });
const NAMESPACE = 'garden-local';
const [IPV6, DUAL] = [localSeed('ipv6'), localSeed('dual-stack')];
/** Gardener's periods, shortened: a Lease is stale after 5 s, its seed's shoots Unknown 5 s later. */
const LEASE_RESYNC_MS = 1_000;
const LIFECYCLE = { monitorPeriodMs: 5_000, shootMonitorPeriodMs: 5_000, syncPeriodMs: 500 };
const SHOOT_TIMEOUT_MS = 420_000;

let network: SeedNodeNetwork | undefined;
let garden: ControlPlane | undefined;
let gardenClient: ResourceClient;
let services: LocalServices | undefined;
let gardenNodes: SeedNodes | undefined;
let dualSeed: SeedCluster | undefined;

/** An example Shoot without its seed, with one machine. */
function shootOf(file: string, name: string, networking: Record<string, unknown> = {}): KubernetesObject {
  const shoot = example(file) as Shoot & KubernetesObject;
  shoot.metadata = { name, namespace: NAMESPACE };
  delete shoot.spec.seedName;
  shoot.spec.provider!.workers = shoot.spec.provider!.workers!.map((w) => ({ ...w, minimum: 1, maximum: 1 }));
  shoot.spec.networking = { ...shoot.spec.networking!, ...networking };
  return shoot;
}

const SHOOTS = {
  // Ranges apart from the dual-stack shoot's, which lands on the same seed.
  v4: shootOf('shoot-ipv4.yaml', 'v4', { nodes: '10.12.0.0/16', pods: '10.13.0.0/16', services: '10.14.0.0/16' }),
  dual: shootOf('shoot-dual-stack.yaml', 'dual'),
  v6: shootOf('shoot-ipv6.yaml', 'v6'),
};

beforeAll(async () => {
  if (unsupported) return;
  network = new SeedNodeNetwork(IPV6.networks, 'sc1');
  network.deploy();
  garden = await startControlPlane({ ...network.controlPlaneOptions(), handleSignals: false });
  gardenClient = new ResourceClient(garden.kubeConfig());
  services = await startLocalServices(garden, gates, silentLogger(), {
    controlPlaneWorkloads: true,
    loadBalancerNetworks: IPV6.loadBalancerNetworks,
    otherLoadBalancerNetworks: [DUAL.loadBalancerNetworks],
    seedName: IPV6.seed.metadata!.name!,
    tag: 'lbsc1',
    careSyncPeriodMs: 2_000,
    seedLeaseResyncMs: LEASE_RESYNC_MS,
    seedLifecycle: LIFECYCLE,
  });
  const machines = await machinesOptions({ seed: true });
  gardenNodes = SeedNodes.forCluster(garden, {
    count: 1,
    network,
    machines,
    client: gardenClient,
    upstreamDNS: [services.bind.address],
  });
  dualSeed = new SeedCluster({
    seed: DUAL,
    garden,
    bind: services.bind,
    gates,
    logger: silentLogger(),
    nodeCount: 1,
    machines: () => Promise.resolve(machines),
    seedLeaseResyncMs: LEASE_RESYNC_MS,
  });
  await Promise.all([gardenNodes.deploy(), dualSeed.deploy()]);
  await Promise.all([gardenNodes.wait(), dualSeed.wait()]);
  await gardenClient.apply(
    Refs.namespace,
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } },
    { fieldManager: 'test', force: true },
  );
  await gardenClient.apply(Refs.cloudProfile, localCloudProfile() as KubernetesObject, {
    fieldManager: 'test',
    force: true,
  });
  for (const seed of [IPV6.seed, DUAL.seed]) {
    await waitFor(
      () =>
        gardenClient
          .apply(Refs.seed, seed, { fieldManager: 'test', force: true })
          .then(() => true)
          .catch(() => false),
      { timeoutMs: 30_000, message: `seed ${seed.metadata?.name} to be admitted` },
    );
  }
}, 400_000);

afterAll(async () => {
  await Promise.all([services?.stop(), gardenNodes?.destroy(), dualSeed?.destroy()]);
  gardenClient?.close();
  await garden?.stop();
  network?.destroy();
}, 120_000);

type WithStatus = KubernetesObject & { status?: { conditions?: Condition[] } };

async function conditionOf(ref: typeof Refs.seed | typeof Refs.shoot, name: string, type: string) {
  const object = await gardenClient.get<WithStatus>(ref, name, ref === Refs.shoot ? NAMESPACE : undefined);
  return object?.status?.conditions?.find((c) => c.type === type)?.status;
}

async function seedOf(name: string): Promise<string> {
  return waitFor(
    async () => (await gardenClient.get<Shoot & KubernetesObject>(Refs.shoot, name, NAMESPACE))?.spec.seedName,
    { timeoutMs: 30_000, message: `shoot ${name} to be scheduled` },
  );
}

async function succeeded(name: string): Promise<Shoot> {
  let last = 'no status';
  try {
    return await waitFor(
      async () => {
        const s = await gardenClient.get<Shoot & KubernetesObject>(Refs.shoot, name, NAMESPACE);
        const op = s?.status?.lastOperation;
        const conditions = s?.status?.conditions ?? [];
        last = `${op?.state} ${op?.progress}%: ${op?.description}; ${conditions.map((c) => `${c.type}=${c.status}`).join(', ')}`;
        const isTrue = (type: string) => conditions.some((c) => c.type === type && c.status === 'True');
        return op?.state === 'Succeeded' && isTrue('APIServerAvailable') && isTrue('EveryNodeReady') ? s : undefined;
      },
      { timeoutMs: SHOOT_TIMEOUT_MS, intervalMs: 1_000, message: `shoot ${name} to succeed with a Ready node` },
    );
  } catch (e) {
    throw new Error(`${(e as Error).message}; last: ${last}`);
  }
}

/** The shoot's admin kubeconfig as the garden issues it to a user: its CA and client certificate. */
async function adminAccess(name: string): Promise<{ caPEM: string; credentials: CertificatePair }> {
  const answer = await gardenClient.createSubresource<AdminKubeconfigRequest>(
    AdminKubeconfigShootRef,
    name,
    NAMESPACE,
    ADMIN_KUBECONFIG_SUBRESOURCE,
    { apiVersion: API_VERSION, kind: KIND, spec: { expirationSeconds: 600 } },
  );
  const config = parse(Buffer.from(answer.status!.kubeconfig!, 'base64').toString('utf8')) as {
    clusters: { cluster: { 'certificate-authority-data': string } }[];
    users: { user: { 'client-certificate-data': string; 'client-key-data': string } }[];
  };
  const text = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');
  return {
    caPEM: text(config.clusters[0]!.cluster['certificate-authority-data']),
    credentials: {
      certPEM: text(config.users[0]!.user['client-certificate-data']),
      keyPEM: text(config.users[0]!.user['client-key-data']),
    },
  };
}

/**
 * Checks the shoot as a user of it: its external name's A/AAAA records in BIND9 (one per family), its API server
 * answering at each, its Node Ready with an InternalIP of each family, and a pod reaching another over the primary
 * family. Returns the lines describing its Nodes.
 */
async function checkShoot(shoot: Shoot, families: IPFamily[]): Promise<string[]> {
  const name = apiServerDomain(shoot, 'external', DEFAULT_DOMAIN);
  const { caPEM, credentials } = await adminAccess(shoot.metadata.name!);
  const servers: string[] = [];
  for (const family of families) {
    const answers = await waitFor(
      async () => {
        const a = await queryDNS(services!.bind.server, family === 'IPv6' ? 'AAAA' : 'A', name);
        return Array.isArray(a) && a.length > 0 ? a : undefined;
      },
      { timeoutMs: 60_000, message: `${family} record of ${name}` },
    );
    expect(answers.every((a) => parseIP(a)?.family === family)).toBe(true);
    const server = `https://${urlHost(answers[0]!)}:443`;
    const version = await waitFor(
      async () => {
        const res = await shootGet(server, caPEM, credentials, '/version', 5_000).catch(() => undefined);
        return res?.status === 200 ? (JSON.parse(res.body) as { gitVersion: string }) : undefined;
      },
      { timeoutMs: 60_000, message: `the API server of ${shoot.metadata.name} at ${server}` },
    );
    expect(version.gitVersion).toMatch(/^v1\./);
    servers.push(server);
  }
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'shoot', server: servers[0]!, caData: b64(caPEM) }],
    users: [{ name: 'admin', certData: b64(credentials.certPEM), keyData: b64(credentials.keyPEM) }],
    contexts: [{ name: 'shoot', cluster: 'shoot', user: 'admin' }],
    currentContext: 'shoot',
  });
  const shootClient = new ResourceClient(kc);
  try {
    const nodes = (await shootClient.list<NodeInfo & KubernetesObject>(Refs.node, {})).items;
    expect(nodes).toHaveLength(1);
    for (const node of nodes) {
      expect(nodeReady(node), describeNode(node)).toBe(true);
      const internal = (node.status?.addresses ?? []).filter((a) => a.type === 'InternalIP');
      expect(internal.map((a) => parseIP(a.address)?.family).sort(), describeNode(node)).toEqual([...families].sort());
    }
    const result = await podToPodCheck(
      shootClient,
      async (path) => {
        const res = await shootGet(servers[0]!, caPEM, credentials, path, 10_000);
        if (res.status !== 200) throw new Error(`GET ${path}: HTTP ${res.status} ${res.body.slice(0, 200)}`);
        return res.body;
      },
      families[0]!,
      120_000,
    );
    expect(parseIP(result.server.ip)?.family).toBe(families[0]);
    expect(result.answer).not.toBe('');
    return nodes.map(describeNode);
  } finally {
    shootClient.close();
  }
}

describe.skipIf(unsupported !== undefined)('two seed clusters under one garden', () => {
  it('registers both gardenlets: each Seed GardenletReady, each reconciled', async () => {
    for (const seed of ['local-ipv6', 'local-dual']) {
      await waitFor(async () => (await conditionOf(Refs.seed, seed, CONDITION_GARDENLET_READY)) === 'True', {
        timeoutMs: 30_000,
        message: `seed ${seed}'s GardenletReady`,
      });
    }
  });

  it('schedules shoots by IP family and spreads them; each works on its own seed cluster', async () => {
    await gardenClient.create(Refs.shoot, SHOOTS.v4);
    await gardenClient.create(Refs.shoot, SHOOTS.dual);
    expect(await seedOf('v4')).toBe('local-dual');
    expect(await seedOf('dual')).toBe('local-dual');
    // Both seeds fit an IPv6 shoot: the one with fewer shoots takes it.
    await gardenClient.create(Refs.shoot, SHOOTS.v6);
    expect(await seedOf('v6')).toBe('local-ipv6');

    const [v4, dual, v6] = await Promise.all([succeeded('v4'), succeeded('dual'), succeeded('v6')]);
    // Each shoot's control plane runs in its own seed's cluster, not in the other.
    const dualSeedClient = new ResourceClient(dualSeed!.controlPlane.kubeConfig());
    try {
      for (const [shoot, here, there] of [
        [v4, dualSeedClient, gardenClient],
        [dual, dualSeedClient, gardenClient],
        [v6, gardenClient, dualSeedClient],
      ] as const) {
        const ns = `shoot--local--${shoot.metadata.name}`;
        expect(await here.get(Refs.namespace, ns), `${ns} on its seed`).toBeDefined();
        expect(await there.get(Refs.namespace, ns), `${ns} on the other seed`).toBeUndefined();
      }
    } finally {
      dualSeedClient.close();
    }
    await checkShoot(v4, ['IPv4']);
    await checkShoot(dual, ['IPv4', 'IPv6']);
    await checkShoot(v6, ['IPv6']);
  }, 900_000);

  it("a stopped gardenlet turns its Seed and its shoots Unknown, not the other seed's; started again, both heal", async () => {
    await dualSeed!.stopGardenlet();
    await waitFor(async () => (await conditionOf(Refs.seed, 'local-dual', CONDITION_GARDENLET_READY)) === 'Unknown', {
      timeoutMs: 30_000,
      message: "seed local-dual's GardenletReady to turn Unknown",
    });
    for (const shoot of ['v4', 'dual']) {
      await waitFor(async () => (await conditionOf(Refs.shoot, shoot, 'APIServerAvailable')) === 'Unknown', {
        timeoutMs: 30_000,
        message: `shoot ${shoot}'s APIServerAvailable to turn Unknown`,
      });
    }
    expect(await conditionOf(Refs.seed, 'local-ipv6', CONDITION_GARDENLET_READY)).toBe('True');
    expect(await conditionOf(Refs.shoot, 'v6', 'APIServerAvailable')).toBe('True');
    expect(await conditionOf(Refs.shoot, 'v6', 'EveryNodeReady')).toBe('True');

    await dualSeed!.startGardenlet();
    await waitFor(async () => (await conditionOf(Refs.seed, 'local-dual', CONDITION_GARDENLET_READY)) === 'True', {
      timeoutMs: 30_000,
      message: "seed local-dual's GardenletReady to be True again",
    });
    for (const shoot of ['v4', 'dual']) {
      await waitFor(async () => (await conditionOf(Refs.shoot, shoot, 'APIServerAvailable')) === 'True', {
        timeoutMs: 60_000,
        message: `shoot ${shoot}'s APIServerAvailable to be True again`,
      });
    }
  }, 180_000);
});
