/**
 * An IPv6 shoot with two machines on a seed with two Nodes, end to end: create → both Nodes Ready → the first
 * pod-to-pod answer across the machines, and the total RSS of the shoot's workloads (its control plane pods and both
 * machine pods with everything they run). The seed (the garden's API server and its Nodes) is up before the clock
 * starts, as a kind cluster would be. Against the same workloads started directly with the same binaries in the same
 * run: an API server with etcd, kube-controller-manager and kube-scheduler as processes and two machines joined to
 * it with certificates (no API object, controller, webhook, pod or image pull), then the same Ready poll and the
 * same pod check. Then the shoot is hibernated (until `status.hibernated`, every pod of it gone) and woken up (until
 * both Nodes are Ready again), against the fresh create's time to both Nodes Ready. And what containment costs: the
 * same shoot again with its machine pods in the host's user namespace (`hostUsers` unset, as before machines were
 * contained), create → first pod-to-pod answer and RSS, against the contained run.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { KubernetesObject } from '@kubernetes/client-node';
import { machinesOptions, startLocalServices } from '../src/app/local-environment.js';
import { SeedNodeNetwork, SeedNodes, type SeedNetworks } from '../src/app/seed-nodes.js';
import type { Shoot } from '../src/apis/core/v1beta1/shoot.js';
import { nodeReady, type NodeInfo } from '../src/extensions/provider-local/machine/api-client.js';
import { podToPodCheck } from '../src/extensions/provider-local/worker/pod-check.js';
import { featureGates } from '../src/featuregate/featuregate.js';
import { Refs } from '../src/apis/refs.js';
import { shootAdminAccess, shootAdminClient } from '../src/gardenlet/shoot/shoot-client.js';
import { shootGet } from '../src/gardenlet/shoot/shoot-get.js';
import { adminGet } from '../src/localenv/kube-apiserver.js';
import { startControlPlane, type ControlPlane } from '../src/localenv/control-plane.js';
import { ResourceClient } from '../src/runtime/client.js';
import { silentLogger } from '../src/runtime/log.js';
import { BENCH_NAMESPACE, benchShoot, createBenchSeed, rssMiB, until } from './support.js';

const LB_NETWORKS = { IPv6: 'fd00:ff:bf::/64', IPv4: '172.31.249.0/24' };
/** The seed cluster of the gardenlet run and the direct cluster: ranges of their own, IPv6 only. */
const SEED: SeedNetworks = {
  families: ['IPv6'],
  nodes: ['fd00:1f::/64'],
  pods: ['fd00:1f:1::/56'],
  services: ['fd00:1f:2::/112'],
};
const DIRECT: SeedNetworks = {
  families: ['IPv6'],
  nodes: ['fd00:1f:10::/64'],
  pods: ['fd00:1f:13::/56'],
  services: ['fd00:1f:14::/112'],
};

export interface MachinesBenchResult {
  readonly gardenlet: {
    readySeconds: number;
    podSeconds: number;
    rssMiB: number;
    hibernateSeconds: number;
    wakeSeconds: number;
  };
  readonly direct: { readySeconds: number; podSeconds: number; rssMiB: number };
  /** The gardenlet run with machine pods in the host's user namespace. */
  readonly uncontained: { readySeconds: number; podSeconds: number; rssMiB: number };
}

export async function runMachinesBench(): Promise<MachinesBenchResult> {
  const seedMachines = await machinesOptions({ seed: true });
  const machines = await machinesOptions();
  await Promise.all([seedMachines.images(), machines.images()]);
  // Directly first: the gardenlet run's seed is then not running meanwhile.
  const direct = await runDirect(machines);
  const gardenlet = await runGardenlet(seedMachines);
  const uncontained = await runGardenlet(seedMachines, { userNamespaces: false });
  return { gardenlet, direct, uncontained };
}

/** A cluster of the given networks: its API server and control plane as processes, `count` machines joined to it. */
export async function startCluster(
  networks: SeedNetworks,
  tag: string,
  machines: Awaited<ReturnType<typeof machinesOptions>>,
): Promise<{ cp: ControlPlane; nodes: SeedNodes; client: ResourceClient; stop: () => Promise<void> }> {
  const network = new SeedNodeNetwork(networks, tag);
  network.deploy();
  const cp = await startControlPlane({ ...network.controlPlaneOptions(), startTimeoutMs: 120_000 });
  const client = new ResourceClient(cp.kubeConfig());
  const nodes = SeedNodes.forCluster(cp, { count: 2, network, machines, client });
  const stop = async () => {
    await nodes.destroy();
    client.close();
    await cp.stop();
    network.destroy();
  };
  try {
    await nodes.deploy();
  } catch (e) {
    await stop();
    throw e;
  }
  return { cp, nodes, client, stop };
}

async function runDirect(
  machines: Awaited<ReturnType<typeof machinesOptions>>,
): Promise<MachinesBenchResult['direct']> {
  const started = Date.now();
  const { cp, nodes, client, stop } = await startCluster(DIRECT, 'mbd', machines);
  try {
    await nodes.wait();
    const readySeconds = (Date.now() - started) / 1000;
    await podToPodCheck(
      client,
      async (path) => {
        const res = await adminGet(cp.server, cp.certs, path, 10_000);
        if (res.status !== 200) throw new Error(`GET ${path}: HTTP ${res.status}`);
        return res.body;
      },
      'IPv6',
      120_000,
    );
    const podSeconds = (Date.now() - started) / 1000;
    const rss = rssMiB(
      cp.processes.map((p) => p.pid),
      nodes.machineList().reduce((sum, m) => sum + m.rssBytes(), 0),
    );
    return { readySeconds, podSeconds, rssMiB: rss };
  } finally {
    await stop();
  }
}

async function runGardenlet(
  machines: Awaited<ReturnType<typeof machinesOptions>>,
  opts: { userNamespaces?: boolean } = {},
): Promise<MachinesBenchResult['gardenlet']> {
  const { cp, nodes, client, stop } = await startCluster(SEED, 'mbs', machines);
  const services = await startLocalServices(
    cp,
    featureGates({ IPv6SingleStack: true, DualStack: true }),
    silentLogger(),
    {
      controlPlaneWorkloads: true,
      loadBalancerNetworks: LB_NETWORKS,
      tag: 'mb',
      careSyncPeriodMs: 2_000,
      ...(opts.userNamespaces === false ? { machineUserNamespaces: false } : {}),
    },
  ).catch(async (e: unknown) => {
    await stop();
    throw e;
  });
  try {
    await nodes.wait();
    await createBenchSeed(client);
    const namespace = 'shoot--bench--mb';
    const started = Date.now();
    await client.create(Refs.shoot, benchShoot('mb', 2, 'fd00:1f:1:100::/64'));
    const shoot = await until(
      async () => {
        const s = await client.get<Shoot & KubernetesObject>(Refs.shoot, 'mb', BENCH_NAMESPACE);
        return s?.status?.advertisedAddresses ? s : undefined;
      },
      120_000,
      'the shoot',
      200,
    );
    const ctx = { signal: AbortSignal.timeout(300_000) };
    // The shoot's API server answers once its control plane pods are up: poll its Nodes from then on.
    const shootClient = await until(() => shootAdminClient(client, shoot, ctx), 300_000, "the shoot's API", 200);
    try {
      await until(
        async () => {
          const list = (await shootClient.list<NodeInfo & KubernetesObject>(Refs.node, {})).items;
          return list.length === 2 && list.every(nodeReady) ? true : undefined;
        },
        300_000,
        'both Nodes Ready',
        200,
      );
      const readySeconds = (Date.now() - started) / 1000;
      const access = await shootAdminAccess(client, shoot, ctx);
      await podToPodCheck(
        shootClient,
        async (path) => {
          const res = await shootGet(access.server, access.caPEM, access.credentials, path, 10_000);
          if (res.status !== 200) throw new Error(`GET ${path}: HTTP ${res.status}`);
          return res.body;
        },
        'IPv6',
        120_000,
      );
      const podSeconds = (Date.now() - started) / 1000;
      const pods = (await client.list(Refs.pod, { namespace })).items.map((p) => p.metadata?.uid ?? '');
      const rss = rssMiB(podProcessIDs(pods));
      if (opts.userNamespaces === false) {
        return { readySeconds, podSeconds, rssMiB: rss, hibernateSeconds: Number.NaN, wakeSeconds: Number.NaN };
      }
      const hibernateSeconds = await hibernation(client, namespace, true, async () => {
        const left = (await client.list(Refs.pod, { namespace })).items;
        return left.length === 0;
      });
      const wakeSeconds = await hibernation(client, namespace, false, async () => {
        const fresh = await shootAdminClient(client, shoot, { signal: AbortSignal.timeout(10_000) });
        try {
          const list = (await fresh.list<NodeInfo & KubernetesObject>(Refs.node, {})).items;
          return list.length === 2 && list.every(nodeReady);
        } finally {
          fresh.close();
        }
      });
      return { readySeconds, podSeconds, rssMiB: rss, hibernateSeconds, wakeSeconds };
    } finally {
      shootClient.close();
    }
  } finally {
    await services.stop();
    await stop();
  }
}

/**
 * Seconds from setting `spec.hibernation.enabled` until the operation succeeded with `status.hibernated` as asked
 * and `done` holds.
 */
async function hibernation(
  client: ResourceClient,
  namespace: string,
  enabled: boolean,
  done: () => Promise<boolean>,
): Promise<number> {
  const started = Date.now();
  await client.mergePatch(Refs.shoot, 'mb', BENCH_NAMESPACE, { spec: { hibernation: { enabled } } });
  await until(
    async () => {
      const s = await client.get<Shoot & KubernetesObject>(Refs.shoot, 'mb', BENCH_NAMESPACE);
      const succeeded =
        s?.status?.observedGeneration === s?.metadata.generation &&
        s?.status?.lastOperation?.state === 'Succeeded' &&
        (s?.status?.hibernated ?? false) === enabled;
      return succeeded && (await done().catch(() => false)) ? true : undefined;
    },
    300_000,
    enabled ? `shoot hibernated (${namespace} without pods)` : 'shoot awake with both Nodes Ready',
    200,
  );
  return (Date.now() - started) / 1000;
}

/** The processes in the cgroups of these pods (the kubelets' `pod<uid>` cgroups, nested ones included). */
function podProcessIDs(uids: readonly string[]): number[] {
  const marks = uids.filter(Boolean).map((uid) => `/pod${uid}/`);
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cgroups: string;
    try {
      cgroups = readFileSync(`/proc/${entry}/cgroup`, 'utf8');
    } catch {
      continue;
    }
    const memory = cgroups.split('\n').find((l) => /:memory:/.test(l)) ?? '';
    if (marks.some((m) => `${memory}/`.includes(m))) pids.push(Number(entry));
  }
  return pids;
}
