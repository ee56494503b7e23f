import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  fileEntry,
  tar,
  tarSize,
  tarStream,
  type StreamedFileEntry,
  type TarEntry,
  type TarStreamEntry,
} from '../../src/system/tar.js';

const dir = mkdtempSync(join(tmpdir(), 'tar-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function collect(entries: TarStreamEntry[]): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of tarStream(entries)) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** A streamed entry yielding `data` in chunks of `chunk` bytes, claiming `size`. */
function streamed(path: string, data: Buffer, chunk: number, size = data.length): StreamedFileEntry {
  return {
    type: 'file',
    path,
    size,
    mode: 0o755,
    async *read() {
      for (let i = 0; i < data.length; i += chunk) yield data.subarray(i, i + chunk);
    },
  };
}

const deep = `${'d'.repeat(60)}/${'e'.repeat(60)}/file`;
const entries: TarEntry[] = [
  { type: 'dir', path: 'bin' },
  { type: 'file', path: 'bin/tool', data: Buffer.from('#!/bin/sh\necho hi\n'), mode: 0o755 },
  { type: 'file', path: 'empty', data: Buffer.alloc(0) },
  { type: 'file', path: 'block', data: Buffer.alloc(512, 1) },
  { type: 'file', path: deep, data: Buffer.from('long path') },
  { type: 'symlink', path: 'bin/sh', target: 'tool' },
];

describe('tar', () => {
  it('streams the bytes tar builds in memory, and says their size up front', async () => {
    expect(await collect(entries)).toEqual(tar(entries));
    expect(tarSize(entries)).toBe(tar(entries).length);
  });

  it('reads streamed files when it gets to them, in chunks of any size', async () => {
    const data = randomBytes(3 * 1024 + 17);
    const inMemory = tar([{ type: 'file', path: 'blob', data, mode: 0o755 }]);
    for (const chunk of [1, 511, 512, 4096, data.length]) {
      const entry = streamed('blob', data, chunk);
      expect(await collect([entry])).toEqual(inMemory);
      expect(tarSize([entry])).toBe(inMemory.length);
    }
  });

  it('fails when a streamed file is shorter or longer than it said', async () => {
    const data = Buffer.from('twelve bytes');
    await expect(collect([streamed('short', data, 4, data.length + 1)])).rejects.toThrow(
      /short changed while being archived \(expected 13 bytes, got 12\)/,
    );
    await expect(collect([streamed('long', data, 4, data.length - 1)])).rejects.toThrow(/long changed/);
  });

  it('archives a file from disk that tar(1) extracts unchanged', async () => {
    const source = join(dir, 'source.bin');
    const data = randomBytes(2 * 1024 * 1024 + 3);
    writeFileSync(source, data);
    const archive = join(dir, 'archive.tar');
    writeFileSync(
      archive,
      await collect([{ type: 'dir', path: 'opt' }, fileEntry('opt/source.bin', source, 0o755), ...entries]),
    );
    const out = join(dir, 'out');
    execFileSync('mkdir', ['-p', out]);
    execFileSync('tar', ['-xf', archive, '-C', out]);
    // equals(): toEqual compares a large Buffer byte by byte, slowly.
    expect(readFileSync(join(out, 'opt', 'source.bin')).equals(data)).toBe(true);
    expect(readFileSync(join(out, deep), 'utf8')).toBe('long path');
    expect(readFileSync(join(out, 'bin', 'sh'), 'utf8')).toBe('#!/bin/sh\necho hi\n');
    const listing = execFileSync('tar', ['-tvf', archive], { encoding: 'utf8' });
    expect(listing).toMatch(/^-rwxr-xr-x root\/root +2097155 1970-01-01 00:00 opt\/source\.bin$/m);
  });

  it("gives an entry its owner's number as uid and gid, and refuses one ustar can't hold", () => {
    const archive = join(dir, 'owned.tar');
    writeFileSync(
      archive,
      tar([
        { type: 'dir', path: 'usr', owner: 1_000_000 },
        { type: 'file', path: 'usr/tool', data: Buffer.from('x'), mode: 0o755, owner: 1_000_000 },
        { type: 'file', path: 'etc', data: Buffer.from('y') },
      ]),
    );
    const listing = execFileSync('tar', ['--numeric-owner', '-tvf', archive], { encoding: 'utf8' });
    expect(listing).toMatch(/^drwxr-xr-x 1000000\/1000000 .* usr\/$/m);
    expect(listing).toMatch(/^-rwxr-xr-x 1000000\/1000000 .* usr\/tool$/m);
    expect(listing).toMatch(/^-rw-r--r-- 0\/0 .* etc$/m);
    expect(() => tar([{ type: 'dir', path: 'x', owner: 8 ** 7 }])).toThrow(/bad owner/);
  });
});
