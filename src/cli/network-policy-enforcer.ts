/**
 * `gardener-ipv6 network-policy-enforcer`: the NetworkPolicies of a cluster in force on the Node it runs on (the
 * chart's DaemonSet on a seed's Nodes, in each Node's network namespace), until SIGTERM or SIGINT. Its nftables table
 * stays after a stop, the last ruleset in force, for the next enforcer to replace (no window during a rollout);
 * `--remove-rules` removes it. The ready file says the first ruleset is in the kernel (the pod's readiness probe).
 */
import { rm, writeFile } from 'node:fs/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { NetworkPolicyEnforcer } from '../extensions/provider-local/machine/network-policy/enforcer.js';
import { InputError, type CliIO } from './io.js';
import { loadKubeConfig } from './run.js';
import { timestamped, untilSignalled } from './signals.js';

export interface NetworkPolicyEnforcerCommandOptions {
  readonly nodeName?: string;
  readonly kubeconfig?: string;
  readonly readyFile: string;
  readonly removeRules?: boolean;
}

export async function runNetworkPolicyEnforcerCommand(
  opts: NetworkPolicyEnforcerCommandOptions,
  io: CliIO,
): Promise<number> {
  if (opts.removeRules === true) {
    try {
      const removed = await NetworkPolicyEnforcer.removeRules();
      io.out(removed ? 'network policy rules removed\n' : 'no network policy rules here\n');
      return 0;
    } catch (e) {
      io.err(`error: network policy rules: ${(e as Error).message}\n`);
      return 1;
    }
  }
  const nodeName = opts.nodeName ?? process.env.NODE_NAME ?? '';
  if (nodeName === '') {
    io.err('error: --node-name or $NODE_NAME is required (the pod fieldRef spec.nodeName)\n');
    return 2;
  }
  let kubeConfig: KubeConfig;
  try {
    kubeConfig = loadKubeConfig(opts.kubeconfig);
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    io.err(`error: ${e.message}\n`);
    return 2;
  }
  const log = timestamped((text) => io.err(text));
  await rm(opts.readyFile, { force: true });
  const enforcer = new NetworkPolicyEnforcer({ nodeName, kubeConfig, log });
  try {
    await untilSignalled(async (signal) => {
      const stopped = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      // The informers retry on their own while the API server can't be reached; a stop ends the wait.
      enforcer.deploy().catch((e: Error) => log(`network policies of node ${nodeName}: ${e.message}`));
      void enforcer
        .wait()
        .then(async () => {
          if (signal.aborted) return;
          await writeFile(opts.readyFile, `${new Date().toISOString()}\n`);
          log(`network policies of node ${nodeName}: first ruleset in force`);
        })
        .catch((e: Error) => log(`network policies of node ${nodeName}: ready file: ${e.message}`));
      await stopped;
    });
    return 0;
  } catch (e) {
    io.err(`error: network policies of node ${nodeName}: ${(e as Error).message}\n`);
    return 1;
  } finally {
    await rm(opts.readyFile, { force: true });
    await enforcer.destroy();
    log(`network policies of node ${nodeName}: stopped, the last ruleset stays in force`);
  }
}
