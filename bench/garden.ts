/**
 * The garden's cost as seeds and shoots grow: a garden (kube-apiserver + etcd on [::1] with the webhook, the
 * scheduler and the gardenlet of its own seed `ipv6`, in this process) and, for two seeds, a second cluster whose
 * gardenlet serves seed `dual` in a process of its own (`gardener-ipv6 run --garden-kubeconfig`, compiled when
 * `dist/` exists) with its own garden credentials. Shoots are objects only (no machines); the network and DNS
 * extensions run beside each gardenlet, publishing to one BIND9. Per point: the scheduler's latency (create →
 * `spec.seedName`) over IPv6 shoots created without a seed, the time until all of them Succeeded, and the webhook's
 * latency as a client sees it (a server-side dry-run Shoot create, through the API server, with the shoots in
 * place). The baseline is one seed with the fewest shoots, in the same run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../src/system/net.js';
import { projectRoot } from '../src/system/project.js';
import type { KubernetesObject } from '@kubernetes/client-node';
import { startRuntime, type Runtime } from '../src/app/runtime.js';
import { deploySeedAccess, seedSubject, writeSeedKubeconfig } from '../src/app/seed-access.js';
import { CONDITION_GARDENLET_READY } from '../src/apis/core/v1beta1/seed-lease.js';
import { Refs } from '../src/apis/refs.js';
import { featureGates } from '../src/featuregate/featuregate.js';
import { localDNSProvider } from '../src/gardenlet/dns-provider.js';
import { issueClientCertificate } from '../src/localenv/certs.js';
import { startControlPlane, type ControlPlane } from '../src/localenv/control-plane.js';
import { startBind9, type Bind9 } from '../src/localenv/bind9.js';
import { ApiError } from '../src/runtime/errors.js';
import { ResourceClient } from '../src/runtime/client.js';
import { silentLogger } from '../src/runtime/log.js';
import { BENCH_NAMESPACE as NAMESPACE, BENCH_SEED, createBenchSeed, createLocalSeed, until } from './support.js';

/** Dry-run creates per point, one at a time (the p99 of 200 is the second slowest). */
const WEBHOOK_SAMPLES = 200;
const WEBHOOK_WARMUP = 100;

export interface GardenCostPoint {
  readonly seeds: 1 | 2;
  readonly shoots: number;
  readonly scheduleP50Ms: number;
  readonly scheduleP99Ms: number;
  /** From the first create until every shoot Succeeded. */
  readonly succeededSeconds: number;
  readonly webhookP50Ms: number;
  readonly webhookP99Ms: number;
  /** How many shoots each seed got. */
  readonly perSeed: Record<string, number>;
}

const DUAL_SEED_NETWORKS = {
  ipFamilies: ['IPv4', 'IPv6'],
  nodes: '172.18.0.0/16',
  pods: '10.1.0.0/16',
  services: '10.2.0.0/16',
  shootDefaults: { pods: 'fd00:10:3::/56', services: 'fd00:10:4::/112' },
};

function shoot(name: string, index: number, dryRun = false): KubernetesObject {
  return {
    apiVersion: 'core.gardener.cloud/v1beta1',
    kind: 'Shoot',
    metadata: { name, namespace: NAMESPACE },
    spec: {
      // A dry run names its seed: it measures the webhook, not the scheduler.
      ...(dryRun ? { seedName: BENCH_SEED } : {}),
      cloudProfile: { name: 'local' },
      region: 'local',
      provider: { type: 'local', workers: [{ name: 'w', machine: { type: 'local' }, minimum: 1, maximum: 1 }] },
      networking: { type: 'calico', ipFamilies: ['IPv6'], nodes: `fd00:10:1:${(index + 1).toString(16)}00::/56` },
    },
  } as KubernetesObject;
}

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
};

/** One point: fresh clusters, `seeds` gardenlets, `shoots` shoots. */
async function measure(seeds: 1 | 2, shoots: number): Promise<GardenCostPoint> {
  const gates = featureGates({ IPv6SingleStack: true, DualStack: true });
  const clusters: ControlPlane[] = [];
  const runtimes: Runtime[] = [];
  const clients: ResourceClient[] = [];
  let seedGardenlet: ChildProcess | undefined;
  let bind: Bind9 | undefined;
  try {
    const [garden, seedCluster, dnsServer] = await Promise.all([
      startControlPlane(),
      seeds === 2 ? startControlPlane() : Promise.resolve(undefined),
      startBind9(),
    ]);
    bind = dnsServer;
    const dns = localDNSProvider({ server: bind.server, tsigKeyName: bind.tsigKeyName, tsigSecret: bind.tsigSecret });
    clusters.push(garden, ...(seedCluster ? [seedCluster] : []));
    const client = new ResourceClient(garden.kubeConfig());
    clients.push(client);
    runtimes.push(
      await startRuntime({
        kubeConfig: garden.kubeConfig(),
        gates,
        logger: silentLogger(),
        webhook: { host: '::1', port: 0, advertiseHost: '::1' },
        gardenlet: { dns, seedName: BENCH_SEED },
      }),
    );
    if (seedCluster) {
      await deploySeedAccess(client);
      const credentials = await issueClientCertificate(garden.certs, { file: 'seed-dual', ...seedSubject('dual') });
      const gardenKubeconfig = join(garden.dir, 'seed-dual.kubeconfig');
      await writeSeedKubeconfig(gardenKubeconfig, {
        server: garden.server,
        caPEM: readFileSync(garden.certs.caCert, 'utf8'),
        seedName: 'dual',
        ...credentials,
      });
      const seedKubeconfig = join(garden.dir, 'seed-cluster.kubeconfig');
      writeFileSync(seedKubeconfig, readFileSync(seedCluster.kubeconfigPath));
      const tsigFile = join(garden.dir, 'tsig.secret');
      writeFileSync(tsigFile, bind.tsigSecret, { mode: 0o600 });
      seedGardenlet = spawn(
        process.execPath,
        [
          join(projectRoot(), 'bin', 'gardener-ipv6.js'),
          'run',
          '--kubeconfig',
          seedKubeconfig,
          '--garden-kubeconfig',
          gardenKubeconfig,
          '--components',
          'gardenlet,network,dns',
          '--dns-server',
          bind.server,
          '--dns-tsig-key-name',
          bind.tsigKeyName,
          '--dns-tsig-secret-file',
          tsigFile,
          '--seed-name',
          'dual',
          '--control-plane-workloads',
          'false',
          '--health-host',
          '::1',
          '--health-port',
          String(await freePort()),
          '--log-level',
          'warn',
        ],
        { stdio: ['ignore', 'ignore', 'inherit'] },
      );
    }
    // The project namespace, the CloudProfile and the IPv6 seed `ipv6` of the other benchmarks; `dual` beside it.
    await createBenchSeed(client);
    if (seeds === 2) await createLocalSeed(client, 'dual', DUAL_SEED_NETWORKS);
    const seedNames = seeds === 2 ? [BENCH_SEED, 'dual'] : [BENCH_SEED];
    // The scheduler takes seeds whose gardenlet is ready only.
    for (const name of seedNames) {
      await until(
        async () => {
          const seed = await client.get<
            KubernetesObject & { status?: { conditions?: { type: string; status: string }[] } }
          >(Refs.seed, name);
          return seed?.status?.conditions?.some((c) => c.type === CONDITION_GARDENLET_READY && c.status === 'True')
            ? true
            : undefined;
        },
        30_000,
        `seed ${name} to be GardenletReady`,
      );
    }

    const created = new Map<string, number>();
    const scheduled = new Map<string, number>();
    const names = Array.from({ length: shoots }, (_, i) => `s${i}`);
    const start = performance.now();
    for (const [i, name] of names.entries()) {
      created.set(name, performance.now());
      await client.create(Refs.shoot, shoot(name, i));
    }
    await until(
      async () => {
        const list = await client.list<KubernetesObject & { spec?: { seedName?: string } }>(Refs.shoot, {
          namespace: NAMESPACE,
        });
        for (const s of list.items) {
          const name = s.metadata?.name ?? '';
          if (s.spec?.seedName && !scheduled.has(name)) scheduled.set(name, performance.now());
        }
        return scheduled.size === shoots ? true : undefined;
      },
      120_000,
      'every shoot to be scheduled',
      5,
    );
    const perSeed: Record<string, number> = {};
    await until(
      async () => {
        const list = await client.list<
          KubernetesObject & { spec?: { seedName?: string }; status?: { lastOperation?: { state?: string } } }
        >(Refs.shoot, { namespace: NAMESPACE });
        if (!list.items.every((s) => s.status?.lastOperation?.state === 'Succeeded')) return undefined;
        for (const s of list.items) perSeed[s.spec!.seedName!] = (perSeed[s.spec!.seedName!] ?? 0) + 1;
        return true;
      },
      300_000,
      'every shoot to succeed',
      50,
    );
    const succeededSeconds = (performance.now() - start) / 1000;
    const scheduleMs = names.map((n) => scheduled.get(n)! - created.get(n)!);

    const webhookMs: number[] = [];
    // Unmeasured first: the webhook's and the API server's code paths warm (JIT, connections) in every point alike.
    for (let i = 0; i < WEBHOOK_WARMUP; i++) {
      await client.create(Refs.shoot, shoot(`warm-${i}`, 15, true), { dryRun: true });
    }
    for (let i = 0; i < WEBHOOK_SAMPLES; i++) {
      const t = performance.now();
      try {
        await client.create(Refs.shoot, shoot(`dry-${i}`, 15, true), { dryRun: true });
      } catch (e) {
        throw new Error(`the dry-run create was refused: ${e instanceof ApiError ? e.message : String(e)}`);
      }
      webhookMs.push(performance.now() - t);
    }
    return {
      seeds,
      shoots,
      scheduleP50Ms: percentile(scheduleMs, 50),
      scheduleP99Ms: percentile(scheduleMs, 99),
      succeededSeconds,
      webhookP50Ms: percentile(webhookMs, 50),
      webhookP99Ms: percentile(webhookMs, 99),
      perSeed,
    };
  } finally {
    if (seedGardenlet?.exitCode === null) {
      const exited = new Promise((resolve) => seedGardenlet!.once('exit', resolve));
      seedGardenlet.kill('SIGTERM');
      await exited;
    }
    await Promise.all(runtimes.map((r) => r.stop()));
    for (const c of clients) c.close();
    await Promise.all([...clusters.map((c) => c.stop()), bind?.stop()]);
  }
}

/** Every point, the baseline (one seed, the fewest shoots) first. */
export async function runGardenBench(shootCounts: readonly number[] = [2, 10]): Promise<GardenCostPoint[]> {
  const points: GardenCostPoint[] = [];
  for (const seeds of [1, 2] as const) {
    for (const shoots of shootCounts) points.push(await measure(seeds, shoots));
  }
  return points;
}

export function formatGardenBench(points: readonly GardenCostPoint[]): string {
  const base = points[0]!;
  const f = (n: number) => n.toFixed(1);
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
  return points
    .map(
      (p) =>
        `${p.seeds} seed${p.seeds > 1 ? 's' : ''}, ${p.shoots} shoots (${Object.entries(p.perSeed)
          .map(([s, n]) => `${s} ${n}`)
          .join(', ')}): scheduled after p50 ${f(p.scheduleP50Ms)} ms, p99 ${f(p.scheduleP99Ms)} ms ` +
        `(${ratio(p.scheduleP99Ms, base.scheduleP99Ms)} the baseline's p99); all Succeeded after ` +
        `${f(p.succeededSeconds)} s; webhook (dry-run create through the API server) p50 ${f(p.webhookP50Ms)} ms, ` +
        `p99 ${f(p.webhookP99Ms)} ms (${ratio(p.webhookP99Ms, base.webhookP99Ms)} the baseline's p99)`,
    )
    .join('\n');
}
