/**
 * `gardener-ipv6 up` (up.ts) as ordered steps with their undo (src/runtime/steps.ts): the run folder, the seed's node
 * network, the control plane, the webhook and controllers with BIND9, the seeds with the example shoot, the summary.
 * A failure and the stop undo them last first; the services and the seeds stop side by side, within
 * UP_STOP_TIMEOUT_MS of the stop request.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { cacheBinDir } from '../localenv/binaries.js';
import { startControlPlane, type ControlPlane } from '../localenv/control-plane.js';
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
import { SeedNodeNetwork, SeedNodes, seedSummary } from '../app/seed-nodes.js';
import type { LocalSeed } from '../app/local-seeds.js';
import { SeedCluster } from '../app/seed-cluster.js';
import type { FeatureGates } from '../featuregate/featuregate.js';
import { ResourceClient } from '../runtime/client.js';
import type { Logger } from '../runtime/log.js';
import type { Step } from '../runtime/steps.js';
import {
  REPEATED_SIGNAL_WINDOW_MS,
  UP_RUNTIME_SHUTDOWN_MS,
  UP_STOP_TIMEOUT_MS,
  type UpIO,
  type UpOptions,
  type UpPlan,
} from './up-options.js';

/**
 * How `up` is stopped: SIGINT or SIGTERM, its parent going away, or a part of it that died. Listens from the start:
 * a Ctrl-C while starting stops as soon as the step running finished (the wait for the example shoot is cut short), a
 * second one exits at once (the exit handler then kills the children and removes their files).
 */
export class UpStop {
  readonly signals: StopSignals;
  /** Rejects once the stop is asked for: what a step's long wait races. */
  readonly stopped: Promise<never>;
  /** When the stop was asked for: the stop's bound counts from then, not from when the step running let go. */
  askedAt: number | undefined;
  private readonly stopWatchingParent: () => void;

  constructor(io: UpIO) {
    this.signals = new StopSignals({
      onSignal: (signal) => io.err(`${signal}: stopping ...\n`),
      err: io.err,
      repeatWindowMs: REPEATED_SIGNAL_WINDOW_MS,
      exitCode: 130,
    });
    const { signal } = this.signals;
    this.stopped = new Promise<never>((_, reject) =>
      signal.addEventListener(
        'abort',
        () => {
          this.askedAt = Date.now();
          reject(signal.reason);
        },
        { once: true },
      ),
    );
    this.stopped.catch(() => {});
    // Started through npx, a signal may end npm and its shell but never reach us: their going is our stop signal.
    this.stopWatchingParent = onParentExit(() => {
      if (this.signals.received !== undefined) return;
      io.err('the parent process exited: stopping ...\n');
      this.signals.stop('SIGHUP');
    });
  }

  /** Resolves once the stop is asked for (or a part died). */
  asked(): Promise<void> {
    return this.stopped.catch(() => {});
  }

  dispose(): void {
    this.signals.dispose();
    this.stopWatchingParent();
  }
}

/** What `up`'s steps share and record, for the steps after them and their undo. */
export interface UpRun {
  readonly opts: UpOptions;
  readonly io: UpIO;
  readonly plan: Exclude<UpPlan, { error: string }>;
  readonly stop: UpStop;
  readonly gates: FeatureGates;
  readonly logger: Logger;
  runFolder?: { leave(): void };
  seedNetwork?: SeedNodeNetwork;
  cp?: ControlPlane;
  services?: LocalServices;
  client?: ResourceClient;
  seedNodes?: SeedNodes;
  readonly seedClusters: SeedCluster[];
  /** What ended a seed cluster's control plane, when one died. */
  seedCrash?: string;
  shoot?: Awaited<ReturnType<typeof applyExampleShoot>>;
  /** The stop's bound, set by the first undo; and how long each part took, counted from the stop request. */
  stopping?: { readonly start: number; readonly deadline: number; readonly took: string[] };
}

/** A step's failure that ends `up` with 1 even when a stop was asked for, said as "error: <what>: <why>". */
class UpStepError extends Error {}

function failsAs<S>(what: string, run: (s: S) => Promise<void>): (s: S) => Promise<void> {
  return (s) =>
    run(s).catch((e: unknown) => {
      throw new UpStepError(`${what}: ${(e as Error).message}`);
    });
}

const line = (s: UpRun) => (text: string) => s.io.err(`${text}\n`);

/** The stop's bound, counted from when it was asked for; and a part's time, said in the stop's last line. */
function stopping(s: UpRun): NonNullable<UpRun['stopping']> {
  const start = s.stop.askedAt ?? Date.now();
  return (s.stopping ??= { start, deadline: start + UP_STOP_TIMEOUT_MS, took: [] });
}

async function timed(s: UpRun, what: string, part: Promise<unknown>): Promise<void> {
  await part;
  stopping(s).took.push(`${what} ${Date.now() - stopping(s).start} ms`);
}

/** Stops a part, saying (not throwing) what went wrong: the other parts stop all the same. */
function stopPart(s: UpRun, what: string, errorWhat: string, part: () => Promise<void>): Promise<void> {
  return timed(
    s,
    what,
    part().catch((e: unknown) => s.io.err(`error while stopping ${errorWhat}: ${(e as Error).message}\n`)),
  );
}

type UpStep = Step<UpRun>;

// Everything this run writes goes below one folder named with its pid; a run that was killed left its folder
// (with the CA keys of the garden and the shoots): the folders of runs that are gone go first.
const enterFolder: UpStep = {
  name: 'enter the run folder',
  run: (s) => void (s.runFolder = enterRunFolder(line(s))),
  undo: (s) => s.runFolder?.leave(),
};

// The garden's API server is the seed's: it listens on the seed's node network, made first.
const seedNodeNetwork: UpStep = {
  name: "make the seed's node network",
  run: failsAs('the control plane did not start', async (s) => {
    const garden = s.plan.seeds[0]!;
    s.seedNetwork = new SeedNodeNetwork(garden.networks, garden.tag);
    s.seedNetwork.deploy();
  }),
  undo: (s) => s.seedNetwork?.destroy(),
};

// The services' start makes the load-balancer network; it goes after the API server: see LocalServices.stop.
const loadBalancerNetwork: UpStep = {
  name: 'remove the load-balancer network',
  run: () => {},
  undo: (s) => s.services?.loadBalancerNetwork?.destroy(),
};

const controlPlane: UpStep = {
  name: 'start the control plane',
  run: failsAs('the control plane did not start', async (s) => {
    s.cp = await startControlPlane({
      ipv6Only: s.opts.ipv6Only ?? false,
      handleSignals: false,
      log: line(s),
      ...(s.opts.kubeconfigOut !== undefined ? { kubeconfigPath: resolve(s.opts.kubeconfigOut) } : {}),
      ...(s.seedNetwork !== undefined ? s.seedNetwork.controlPlaneOptions() : {}),
    });
  }),
  undo: async (s) => {
    if (s.cp === undefined) return;
    await timed(s, 'control plane', s.cp.stop({ deadline: stopping(s).deadline }));
    s.io.err(`stopped; removed the control plane and its files (${stopping(s).took.join(', ')})\n`);
  },
};

const sayControlPlane: UpStep = {
  name: 'say where the control plane is',
  run: ({ cp, io, stop }) => {
    void cp!.crashed.then((crash) => stop.signals.abort(new Error(crash)));
    const kubectl = `kubectl --kubeconfig ${cp!.kubeconfigPath}`;
    io.out(`kubeconfig: ${cp!.kubeconfigPath}\n`);
    io.out(`try: ${kubectl} get crds\n`);
    if (cp!.netns !== undefined) {
      io.out(
        `the API server runs in network namespace ${cp!.netns} (IPv6 only) at ${cp!.server}, reachable from here over ${cp!.veth!.hostInterface}\n`,
      );
      io.out(`inside the namespace: ip netns exec ${cp!.netns} ${kubectl} get crds\n`);
    }
    if (existsSync(resolve(cacheBinDir(), 'kubectl'))) {
      io.out(`(a kubectl of the same version: ${resolve(cacheBinDir(), 'kubectl')})\n`);
    }
  },
};

const localServices: UpStep = {
  name: 'start the webhook, the controllers and BIND9',
  run: failsAs('the webhook, controllers or DNS server did not start', async (s) => {
    const { seeds, workloads } = s.plan;
    const gardenSeed = seeds[0]!;
    s.services = await startLocalServices(s.cp!, s.gates, s.logger, {
      ...(workloads ? { controlPlaneWorkloads: true } : {}),
      loadBalancerNetworks: gardenSeed.loadBalancerNetworks,
      // With several seeds, each gardenlet serves its own.
      ...(seeds.length > 1
        ? {
            seedName: gardenSeed.seed.metadata!.name!,
            otherLoadBalancerNetworks: seeds.slice(1).map((seed) => seed.loadBalancerNetworks),
          }
        : {}),
      ...(s.opts.machineLimits ? { machineLimits: s.opts.machineLimits } : {}),
      shutdownTimeoutMs: UP_RUNTIME_SHUTDOWN_MS,
    });
    const { bind, runtime } = s.services;
    s.io.out(`DNS server: BIND9 at ${bind.server} (zone ${bind.zone})\n`);
    s.io.out(`webhook: ${runtime.webhook?.url ?? '-'}; controllers: gardenlet, network (calico), dns (local)\n`);
    s.client = new ResourceClient(s.cp!.kubeConfig());
  }),
  undo: (s) =>
    s.services &&
    stopPart(s, 'services', 'the services', () =>
      s.services!.stop({ deadline: stopping(s).deadline, keepLoadBalancerNetwork: true }),
    ),
};

/** The garden seed's Nodes; their summary lines. */
async function seedNodesReady(s: UpRun): Promise<string[]> {
  if (s.seedNetwork === undefined) return [];
  const { cp, client, services, stop } = s;
  s.seedNodes = SeedNodes.forCluster(cp!, {
    count: s.plan.seedNodeCount,
    network: s.seedNetwork,
    machines: await machinesOptions({ seed: s.plan.workloads }),
    client: client!,
    // BIND9 on port 53 (always so with seed Nodes): what a resolv.conf can name.
    ...(services!.bind.port === 53 ? { upstreamDNS: [services!.bind.address] } : {}),
    log: line(s),
  });
  await s.seedNodes.deploy();
  await Promise.race([s.seedNodes.wait(), stop.stopped]);
  return Promise.race([seedSummary(s.seedNodes, client!, cp!), stop.stopped]);
}

/** Another seed's cluster (API server, gardenlet, Nodes); its summary lines. */
async function seedClusterReady(s: UpRun, seed: LocalSeed): Promise<string[]> {
  const { workloads, seedNodeCount } = s.plan;
  const machines = workloads ? () => machinesOptions({ seed: true }) : undefined;
  const cluster = new SeedCluster({
    seed,
    garden: s.cp!,
    bind: s.services!.bind,
    gates: s.gates,
    logger: s.logger,
    nodeCount: workloads ? seedNodeCount : 0,
    ...(machines ? { machines } : {}),
    shutdownTimeoutMs: UP_RUNTIME_SHUTDOWN_MS,
    log: line(s),
  });
  s.seedClusters.push(cluster);
  await Promise.race([cluster.deploy(), s.stop.stopped]);
  void cluster.controlPlane.crashed.then((crash) => {
    s.seedCrash = `seed cluster ${cluster.name}: ${crash}`;
    s.stop.signals.abort(new Error(s.seedCrash));
  });
  await Promise.race([cluster.wait(), s.stop.stopped]);
  return Promise.race([cluster.summary(), s.stop.stopped]);
}

// The seeds' Nodes come up while the example shoot reconciles: nothing of the shoot runs on them yet.
const seedsAndShoot: UpStep = {
  name: "start the seeds' Nodes and clusters, apply the example shoot",
  run: async (s) => {
    const { seeds } = s.plan;
    const gardenSeed = seeds[0]!;
    const failed = (what: string) => (e: unknown) => {
      throw new Error(`${what}: ${(e as Error).message}`);
    };
    const [seedLines, shoot, ...otherSeedLines] = await Promise.all([
      seedNodesReady(s).catch(failed("the seed's Nodes")),
      applyExampleShoot(s.client!, {
        signal: s.stop.signals.signal,
        seeds: seeds.map((seed) => seed.seed),
        shoot: gardenSeed.exampleShoot,
        ...(gardenSeed.exampleShootNetworking ? { shootNetworking: gardenSeed.exampleShootNetworking } : {}),
      }).catch(failed('the example shoot')),
      ...seeds
        .slice(1)
        .map((seed) => seedClusterReady(s, seed).catch(failed(`seed cluster ${seed.seed.metadata?.name}`))),
    ]);
    s.shoot = shoot;
    for (const text of [...seedLines, ...otherSeedLines.flat()]) s.io.out(`${text}\n`);
  },
  undo: async (s) => {
    const { deadline } = stopping(s);
    await Promise.all([
      s.seedNodes && stopPart(s, "seed's Nodes", "the seed's Nodes", () => s.seedNodes!.destroy({ deadline })),
      ...s.seedClusters.map((cluster) =>
        stopPart(s, `seed cluster ${cluster.name}`, `seed cluster ${cluster.name}`, () =>
          cluster.destroy({ deadline }),
        ),
      ),
    ]);
  },
  // The seeds stop while the services do.
  undoAlongsidePrevious: true,
};

const summary: UpStep = {
  name: 'say what runs',
  run: async ({ cp, services, client, shoot, stop, io, plan }) => {
    const lines = await Promise.race([
      shootSummary(client!, shoot!, services!.bind, {
        controlPlaneWorkloads: services!.controlPlaneWorkloads,
        gardenKubeconfig: cp!.kubeconfigPath,
        shootKubeconfig: join(cp!.dir, 'shoot.kubeconfig'),
      }),
      stop.stopped,
    ]);
    for (const text of lines) io.out(`${text}\n`);
    const { seeds } = plan;
    const seedNames = seeds.length > 1 ? ` on seeds ${seeds.map((seed) => seed.seed.metadata?.name).join(', ')}` : '';
    io.out(
      `ready: API server ${cp!.server} with ${cp!.crds.length} CRDs${seedNames} and an ` +
        `${seeds[0]!.exampleShoot === 'shoot-ipv4.yaml' ? 'IPv4' : 'IPv6'} shoot` +
        `${services!.controlPlaneWorkloads ? ' with its own control plane on the seed' : ' (objects only: shoot control planes need seed Nodes, which need root)'}; Ctrl-C to stop\n`,
    );
  },
};

export function upSteps(plan: UpRun['plan']): UpStep[] {
  return [
    enterFolder,
    ...(plan.seedNodeCount > 0 ? [seedNodeNetwork] : []),
    loadBalancerNetwork,
    controlPlane,
    sayControlPlane,
    localServices,
    seedsAndShoot,
    summary,
  ];
}

/** The exit code of a start that failed, said on stderr: 0 when it failed because a stop was asked for. */
export function failureCode(s: UpRun, e: unknown): number {
  if (!(e instanceof UpStepError) && s.stop.signals.received !== undefined) return 0;
  s.io.err(`error: ${(e as Error).message}\n`);
  return 1;
}

/** Runs until the stop (0) or a part dies (1). */
export async function serve(s: UpRun): Promise<number> {
  const crash = await Promise.race([s.cp!.crashed, s.stop.asked().then(() => undefined)]);
  if (crash !== undefined || s.seedCrash !== undefined) {
    s.io.err(`error: ${crash ?? s.seedCrash}\n`);
    return 1;
  }
  return 0;
}
