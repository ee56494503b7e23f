/** `gardener-ipv6 up`: its flags, its help and what runs it. */
import type { Command } from 'commander';
import { parseFeatureGates } from '../../featuregate/featuregate.js';
import type { LocalSeedKind } from '../../app/local-seeds.js';
import {
  FEATURE_GATES_HELP,
  machineLimitsOption,
  MACHINES_PER_POOL_HELP,
  MACHINES_PER_SHOOT_HELP,
  MACHINES_HELP,
  type CommandContext,
} from './options.js';

export function addUpCommand(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command('up')
    .description('start a local IPv6 environment: control plane, webhook, controllers, DNS server and an IPv6 shoot')
    .option('--kubeconfig-out <path>', 'write the admin kubeconfig here')
    .option('--ipv6-only', 'run the control plane in an IPv6-only network namespace, as the tests do (root)', false)
    .option('--no-machines', 'give the seed no Nodes: the shoots are objects only (as --seed-nodes 0)')
    .option('--seed-nodes <n>', 'how many Nodes the seed cluster gets (root; 0: shoots are objects only; default 2)')
    .option(
      '--seeds <list>',
      "seed clusters, the garden's own first: ipv6, dual-stack (with an IPv4 shoot to migrate), dual-stack-ipv6 " +
        '(IPv6 first, with an IPv6 shoot to migrate), or several (each further one a cluster with its own gardenlet)',
      'ipv6',
    )
    .option('--feature-gates <list>', FEATURE_GATES_HELP, 'IPv6SingleStack=true,DualStack=true')
    .option('--max-machines-per-pool <n>', `${MACHINES_PER_POOL_HELP} (default 10)`)
    .option('--max-machines-per-shoot <n>', `${MACHINES_PER_SHOOT_HELP} (default 20)`)
    .option('--max-machines <n>', `${MACHINES_HELP} (default 40)`)
    .action(
      async (opts: {
        kubeconfigOut?: string;
        ipv6Only: boolean;
        featureGates: string;
        machines: boolean;
        seedNodes?: string;
        seeds: string;
        maxMachinesPerPool?: string;
        maxMachinesPerShoot?: string;
        maxMachines?: string;
      }) => {
        const gates = parseFeatureGates(opts.featureGates);
        const machineLimits = machineLimitsOption(opts);
        let seedNodes: number | undefined;
        if (opts.seedNodes !== undefined) {
          if (!/^\d{1,2}$/.test(opts.seedNodes) || Number(opts.seedNodes) > 10) {
            io.err(`error: --seed-nodes ${JSON.stringify(opts.seedNodes)}: a number from 0 to 10\n`);
            setExitCode(2);
            return;
          }
          seedNodes = Number(opts.seedNodes);
        }
        let seeds: LocalSeedKind[];
        try {
          // Loaded here: the seeds' module reads the examples, which no other command needs.
          const { parseSeedsOption } = await import('../../app/local-seeds.js');
          seeds = parseSeedsOption(opts.seeds);
        } catch (e) {
          io.err(`error: ${(e as Error).message}\n`);
          setExitCode(2);
          return;
        }
        const { up } = await import('../up.js');
        setExitCode(
          await up(
            {
              ...(opts.kubeconfigOut ? { kubeconfigOut: opts.kubeconfigOut } : {}),
              ipv6Only: opts.ipv6Only,
              gates,
              machines: opts.machines,
              ...(seedNodes !== undefined ? { seedNodes } : {}),
              machineLimits,
              seeds,
            },
            io,
          ),
        );
      },
    );
}
