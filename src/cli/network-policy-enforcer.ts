/**
 * `gardener-ipv6 network-policy-enforcer`: the NetworkPolicies of a cluster in force on the Node it runs on (the
 * chart's DaemonSet on a seed's Nodes, in each Node's network namespace), until SIGTERM or SIGINT. Its nftables table
 * stays after a stop, the last ruleset in force, for the next enforcer to replace (no window during a rollout);
 * `--remove-rules` removes it. The ready file says the first ruleset is in the kernel (the pod's readiness probe).
 *
 * With `--cni-hook-socket` it serves the CNI hook of the Node's chain (network-policy/cni-hook.ts: the plugin that
 * `--print-cni-plugin` prints, after the bridge plugin), so a new pod's policies are in force before its containers
 * start, and it drops what the Node's pod ranges send or receive from addresses no pod holds (fail-closed, as on a
 * machine); `--anti-spoofing` also holds each announced pod's port on the bridge to its own addresses and MAC.
 */
import { rm, writeFile } from 'node:fs/promises';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { NetworkPolicyEnforcer } from '../extensions/provider-local/machine/network-policy/enforcer.js';
import {
  networkPolicyCNIPluginScript,
  serveNetworkPolicyHook,
} from '../extensions/provider-local/machine/network-policy/cni-hook.js';
import { Backoff } from '../runtime/backoff.js';
import { realClock } from '../runtime/clock.js';
import { InputError, type CliIO } from './io.js';
import { loadKubeConfig } from './run.js';
import { timestamped, untilSignalled } from './signals.js';

export interface NetworkPolicyEnforcerCommandOptions {
  readonly nodeName?: string;
  readonly kubeconfig?: string;
  readonly readyFile: string;
  readonly removeRules?: boolean;
  /** Where to serve the CNI hook (a path the Node's CNI chain reaches). */
  readonly cniHookSocket?: string;
  /** Hold each announced pod's port on the bridge to its addresses (needs the hook). */
  readonly antiSpoofing?: boolean;
  /** The bridge of the Node's pods. */
  readonly podBridge?: string;
  /** Print the CNI plugin for `node` at this path, and exit. */
  readonly printCniPlugin?: string;
}

/** The Node's pod ranges, read until it has them or `signal` aborts (the informers' own retries cover the rest). */
async function nodePodCIDRs(kubeConfig: KubeConfig, nodeName: string, signal: AbortSignal, log: (l: string) => void) {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const backoff = new Backoff({ initialMs: 500, maxMs: 10_000 });
  let lastError = '';
  while (!signal.aborted) {
    try {
      const node = await core.readNode({ name: nodeName });
      const cidrs = node.spec?.podCIDRs ?? (node.spec?.podCIDR !== undefined ? [node.spec.podCIDR] : []);
      if (cidrs.length > 0) return cidrs;
      lastError = 'the Node has no pod ranges yet';
    } catch (e) {
      lastError = (e as Error).message;
    }
    log(`network policies of node ${nodeName}: pod ranges: ${lastError}`);
    await realClock.sleep(backoff.next(), signal).catch(() => {});
  }
  return undefined;
}

export async function runNetworkPolicyEnforcerCommand(
  opts: NetworkPolicyEnforcerCommandOptions,
  io: CliIO,
): Promise<number> {
  if (opts.printCniPlugin !== undefined) {
    if (!opts.printCniPlugin.startsWith('/')) {
      io.err('error: --print-cni-plugin needs the absolute path of node on the Nodes\n');
      return 2;
    }
    io.out(networkPolicyCNIPluginScript(opts.printCniPlugin));
    return 0;
  }
  if (opts.antiSpoofing === true && opts.cniHookSocket === undefined) {
    io.err("error: --anti-spoofing needs --cni-hook-socket (the hook tells each pod's port on the bridge)\n");
    return 2;
  }
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
  const enforcer = new NetworkPolicyEnforcer({
    nodeName,
    kubeConfig,
    log,
    ...(opts.podBridge !== undefined ? { podBridge: opts.podBridge } : {}),
    antiSpoofing: opts.antiSpoofing === true,
  });
  let closeHook: (() => Promise<void>) | undefined;
  try {
    await untilSignalled(async (signal) => {
      const stopped = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      // The informers retry on their own while the API server can't be reached; a stop ends the wait.
      enforcer.deploy().catch((e: Error) => log(`network policies of node ${nodeName}: ${e.message}`));
      if (opts.cniHookSocket !== undefined) {
        closeHook = await serveNetworkPolicyHook(opts.cniHookSocket, enforcer, log);
        log(`network policies of node ${nodeName}: CNI hook at ${opts.cniHookSocket}`);
        // Fail-closed only with the hook: it makes a new pod's addresses known before its containers run.
        void nodePodCIDRs(kubeConfig, nodeName, signal, log).then((cidrs) => {
          if (cidrs === undefined) return;
          enforcer.setNodePodCIDRs(cidrs);
          log(`network policies of node ${nodeName}: addresses of ${cidrs.join(', ')} held by no pod are dropped`);
        });
      }
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
    await closeHook?.();
    await enforcer.destroy();
    log(`network policies of node ${nodeName}: stopped, the last ruleset stays in force`);
  }
}
