/**
 * `gardener-ipv6 overlay-peer`: the kube-apiserver pod's sidecar into the shoot's networks (provider-local's
 * overlay-peer.ts), until SIGTERM or SIGINT.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { runOverlayPeer } from '../extensions/provider-local/machine/overlay-peer.js';
import { isIPFamily } from '../apis/validation/ip-families.js';
import type { CliIO } from './io.js';
import { timestamped, untilSignalled } from './signals.js';

export interface OverlayPeerCommandOptions {
  readonly kubeconfig: string;
  readonly serviceCidrs: string;
  readonly underlayFamily: string;
}

export async function runOverlayPeerCommand(opts: OverlayPeerCommandOptions, io: CliIO): Promise<number> {
  const name = process.env.POD_NAME ?? '';
  const podIPs = (process.env.POD_IPS ?? '').split(',').filter(Boolean);
  if (name === '' || podIPs.length === 0) {
    io.err('error: $POD_NAME and $POD_IPS are required (the pod fieldRefs metadata.name and status.podIPs)\n');
    return 2;
  }
  if (!isIPFamily(opts.underlayFamily)) {
    io.err(`error: --underlay-family: ${JSON.stringify(opts.underlayFamily)} is neither IPv4 nor IPv6\n`);
    return 2;
  }
  const underlayFamily = opts.underlayFamily;
  const kubeConfig = new KubeConfig();
  try {
    kubeConfig.loadFromFile(opts.kubeconfig);
  } catch (e) {
    io.err(`error: --kubeconfig ${opts.kubeconfig}: ${(e as Error).message}\n`);
    return 2;
  }
  const log = timestamped((text) => io.err(text));
  const serviceCIDRs = opts.serviceCidrs.split(',').filter(Boolean);
  try {
    await untilSignalled((signal) =>
      runOverlayPeer({ name, podIPs, underlayFamily, kubeConfig, serviceCIDRs, log }, signal),
    );
    return 0;
  } catch (e) {
    io.err(`error: overlay peer ${name}: ${(e as Error).message}\n`);
    return 1;
  }
}
