/**
 * Reading the objects of YAML or JSON files (and stdin) for the commands that take `-f`.
 */
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { InputError, processIO, type CliIO } from './io.js';

/** A decoded document and where it came from, for messages. */
export interface SourcedDocument {
  readonly source: string;
  readonly index: number;
  readonly object: unknown;
}

/**
 * Reads every document of a YAML or JSON file (`-` is stdin). Empty documents are skipped; a `v1` `List` contributes
 * its items.
 */
export function readDocuments(file: string, io: CliIO): SourcedDocument[] {
  let text: string;
  try {
    text = file === '-' ? (io.readStdin ?? processIO.readStdin!)() : readFileSync(file, 'utf8');
  } catch (e) {
    throw new InputError(`${file}: cannot read: ${(e as Error).message}`);
  }
  let documents;
  try {
    documents = parseAllDocuments(text, { uniqueKeys: true });
  } catch (e) {
    throw new InputError(`${file}: cannot parse: ${(e as Error).message}`);
  }
  if (!Array.isArray(documents)) documents = [documents];
  const result: SourcedDocument[] = [];
  documents.forEach((document, i) => {
    const firstError = document.errors[0];
    if (firstError) throw new InputError(`${file}: document ${i + 1} is not valid YAML: ${firstError.message}`);
    let value: unknown;
    try {
      value = document.toJS({ maxAliasCount: 100 });
    } catch (e) {
      throw new InputError(`${file}: document ${i + 1} cannot be read: ${(e as Error).message}`);
    }
    if (value === null || value === undefined) return;
    if (typeof value !== 'object' || Array.isArray(value)) {
      throw new InputError(`${file}: document ${i + 1} is not an object`);
    }
    const list = value as { apiVersion?: unknown; kind?: unknown; items?: unknown };
    if (list.apiVersion === 'v1' && list.kind === 'List' && Array.isArray(list.items)) {
      list.items.forEach((item) => result.push({ source: file, index: result.length, object: item }));
    } else {
      result.push({ source: file, index: result.length, object: value });
    }
  });
  return result;
}
