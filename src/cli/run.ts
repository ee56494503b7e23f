/**
 * `gardener-ipv6 run`: the admission webhook and the controllers against a cluster, until SIGINT or SIGTERM.
 */
import { rmSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { COMPONENTS, startRuntime, type Component, type Runtime } from '../app/runtime.js';
import { localDNSProvider } from '../gardenlet/dns-provider.js';
import type { Seed } from '../apis/core/v1beta1/seed.js';
import { AddressPool, DEFAULT_LOAD_BALANCER_NETWORKS } from '../extensions/provider-local/loadbalancer/pool.js';
import { machineLimitsOrDefaults } from '../extensions/provider-local/admission.js';
import { Refs } from '../apis/refs.js';
import { onEmergencyExit } from '../system/cleanup.js';
import { enterRunFolder, sweepRunFolders } from '../system/run-folder.js';
import { ResourceClient } from '../runtime/client.js';
import { newLogger, type Logger } from '../runtime/log.js';
import { InputError, type CliIO } from './io.js';
import { checkRunOptions, type ControlPlaneWorkloadsMode, type RunOptions } from './run-checks.js';
import { untilSignalled } from './signals.js';

export { parseControlPlaneWorkloadsMode } from './run-checks.js';

/**
 * Whether the gardenlet runs shoots as workloads: `auto` asks the cluster for Nodes (a cluster without any, an API
 * server alone, can run nothing; its shoots are reconciled objects-only and their status says so).
 */
export async function resolveControlPlaneWorkloads(
  mode: ControlPlaneWorkloadsMode,
  kubeConfig: KubeConfig,
  signal?: AbortSignal,
): Promise<boolean> {
  if (mode !== 'auto') return mode === 'true';
  const client = new ResourceClient(kubeConfig);
  // Stopped meanwhile: closing the client fails the request (an API server that does not answer would hold it).
  const onAbort = () => client.close();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const nodes = await client.list(Refs.node, { limit: 50 });
    return nodes.items.length > 0;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    client.close();
  }
}

export function parseComponents(list: string): Component[] {
  const names = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const name of names) {
    if (!(COMPONENTS as readonly string[]).includes(name)) {
      throw new InputError(`unknown component ${JSON.stringify(name)} (known: ${COMPONENTS.join(', ')})`);
    }
  }
  if (names.length === 0) throw new InputError('--components names no component');
  return names as Component[];
}

export function loadKubeConfig(path: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  try {
    if (path) kc.loadFromFile(path);
    else kc.loadFromDefault();
  } catch (e) {
    throw new InputError(`cannot load the kubeconfig${path ? ` ${path}` : ''}: ${(e as Error).message}`);
  }
  if (!kc.getCurrentCluster()) throw new InputError(`the kubeconfig${path ? ` ${path}` : ''} has no current cluster`);
  return kc;
}

/**
 * Resolves with the exit code after a signal stopped everything (0), also while it started, or when the runtime ended
 * by itself (1). What it writes (the webhook's generated CA and keys) goes below a folder of this run,
 * `$TMPDIR/gardener-ipv6-run-<pid>` as `up` makes, removed when it returns; a run that was killed can't, so each
 * start first removes the run folders whose process is gone.
 */
export async function runRun(options: RunOptions, io: CliIO): Promise<number> {
  // Every flag first (exit 2 naming the bad ones): nothing listens or connects before they are all fine.
  const { kubeConfig, gardenKubeConfig, tsigSecret, seedConfig, seedName } = await checkRunOptions(
    options,
    loadKubeConfig,
  );
  const logger = newLogger({ level: options.logLevel, name: 'gardener-ipv6' });
  // From here on a signal stops the run, also before its caches synced.
  return untilSignalled(
    async (stop) => {
      const runFolder = makeRunFolder(options, io);
      try {
        return await runUntilStopped(options, io, {
          kubeConfig,
          gardenKubeConfig,
          tsigSecret,
          seedConfig,
          seedName,
          logger,
          stop,
        });
      } finally {
        runFolder?.remove();
      }
    },
    { onSignal: (signal) => logger.info({ signal }, 'stopping'), err: io.err },
  );
}

/**
 * The run's folder, when it writes files: the webhook's certificates are generated unless they are given (a pod gets
 * them mounted, and its root file system is read-only). The leftovers of killed runs are removed either way.
 */
function makeRunFolder(options: RunOptions, io: CliIO): { remove(): void } | undefined {
  const log = (line: string) => io.err(`${line}\n`);
  if (!options.components.includes('admission') || options.webhookCertDir) {
    sweepRunFolders(log);
    return undefined;
  }
  const runFolder = enterRunFolder(log);
  // An uncaught error or process.exit() ends the process without the finally above.
  const unregister = onEmergencyExit(() => rmSync(runFolder.dir, { recursive: true, force: true }), {
    signals: false,
  });
  return {
    remove() {
      unregister();
      runFolder.leave();
    },
  };
}

async function runUntilStopped(
  options: RunOptions,
  io: CliIO,
  context: {
    kubeConfig: KubeConfig;
    gardenKubeConfig: KubeConfig | undefined;
    tsigSecret: string | undefined;
    seedConfig: Seed | undefined;
    seedName: string | undefined;
    logger: Logger;
    stop: AbortSignal;
  },
): Promise<number> {
  const { kubeConfig, gardenKubeConfig, tsigSecret, seedConfig, seedName, logger, stop } = context;
  let runtime: Runtime;
  try {
    const workloads =
      options.components.includes('gardenlet') &&
      (await resolveControlPlaneWorkloads(options.controlPlaneWorkloads, kubeConfig, stop));
    if (options.components.includes('gardenlet')) {
      logger.info(
        { controlPlaneWorkloads: workloads },
        workloads
          ? 'shoots run as workloads of this cluster (control planes in their seed namespaces, machines as pods)'
          : 'shoots are reconciled objects-only: this cluster has no Nodes to run them on',
      );
    }
    runtime = await startRuntime({
      kubeConfig,
      ...(gardenKubeConfig !== undefined ? { garden: gardenKubeConfig } : {}),
      gates: options.gates,
      logger,
      components: options.components,
      webhook: {
        host: options.webhookHost,
        port: options.webhookPort,
        register: options.webhookRegister,
        advertiseHost: options.webhookAdvertiseHost,
        extensions: options.extensionTypes,
        providerLocal: {
          loadBalancerNetworks: options.loadBalancerNetworks ?? DEFAULT_LOAD_BALANCER_NETWORKS,
          ...machineLimitsOrDefaults(options.machineLimits),
        },
        ...(options.webhookCertDir ? { certDir: options.webhookCertDir } : {}),
      },
      gardenlet: {
        dns: localDNSProvider({
          server: options.dnsServer,
          domain: options.domain,
          ...(options.dnsTSIGKeyName && tsigSecret ? { tsigKeyName: options.dnsTSIGKeyName, tsigSecret } : {}),
        }),
        ...(seedName ? { seedName } : {}),
        ...(seedConfig ? { seedConfig } : {}),
        ...(workloads ? { controlPlaneWorkloads: true } : {}),
      },
      // With workloads, every shoot's API server gets its own addresses (the environment routes the networks to the
      // cluster's Nodes, where kube-proxy serves them); objects-only, the one host address per family.
      providerLocal: workloads
        ? {
            pool: new AddressPool(options.loadBalancerNetworks ?? DEFAULT_LOAD_BALANCER_NETWORKS),
            machinePods: true,
          }
        : { hostIPs: options.hostIPs },
      health: { host: options.healthHost, port: options.healthPort },
      signal: stop,
      ...(options.leaderElect
        ? { leaderElection: { namespace: options.leaderElectionNamespace, name: options.leaderElectionID } }
        : {}),
    });
  } catch (e) {
    // Stopped while it started: what it started is stopped, as after a run.
    if (stop.aborted) return 0;
    // The flags were fine; what failed is the cluster or the host (an API server that can't be reached, ...): one
    // line, exit 1, as a pod's log should show it before the pod is restarted.
    io.err(`error: starting ${options.components.join(', ')} failed: ${(e as Error).message}\n`);
    return 1;
  }
  const gardenServer = gardenKubeConfig?.getCurrentCluster()?.server;
  io.err(
    `running ${options.components.join(', ')} against ${kubeConfig.getCurrentCluster()?.server ?? '?'}` +
      `${gardenServer !== undefined ? ` (the seed; the garden: ${gardenServer})` : ''}\n`,
  );
  const outcome = await new Promise<number>((resolve) => {
    if (stop.aborted) return resolve(0);
    stop.addEventListener('abort', () => resolve(0), { once: true });
    runtime.manager.done.then(
      () => resolve(1),
      (e: unknown) => {
        logger.error({ err: e }, 'controllers ended');
        resolve(1);
      },
    );
  });
  await runtime.stop();
  return outcome;
}
