/**
 * `gardener-ipv6 machine`: the machine pod's agent (see provider-local's pod-agent.ts), until SIGTERM or SIGINT.
 */
import { runMachinePod } from '../extensions/provider-local/machine/pod-agent.js';
import type { CliIO } from './io.js';
import { timestamped, untilSignalled } from './signals.js';

export interface MachineCommandOptions {
  readonly nodeName?: string;
  readonly podIps?: string;
  readonly userData: string;
}

/** 0 after a signal stopped the machine, 1 when it could not be started, 2 for missing inputs. */
export async function runMachineCommand(opts: MachineCommandOptions, io: CliIO): Promise<number> {
  const nodeName = opts.nodeName ?? process.env.NODE_NAME ?? '';
  const podIPs = (opts.podIps ?? process.env.POD_IPS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (nodeName === '') {
    io.err('error: --node-name (or $NODE_NAME) is required\n');
    return 2;
  }
  if (podIPs.length === 0) {
    io.err('error: --pod-ips (or $POD_IPS) is required\n');
    return 2;
  }
  const log = timestamped((text) => io.err(text));
  try {
    await untilSignalled((signal) =>
      runMachinePod({ nodeName, podIPs, paths: { userData: opts.userData }, log }, signal),
    );
    return 0;
  } catch (e) {
    io.err(`error: machine ${nodeName}: ${(e as Error).message}\n`);
    return 1;
  }
}
