import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  hostBinaryFiles,
  lddLibraries,
  parseLddOutput,
} from '../../../../src/extensions/provider-local/machine/host-binaries.js';
import { DEBIAN_STATIC_BUSYBOX } from '../../../../src/extensions/provider-local/machine/images.js';
import { which } from '../../../../src/system/process.js';

const NFT_LDD = `	linux-vdso.so.1 (0x00007ff75a6dc000)
	libnftables.so.1 => /lib/x86_64-linux-gnu/libnftables.so.1 (0x00007ff75a5e9000)
	libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007ff75a3cd000)
	libmnl.so.0 => /lib/x86_64-linux-gnu/libmnl.so.0 (0x00007ff75a3c5000)
	/lib64/ld-linux-x86-64.so.2 (0x00007ff75a6de000)
	libmd.so.0 => /lib/x86_64-linux-gnu/libmd.so.0 (0x00007ff75a293000)
`;

describe('parseLddOutput', () => {
  it('lists the libraries and the dynamic loader in ldd order, without the vDSO', () => {
    expect(parseLddOutput(NFT_LDD)).toEqual([
      '/lib/x86_64-linux-gnu/libnftables.so.1',
      '/lib/x86_64-linux-gnu/libc.so.6',
      '/lib/x86_64-linux-gnu/libmnl.so.0',
      '/lib64/ld-linux-x86-64.so.2',
      '/lib/x86_64-linux-gnu/libmd.so.0',
    ]);
  });

  it('finds nothing in a static binary', () => {
    expect(parseLddOutput('\tnot a dynamic executable\n')).toEqual([]);
    expect(parseLddOutput('\tstatically linked\n')).toEqual([]);
    expect(parseLddOutput('')).toEqual([]);
  });

  it('lists a library once, and skips the old `name =>  (0x...)` vDSO form', () => {
    const output = [
      '\tlinux-gate.so.1 =>  (0xf7f0b000)',
      '\tlibc.so.6 => /lib/i386-linux-gnu/libc.so.6 (0xf7d00000)',
      '\tlibc.so.6 => /lib/i386-linux-gnu/libc.so.6 (0xf7d00000)',
      '\t/lib/ld-linux.so.2 (0xf7f0d000)',
    ].join('\n');
    expect(parseLddOutput(output)).toEqual(['/lib/i386-linux-gnu/libc.so.6', '/lib/ld-linux.so.2']);
  });

  it('fails on libraries the loader does not find, naming all of them', () => {
    const output = `${NFT_LDD}\tlibfoo.so.1 => not found\n\tlibbar.so.2 => not found\n`;
    expect(() => parseLddOutput(output)).toThrow('ldd: libraries not found: libfoo.so.1, libbar.so.2');
  });
});

describe('lddLibraries on this host', () => {
  it.runIf(existsSync(DEBIAN_STATIC_BUSYBOX))('has none for the static busybox', () => {
    expect(lddLibraries(DEBIAN_STATIC_BUSYBOX)).toEqual([]);
  });

  it.runIf(which('ldd') !== undefined)('has libc and a dynamic loader for node', () => {
    const libraries = lddLibraries(process.execPath);
    expect(libraries.some((l) => /\/libc\.so\.6$/.test(l))).toBe(true);
    expect(libraries.some((l) => /\/ld-linux[^/]*\.so\.\d$/.test(l))).toBe(true);
  });

  it('fails for a file that is not there, naming it', () => {
    expect(() => lddLibraries('/nonexistent/tool')).toThrow(/\/nonexistent\/tool/);
  });
});

describe('hostBinaryFiles', () => {
  // A host in miniature: usr/lib with a versioned library and its SONAME link, lib -> usr/lib (merged /usr), a
  // loader link from lib64 with an absolute target, a tool linked from sbin to bin.
  const root = mkdtempSync(join(tmpdir(), 'host-binaries-test-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const at = (path: string) => join(root, path);
  for (const d of ['usr/lib/x86_64-linux-gnu', 'usr/bin', 'usr/sbin', 'lib64']) mkdirSync(at(d), { recursive: true });
  symlinkSync('usr/lib', at('lib'));
  writeFileSync(at('usr/lib/x86_64-linux-gnu/libnftables.so.1.1.0'), 'lib');
  symlinkSync('libnftables.so.1.1.0', at('usr/lib/x86_64-linux-gnu/libnftables.so.1'));
  writeFileSync(at('usr/lib/x86_64-linux-gnu/libc.so.6'), 'libc');
  writeFileSync(at('usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2'), 'loader', { mode: 0o755 });
  symlinkSync(at('lib/x86_64-linux-gnu/ld-linux-x86-64.so.2'), at('lib64/ld-linux-x86-64.so.2'));
  writeFileSync(at('usr/bin/ip'), 'ip', { mode: 0o4755 });
  symlinkSync(at('usr/bin/ip'), at('usr/sbin/ip'));
  writeFileSync(at('usr/sbin/nft'), 'nft', { mode: 0o755 });
  const rel = (path: string) => at(path).slice(1);

  const libc = at('lib/x86_64-linux-gnu/libc.so.6');
  const loader = at('lib64/ld-linux-x86-64.so.2');
  const libraries: Record<string, string[]> = {
    [at('usr/sbin/nft')]: [at('lib/x86_64-linux-gnu/libnftables.so.1'), libc, loader],
    [at('usr/sbin/ip')]: [libc, loader],
  };
  const { files, symlinks } = hostBinaryFiles([at('usr/sbin/nft'), at('usr/sbin/ip')], (b) => libraries[b] ?? []);

  it('copies what is not a symlink from its real path, under the path asked for', () => {
    expect(files).toEqual([
      { path: rel('usr/sbin/nft'), source: at('usr/sbin/nft'), mode: 0o755 },
      {
        path: rel('lib/x86_64-linux-gnu/libnftables.so.1.1.0'),
        source: at('usr/lib/x86_64-linux-gnu/libnftables.so.1.1.0'),
        mode: 0o644,
      },
      { path: rel('lib/x86_64-linux-gnu/libc.so.6'), source: at('usr/lib/x86_64-linux-gnu/libc.so.6'), mode: 0o644 },
      {
        path: rel('lib/x86_64-linux-gnu/ld-linux-x86-64.so.2'),
        source: at('usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2'),
        mode: 0o755,
      },
      // Without the setuid bit: a copy for root in a container.
      { path: rel('usr/bin/ip'), source: at('usr/bin/ip'), mode: 0o755 },
    ]);
  });

  it('recreates symlinks and follows them, relative and absolute, each path once', () => {
    expect(symlinks).toEqual([
      { path: rel('lib/x86_64-linux-gnu/libnftables.so.1'), target: 'libnftables.so.1.1.0' },
      { path: rel('lib64/ld-linux-x86-64.so.2'), target: at('lib/x86_64-linux-gnu/ld-linux-x86-64.so.2') },
      { path: rel('usr/sbin/ip'), target: at('usr/bin/ip') },
    ]);
  });

  it('refuses what is not a file', () => {
    expect(() => hostBinaryFiles([at('usr/bin')], () => [])).toThrow(/not a file/);
    expect(() => hostBinaryFiles(['usr/bin/ip'], () => [])).toThrow(/not an absolute path/);
  });
});
