/**
 * A minimal, deterministic ustar writer: regular files, directories and symlinks, owner root, mtime 0. Enough for
 * OCI image layers and archives, whose digests must not change between runs (same input, same bytes).
 */

export type TarEntry =
  | { type: 'file'; path: string; data: Buffer; mode?: number }
  | { type: 'dir'; path: string; mode?: number }
  | { type: 'symlink'; path: string; target: string };

const BLOCK = 512;

function octal(value: number, width: number): string {
  // width includes the terminating NUL.
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

function header(entry: TarEntry, size: number): Buffer {
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
  const mode = entry.type === 'symlink' ? 0o777 : (entry.mode ?? (entry.type === 'dir' ? 0o755 : 0o644));
  block.write(name, 0, 100);
  block.write(octal(mode, 8), 100);
  block.write(octal(0, 8), 108); // uid
  block.write(octal(0, 8), 116); // gid
  block.write(octal(size, 12), 124);
  block.write(octal(0, 12), 136); // mtime
  block.write('        ', 148); // checksum placeholder: spaces while summing
  block.write(entry.type === 'file' ? '0' : entry.type === 'dir' ? '5' : '2', 156);
  if (entry.type === 'symlink') block.write(entry.target, 157, 100);
  block.write('ustar\0', 257);
  block.write('00', 263);
  block.write('root', 265, 32);
  block.write('root', 297, 32);
  block.write(prefix, 345, 155);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(octal(sum, 7) + ' ', 148);
  return block;
}

/** The archive's bytes, entries in the given order. */
export function tar(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const data = entry.type === 'file' ? entry.data : Buffer.alloc(0);
    parts.push(header(entry, data.length), data);
    const pad = (BLOCK - (data.length % BLOCK)) % BLOCK;
    if (pad) parts.push(Buffer.alloc(pad));
  }
  parts.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(parts);
}
