/** `gardener-ipv6 machine`: its flags, its help and what runs it. */
import type { Command } from 'commander';
import { MACHINE_POD_MOUNTS } from '../../extensions/provider-local/machine-contract.js';
import type { MachineCommandOptions } from '../machine.js';
import { type CommandContext } from './options.js';

export function addMachineCommand(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command('machine')
    .description("run a shoot machine in this pod (the entrypoint of provider-local's machine image)")
    .option('--node-name <name>', "the Node's name ($NODE_NAME: the pod's name)")
    .option('--pod-ips <list>', "the pod's addresses ($POD_IPS: status.podIPs)")
    .option('--node-cidrs <list>', "the shoot's node range per family, in family order ($NODE_CIDRS)")
    .option('--first-machine-index <n>', "the pool's first machine in the node ranges ($FIRST_MACHINE_INDEX)")
    .option('--zones <list>', "the pool's zones: the machine is in the one of its ordinal, round robin ($ZONES)")
    .option('--region <name>', "the shoot's region, the Node's topology label ($REGION)")
    .option('--user-data <file>', "the pool's user data", MACHINE_POD_MOUNTS.userData)
    .action(async (opts: MachineCommandOptions) => {
      const { runMachineCommand } = await import('../machine.js');
      setExitCode(await runMachineCommand(opts, io));
    });
}
