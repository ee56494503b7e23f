/** `gardener-ipv6 validate`: its flags, its help and what runs it. */
import { Option, type Command } from 'commander';
import { parseFeatureGates } from '../../featuregate/featuregate.js';
import {
  collect,
  FEATURE_GATES_HELP,
  MAX_INPUT_SIZE_DEFAULT,
  MAX_INPUT_SIZE_HELP,
  maxInputSizeOption,
  type CommandContext,
} from './options.js';

export function addValidateCommand(program: Command, { io, setExitCode }: CommandContext): void {
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
        const { runValidate } = await import('../validate.js');
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
}
