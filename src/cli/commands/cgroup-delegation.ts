/** `gardener-ipv6 cgroup-delegation`: its flags, its help and what runs it. */
import type { Command } from 'commander';
import { type CommandContext } from './options.js';

export function addCgroupDelegationCommand(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command('cgroup-delegation')
    .description(
      "write a seed Node's cgroup delegation for machine pods in user namespaces: the OCI hook and containerd's " +
        "base runtime spec with it (for a node image built elsewhere, such as kind's)",
    )
    .requiredOption('--default-spec <file>', "the runtime spec to start from (containerd's `ctr oci spec`)")
    .requiredOption('--hook-path <path>', 'where the node has the hook')
    .requiredOption('--out <dir>', 'the folder to write cgroup-delegation-hook and base-runtime-spec.json into')
    .action(async (flags: { defaultSpec: string; hookPath: string; out: string }) => {
      const { runCgroupDelegation } = await import('../cgroup-delegation.js');
      setExitCode(await runCgroupDelegation(io, flags));
    });
}
