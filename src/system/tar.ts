/**
 * A minimal, deterministic ustar writer: regular files, directories and symlinks, owner root (or the entry's
 * `owner`, as uid and gid), mtime 0. Enough for OCI image layers and archives, whose digests must not change between
 * runs (same input, same bytes).
 *
 * `tar` builds an archive in memory; `tarStream` yields the same bytes chunk by chunk and reads files when it gets to
 * them, for archives of hundreds of megabytes (a machine image with node and the kubelet).
 */
import { createReadStream, statSync } from 'node:fs';

export type TarEntry =
  | { type: 'file'; path: string; data: Buffer; mode?: number; owner?: number }
  | { type: 'dir'; path: string; mode?: number; owner?: number }
  | { type: 'symlink'; path: string; target: string; owner?: number };

/** A regular file whose bytes come from `read()` when the archive gets to it: exactly `size` of them. */
export interface StreamedFileEntry {
  type: 'file';
  path: string;
  size: number;
  read: () => AsyncIterable<Uint8Array>;
  mode?: number;
  owner?: number;
}

export type TarStreamEntry = TarEntry | StreamedFileEntry;

const BLOCK = 512;
/** How much of a file is read at once: large reads keep a few hundred megabytes quick. */
const READ_CHUNK = 1 << 20;

function octal(value: number, width: number): string {
  // width includes the terminating NUL.
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

function header(entry: TarStreamEntry, size: number): Buffer {
  const block = Buffer.alloc(BLOCK);
  let name = entry.type === 'dir' && !entry.path.endsWith('/') ? `${entry.path}/` : entry.path;
  let prefix = '';
  if (Buffer.byteLength(name) > 100) {
    // ustar splits long paths at a slash: prefix (155) + name (100).
    const cut = name.lastIndexOf('/', name.length - 2);
    prefix = name.slice(0, cut);
    name = name.slice(cut + 1);
    if (cut < 0 || Buffer.byteLength(name) > 100 || Buffer.byteLength(prefix) > 155) {
      throw new Error(`tar: path too long: ${entry.path}`);
    }
  }
  if (size >= 8 ** 11) throw new Error(`tar: ${entry.path} is too large for ustar (${size} bytes)`);
  const mode = entry.type === 'symlink' ? 0o777 : (entry.mode ?? (entry.type === 'dir' ? 0o755 : 0o644));
  block.write(name, 0, 100);
  block.write(octal(mode, 8), 100);
  const owner = entry.owner ?? 0;
  if (!Number.isInteger(owner) || owner < 0 || owner >= 8 ** 7)
    throw new Error(`tar: ${entry.path}: bad owner ${owner}`);
  block.write(octal(owner, 8), 108); // uid
  block.write(octal(owner, 8), 116); // gid
  block.write(octal(size, 12), 124);
  block.write(octal(0, 12), 136); // mtime
  block.write('        ', 148); // checksum placeholder: spaces while summing
  block.write(entry.type === 'file' ? '0' : entry.type === 'dir' ? '5' : '2', 156);
  if (entry.type === 'symlink') block.write(entry.target, 157, 100);
  block.write('ustar\0', 257);
  block.write('00', 263);
  // Names only for root: another owner is its number alone.
  if (owner === 0) {
    block.write('root', 265, 32);
    block.write('root', 297, 32);
  }
  block.write(prefix, 345, 155);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(octal(sum, 7) + ' ', 148);
  return block;
}

const padding = (size: number) => (BLOCK - (size % BLOCK)) % BLOCK;

function entrySize(entry: TarStreamEntry): number {
  if (entry.type !== 'file') return 0;
  return 'data' in entry ? entry.data.length : entry.size;
}

/** The archive's bytes, entries in the given order. */
export function tar(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const data = entry.type === 'file' ? entry.data : Buffer.alloc(0);
    parts.push(header(entry, data.length), data);
    const pad = padding(data.length);
    if (pad) parts.push(Buffer.alloc(pad));
  }
  parts.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(parts);
}

/** The size in bytes of the archive of these entries (what `tarStream` yields in total). */
export function tarSize(entries: Iterable<TarStreamEntry>): number {
  let total = 2 * BLOCK;
  for (const entry of entries) {
    const size = entrySize(entry);
    total += BLOCK + size + padding(size);
  }
  return total;
}

/**
 * The bytes `tar` would give for these entries, chunk by chunk: a streamed file is read when the archive gets to
 * it, so memory stays at a chunk whatever the archive's size. Fails when a streamed file gives more or fewer bytes
 * than its `size` (it changed while being archived).
 */
export async function* tarStream(entries: Iterable<TarStreamEntry>): AsyncGenerator<Buffer> {
  for (const entry of entries) {
    const size = entrySize(entry);
    yield header(entry, size);
    if (entry.type === 'file' && 'data' in entry) {
      if (size > 0) yield entry.data;
    } else if (entry.type === 'file') {
      let read = 0;
      for await (const chunk of entry.read()) {
        read += chunk.length;
        if (read > size) break;
        yield Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
      }
      if (read !== size) {
        throw new Error(`tar: ${entry.path} changed while being archived (expected ${size} bytes, got ${read})`);
      }
    }
    const pad = padding(size);
    if (pad) yield Buffer.alloc(pad);
  }
  yield Buffer.alloc(2 * BLOCK);
}

/** A streamed entry for a file on disk, of the size it has now. */
export function fileEntry(path: string, source: string, mode?: number): StreamedFileEntry {
  return {
    type: 'file',
    path,
    size: statSync(source).size,
    read: () => createReadStream(source, { highWaterMark: READ_CHUNK }),
    ...(mode !== undefined ? { mode } : {}),
  };
}
