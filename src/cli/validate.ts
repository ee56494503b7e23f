import { admit, UnknownKindError } from '../apis/admission.js';
import { statusFor, type Status } from '../apis/field/index.js';
import type { FeatureGates } from '../featuregate/featuregate.js';
import { readDocuments } from './documents.js';
import { EXIT_INVALID, EXIT_OK, InputError, type CliIO } from './io.js';

export interface ValidateOptions {
  readonly files: readonly string[];
  readonly old?: string;
  readonly seed?: string;
  readonly gates: FeatureGates;
  readonly output: 'json' | 'text';
}

export interface ValidatedDocument {
  readonly status: Status;
  readonly object: unknown;
  readonly valid: boolean;
}

/**
 * Defaults and validates every document of the files as an API server would. Throws InputError when the input
 * can't be used.
 */
export function validateDocuments(options: Omit<ValidateOptions, 'output'>, io: CliIO): ValidatedDocument[] {
  const documents = options.files.flatMap((file) => readDocuments(file, io));
  if (documents.length === 0) throw new InputError(`${options.files.join(', ')}: no objects found`);
  const olds = options.old === undefined ? undefined : readDocuments(options.old, io);
  if (olds && olds.length !== documents.length) {
    throw new InputError(
      `${options.old}: has ${olds.length} objects, but the input has ${documents.length}: --old must hold the stored ` +
        `version of each object, in the same order`,
    );
  }
  const seeds = options.seed === undefined ? undefined : readDocuments(options.seed, io);
  if (seeds && seeds.length !== 1) throw new InputError(`${options.seed}: must hold exactly one Seed`);

  return documents.map((document, i) => {
    try {
      const result = admit({
        object: document.object,
        oldObject: olds?.[i]?.object,
        seed: seeds?.[0]?.object,
        gates: options.gates,
      });
      return { status: statusFor(result.id, result.errors), object: result.object, valid: result.errors.length === 0 };
    } catch (e) {
      if (e instanceof UnknownKindError) throw new InputError(`${document.source}: object ${i + 1}: ${e.message}`);
      if (e instanceof RangeError) throw new InputError(`${document.source}: object ${i + 1}: too deeply nested`);
      throw e;
    }
  });
}

export function runValidate(options: ValidateOptions, io: CliIO): number {
  const results = validateDocuments(options, io);
  for (const { status } of results) {
    if (options.output === 'json') {
      io.out(`${JSON.stringify(status, null, 2)}\n`);
    } else {
      io.out(formatStatusText(status));
    }
  }
  return results.every((r) => r.valid) ? EXIT_OK : EXIT_INVALID;
}

function formatStatusText(status: Status): string {
  const details = status.details ?? {};
  const name = `${details.kind}.${details.group} ${JSON.stringify(details.name ?? '')}`;
  if (status.status === 'Success') return `${name} is valid\n`;
  const causes = (details.causes ?? []).map((c) => `  - ${c.field}: ${c.message}`);
  return `${name} is invalid:\n${causes.join('\n')}\n`;
}
