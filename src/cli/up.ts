/**
 * `gardener-ipv6 up`: a local IPv6 environment for trying things out. Starts etcd, kube-apiserver and
 * kube-controller-manager, installs the CRDs, writes the admin kubeconfig, starts BIND9, the admission webhook and the
 * controllers, applies the example IPv6 Seed and Shoot, prints a summary once the Shoot succeeded and a `ready`
 * line, and runs until SIGINT or SIGTERM, when it stops everything it started. Progress and logs go to stderr, the
 * lines a user (or script) needs to stdout. It starts as ordered steps with their undo (src/runtime/steps.ts): a
 * failure, and the stop, undo them last first.
 */
import { featureGates } from '../featuregate/featuregate.js';
import { newLogger } from '../runtime/log.js';
import { Steps } from '../runtime/steps.js';
import { planUp, type UpIO, type UpOptions } from './up-options.js';
import { failureCode, serve, UpStop, upSteps, type UpRun } from './up-steps.js';

export { REPEATED_SIGNAL_WINDOW_MS, UP_STOP_TIMEOUT_MS, type UpIO, type UpOptions } from './up-options.js';

/** Resolves with the exit code once a signal stopped the environment (0) or it failed (1). */
export async function up(opts: UpOptions, io: UpIO): Promise<number> {
  const plan = planUp(opts, io);
  if (plan.error !== undefined) {
    io.err(plan.error);
    return 1;
  }
  const stop = new UpStop(io);
  const state: UpRun = {
    opts,
    io,
    plan,
    stop,
    gates: opts.gates ?? featureGates({ IPv6SingleStack: true, DualStack: true }),
    // The controllers' JSON logs go to stderr, warnings and errors only: stdout is for the user.
    logger: newLogger({ level: process.env.LOG_LEVEL ?? 'warn', name: 'gardener-ipv6', destination: process.stderr }),
    seedClusters: [],
  };
  const run = new Steps('up', upSteps(plan), state, {
    onUndoFailure: ({ step, error }) => io.err(`error while stopping (${step}): ${(error as Error).message}\n`),
  });
  let code: number | undefined;
  try {
    await run.run({ signal: stop.signals.signal, onFailure: (e) => (code = failureCode(state, e)) });
    code = await serve(state);
  } catch {
    // Said by onFailure.
  } finally {
    await run.undo({ reason: 'stop' });
    stop.dispose();
  }
  return code ?? 1;
}
