/**
 * `gardener-ipv6 run`: the admission webhook and the controllers against a cluster, until SIGINT or SIGTERM.
 */
import { rmSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { COMPONENTS, startRuntime, type Component } from '../app/runtime.js';
import { Refs } from '../apis/refs.js';
import { onEmergencyExit } from '../system/cleanup.js';
import { enterRunFolder, sweepRunFolders } from '../system/run-folder.js';
import { ResourceClient } from '../runtime/client.js';
import { InputError, type CliIO } from './io.js';
import { checkRunOptions, type ControlPlaneWorkloadsMode, type RunOptions } from './run-checks.js';
import { runSteps, runToExitCode, type RunParts, type RunState } from './run-steps.js';
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
  try {
    // Stopped meanwhile: the signal fails the request (an API server that does not answer would hold it).
    const nodes = await client.list(Refs.node, { limit: 50, ...(signal ? { signal } : {}) });
    return nodes.items.length > 0;
  } finally {
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
 * start first removes the run folders whose process is gone. It runs as ordered steps with their undo (run-steps.ts).
 */
export async function runRun(options: RunOptions, io: CliIO): Promise<number> {
  let state: RunState | undefined;
  // From the start on a signal stops the run, also before its caches synced.
  return untilSignalled((stop) => runToExitCode((state = { options, io, stop }), runSteps(RUN_PARTS)), {
    onSignal: (signal) => state?.logger?.info({ signal }, 'stopping'),
    err: io.err,
  });
}

const RUN_PARTS: RunParts = {
  check: (options) => checkRunOptions(options, loadKubeConfig),
  runFolder: makeRunFolder,
  workloads: resolveControlPlaneWorkloads,
  startRuntime,
};

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
  // An uncaught error or process.exit() ends the process without the step's undo.
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
