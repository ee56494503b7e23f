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
    .option(
      '--cni-hook-socket <path>',
      "serve the CNI hook of the Node's chain here: a new pod's policies in force before its containers start, " +
        "and addresses of the Node's pod ranges that no pod holds dropped",
    )
    .option('--anti-spoofing', 'hold each pod the hook announces to its own addresses and MAC on the bridge')
    .option('--pod-bridge <name>', "the bridge of the Node's pods: their link-local packets to the Node are dropped")
    .option('--print-cni-plugin <node-path>', 'print the CNI plugin that calls the hook, for node at this path; exit')
    .option('--remove-rules', "remove the enforcer's tables from this network namespace and exit (an uninstall)")
    .action(
      async (opts: {
        nodeName?: string;
        kubeconfig?: string;
        readyFile: string;
        removeRules?: boolean;
        cniHookSocket?: string;
        antiSpoofing?: boolean;
        podBridge?: string;
        printCniPlugin?: string;
      }) => {
        const { runNetworkPolicyEnforcerCommand } = await import('../network-policy-enforcer.js');
        setExitCode(await runNetworkPolicyEnforcerCommand(opts, io));
      },
    );
}
