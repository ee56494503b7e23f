/**
 * `gardener-ipv6 run` (run.ts) as ordered steps with their undo (src/runtime/steps.ts): the flags, the run folder,
 * whether shoots run as workloads, the runtime, then the wait until a signal stops it or it ends by itself. A failure
 * and the stop undo them last first: the runtime stops, then the run folder goes.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Runtime, RuntimeOptions } from '../app/runtime.js';
import { machineLimitsOrDefaults } from '../extensions/provider-local/admission.js';
import { AddressPool, DEFAULT_LOAD_BALANCER_NETWORKS } from '../extensions/provider-local/loadbalancer/pool.js';
import { localDNSProvider } from '../gardenlet/dns-provider.js';
import { newLogger, type Logger } from '../runtime/log.js';
import { Steps, type Step } from '../runtime/steps.js';
import type { CliIO } from './io.js';
import type { CheckedRunInputs, ControlPlaneWorkloadsMode, RunOptions } from './run-checks.js';

/** What of the runtime the run waits on and stops. */
export type RunningRuntime = Pick<Runtime, 'stop'> & { readonly manager: Pick<Runtime['manager'], 'done'> };

/** What the steps do their work with: the real ones in run.ts, stand-ins in the tests. */
export interface RunParts {
  /** Checks every flag, throwing an InputError that names the bad ones. */
  check(options: RunOptions): Promise<CheckedRunInputs>;
  /** The run's folder, when it writes files; removed on undo. */
  runFolder(options: RunOptions, io: CliIO): { remove(): void } | undefined;
  workloads(mode: ControlPlaneWorkloadsMode, kubeConfig: KubeConfig, signal: AbortSignal): Promise<boolean>;
  startRuntime(options: RuntimeOptions): Promise<RunningRuntime>;
}

/** What the run's steps share and record, for the steps after them and their undo. */
export interface RunState {
  readonly options: RunOptions;
  readonly io: CliIO;
  /** Aborts at SIGINT or SIGTERM. */
  readonly stop: AbortSignal;
  inputs?: CheckedRunInputs;
  logger?: Logger;
  runFolder?: { remove(): void };
  /** Whether the gardenlet runs shoots as workloads of the cluster. */
  workloads?: boolean;
  runtime?: RunningRuntime;
  /** The exit code once the runtime ran: 0 when a signal stopped it, 1 when it ended by itself. */
  outcome?: number;
}

type RunStep = Step<RunState>;

/** A failure of the start (the cluster or the host, not the flags): exit 1 with one line, or 0 when it was stopped. */
class StartFailure extends Error {}

function failsToStart(run: (s: RunState) => Promise<void>): (s: RunState) => Promise<void> {
  return (s) =>
    run(s).catch((e: unknown) => {
      throw new StartFailure((e as Error).message, { cause: e });
    });
}

function checkFlags(parts: RunParts): RunStep {
  return {
    // Every flag first (exit 2 naming the bad ones): nothing listens or connects before they are all fine.
    name: 'check the flags',
    run: async (s) => {
      s.inputs = await parts.check(s.options);
      s.logger = newLogger({ level: s.options.logLevel, name: 'gardener-ipv6' });
    },
  };
}

function runFolder(parts: RunParts): RunStep {
  return {
    name: 'make the run folder',
    run: (s) => void (s.runFolder = parts.runFolder(s.options, s.io)),
    undo: (s) => s.runFolder?.remove(),
  };
}

function askForWorkloads(parts: RunParts): RunStep {
  return {
    name: 'ask whether shoots run as workloads',
    run: failsToStart(async (s) => {
      if (!s.options.components.includes('gardenlet')) return void (s.workloads = false);
      s.workloads = await parts.workloads(s.options.controlPlaneWorkloads, s.inputs!.kubeConfig, s.stop);
      s.logger!.info(
        { controlPlaneWorkloads: s.workloads },
        s.workloads
          ? 'shoots run as workloads of this cluster (control planes in their seed namespaces, machines as pods)'
          : 'shoots are reconciled objects-only: this cluster has no Nodes to run them on',
      );
    }),
  };
}

function startRuntime(parts: RunParts): RunStep {
  return {
    name: 'start the runtime',
    run: failsToStart(async (s) => {
      s.runtime = await parts.startRuntime(runtimeOptions(s));
      const { kubeConfig, gardenKubeConfig } = s.inputs!;
      const gardenServer = gardenKubeConfig?.getCurrentCluster()?.server;
      s.io.err(
        `running ${s.options.components.join(', ')} against ${kubeConfig.getCurrentCluster()?.server ?? '?'}` +
          `${gardenServer !== undefined ? ` (the seed; the garden: ${gardenServer})` : ''}\n`,
      );
    }),
    undo: (s) => s.runtime?.stop(),
  };
}

const untilStoppedOrEnded: RunStep = {
  name: 'run until stopped or ended',
  run: async (s) => {
    s.outcome = await new Promise<number>((resolve) => {
      if (s.stop.aborted) return resolve(0);
      s.stop.addEventListener('abort', () => resolve(0), { once: true });
      s.runtime!.manager.done.then(
        () => resolve(1),
        (e: unknown) => {
          s.logger!.error({ err: e }, 'controllers ended');
          resolve(1);
        },
      );
    });
  },
};

export function runSteps(parts: RunParts): RunStep[] {
  return [checkFlags(parts), runFolder(parts), askForWorkloads(parts), startRuntime(parts), untilStoppedOrEnded];
}

/** What startRuntime gets from the flags and what the steps before found. */
function runtimeOptions(s: RunState): RuntimeOptions {
  const { options, logger, workloads, stop } = s;
  const { kubeConfig, gardenKubeConfig, tsigSecret, seedConfig, seedName } = s.inputs!;
  const loadBalancerNetworks = options.loadBalancerNetworks ?? DEFAULT_LOAD_BALANCER_NETWORKS;
  return {
    kubeConfig,
    ...(gardenKubeConfig !== undefined ? { garden: gardenKubeConfig } : {}),
    gates: options.gates,
    logger: logger!,
    components: options.components,
    webhook: {
      host: options.webhookHost,
      port: options.webhookPort,
      register: options.webhookRegister,
      advertiseHost: options.webhookAdvertiseHost,
      extensions: options.extensionTypes,
      providerLocal: { loadBalancerNetworks, ...machineLimitsOrDefaults(options.machineLimits) },
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
      ? { pool: new AddressPool(loadBalancerNetworks), machinePods: true }
      : { hostIPs: options.hostIPs },
    health: { host: options.healthHost, port: options.healthPort },
    signal: stop,
    ...(options.leaderElect
      ? { leaderElection: { namespace: options.leaderElectionNamespace, name: options.leaderElectionID } }
      : {}),
  };
}

/**
 * The exit code of a run whose steps failed, a failed start said in one line on stderr (as a pod's log should show
 * it before the pod is restarted): 0 when a signal stopped it, also while it started; 1 when the start failed;
 * undefined when the failure is the caller's to report (bad flags: exit 2).
 */
export function failureCode(s: RunState, e: unknown): number | undefined {
  if (s.stop.aborted && (e instanceof StartFailure || e === s.stop.reason)) return 0;
  if (!(e instanceof StartFailure)) return undefined;
  s.io.err(`error: starting ${s.options.components.join(', ')} failed: ${e.message}\n`);
  return 1;
}

/**
 * Runs the steps and resolves with the exit code once what they started is stopped again; rejects with what
 * {@link failureCode} leaves to the caller, and with the first undo that failed.
 */
export async function runToExitCode(state: RunState, steps: readonly RunStep[]): Promise<number> {
  const run = new Steps('run', steps, state);
  let failed: number | undefined;
  let code: number;
  try {
    await run.run({ signal: state.stop, onFailure: (e) => (failed = failureCode(state, e)) });
    code = state.outcome ?? 1;
  } catch (e) {
    // The steps done are undone already.
    if (failed === undefined) throw e;
    code = failed;
  }
  const undoFailures = await run.undo({ reason: 'stop' });
  if (undoFailures.length > 0) throw undoFailures[0]!.error;
  return code;
}
