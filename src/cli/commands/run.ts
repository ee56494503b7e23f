/** `gardener-ipv6 run`: its flags, its help and what runs it. */
import type { Command } from 'commander';
import { parseFeatureGates } from '../../featuregate/featuregate.js';
import { COMPONENTS } from '../../app/components.js';
import { InputError } from '../io.js';
import {
  FEATURE_GATES_HELP,
  hostIPsOption,
  loadBalancerNetworksOption,
  machineLimitsOption,
  MACHINES_PER_POOL_HELP,
  MACHINES_PER_SHOOT_HELP,
  MACHINES_HELP,
  type CommandContext,
} from './options.js';

export function addRunCommand(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command('run')
    .description(
      'run the admission webhook and the controllers (gardenlet, network and DNS extensions) against a cluster',
    )
    .option('--kubeconfig <file>', 'kubeconfig of the cluster (in-cluster config or $KUBECONFIG when omitted)')
    .option(
      '--garden-kubeconfig <file>',
      "the garden's kubeconfig when it is another cluster: the gardenlet then runs in its seed (--kubeconfig's), " +
        'needs --seed-name, and admission and scheduler are not run',
    )
    .option('--components <list>', `comma list of ${COMPONENTS.join(', ')}`, COMPONENTS.join(','))
    .option('--feature-gates <list>', FEATURE_GATES_HELP)
    .option('--webhook-host <ip>', 'address the webhook listens on', '::')
    .option('--webhook-port <port>', 'port of the webhook', '9443')
    .option('--webhook-cert-dir <dir>', 'tls.crt, tls.key and ca.crt of the webhook (self-signed when omitted)')
    .option('--no-webhook-register', 'do not register the webhook configurations (a Helm deployment does)')
    .option('--webhook-advertise-host <ip>', 'address the API server reaches the webhook at', '::1')
    .option('--health-host <ip>', 'address of /healthz, /readyz and /metrics', '::')
    .option('--health-port <port>', 'port of /healthz, /readyz and /metrics', '8080')
    .option('--leader-elect', 'run the controllers only while holding the leader election lease', false)
    .option('--leader-election-namespace <ns>', 'namespace of the lease', 'garden')
    .option('--leader-election-id <name>', 'name of the lease', 'gardener-ipv6')
    .option('--seed-name <name>', 'reconcile only this seed and its shoots')
    .option(
      '--seed-config <file>',
      "a Seed manifest the gardenlet registers in the garden when it starts (its name is the gardenlet's seed)",
    )
    .option('--dns-server <host:port>', 'DNS server the DNS records are published to', '[::1]:53')
    .option('--dns-tsig-key-name <name>', 'TSIG key name for DNS updates')
    .option('--dns-tsig-secret-file <file>', 'file with the base64 hmac-sha256 TSIG secret')
    .option('--domain <domain>', 'base domain of the API server records', 'local.gardener.cloud')
    .option('--load-balancer-ipv4 <ip>', 'IPv4 address provider-local gives load balancers', '127.0.0.1')
    .option('--load-balancer-ipv6 <ip>', 'IPv6 address provider-local gives load balancers', '::1')
    .option(
      '--control-plane-workloads <mode>',
      "run shoots' control planes and machines as workloads of the cluster: auto (when it has Nodes), true, false",
      'auto',
    )
    .option(
      '--load-balancer-networks <list>',
      'CIDRs, one per family, whose addresses provider-local gives the load balancers of shoots run as workloads ' +
        '(default: fd00:ff::/64,172.18.255.0/24)',
    )
    .option('--max-machines-per-pool <n>', `${MACHINES_PER_POOL_HELP} (default 10)`)
    .option('--max-machines-per-shoot <n>', `${MACHINES_PER_SHOOT_HELP} (default 20)`)
    .option('--max-machines <n>', `${MACHINES_HELP} (default 40)`)
    .option('--log-level <level>', 'log level (debug, info, warn, error)', 'info')
    .option('--provider-types <list>', 'provider types Shoots may use (the webhook refuses others)', 'local')
    .option('--networking-types <list>', 'networking types Shoots may use (the webhook refuses others)', 'calico')
    .option('--dns-provider-types <list>', 'DNS provider types Shoots may use (the webhook refuses others)', 'local')
    .addHelpText(
      'after',
      `
Every flag is checked before anything starts (addresses, that the listen addresses exist here and their ports are
free, names, files): a bad one exits with 2 and one line naming it. Exit codes: 0 stopped by SIGINT/SIGTERM,
1 the controllers ended by themselves (e.g. a lost lease), 2 a flag can't be used.`,
    )
    .action(async (opts: Record<string, string | boolean | undefined>) => {
      const port = (name: string) => {
        const value = Number(opts[name]);
        if (!Number.isInteger(value) || value < 0 || value > 65535) {
          throw new InputError(`--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} must be a port number`);
        }
        return value;
      };
      const hostIPs = await hostIPsOption(opts.loadBalancerIpv4 as string, opts.loadBalancerIpv6 as string);
      const { parseComponents, parseControlPlaneWorkloadsMode, runRun } = await import('../run.js');
      const loadBalancerNetworks =
        typeof opts.loadBalancerNetworks === 'string'
          ? await loadBalancerNetworksOption(opts.loadBalancerNetworks)
          : undefined;
      const { parseTypeList } = await import('../../admission/extensions.js');
      const optional = (name: string) => (typeof opts[name] === 'string' ? { [name]: opts[name] as string } : {});
      setExitCode(
        await runRun(
          {
            ...optional('kubeconfig'),
            ...optional('gardenKubeconfig'),
            components: parseComponents(opts.components as string),
            gates: parseFeatureGates(opts.featureGates as string | undefined),
            webhookHost: opts.webhookHost as string,
            webhookPort: port('webhookPort'),
            ...(typeof opts.webhookCertDir === 'string' ? { webhookCertDir: opts.webhookCertDir } : {}),
            webhookRegister: opts.webhookRegister !== false,
            webhookAdvertiseHost: opts.webhookAdvertiseHost as string,
            healthHost: opts.healthHost as string,
            healthPort: port('healthPort'),
            leaderElect: opts.leaderElect === true,
            leaderElectionNamespace: opts.leaderElectionNamespace as string,
            leaderElectionID: opts.leaderElectionId as string,
            ...optional('seedName'),
            ...optional('seedConfig'),
            dnsServer: opts.dnsServer as string,
            ...(typeof opts.dnsTsigKeyName === 'string' ? { dnsTSIGKeyName: opts.dnsTsigKeyName } : {}),
            ...(typeof opts.dnsTsigSecretFile === 'string' ? { dnsTSIGSecretFile: opts.dnsTsigSecretFile } : {}),
            domain: opts.domain as string,
            hostIPs,
            controlPlaneWorkloads: parseControlPlaneWorkloadsMode(opts.controlPlaneWorkloads as string),
            ...(loadBalancerNetworks ? { loadBalancerNetworks } : {}),
            machineLimits: machineLimitsOption(opts),
            logLevel: opts.logLevel as string,
            extensionTypes: {
              provider: parseTypeList(opts.providerTypes as string),
              networking: parseTypeList(opts.networkingTypes as string),
              dns: parseTypeList(opts.dnsProviderTypes as string),
            },
          },
          io,
        ),
      );
    });
}
