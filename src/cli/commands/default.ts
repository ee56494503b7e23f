/** `gardener-ipv6 default`: its flags, its help and what runs it. */
import type { Command } from 'commander';
import { parseFeatureGates } from '../../featuregate/featuregate.js';
import {
  collect,
  FEATURE_GATES_HELP,
  MAX_INPUT_SIZE_DEFAULT,
  MAX_INPUT_SIZE_HELP,
  maxInputSizeOption,
  type CommandContext,
} from './options.js';

export function addDefaultCommand(program: Command, { io, setExitCode }: CommandContext): void {
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
      const { runDefault } = await import('../default.js');
      setExitCode(runDefault({ files: opts.filename, gates, maxInputBytes }, io));
    });
}
