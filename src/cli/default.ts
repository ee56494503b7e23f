import { defaultObject, UnknownKindError } from '../apis/admission.js';
import { errorString } from '../apis/field/index.js';
import type { FeatureGates } from '../featuregate/featuregate.js';
import { InputCloudProfiles } from './cloud-profiles.js';
import { InputLimit, readDocuments } from './documents.js';
import { EXIT_INVALID, EXIT_OK, InputError, type CliIO } from './io.js';
import { stringifyForKubectl } from './kubectl-yaml.js';

/**
 * Prints the objects of the files after defaulting, as a YAML stream, each as soon as it is read (memory for one
 * document at a time beyond the input itself); a Shoot also gets the defaults of a CloudProfile before it in the
 * input (see cloud-profiles.ts).
 */
export function runDefault(
  options: { files: readonly string[]; gates: FeatureGates; maxInputBytes?: number },
  io: CliIO,
): number {
  const limit = new InputLimit(options.maxInputBytes);
  const cloudProfiles = new InputCloudProfiles(io);
  let exitCode = EXIT_OK;
  let found = 0;
  for (const file of options.files) {
    for (const document of readDocuments(file, io, limit)) {
      found++;
      let result;
      try {
        const profiles = cloudProfiles.for(document);
        result = defaultObject({
          object: document.object,
          gates: options.gates,
          ...(profiles ? { cloudProfiles: profiles } : {}),
        });
      } catch (e) {
        if (e instanceof UnknownKindError)
          throw new InputError(`${document.source}: object ${document.index + 1}: ${e.message}`);
        throw e;
      }
      cloudProfiles.add(document, result.object !== undefined);
      if (result.object === undefined) {
        io.err(`${document.source}: object ${document.index + 1} cannot be defaulted:\n`);
        for (const error of result.errors) io.err(`  - ${errorString(error)}\n`);
        exitCode = EXIT_INVALID;
        continue;
      }
      io.out(`---\n${stringifyForKubectl(result.object)}`);
    }
  }
  if (found === 0) throw new InputError(`${options.files.join(', ')}: no objects found`);
  return exitCode;
}
