/** `gardener-ipv6 images`: its flags, its help and what runs it. */
import type { Command } from 'commander';
import { type CommandContext } from './options.js';

export function addImagesCommand(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command('images')
    .description(
      'build the images a seed runs shoots with (control planes, machine pods) as OCI archives from the pinned ' +
        'binaries; prints "NAME<tab>ARCHIVE" per image',
    )
    .action(async () => {
      const { runImages } = await import('../images.js');
      setExitCode(await runImages(io));
    });
}
