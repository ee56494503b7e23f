/** `gardener-ipv6 render`: its flags, its help and what runs it. */
import { Option, type Command } from 'commander';
import { parseFeatureGates } from '../../featuregate/featuregate.js';
import {
  collect,
  FEATURE_GATES_HELP,
  hostIPsOption,
  MAX_INPUT_SIZE_DEFAULT,
  MAX_INPUT_SIZE_HELP,
  maxInputSizeOption,
  type CommandContext,
} from './options.js';

export function addRenderCommand(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command('render')
    .description('print the objects the gardenlet creates in the seed for each Shoot (no server needed)')
    .requiredOption(
      '-f, --filename <file>',
      'file with the Seed, the Shoot(s) and their CloudProfile(s), if any (- for stdin); repeatable',
      collect,
    )
    .option('--feature-gates <list>', FEATURE_GATES_HELP)
    .addOption(
      new Option('-o, --output <format>', 'YAML stream or one v1 List').choices(['yaml', 'json']).default('yaml'),
    )
    .option('--load-balancer-ipv4 <ip>', 'IPv4 address provider-local gives load balancers', '127.0.0.1')
    .option('--load-balancer-ipv6 <ip>', 'IPv6 address provider-local gives load balancers', '::1')
    .option('--dns-server <host:port>', 'DNS server the DNS records are published to', '[::1]:53')
    .option('--domain <domain>', 'base domain of the API server records', 'local.gardener.cloud')
    .option('--max-input-size <size>', MAX_INPUT_SIZE_HELP, MAX_INPUT_SIZE_DEFAULT)
    .addHelpText(
      'after',
      `
Validates like \`validate\` (exit 1 with the Status when invalid; the Shoots against the input's CloudProfiles,
wherever they are in it), then prints the seed namespace, the API server LoadBalancer Service, the Network, the DNS
secret and A/AAAA DNSRecords, the OperatingSystemConfig and the NetworkPolicies of each Shoot.

Example:
  gardener-ipv6 render -f examples/seed-ipv6.yaml -f examples/shoot-ipv6.yaml --feature-gates IPv6SingleStack=true`,
    )
    .action(
      async (opts: {
        filename: string[];
        featureGates?: string;
        output: 'yaml' | 'json';
        loadBalancerIpv4: string;
        loadBalancerIpv6: string;
        dnsServer: string;
        domain: string;
        maxInputSize: string;
      }) => {
        const maxInputBytes = await maxInputSizeOption(opts.maxInputSize);
        const hostIPs = await hostIPsOption(opts.loadBalancerIpv4, opts.loadBalancerIpv6);
        const { runRender } = await import('../render.js');
        setExitCode(
          runRender(
            {
              files: opts.filename,
              gates: parseFeatureGates(opts.featureGates),
              output: opts.output,
              hostIPs,
              dns: { server: opts.dnsServer, domain: opts.domain },
              maxInputBytes,
            },
            io,
          ),
        );
      },
    );
}
