/** `gardener-ipv6 kubeconfig`: its flags, its help and what runs it. */
import type { Command } from 'commander';
import { type CommandContext } from './options.js';

export function addKubeconfigCommand(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command('kubeconfig')
    .description(
      "print an admin kubeconfig for a shoot with a short-lived client certificate (Gardener's adminkubeconfig)",
    )
    .requiredOption('--shoot <namespace/name>', 'the shoot, e.g. garden-local/local')
    .option('--kubeconfig <file>', 'kubeconfig of the garden cluster ($KUBECONFIG when omitted)')
    .option('--expiration <duration>', 'validity of the client certificate, 10m to 24h', '1h')
    .option('--pin-address', "server at the shoot's load-balancer address, checked as its DNS name", false)
    .addHelpText(
      'after',
      `
The server is the shoot's external API DNS name, which resolves through the environment's DNS server; with
--pin-address it is the load-balancer address, with tls-server-name set to that name.

Example:
  gardener-ipv6 kubeconfig --kubeconfig garden.kubeconfig --shoot garden-local/local --expiration 1h > shoot.kubeconfig`,
    )
    .action(async (opts: { shoot: string; kubeconfig?: string; expiration: string; pinAddress: boolean }) => {
      const { runKubeconfig } = await import('../kubeconfig.js');
      setExitCode(await runKubeconfig(opts, io));
    });
}
