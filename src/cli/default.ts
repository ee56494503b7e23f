import { stringify } from 'yaml';
import { decode, identify, UnknownKindError } from '../apis/admission.js';
import { errorString } from '../apis/field/index.js';
import { readDocuments } from './documents.js';
import { EXIT_INVALID, EXIT_OK, InputError, type CliIO } from './io.js';

/** Prints the objects of the files after defaulting, as a YAML stream. */
export function runDefault(options: { files: readonly string[] }, io: CliIO): number {
  const documents = options.files.flatMap((file) => readDocuments(file, io));
  if (documents.length === 0) throw new InputError(`${options.files.join(', ')}: no objects found`);
  const rendered: string[] = [];
  let exitCode = EXIT_OK;
  for (const document of documents) {
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
    rendered.push(stringify(kind.default(decoded.value), { lineWidth: 0 }));
  }
  io.out(rendered.map((doc) => `---\n${doc}`).join(''));
  return exitCode;
}
