/** `gardener-ipv6 network-policy-enforcer`: its flags, its help and what runs it. */
import type { Command } from 'commander';
import { type CommandContext } from './options.js';

export function addNetworkPolicyEnforcerCommand(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command('network-policy-enforcer')
    .description("enforce the cluster's NetworkPolicies on this Node (the chart's DaemonSet, in the Node's network)")
    .option('--node-name <name>', "the Node's name ($NODE_NAME: the pod's spec.nodeName)")
    .option('--kubeconfig <file>', 'kubeconfig of the cluster (in-cluster config or $KUBECONFIG when omitted)')
    .option(
      '--ready-file <file>',
      'written once the first ruleset is in force',
      '/tmp/gardener-ipv6-network-policies-ready',
    )
    .option('--remove-rules', "remove the enforcer's table from this network namespace and exit (an uninstall)")
    .action(async (opts: { nodeName?: string; kubeconfig?: string; readyFile: string; removeRules?: boolean }) => {
      const { runNetworkPolicyEnforcerCommand } = await import('../network-policy-enforcer.js');
      setExitCode(await runNetworkPolicyEnforcerCommand(opts, io));
    });
}
