import { admit, UnknownKindError } from '../apis/admission.js';
import { extensionAdmission } from '../app/extension-admission.js';
import { statusFor, type Status } from '../apis/field/index.js';
import type { FeatureGates } from '../featuregate/featuregate.js';
import { InputCloudProfiles } from './cloud-profiles.js';
import { InputLimit, readDocuments, type SourcedDocument } from './documents.js';
import { EXIT_INVALID, EXIT_OK, InputError, type CliIO } from './io.js';

/** The extensions' admission with provider-local's defaults, as the webhook runs it unless told otherwise. */
const EXTENSION_ADMISSION = extensionAdmission();

export interface ValidateOptions {
  readonly files: readonly string[];
  readonly old?: string;
  readonly seed?: string;
  readonly gates: FeatureGates;
  readonly output: 'json' | 'text';
  /** All files together. @default 64 MiB (DEFAULT_MAX_INPUT_BYTES of documents.ts) */
  readonly maxInputBytes?: number;
}

export interface ValidatedDocument {
  readonly status: Status;
  readonly object: unknown;
  readonly valid: boolean;
}

/**
 * Defaults and validates every document of the files as an API server would, one at a time as they are read; a
 * Shoot against the CloudProfiles before it in the input (see cloud-profiles.ts).
 * Throws InputError when the input can't be used (possibly after yielding the results of the documents before).
 */
export function* validateDocuments(options: Omit<ValidateOptions, 'output'>, io: CliIO): Generator<ValidatedDocument> {
  const limit = new InputLimit(options.maxInputBytes);
  const seeds = options.seed === undefined ? undefined : [...readDocuments(options.seed, io, limit)];
  if (seeds && seeds.length !== 1) throw new InputError(`${options.seed}: must hold exactly one Seed`);
  const olds = options.old === undefined ? undefined : readDocuments(options.old, io, limit);
  const cloudProfiles = new InputCloudProfiles(io);

  let count = 0;
  for (const file of options.files) {
    for (const document of readDocuments(file, io, limit)) {
      const old = olds?.next();
      if (old?.done) throw mismatchedOlds(options.old!, count, 'more');
      const input = { old: old?.value, seed: seeds?.[0], cloudProfiles: cloudProfiles.for(document) };
      const validated = validateDocument(document, count, input, options.gates);
      cloudProfiles.add(document, validated.valid);
      yield validated;
      count++;
    }
  }
  if (count === 0) throw new InputError(`${options.files.join(', ')}: no objects found`);
  if (olds) {
    const extra = [...olds].length;
    if (extra > 0) throw mismatchedOlds(options.old!, count + extra, String(count));
  }
}

function validateDocument(
  document: SourcedDocument,
  i: number,
  context: {
    old: SourcedDocument | undefined;
    seed: SourcedDocument | undefined;
    cloudProfiles: ((name: string) => unknown) | undefined;
  },
  gates: FeatureGates,
): ValidatedDocument {
  const { old, seed, cloudProfiles } = context;
  try {
    const result = admit({
      object: document.object,
      oldObject: old?.object,
      seed: seed?.object,
      gates,
      extensionAdmission: EXTENSION_ADMISSION,
      ...(cloudProfiles ? { cloudProfiles } : {}),
    });
    return { status: statusFor(result.id, result.errors), object: result.object, valid: result.errors.length === 0 };
  } catch (e) {
    if (e instanceof UnknownKindError) throw new InputError(`${document.source}: object ${i + 1}: ${e.message}`);
    if (e instanceof RangeError) throw new InputError(`${document.source}: object ${i + 1}: too deeply nested`);
    throw e;
  }
}

function mismatchedOlds(old: string, olds: number, objects: string): InputError {
  return new InputError(
    `${old}: has ${olds} objects, but the input has ${objects}: --old must hold the stored version of each object, ` +
      `in the same order`,
  );
}

export function runValidate(options: ValidateOptions, io: CliIO): number {
  let allValid = true;
  for (const { status, valid } of validateDocuments(options, io)) {
    io.out(options.output === 'json' ? `${JSON.stringify(status, null, 2)}\n` : formatStatusText(status));
    allValid &&= valid;
  }
  return allValid ? EXIT_OK : EXIT_INVALID;
}

function formatStatusText(status: Status): string {
  const details = status.details ?? {};
  const name = `${details.kind}.${details.group} ${JSON.stringify(details.name ?? '')}`;
  if (status.status === 'Success') return `${name} is valid\n`;
  const causes = (details.causes ?? []).map((c) => `  - ${c.field}: ${c.message}`);
  return `${name} is invalid:\n${causes.join('\n')}\n`;
}
