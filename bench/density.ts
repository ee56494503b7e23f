/**
 * How many IPv6 shoots with one machine each fit on one seed (`npm run bench -- density [--max-shoots N]`). The seed
 * (its API server, two Nodes, the webhook and the controllers) is up before the clock starts; then shoots are created
 * one at a time, each waited for until its Node is Ready (create → Node Ready), the earlier ones left running. It
 * stops when a shoot gets no Ready Node within 5 minutes, when the host's memory is 90 % used, or at --max-shoots.
 * Reported: how many fit, the host memory per shoot (the drop of MemAvailable from before the first to after the
 * last, divided by their number) and the last shoot's create → Node Ready against the first's, measured in the same
 * run.
 */
import { readFileSync } from 'node:fs';
import type { KubernetesObject } from '@kubernetes/client-node';
import { machinesOptions, startLocalServices } from '../src/app/local-environment.js';
import type { SeedNetworks } from '../src/app/seed-nodes.js';
import type { Shoot } from '../src/apis/core/v1beta1/shoot.js';
import { Refs } from '../src/apis/refs.js';
import { seedNamespaceName } from '../src/apis/core/v1beta1/names.js';
import { quantityValue } from '../src/apis/validation/quantity.js';
import { nodeReady, type NodeInfo } from '../src/extensions/provider-local/machine/api-client.js';
import { featureGates } from '../src/featuregate/featuregate.js';
import { shootAdminClient } from '../src/gardenlet/shoot/shoot-client.js';
import { silentLogger } from '../src/runtime/log.js';
import { startCluster } from './machines.js';
import { BENCH_NAMESPACE, benchShoot, createBenchSeed, until } from './support.js';
import { cpuByProcess, type ProcessCPU } from './cpu-by-process.js';

const LB_NETWORKS = { IPv6: 'fd00:ff:bd::/64', IPv4: '172.31.248.0/24' };
const SEED: SeedNetworks = {
  families: ['IPv6'],
  nodes: ['fd00:1d::/64'],
  pods: ['fd00:1d:1::/56'],
  services: ['fd00:1d:2::/112'],
};
/** How long a shoot may take to a Ready Node before the seed counts as full. */
export const DENSITY_READY_TIMEOUT_MS = 300_000;
/** Seconds of the CPU breakdown taken with the shoots that fit running, after they settled. */
const STEADY_CPU_SECONDS = 60;
/** How long the shoots are left to settle before it (their last machine's start-up done). */
const SETTLE_MS = 60_000;
/** The share of the host's memory in use at which no further shoot is created. */
export const DENSITY_MEMORY_LIMIT = 0.9;

export interface DensityBenchResult {
  /** Shoots whose Node became Ready. */
  readonly fit: number;
  readonly stoppedBecause: string;
  /** Seconds from create to a Ready Node, per shoot that fit, in order. */
  readonly readySeconds: readonly number[];
  /** MemAvailable's drop over the run, per shoot that fit. */
  readonly memoryPerShootMiB: number;
  readonly memTotalMiB: number;
  /** At the end, per seed Node: its allocatable CPU and what the pods bound to it request, in cores. */
  readonly seedCPURequests: readonly {
    readonly node: string;
    readonly allocatable: number;
    readonly requested: number;
  }[];
  /** Restarts of the seed's containers over the run, by container name (probes that gave up on a busy host). */
  readonly restarts: Readonly<Record<string, { readonly count: number; readonly last: string }>>;
  /** With the shoots that fit running and settled: the host's CPU by command name, and in all, in cores. */
  readonly steadyCPU: { readonly total: number; readonly byComm: readonly ProcessCPU[] };
}

/** MemTotal and MemAvailable of the host, MiB. */
function meminfo(): { total: number; available: number } {
  const text = readFileSync('/proc/meminfo', 'utf8');
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
  return { total: kib('MemTotal') / 1024, available: kib('MemAvailable') / 1024 };
}

export async function runDensityBench(
  opts: { maxShoots?: number; log?: (line: string) => void } = {},
): Promise<DensityBenchResult> {
  const maxShoots = opts.maxShoots ?? 100;
  const seedMachines = await machinesOptions({ seed: true });
  await seedMachines.images();
  const { cp, nodes, client, stop } = await startCluster(SEED, 'dns', seedMachines);
  const services = await startLocalServices(
    cp,
    featureGates({ IPv6SingleStack: true, DualStack: true }),
    silentLogger(),
    { controlPlaneWorkloads: true, loadBalancerNetworks: LB_NETWORKS, tag: 'dnl' },
  ).catch(async (e: unknown) => {
    await stop();
    throw e;
  });
  try {
    await nodes.wait();
    await createBenchSeed(client);
    const before = meminfo();
    const readySeconds: number[] = [];
    let stoppedBecause = `--max-shoots ${maxShoots}`;
    for (let i = 0; i < maxShoots; i++) {
      const used = 1 - meminfo().available / before.total;
      if (used >= DENSITY_MEMORY_LIMIT) {
        stoppedBecause = `the host's memory is ${(used * 100).toFixed(0)} % used`;
        break;
      }
      const name = `d${i}`;
      const started = Date.now();
      await client.create(Refs.shoot, benchShoot(name, 1, `fd00:1d:1:${(0x100 + i).toString(16)}::/64`));
      try {
        await nodeReadyWithin(client, name, started + DENSITY_READY_TIMEOUT_MS);
      } catch (e) {
        const unscheduled = await unscheduledPods(client, name);
        stoppedBecause =
          `shoot ${name} had no Ready Node within ${DENSITY_READY_TIMEOUT_MS / 1000} s (${(e as Error).message})` +
          (unscheduled.length > 0 ? `; the seed could not schedule ${unscheduled.join('; ')}` : '');
        break;
      }
      readySeconds.push((Date.now() - started) / 1000);
      opts.log?.(
        `shoot ${name}: Node Ready after ${readySeconds.at(-1)!.toFixed(1)} s; ` +
          `host memory ${((1 - meminfo().available / before.total) * 100).toFixed(0)} % used`,
      );
    }
    const after = meminfo();
    const fit = readySeconds.length;
    // One read of the seed's pods serves both.
    const seedPods = (await client.list<SeedPod>(Refs.pod, {})).items;
    const seedCPURequests = await cpuRequestsByNode(client, seedPods);
    const restarts = restartsByContainer(seedPods);
    // What the shoots cost at rest: after the last one's start-up has settled.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const steadyCPU = await cpuByProcess(STEADY_CPU_SECONDS);
    return {
      steadyCPU,
      seedCPURequests,
      restarts,
      fit,
      stoppedBecause,
      readySeconds,
      memoryPerShootMiB: fit > 0 ? (before.available - after.available) / fit : Number.NaN,
      memTotalMiB: before.total,
    };
  } finally {
    await services.stop();
    await stop();
  }
}

/** The parts of a seed pod the end-of-run report reads. */
type SeedPod = KubernetesObject & {
  spec?: { nodeName?: string; containers?: { resources?: { requests?: Record<string, string> } }[] };
  status?: {
    phase?: string;
    containerStatuses?: {
      name: string;
      restartCount?: number;
      lastState?: { terminated?: { exitCode?: number; reason?: string; message?: string } };
    }[];
  };
};

/**
 * The restarts of the seed's containers, summed by container name (only those that restarted), each with why one of
 * them last stopped: its exit code and the end of its termination message (the end of its log).
 */
function restartsByContainer(pods: readonly SeedPod[]): Record<string, { count: number; last: string }> {
  const restarts: Record<string, { count: number; last: string }> = {};
  for (const pod of pods) {
    for (const c of pod.status?.containerStatuses ?? []) {
      if ((c.restartCount ?? 0) === 0) continue;
      const t = c.lastState?.terminated;
      const last = t
        ? `exit ${t.exitCode ?? '?'} (${t.reason ?? '-'}): ${(t.message ?? '').trim().split('\n').slice(-2).join(' | ').slice(-300)}`
        : 'no last state';
      restarts[c.name] = { count: (restarts[c.name]?.count ?? 0) + c.restartCount!, last };
    }
  }
  return restarts;
}

/** Per seed Node: its allocatable CPU, and the CPU that the pods bound to it and not finished request (cores). */
async function cpuRequestsByNode(
  client: Parameters<typeof createBenchSeed>[0],
  seedPods: readonly SeedPod[],
): Promise<{ node: string; allocatable: number; requested: number }[]> {
  type Node = KubernetesObject & { status?: { allocatable?: Record<string, string> } };
  const nodes = (await client.list<Node>(Refs.node, {})).items;
  const pods = seedPods.filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
  const cpu = (value: string | undefined) => (value === undefined ? 0 : (quantityValue(value) ?? 0));
  return nodes.map((node) => ({
    node: node.metadata?.name ?? '?',
    allocatable: cpu(node.status?.allocatable?.cpu),
    requested: pods
      .filter((p) => p.spec?.nodeName === node.metadata?.name)
      .flatMap((p) => p.spec?.containers ?? [])
      .reduce((sum, c) => sum + cpu(c.resources?.requests?.cpu), 0),
  }));
}

/**
 * The shoot's pods in its seed namespace that the seed's scheduler could not place, each with its reason: a seed is
 * full by its Nodes' allocatable CPU and memory against the pods' requests before it is full by what they use.
 */
async function unscheduledPods(client: Parameters<typeof createBenchSeed>[0], name: string): Promise<string[]> {
  const shoot = await client.get<Shoot & KubernetesObject>(Refs.shoot, name, BENCH_NAMESPACE);
  if (!shoot) return [];
  type Pod = KubernetesObject & { status?: { conditions?: { type: string; status: string; message?: string }[] } };
  const pods = await client.list<Pod>(Refs.pod, { namespace: seedNamespaceName(shoot) });
  return pods.items.flatMap((pod) => {
    const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
    return scheduled?.status === 'False' ? [`${pod.metadata?.name}: ${scheduled.message ?? 'unschedulable'}`] : [];
  });
}

/** Waits until the shoot's API server answers with one Ready Node; throws at the deadline saying how far it got. */
async function nodeReadyWithin(client: Parameters<typeof createBenchSeed>[0], name: string, deadline: number) {
  let reached = 'no shoot status';
  await until(
    async () => {
      const shoot = await client.get<Shoot & KubernetesObject>(Refs.shoot, name, BENCH_NAMESPACE);
      if (!shoot?.status?.advertisedAddresses) return undefined;
      reached = `last operation: ${shoot.status.lastOperation?.description ?? '-'}`;
      const shootClient = await shootAdminClient(client, shoot, { signal: AbortSignal.timeout(10_000) });
      try {
        const list = (await shootClient.list<NodeInfo & KubernetesObject>(Refs.node, {})).items;
        return list.length === 1 && list.every(nodeReady) ? true : undefined;
      } finally {
        shootClient.close();
      }
    },
    Math.max(0, deadline - Date.now()),
    'a Ready Node',
    1_000,
  ).catch(() => {
    throw new Error(reached);
  });
}
