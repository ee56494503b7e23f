/**
 * `gardener-ipv6 machine`: the machine pod's agent (see provider-local's pod-agent.ts), until SIGTERM or SIGINT. What
 * stops it otherwise is also its container's termination message.
 */
import { MachineConfigurationError } from '../extensions/provider-local/machine/node-config.js';
import { runMachinePod, writeTerminationMessage } from '../extensions/provider-local/machine/pod-agent.js';
import { MACHINE_AGENT_EXIT, MACHINE_POD_ENV } from '../extensions/provider-local/machine-contract.js';
import type { CliIO } from './io.js';
import { timestamped, untilSignalled } from './signals.js';

export interface MachineCommandOptions {
  readonly nodeName?: string;
  readonly podIps?: string;
  readonly nodeCidrs?: string;
  readonly firstMachineIndex?: string;
  readonly zones?: string;
  readonly region?: string;
  readonly userData: string;
  /** Where the last words go. @default MACHINE_POD_PATHS.terminationLog */
  readonly terminationLog?: string;
}

const list = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** MACHINE_AGENT_EXIT: 0 after a signal, 1 a machine that failed, 2 missing inputs, 3 its configuration. */
export async function runMachineCommand(opts: MachineCommandOptions, io: CliIO): Promise<number> {
  const fail = (message: string, code: number) => {
    io.err(`error: ${message}\n`);
    writeTerminationMessage(message, opts.terminationLog);
    return code;
  };
  const nodeName = opts.nodeName ?? process.env[MACHINE_POD_ENV.nodeName] ?? '';
  const podIPs = list(opts.podIps ?? process.env[MACHINE_POD_ENV.podIPs] ?? '');
  const nodeCIDRs = list(opts.nodeCidrs ?? process.env[MACHINE_POD_ENV.nodeCIDRs] ?? '');
  const firstText = opts.firstMachineIndex ?? process.env[MACHINE_POD_ENV.firstMachine] ?? '0';
  const firstMachine = /^\d+$/.test(firstText) ? Number(firstText) : NaN;
  const zones = list(opts.zones ?? process.env[MACHINE_POD_ENV.zones] ?? '');
  const region = opts.region ?? process.env[MACHINE_POD_ENV.region];
  if (nodeName === '') return fail('--node-name (or $NODE_NAME) is required', MACHINE_AGENT_EXIT.usage);
  if (podIPs.length === 0) return fail('--pod-ips (or $POD_IPS) is required', MACHINE_AGENT_EXIT.usage);
  if (nodeCIDRs.length === 0) {
    return fail(`--node-cidrs (or $${MACHINE_POD_ENV.nodeCIDRs}) is required`, MACHINE_AGENT_EXIT.usage);
  }
  if (Number.isNaN(firstMachine)) {
    return fail(
      `--first-machine-index: ${JSON.stringify(firstText)} is not a non-negative integer`,
      MACHINE_AGENT_EXIT.usage,
    );
  }
  const log = timestamped((text) => io.err(text));
  try {
    await untilSignalled((signal) =>
      runMachinePod(
        { nodeName, podIPs, nodeCIDRs, firstMachine, zones, region, paths: { userData: opts.userData }, log },
        signal,
      ),
    );
    return MACHINE_AGENT_EXIT.stopped;
  } catch (e) {
    // The machine's own errors name it already.
    const message = (e as Error).message;
    return fail(
      message.startsWith(`machine ${nodeName}:`) ? message : `machine ${nodeName}: ${message}`,
      e instanceof MachineConfigurationError ? MACHINE_AGENT_EXIT.configuration : MACHINE_AGENT_EXIT.failed,
    );
  }
}
