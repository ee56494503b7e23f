/**
 * `gardener-ipv6 up`: a local IPv6 environment for trying things out. Starts etcd, kube-apiserver and
 * kube-controller-manager, installs the CRDs, writes the admin kubeconfig, starts BIND9, the admission webhook and the
 * controllers, applies the example IPv6 Seed and Shoot, prints a summary once the Shoot succeeded and a `ready`
 * line, and runs until SIGINT or SIGTERM, when it stops everything it started. Progress and logs go to stderr, the
 * lines a user (or script) needs to stdout.
 */
import type { MachineLimits } from '../extensions/provider-local/admission.js';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { cacheBinDir } from '../localenv/binaries.js';
import { startControlPlane, type ControlPlane } from '../localenv/control-plane.js';
import { netnsUnsupportedReason } from '../system/netns.js';
import { missingUpPrerequisites } from '../localenv/prerequisites.js';
import { enterRunFolder } from '../system/run-folder.js';
import { onParentExit } from './parent-exit.js';
import { StopSignals } from './signals.js';
import {
  applyExampleShoot,
  machinesOptions,
  startLocalServices,
  type LocalServices,
} from '../app/local-environment.js';
import { shootSummary } from '../app/shoot-summary.js';
import { DEFAULT_SEED_NODES, SeedNodeNetwork, SeedNodes, seedSummary } from '../app/seed-nodes.js';
import { localSeed, parseSeedsOption, type LocalSeed, type LocalSeedKind } from '../app/local-seeds.js';
import { SeedCluster } from '../app/seed-cluster.js';
import { featureGates, type FeatureGates } from '../featuregate/featuregate.js';
import { ResourceClient } from '../runtime/client.js';
import { newLogger } from '../runtime/log.js';

export interface UpOptions {
  /** @default IPv6SingleStack and DualStack on: `up` is for trying IPv6. */
  gates?: FeatureGates;
  /** Write the admin kubeconfig here (default: in the control plane's temporary folder). */
  kubeconfigOut?: string;
  /** Run in a fresh IPv6-only network namespace (needs root), as the integration tests do. */
  ipv6Only?: boolean;
  /**
   * Machines at all: the seed's Nodes, on which the shoots' control planes and machine pods run (root). Without
   * them the shoots are objects only. @default true
   */
  machines?: boolean;
  /**
   * Nodes of the seed cluster, which the garden's API server doubles as (root; not with `ipv6Only`); 0: the shoots
   * are objects only. @default DEFAULT_SEED_NODES when machines run, else 0
   */
  seedNodes?: number;
  /** The webhook's machine limits. @default those of provider-local/admission.ts */
  machineLimits?: MachineLimits;
  /**
   * One seed cluster per entry, the garden's own first (`ipv6`); each further one with its own API server, Nodes and
   * gardenlet. @default ['ipv6']
   */
  seeds?: readonly LocalSeedKind[];
}

export interface UpIO {
  out: (s: string) => void;
  err: (s: string) => void;
}

/**
 * How long `up` stops gracefully, after a signal or when a part of it died: then whatever still runs is killed.
 * Everything it started is thrown away, so there is nothing to wait for beyond that.
 */
export const UP_STOP_TIMEOUT_MS = 3_000;
/** Signals this close to the first are the same Ctrl-C delivered twice (terminal and npm), not a second one. */
export const REPEATED_SIGNAL_WINDOW_MS = 1_000;
/** Of that, the webhook and the controllers: reconciles in flight, unregistering the webhooks. */
const UP_RUNTIME_SHUTDOWN_MS = 1_000;

/** Seed nodes run where machines do: as root, with machines, and with the API server in this namespace. */
function defaultSeedNodes(opts: UpOptions): number {
  return (opts.machines ?? true) && !opts.ipv6Only && netnsUnsupportedReason() === undefined ? DEFAULT_SEED_NODES : 0;
}

/** Resolves with the exit code once a signal stopped the environment (0) or it failed (1). */
export async function up(opts: UpOptions, io: UpIO): Promise<number> {
  const missing = missingUpPrerequisites({
    ipv6Only: opts.ipv6Only ?? false,
    machines: opts.machines ?? true,
    warn: (s) => io.err(s),
  });
  if (missing !== undefined) {
    io.err(missing);
    return 1;
  }
  if (opts.ipv6Only) {
    const reason = netnsUnsupportedReason();
    if (reason !== undefined) {
      io.err(`error: --ipv6-only runs the control plane in a network namespace, but ${reason}\n`);
      return 1;
    }
  }
  let seeds: LocalSeed[];
  try {
    seeds = parseSeedsOption((opts.seeds ?? ['ipv6']).join(',')).map(localSeed);
  } catch (e) {
    io.err(`error: ${(e as Error).message}\n`);
    return 1;
  }
  const gardenSeed = seeds[0]!;
  const seedNodeCount = opts.seedNodes ?? defaultSeedNodes(opts);
  // Workloads need Nodes to run on: without seed Nodes the shoots are objects only.
  const workloads = seedNodeCount > 0;
  if (seedNodeCount > 0) {
    const reason = opts.ipv6Only
      ? 'the seed nodes join an API server in this namespace, not in the --ipv6-only one'
      : netnsUnsupportedReason();
    if (reason !== undefined) {
      io.err(`error: --seed-nodes ${seedNodeCount}: ${reason}\n`);
      return 1;
    }
  }

  // Listen for signals from the start: a Ctrl-C while starting stops as soon as the step running finished (the wait
  // for the example shoot is cut short), a second one exits at once (the exit handler then kills the children and
  // removes their files).
  let wake: (() => void) | undefined;
  const stops = new StopSignals({
    onSignal: (signal) => io.err(`${signal}: stopping ...\n`),
    err: io.err,
    repeatWindowMs: REPEATED_SIGNAL_WINDOW_MS,
    exitCode: 130,
  });
  // The stop bound counts from when the stop was asked for, not from when the step running then let go.
  let stopAskedAt: number | undefined;
  // Ends the wait for the example shoot (up to minutes) when a stop is asked for or the control plane crashed.
  const stopped = new Promise<never>((_, reject) =>
    stops.signal.addEventListener(
      'abort',
      () => {
        stopAskedAt = Date.now();
        reject(stops.signal.reason);
        wake?.();
      },
      { once: true },
    ),
  );
  stopped.catch(() => {});
  // Started through npx, a signal may end npm and its shell but never reach us: their going is our stop signal.
  const stopWatchingParent = onParentExit(() => {
    if (stops.received !== undefined) return;
    io.err('the parent process exited: stopping ...\n');
    stops.stop('SIGHUP');
  });

  // Everything this run writes goes below one folder named with its pid; a run that was killed left its folder
  // (with the CA keys of the garden and the shoots): the folders of runs that are gone go first.
  const runFolder = enterRunFolder((line) => io.err(`${line}\n`));
  let cp: ControlPlane | undefined;
  let services: LocalServices | undefined;
  let seedNetwork: SeedNodeNetwork | undefined;
  let seedNodes: SeedNodes | undefined;
  const seedClusters: SeedCluster[] = [];
  // What ended a seed cluster's control plane, when one died.
  let seedCrash: string | undefined;
  try {
    try {
      if (seedNodeCount > 0) {
        // The garden's API server is the seed's: it listens on the seed's node network, made first.
        seedNetwork = new SeedNodeNetwork(gardenSeed.networks, gardenSeed.tag);
        seedNetwork.deploy();
      }
      cp = await startControlPlane({
        ipv6Only: opts.ipv6Only ?? false,
        handleSignals: false,
        log: (line) => io.err(line + '\n'),
        ...(opts.kubeconfigOut !== undefined ? { kubeconfigPath: resolve(opts.kubeconfigOut) } : {}),
        ...(seedNetwork !== undefined ? seedNetwork.controlPlaneOptions() : {}),
      });
    } catch (e) {
      io.err(`error: the control plane did not start: ${(e as Error).message}\n`);
      return 1;
    }
    if (stops.received !== undefined) return 0;
    void cp.crashed.then((crash) => stops.abort(new Error(crash)));

    const kubectl = `kubectl --kubeconfig ${cp.kubeconfigPath}`;
    io.out(`kubeconfig: ${cp.kubeconfigPath}\n`);
    io.out(`try: ${kubectl} get crds\n`);
    if (cp.netns !== undefined) {
      io.out(
        `the API server runs in network namespace ${cp.netns} (IPv6 only) at ${cp.server}, reachable from here over ${cp.veth!.hostInterface}\n`,
      );
      io.out(`inside the namespace: ip netns exec ${cp.netns} ${kubectl} get crds\n`);
    }
    if (existsSync(resolve(cacheBinDir(), 'kubectl'))) {
      io.out(`(a kubectl of the same version: ${resolve(cacheBinDir(), 'kubectl')})\n`);
    }

    const gates = opts.gates ?? featureGates({ IPv6SingleStack: true, DualStack: true });
    // The controllers' JSON logs go to stderr, warnings and errors only: stdout is for the user.
    const logger = newLogger({
      level: process.env.LOG_LEVEL ?? 'warn',
      name: 'gardener-ipv6',
      destination: process.stderr,
    });
    try {
      services = await startLocalServices(cp, gates, logger, {
        ...(workloads ? { controlPlaneWorkloads: true } : {}),
        loadBalancerNetworks: gardenSeed.loadBalancerNetworks,
        // With several seeds, each gardenlet serves its own.
        ...(seeds.length > 1
          ? {
              seedName: gardenSeed.seed.metadata!.name!,
              otherLoadBalancerNetworks: seeds.slice(1).map((s) => s.loadBalancerNetworks),
            }
          : {}),
        ...(opts.machineLimits ? { machineLimits: opts.machineLimits } : {}),
        shutdownTimeoutMs: UP_RUNTIME_SHUTDOWN_MS,
      });
    } catch (e) {
      io.err(`error: the webhook, controllers or DNS server did not start: ${(e as Error).message}\n`);
      return 1;
    }
    io.out(`DNS server: BIND9 at ${services.bind.server} (zone ${services.bind.zone})\n`);
    io.out(`webhook: ${services.runtime.webhook?.url ?? '-'}; controllers: gardenlet, network (calico), dns (local)\n`);
    if (stops.received !== undefined) return 0;
    const client = new ResourceClient(cp.kubeConfig());
    try {
      const garden = cp;
      const bind = services.bind;
      const seedReady = async (): Promise<string[]> => {
        if (seedNetwork === undefined) return [];
        seedNodes = SeedNodes.forCluster(garden, {
          count: seedNodeCount,
          network: seedNetwork,
          machines: await machinesOptions({ seed: workloads }),
          client,
          // BIND9 on port 53 (always so with seed Nodes): what a resolv.conf can name.
          ...(bind.port === 53 ? { upstreamDNS: [bind.address] } : {}),
          log: (line) => io.err(`${line}\n`),
        });
        await seedNodes.deploy();
        await Promise.race([seedNodes.wait(), stopped]);
        return Promise.race([seedSummary(seedNodes, client, garden), stopped]);
      };
      // The other seeds' clusters: API server, gardenlet, Nodes.
      const seedClusterReady = async (cluster: SeedCluster): Promise<string[]> => {
        seedClusters.push(cluster);
        await Promise.race([cluster.deploy(), stopped]);
        void cluster.controlPlane.crashed.then((crash) => {
          seedCrash = `seed cluster ${cluster.name}: ${crash}`;
          stops.abort(new Error(seedCrash));
          wake?.();
        });
        await Promise.race([cluster.wait(), stopped]);
        return Promise.race([cluster.summary(), stopped]);
      };
      const machines = workloads ? () => machinesOptions({ seed: true }) : undefined;
      // The seeds' Nodes come up while the example shoot reconciles: nothing of the shoot runs on them yet.
      const failed = (what: string) => (e: unknown) => {
        throw new Error(`${what}: ${(e as Error).message}`);
      };
      const [seedLines, shoot, ...otherSeedLines] = await Promise.all([
        seedReady().catch(failed("the seed's Nodes")),
        applyExampleShoot(client, {
          signal: stops.signal,
          seeds: seeds.map((s) => s.seed),
          shoot: gardenSeed.exampleShoot,
          ...(gardenSeed.exampleShootNetworking ? { shootNetworking: gardenSeed.exampleShootNetworking } : {}),
        }).catch(failed('the example shoot')),
        ...seeds.slice(1).map((seed) =>
          seedClusterReady(
            new SeedCluster({
              seed,
              garden,
              bind,
              gates,
              logger,
              nodeCount: workloads ? seedNodeCount : 0,
              ...(machines ? { machines } : {}),
              shutdownTimeoutMs: UP_RUNTIME_SHUTDOWN_MS,
              log: (line) => io.err(`${line}\n`),
            }),
          ).catch(failed(`seed cluster ${seed.seed.metadata?.name}`)),
        ),
      ]);
      for (const line of seedLines) io.out(`${line}\n`);
      for (const line of otherSeedLines.flat()) io.out(`${line}\n`);
      const summary = await Promise.race([
        shootSummary(client, shoot, services.bind, {
          controlPlaneWorkloads: services.controlPlaneWorkloads,
          gardenKubeconfig: cp.kubeconfigPath,
          shootKubeconfig: join(cp.dir, 'shoot.kubeconfig'),
        }),
        stopped,
      ]);
      for (const line of summary) io.out(`${line}\n`);
    } catch (e) {
      if (stops.received !== undefined) return 0;
      io.err(`error: ${(e as Error).message}\n`);
      return 1;
    }
    const seedNames = seeds.length > 1 ? ` on seeds ${seeds.map((s) => s.seed.metadata?.name).join(', ')}` : '';
    io.out(
      `ready: API server ${cp.server} with ${cp.crds.length} CRDs${seedNames} and an ` +
        `${gardenSeed.exampleShoot === 'shoot-ipv4.yaml' ? 'IPv4' : 'IPv6'} shoot` +
        `${services.controlPlaneWorkloads ? ' with its own control plane on the seed' : ' (objects only: shoot control planes need seed Nodes, which need root)'}; Ctrl-C to stop\n`,
    );

    const crash = await Promise.race([
      cp.crashed,
      new Promise<undefined>((done) => {
        wake = () => done(undefined);
        if (stops.received !== undefined) done(undefined);
      }),
    ]);
    if (crash !== undefined || seedCrash !== undefined) {
      io.err(`error: ${crash ?? seedCrash}\n`);
      return 1;
    }
    return 0;
  } finally {
    const stopStart = stopAskedAt ?? Date.now();
    const deadline = stopStart + UP_STOP_TIMEOUT_MS;
    // How long each part took, counted from the stop request: a stop over its bound says which part held it.
    const took: string[] = [];
    const timed = async (what: string, step: Promise<unknown> | undefined) => {
      if (step === undefined) return;
      await step;
      took.push(`${what} ${Date.now() - stopStart} ms`);
    };
    await Promise.all([
      timed(
        'services',
        services
          ?.stop({ deadline, keepLoadBalancerNetwork: true })
          .catch((e: unknown) => io.err(`error while stopping the services: ${(e as Error).message}\n`)),
      ),
      timed(
        "seed's Nodes",
        seedNodes
          ?.destroy({ deadline })
          .catch((e: unknown) => io.err(`error while stopping the seed's Nodes: ${(e as Error).message}\n`)),
      ),
      ...seedClusters.map((cluster) =>
        timed(
          `seed cluster ${cluster.name}`,
          cluster
            .destroy({ deadline })
            .catch((e: unknown) =>
              io.err(`error while stopping seed cluster ${cluster.name}: ${(e as Error).message}\n`),
            ),
        ),
      ),
    ]);
    if (cp !== undefined) {
      await timed('control plane', cp.stop({ deadline }));
      io.err(`stopped; removed the control plane and its files (${took.join(', ')})\n`);
    }
    // After the API server: see LocalServices.stop.
    services?.loadBalancerNetwork?.destroy();
    seedNetwork?.destroy();
    runFolder.leave();
    stops.dispose();
    stopWatchingParent();
  }
}
