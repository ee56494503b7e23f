/**
 * The `gardener-ipv6` command line. `runCli` returns the exit code so tests can call it in-process.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { FeatureGateError } from '../featuregate/featuregate.js';
import { projectRoot } from '../system/project.js';
import { pinnedVersions } from '../localenv/binaries.js';
import { ETCD_VERSION, KUBERNETES_VERSION } from '../imagevector/images.js';
import { addValidateCommand } from './commands/validate.js';
import { addDefaultCommand } from './commands/default.js';
import { addRenderCommand } from './commands/render.js';
import { addUpCommand } from './commands/up.js';
import { addImagesCommand } from './commands/images.js';
import { addCgroupDelegationCommand } from './commands/cgroup-delegation.js';
import { addKubeconfigCommand } from './commands/kubeconfig.js';
import { addMachineCommand } from './commands/machine.js';
import { addNetworkPolicyEnforcerCommand } from './commands/network-policy-enforcer.js';
import { addOverlayPeerCommand } from './commands/overlay-peer.js';
import { addRunCommand } from './commands/run.js';
import { escapingIO, EXIT_UNUSABLE, InputError, processIO, type CliIO } from './io.js';

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

export function buildProgram(io: CliIO, setExitCode: (code: number) => void): Command {
  const program = new Command('gardener-ipv6')
    .description("Gardener's IPv6 networking (GEP-21): validate, default and render IPv6 and dual-stack shoots")
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .version(versionText(), '-V, --version', 'print the version and those of the bundled components')
    .exitOverride()
    .showHelpAfterError();

  // Each command imports its module when it runs (commands/*.ts): `--help`, `--version` and a `validate` load
  // neither the controllers nor the Kubernetes client (module loading is most of a short command's time).
  const context = { io, setExitCode };
  addValidateCommand(program, context);
  addDefaultCommand(program, context);
  addRenderCommand(program, context);
  addUpCommand(program, context);
  addImagesCommand(program, context);
  addCgroupDelegationCommand(program, context);
  addKubeconfigCommand(program, context);
  addMachineCommand(program, context);
  addNetworkPolicyEnforcerCommand(program, context);
  addOverlayPeerCommand(program, context);
  addRunCommand(program, context);
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
