/**
 * The `gardener-ipv6` command line. `runCli` returns the exit code so tests can call it in-process.
 */
import type { MachineCommandOptions } from './machine.js';
import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { COMPONENTS } from '../app/components.js';
import { FeatureGateError, parseFeatureGates } from '../featuregate/featuregate.js';
import { projectRoot } from '../system/project.js';
import { pinnedVersions } from '../localenv/binaries.js';
import { ETCD_VERSION, KUBERNETES_VERSION } from '../imagevector/images.js';
import { escapingIO, EXIT_UNUSABLE, InputError, processIO, type CliIO } from './io.js';

/**
 * Each command's module, loaded when the command runs: `--help`, `--version` and a `validate` load neither the
 * controllers nor the Kubernetes client (module loading is most of a short command's time).
 */
const commandModules = {
  validate: () => import('./validate.js'),
  default: () => import('./default.js'),
  render: () => import('./render.js'),
  up: () => import('./up.js'),
  run: () => import('./run.js'),
  hostIPs: () => import('../extensions/provider-local/loadbalancer/ingress.js'),
};

/** The package's version, from its package.json. */
export function cliVersion(): string {
  return (JSON.parse(readFileSync(`${projectRoot()}/package.json`, 'utf8')) as { version: string }).version;
}

/**
 * What `--version` prints: the package's version, then each bundled component's (the pinned builds of
 * hack/versions.env in a checkout; the shoot control planes' image versions everywhere).
 */
export function versionText(): string {
  const pinned = pinnedVersions();
  const components: [string, string | undefined][] = [
    ['kubernetes', pinned.KUBERNETES_VERSION ?? KUBERNETES_VERSION],
    ['etcd', pinned.ETCD_VERSION ?? ETCD_VERSION],
    ['containerd', pinned.CONTAINERD_VERSION],
    ['runc', pinned.RUNC_VERSION],
    ['cni-plugins', pinned.CNI_PLUGINS_VERSION],
    ['coredns', pinned.COREDNS_VERSION],
    ['helm', pinned.HELM_VERSION],
  ];
  return [
    `gardener-ipv6 ${cliVersion()}`,
    ...components.filter(([, v]) => v !== undefined).map(([name, v]) => `${name} ${v}`),
  ].join('\n');
}

/** `--load-balancer-ipv4/-ipv6` as HostIPs; a bad address is an input error. */
async function hostIPsOption(ipv4: string, ipv6: string) {
  const { parseHostIPs } = await commandModules.hostIPs();
  try {
    return parseHostIPs(ipv4, ipv6);
  } catch (e) {
    throw new InputError((e as Error).message);
  }
}

/** `--load-balancer-networks`: CIDRs, at most one per family. */
async function loadBalancerNetworksOption(list: string) {
  const { parseCIDR } = await import('../net/cidr.js');
  const { parseLoadBalancerNetworks } = await import('../extensions/provider-local/loadbalancer/pool.js');
  const networks: Record<string, string> = {};
  for (const text of list.split(',').map((s) => s.trim())) {
    const cidr = parseCIDR(text);
    if (cidr === undefined) throw new InputError(`--load-balancer-networks: ${JSON.stringify(text)} is not a CIDR`);
    if (networks[cidr.family] !== undefined) {
      throw new InputError(`--load-balancer-networks: two ${cidr.family} networks (${networks[cidr.family]}, ${text})`);
    }
    networks[cidr.family] = text;
  }
  try {
    parseLoadBalancerNetworks(networks);
  } catch (e) {
    throw new InputError(`--load-balancer-networks: ${(e as Error).message}`);
  }
  return networks;
}

const MACHINES_PER_POOL_HELP = 'the most machines (minimum, maximum) of a shoot worker pool the webhook admits';
const MACHINES_PER_SHOOT_HELP = "the most machines of a shoot (its pools' maximums together) the webhook admits";

/** `--max-machines-per-pool` and `--max-machines-per-shoot`: whole numbers from 1; unset ones keep the defaults. */
function machineLimitsOption(opts: { maxMachinesPerPool?: unknown; maxMachinesPerShoot?: unknown }) {
  const limit = (flag: string, text: unknown): number | undefined => {
    if (text === undefined) return undefined;
    if (typeof text !== 'string' || !/^[1-9]\d{0,5}$/.test(text)) {
      throw new InputError(`--${flag} ${JSON.stringify(text)}: a whole number from 1 to 999999`);
    }
    return Number(text);
  };
  const perPool = limit('max-machines-per-pool', opts.maxMachinesPerPool);
  const perShoot = limit('max-machines-per-shoot', opts.maxMachinesPerShoot);
  return {
    ...(perPool !== undefined ? { maxMachinesPerPool: perPool } : {}),
    ...(perShoot !== undefined ? { maxMachinesPerShoot: perShoot } : {}),
  };
}

const FEATURE_GATES_HELP =
  'feature gates, e.g. IPv6SingleStack=true,DualStack=true (known: DualStack, IPv6SingleStack)';

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** The default of `--max-input-size`: DEFAULT_MAX_INPUT_BYTES of documents.ts, which `--help` must not load. */
const MAX_INPUT_SIZE_DEFAULT = '64Mi';
const MAX_INPUT_SIZE_HELP = 'refuse inputs (all files together) larger than this, e.g. 64Mi, 1Gi (exit 2)';

async function maxInputSizeOption(text: string): Promise<number> {
  const { parseByteSize } = await import('./documents.js');
  const bytes = parseByteSize(text);
  if (bytes === undefined) {
    throw new InputError(`--max-input-size: ${JSON.stringify(text)} is not a size (e.g. 64Mi, 1Gi, 1048576)`);
  }
  return bytes;
}

export function buildProgram(io: CliIO, setExitCode: (code: number) => void): Command {
  const program = new Command('gardener-ipv6')
    .description("Gardener's IPv6 networking (GEP-21): validate, default and render IPv6 and dual-stack shoots")
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .version(versionText(), '-V, --version', 'print the version and those of the bundled components')
    .exitOverride()
    .showHelpAfterError();

  program
    .command('validate')
    .description('default and validate Shoots, Seeds, CloudProfiles, Networks and DNSRecords as the API server would')
    .requiredOption(
      '-f, --filename <file>',
      'YAML or JSON file with one or more objects (- for stdin); repeatable',
      collect,
    )
    .option('--old <file>', 'the stored version of each object: validate as an update')
    .option(
      '--seed <file>',
      'the Seed the Shoot is scheduled on: apply its shoot defaults and check against its networks',
    )
    .option('--feature-gates <list>', FEATURE_GATES_HELP)
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
    .option('--max-input-size <size>', MAX_INPUT_SIZE_HELP, MAX_INPUT_SIZE_DEFAULT)
    .addHelpText(
      'after',
      `
CloudProfiles in the input count for the Shoots after them, as if created in that order: such a Shoot gets its
Kubernetes version and machine images from the one it names, and is checked against it (versions, machine types and
images, region); naming one the input doesn't hold is an error. Without CloudProfiles, Shoots are checked on their own.

Exit codes: 0 all objects valid, 1 some object invalid, 2 the input can't be used.

Examples:
  gardener-ipv6 validate -f examples/shoot-ipv6.yaml --feature-gates IPv6SingleStack=true
  gardener-ipv6 validate -f examples/cloudprofile-local.yaml -f examples/shoot-ipv6.yaml --feature-gates IPv6SingleStack=true
  gardener-ipv6 validate -f shoot.yaml --seed examples/seed-ipv6.yaml --feature-gates IPv6SingleStack=true -o json
  gardener-ipv6 validate -f shoot-new.yaml --old shoot-old.yaml --feature-gates DualStack=true`,
    )
    .action(
      async (opts: {
        filename: string[];
        old?: string;
        seed?: string;
        featureGates?: string;
        output: 'text' | 'json';
        maxInputSize: string;
      }) => {
        const maxInputBytes = await maxInputSizeOption(opts.maxInputSize);
        const { runValidate } = await commandModules.validate();
        setExitCode(
          runValidate(
            {
              files: opts.filename,
              ...(opts.old !== undefined ? { old: opts.old } : {}),
              ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
              gates: parseFeatureGates(opts.featureGates),
              output: opts.output,
              maxInputBytes,
            },
            io,
          ),
        );
      },
    );

  program
    .command('default')
    .description('print objects after defaulting, as YAML')
    .requiredOption(
      '-f, --filename <file>',
      'YAML or JSON file with one or more objects (- for stdin); repeatable',
      collect,
    )
    .option('--feature-gates <list>', FEATURE_GATES_HELP)
    .option('--max-input-size <size>', MAX_INPUT_SIZE_HELP, MAX_INPUT_SIZE_DEFAULT)
    .addHelpText(
      'after',
      '\nA Shoot after a CloudProfile it names gets its defaults too (its Kubernetes version, machine images).\n' +
        '\nExamples:\n  gardener-ipv6 default -f examples/shoot-ipv6.yaml\n' +
        '  gardener-ipv6 default -f examples/cloudprofile-local.yaml -f examples/shoot-ipv6.yaml',
    )
    .action(async (opts: { filename: string[]; featureGates?: string; maxInputSize: string }) => {
      const gates = parseFeatureGates(opts.featureGates);
      const maxInputBytes = await maxInputSizeOption(opts.maxInputSize);
      const { runDefault } = await commandModules.default();
      setExitCode(runDefault({ files: opts.filename, gates, maxInputBytes }, io));
    });

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
        const { runRender } = await commandModules.render();
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

  program
    .command('up')
    .description('start a local IPv6 environment: control plane, webhook, controllers, DNS server and an IPv6 shoot')
    .option('--kubeconfig-out <path>', 'write the admin kubeconfig here')
    .option('--ipv6-only', 'run the control plane in an IPv6-only network namespace, as the tests do (root)', false)
    .option('--no-machines', 'give the seed no Nodes: the shoots are objects only (as --seed-nodes 0)')
    .option('--seed-nodes <n>', 'how many Nodes the seed cluster gets (root; 0: shoots are objects only; default 2)')
    .option('--feature-gates <list>', FEATURE_GATES_HELP, 'IPv6SingleStack=true,DualStack=true')
    .option('--max-machines-per-pool <n>', `${MACHINES_PER_POOL_HELP} (default 10)`)
    .option('--max-machines-per-shoot <n>', `${MACHINES_PER_SHOOT_HELP} (default 20)`)
    .action(
      async (opts: {
        kubeconfigOut?: string;
        ipv6Only: boolean;
        featureGates: string;
        machines: boolean;
        seedNodes?: string;
        maxMachinesPerPool?: string;
        maxMachinesPerShoot?: string;
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
        const { up } = await commandModules.up();
        setExitCode(
          await up(
            {
              ...(opts.kubeconfigOut ? { kubeconfigOut: opts.kubeconfigOut } : {}),
              ipv6Only: opts.ipv6Only,
              gates,
              machines: opts.machines,
              ...(seedNodes !== undefined ? { seedNodes } : {}),
              machineLimits,
            },
            io,
          ),
        );
      },
    );

  program
    .command('images')
    .description(
      'build the images a seed runs shoots with (control planes, machine pods) as OCI archives from the pinned ' +
        'binaries; prints "NAME<tab>ARCHIVE" per image',
    )
    .action(async () => {
      const { runImages } = await import('./images.js');
      setExitCode(await runImages(io));
    });

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
      const { runKubeconfig } = await import('./kubeconfig.js');
      setExitCode(await runKubeconfig(opts, io));
    });

  program
    .command('machine')
    .description("run a shoot machine in this pod (the entrypoint of provider-local's machine image)")
    .option('--node-name <name>', "the Node's name ($NODE_NAME: the pod's name)")
    .option('--pod-ips <list>', "the pod's addresses ($POD_IPS: status.podIPs)")
    .option('--node-cidrs <list>', "the shoot's node range per family, in family order ($NODE_CIDRS)")
    .option('--first-machine-index <n>', "the pool's first machine in the node ranges ($FIRST_MACHINE_INDEX)")
    .option('--user-data <file>', "the pool's user data", '/etc/gardener-ipv6/user-data/userData')
    .action(async (opts: MachineCommandOptions) => {
      const { runMachineCommand } = await import('./machine.js');
      setExitCode(await runMachineCommand(opts, io));
    });

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
    .action(async (opts: { nodeName?: string; kubeconfig?: string; readyFile: string }) => {
      const { runNetworkPolicyEnforcerCommand } = await import('./network-policy-enforcer.js');
      setExitCode(await runNetworkPolicyEnforcerCommand(opts, io));
    });

  program
    .command('overlay-peer')
    .description("join the shoot's pod overlay from a control plane pod (kube-apiserver's sidecar)")
    .requiredOption('--kubeconfig <file>', "the shoot's API server, with the right to list Nodes")
    .option('--service-cidrs <list>', "the shoot's service ranges, routed into the overlay", '')
    .option('--underlay-family <family>', "the family of the pod's address the overlay runs over", 'IPv6')
    .action(async (opts: { kubeconfig: string; serviceCidrs: string; underlayFamily: string }) => {
      const { runOverlayPeerCommand } = await import('./overlay-peer.js');
      setExitCode(await runOverlayPeerCommand(opts, io));
    });

  program
    .command('run')
    .description(
      'run the admission webhook and the controllers (gardenlet, network and DNS extensions) against a cluster',
    )
    .option('--kubeconfig <file>', 'kubeconfig of the cluster (in-cluster config or $KUBECONFIG when omitted)')
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
      const { parseComponents, parseControlPlaneWorkloadsMode, runRun } = await commandModules.run();
      const loadBalancerNetworks =
        typeof opts.loadBalancerNetworks === 'string'
          ? await loadBalancerNetworksOption(opts.loadBalancerNetworks)
          : undefined;
      const { parseTypeList } = await import('../admission/extensions.js');
      const optional = (name: string) => (typeof opts[name] === 'string' ? { [name]: opts[name] as string } : {});
      setExitCode(
        await runRun(
          {
            ...optional('kubeconfig'),
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

  return program;
}

export async function runCli(argv: readonly string[], rawIO: CliIO = processIO): Promise<number> {
  let exitCode = 0;
  // Input shows up in messages (names, YAML error frames): nothing reaches the terminal unescaped.
  const io = escapingIO(rawIO);
  const program = buildProgram(io, (code) => (exitCode = code));
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (e) {
    if (e instanceof CommanderError) {
      return e.exitCode === 0 ? 0 : EXIT_UNUSABLE;
    }
    if (e instanceof InputError || e instanceof FeatureGateError) {
      io.err(`error: ${e.message}\n`);
      return EXIT_UNUSABLE;
    }
    throw e;
  }
}
