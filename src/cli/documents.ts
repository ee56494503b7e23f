/**
 * Reading the objects of YAML or JSON files (and stdin) for the commands that take `-f`, within a size limit and
 * one document at a time: a file is read whole (refused before it is read when it is over the limit), then its
 * documents are composed and converted one by one, so the YAML syntax tree of only one document is alive at a time.
 * JSON (a file starting with `{` or `[`, as kubectl decides) is parsed as JSON: the YAML parser costs some 80 bytes
 * of syntax tree per byte of flow-style input. YAML is read as YAML 1.1, as kubectl reads it (kubectl-yaml.ts).
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { Composer, LineCounter, Parser, type YAMLError } from 'yaml';
import { InputError, type CliIO } from './io.js';
import { KUBECTL_YAML_OPTIONS } from './kubectl-yaml.js';
import { firstDuplicateKey } from '../apis/meta/json-duplicates.js';

/**
 * The default of `--max-input-size`: 64 MiB of manifests (a few thousand Shoots, or 40 objects at etcd's 1.5 MiB
 * limit) take 250–330 MiB of memory to validate, at most about 0.6 GiB (docs/cli.md, "Input limits").
 */
export const DEFAULT_MAX_INPUT_BYTES = 64 * 1024 * 1024;

/** A decoded document and where it came from, for messages. */
export interface SourcedDocument {
  readonly source: string;
  readonly index: number;
  readonly object: unknown;
}

/** How many bytes all the files of one command may hold together. */
export class InputLimit {
  private used = 0;

  constructor(readonly maxBytes: number = DEFAULT_MAX_INPUT_BYTES) {}

  /** The largest YAML document (see {@link YAML_DOCUMENT_SHARE}). */
  get maxYAMLDocumentBytes(): number {
    return Math.floor(this.maxBytes / YAML_DOCUMENT_SHARE);
  }

  /** Bytes left for the next file. */
  get remaining(): number {
    return Math.max(0, this.maxBytes - this.used);
  }

  /** Counts `bytes` of `file`; throws the one-line InputError when the inputs are over the limit. */
  charge(file: string, bytes: number): void {
    this.used += bytes;
    if (this.used > this.maxBytes) {
      throw new InputError(
        `${file}: the input is larger than the limit of ${formatBytes(this.maxBytes)} (raise it with --max-input-size)`,
      );
    }
  }
}

/** `64 MiB`, `1.5 KiB`, `10 bytes`. */
export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB'] as const;
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1 && value % 1024 === 0) {
    value /= 1024;
    unit++;
  }
  return `${value} ${units[unit]}`;
}

/** `64Mi`, `64MiB`, `1G`, `500k`, `1048576`: a size in bytes, or undefined when it isn't one. */
export function parseByteSize(text: string): number | undefined {
  const m = /^(\d+)\s*(?:([KMG])(?:i?B?)?|B)?$/i.exec(text.trim());
  if (!m) return undefined;
  const factor = { K: 1024, M: 1024 ** 2, G: 1024 ** 3 }[(m[2] ?? '').toUpperCase()] ?? 1;
  const bytes = Number(m[1]) * factor;
  return Number.isSafeInteger(bytes) && bytes > 0 ? bytes : undefined;
}

/** The bytes of a file (`-` is stdin), refused as soon as they would exceed what the limit has left. */
function readInput(file: string, io: CliIO, limit: InputLimit): Buffer {
  if (file === '-' && io.readStdin) {
    const text = io.readStdin();
    limit.charge(file, Buffer.byteLength(text));
    return Buffer.from(text);
  }
  let fd: number;
  try {
    fd = file === '-' ? 0 : openSync(file, 'r');
  } catch (e) {
    throw new InputError(`${file}: cannot read: ${(e as Error).message}`);
  }
  try {
    const stat = fstatSync(fd);
    if (stat.isFile()) {
      // A regular file announces its size: refused before anything is read, else read into one buffer.
      limit.charge(file, stat.size);
      const buffer = Buffer.allocUnsafe(stat.size);
      let filled = 0;
      while (filled < buffer.length) {
        const read = readSync(fd, buffer, filled, buffer.length - filled, null);
        if (read === 0) break;
        filled += read;
      }
      return buffer.subarray(0, filled);
    }
    // A pipe or terminal: read until the end, refused once more than the limit came.
    const chunks: Buffer[] = [];
    for (;;) {
      const chunk = Buffer.allocUnsafe(1024 * 1024);
      let read: number;
      try {
        read = readSync(fd, chunk, 0, chunk.length, null);
      } catch (e) {
        // A non-blocking stdin with nothing yet.
        if ((e as NodeJS.ErrnoException).code === 'EAGAIN') continue;
        throw e;
      }
      if (read === 0) break;
      limit.charge(file, read);
      chunks.push(chunk.subarray(0, read));
    }
    return Buffer.concat(chunks);
  } catch (e) {
    if (e instanceof InputError) throw e;
    throw new InputError(`${file}: cannot read: ${(e as Error).message}`);
  } finally {
    if (fd !== 0) closeSync(fd);
  }
}

/**
 * The objects of a YAML or JSON file (`-` is stdin), one at a time. Empty documents are skipped; a `v1` `List`
 * contributes its items. Reads the file on the first call of `next()`; throws InputError when the input can't be used.
 */
export function* readDocuments(
  file: string,
  io: CliIO,
  limit: InputLimit = new InputLimit(),
): Generator<SourcedDocument> {
  const text = readInput(file, io, limit).toString('utf8');
  let index = 0;
  const objects = (value: unknown, documentNumber: number): SourcedDocument[] => {
    if (value === null || value === undefined) return [];
    if (typeof value !== 'object' || Array.isArray(value)) {
      throw new InputError(`${file}: document ${documentNumber} is not an object`);
    }
    const list = value as { apiVersion?: unknown; kind?: unknown; items?: unknown };
    const items = list.apiVersion === 'v1' && list.kind === 'List' && Array.isArray(list.items) ? list.items : [value];
    return items.map((object) => ({ source: file, index: index++, object }));
  };

  if (/^\s*[{[]/.test(text.slice(0, 1024))) {
    let value: unknown;
    let json = true;
    try {
      value = JSON.parse(text);
    } catch {
      // YAML flow style, or broken JSON: the YAML parser says which.
      json = false;
    }
    if (json) {
      const duplicate = firstDuplicateKey(text);
      if (duplicate !== undefined) {
        throw new InputError(
          `${file}: duplicate field "${duplicate}": an object names it twice (kubectl and the API server refuse it too)`,
        );
      }
      yield* objects(value, 1);
      return;
    }
  }

  const maxDocumentBytes = limit.maxYAMLDocumentBytes;
  let documentNumber = 0;
  for (const chunk of yamlDocumentChunks(text)) {
    // The YAML parser's syntax trees cost some 65 bytes per byte: a document is refused before it is parsed.
    if (Buffer.byteLength(chunk.text) > maxDocumentBytes) {
      throw new InputError(
        `${file}: document ${documentNumber + 1} (line ${chunk.firstLine}) is larger than ` +
          `${formatBytes(maxDocumentBytes)}, the limit for one YAML document (1/${YAML_DOCUMENT_SHARE} of ` +
          `--max-input-size): split it, raise the limit, or pass JSON`,
      );
    }
    const lines = new LineCounter();
    try {
      for (const document of new Composer(KUBECTL_YAML_OPTIONS).compose(
        new Parser(lines.addNewLine).parse(chunk.text),
        documentNumber === 0,
      )) {
        documentNumber++;
        const firstError = document.errors[0];
        if (firstError) {
          const message = withLine(firstError, chunk.text, lines, chunk.firstLine - 1);
          throw new InputError(`${file}: document ${documentNumber} is not valid YAML: ${message}`);
        }
        let value: unknown;
        try {
          value = document.toJS({ maxAliasCount: 100 });
        } catch (e) {
          throw new InputError(`${file}: document ${documentNumber} cannot be read: ${(e as Error).message}`);
        }
        yield* objects(value, documentNumber);
      }
    } catch (e) {
      if (e instanceof InputError) throw e;
      throw new InputError(`${file}: cannot parse: ${(e as Error).message}`);
    }
  }
}

/** One YAML document in `--max-input-size` parts: 8 MiB of the default 64 MiB. */
const YAML_DOCUMENT_SHARE = 8;

/**
 * The text of a YAML stream cut before every `---` at the start of a line: a document marker, which YAML forbids at
 * the start of a line anywhere else (also inside block and quoted scalars), so each part holds whole documents.
 */
function* yamlDocumentChunks(text: string): Generator<{ text: string; firstLine: number }> {
  const marker = /^---(?=[ \t\r\n]|$)/gm;
  let start = 0;
  let firstLine = 1;
  for (let m = marker.exec(text); m; m = marker.exec(text)) {
    if (m.index === start) continue;
    const chunk = text.slice(start, m.index);
    yield { text: chunk, firstLine };
    firstLine += countLines(chunk);
    start = m.index;
  }
  if (start < text.length || start === 0) yield { text: text.slice(start), firstLine };
}

function countLines(text: string): number {
  let count = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) count++;
  return count;
}

/** The error's message with where it is and the line it is on, as `parseAllDocuments` words it. */
function withLine(error: YAMLError, text: string, lines: LineCounter, lineOffset: number): string {
  if (error.pos[0] < 0) return error.message;
  const { line, col } = lines.linePos(error.pos[0]);
  let source = text
    .substring(lines.lineStarts[line - 1]!, lines.lineStarts[line] ?? text.length)
    .replace(/[\n\r]+$/, '');
  let column = col - 1;
  if (column >= 60 && source.length > 80) {
    const start = Math.min(column - 39, source.length - 79);
    source = `…${source.substring(start)}`;
    column -= start - 1;
  }
  if (source.length > 80) source = `${source.substring(0, 79)}…`;
  return `${error.message} at line ${line + lineOffset}, column ${col}:\n\n${source}\n${' '.repeat(column)}^\n`;
}
