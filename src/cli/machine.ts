/**
 * `gardener-ipv6 machine`: the machine pod's agent (see provider-local's pod-agent.ts), until SIGTERM or SIGINT.
 */
import { runMachinePod } from '../extensions/provider-local/machine/pod-agent.js';
import { MACHINE_POD_ENV } from '../extensions/provider-local/worker/machine-pods.js';
import type { CliIO } from './io.js';
import { timestamped, untilSignalled } from './signals.js';

export interface MachineCommandOptions {
  readonly nodeName?: string;
  readonly podIps?: string;
  readonly nodeCidrs?: string;
  readonly firstMachineIndex?: string;
  readonly userData: string;
}

const list = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** 0 after a signal stopped the machine, 1 when it could not be started, 2 for missing inputs. */
export async function runMachineCommand(opts: MachineCommandOptions, io: CliIO): Promise<number> {
  const nodeName = opts.nodeName ?? process.env.NODE_NAME ?? '';
  const podIPs = list(opts.podIps ?? process.env.POD_IPS ?? '');
  const nodeCIDRs = list(opts.nodeCidrs ?? process.env[MACHINE_POD_ENV.nodeCIDRs] ?? '');
  const firstText = opts.firstMachineIndex ?? process.env[MACHINE_POD_ENV.firstMachine] ?? '0';
  const firstMachine = /^\d+$/.test(firstText) ? Number(firstText) : NaN;
  if (nodeName === '') {
    io.err('error: --node-name (or $NODE_NAME) is required\n');
    return 2;
  }
  if (podIPs.length === 0) {
    io.err('error: --pod-ips (or $POD_IPS) is required\n');
    return 2;
  }
  if (nodeCIDRs.length === 0) {
    io.err(`error: --node-cidrs (or $${MACHINE_POD_ENV.nodeCIDRs}) is required\n`);
    return 2;
  }
  if (Number.isNaN(firstMachine)) {
    io.err(`error: --first-machine-index: ${JSON.stringify(firstText)} is not a non-negative integer\n`);
    return 2;
  }
  const log = timestamped((text) => io.err(text));
  try {
    await untilSignalled((signal) =>
      runMachinePod({ nodeName, podIPs, nodeCIDRs, firstMachine, paths: { userData: opts.userData }, log }, signal),
    );
    return 0;
  } catch (e) {
    io.err(`error: machine ${nodeName}: ${(e as Error).message}\n`);
    return 1;
  }
}
