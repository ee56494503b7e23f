/** `gardener-ipv6 overlay-peer`: its flags, its help and what runs it. */
import type { Command } from 'commander';
import { type CommandContext } from './options.js';

export function addOverlayPeerCommand(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command('overlay-peer')
    .description("join the shoot's pod overlay from a control plane pod (kube-apiserver's sidecar)")
    .requiredOption('--kubeconfig <file>', "the shoot's API server, with the right to list Nodes")
    .option('--service-cidrs <list>', "the shoot's service ranges, routed into the overlay", '')
    .option('--underlay-family <family>', "the family of the pod's address the overlay runs over", 'IPv6')
    .action(async (opts: { kubeconfig: string; serviceCidrs: string; underlayFamily: string }) => {
      const { runOverlayPeerCommand } = await import('../overlay-peer.js');
      setExitCode(await runOverlayPeerCommand(opts, io));
    });
}
