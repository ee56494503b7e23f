import { decode, identify, UnknownKindError } from '../apis/admission.js';
import { errorString } from '../apis/field/index.js';
import { InputLimit, readDocuments } from './documents.js';
import { EXIT_INVALID, EXIT_OK, InputError, type CliIO } from './io.js';
import { stringifyForKubectl } from './kubectl-yaml.js';

/**
 * Prints the objects of the files after defaulting, as a YAML stream, each as soon as it is read (memory for one
 * document at a time beyond the input itself).
 */
export function runDefault(options: { files: readonly string[]; maxInputBytes?: number }, io: CliIO): number {
  const limit = new InputLimit(options.maxInputBytes);
  let exitCode = EXIT_OK;
  let found = 0;
  for (const file of options.files) {
    for (const document of readDocuments(file, io, limit)) {
      found++;
      let kind;
      try {
        kind = identify(document.object);
      } catch (e) {
        if (e instanceof UnknownKindError)
          throw new InputError(`${document.source}: object ${document.index + 1}: ${e.message}`);
        throw e;
      }
      const decoded = decode(kind, document.object);
      if (decoded.value === undefined) {
        io.err(`${document.source}: object ${document.index + 1} cannot be defaulted:\n`);
        for (const error of decoded.errors) io.err(`  - ${errorString(error)}\n`);
        exitCode = EXIT_INVALID;
        continue;
      }
      io.out(`---\n${stringifyForKubectl(kind.default(decoded.value))}`);
    }
  }
  if (found === 0) throw new InputError(`${options.files.join(', ')}: no objects found`);
  return exitCode;
}
