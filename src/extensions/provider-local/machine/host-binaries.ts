/**
 * Binaries of this host, copied into an image with the shared libraries they load: the machine image carries the
 * host's util-linux, iproute2, nftables and node, which are linked dynamically.
 *
 * The closure comes from `ldd`, which asks the dynamic loader itself (RUNPATH, ld.so.cache, the multiarch folders):
 * an ELF parser (the npm packages elfy, elf-tools) reads DT_NEEDED but leaves the loader's search to us. Libraries
 * a binary opens with dlopen() at run time are not listed; none of the tools the image carries needs one for what
 * the machines do (glibc has had nss_files and nss_dns built in since 2.34).
 */
import { execFileSync } from 'node:child_process';
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { posix } from 'node:path';
import type { ImageFile, ImageSymlink } from './image-archive.js';

/**
 * The libraries in `ldd`'s output, in its order: `name => /path (0x...)` and the dynamic loader's `/path (0x...)`.
 * The vDSO (no file) is left out; a static binary ("not a dynamic executable", "statically linked") has none. Fails
 * on libraries the loader does not find, naming them.
 */
export function parseLddOutput(output: string): string[] {
  const libraries: string[] = [];
  const notFound: string[] = [];
  for (const raw of output.split('\n')) {
    const line = raw.trim();
    const arrow = /^(\S+)\s+=>\s+(.*)$/.exec(line);
    if (arrow) {
      const target = arrow[2]!.trim();
      if (target === 'not found') notFound.push(arrow[1]!);
      else {
        const path = /^(\/\S+)/.exec(target)?.[1];
        if (path !== undefined) libraries.push(path);
      }
      continue;
    }
    const loader = /^(\/\S+)\s+\(0x[0-9a-f]+\)$/i.exec(line);
    if (loader) libraries.push(loader[1]!);
  }
  if (notFound.length > 0) throw new Error(`ldd: libraries not found: ${notFound.join(', ')}`);
  return [...new Set(libraries)];
}

/** The shared libraries `binary` loads (the dynamic loader included), from `ldd`; none for a static binary. */
export function lddLibraries(binary: string): string[] {
  let output: string;
  try {
    output = execFileSync('ldd', [binary], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    const error = e as Error & { stdout?: string; stderr?: string; code?: string };
    // ldd exits 1 for static binaries, saying so.
    if (/not a dynamic executable/.test(`${error.stdout ?? ''}${error.stderr ?? ''}`)) return [];
    if (error.code === 'ENOENT') throw new Error(`ldd is not installed (Debian package libc-bin)`);
    throw new Error(`ldd ${binary}: ${error.stderr?.trim() || error.message}`);
  }
  try {
    return parseLddOutput(output);
  } catch (e) {
    throw new Error(`${binary}: ${(e as Error).message}`);
  }
}

export interface HostBinaryFiles {
  files: ImageFile[];
  symlinks: ImageSymlink[];
}

/**
 * The image files of host binaries and their libraries, each at its host path (without the leading slash): the
 * paths the binaries and the dynamic loader look for. A path whose last component is a symlink becomes the same
 * symlink, and its target is followed (`/lib64/ld-linux-x86-64.so.2 -> /lib/x86_64-linux-gnu/...`); what is not a
 * symlink is copied from its real path (folders that are symlinks on the host, `/lib -> usr/lib`, are real folders
 * in the image). Every path once, in the order first met.
 */
export function hostBinaryFiles(
  binaries: readonly string[],
  libraries: (binary: string) => string[] = lddLibraries,
): HostBinaryFiles {
  const files: ImageFile[] = [];
  const symlinks: ImageSymlink[] = [];
  const seen = new Set<string>();
  const add = (hostPath: string) => {
    const path = posix.normalize(hostPath);
    if (!posix.isAbsolute(path)) throw new Error(`host binary ${hostPath}: not an absolute path`);
    if (seen.has(path)) return;
    seen.add(path);
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) {
      const target = readlinkSync(path);
      symlinks.push({ path: path.slice(1), target });
      add(posix.resolve(posix.dirname(path), target));
    } else if (stat.isFile()) {
      files.push({ path: path.slice(1), source: realpathSync(path), mode: stat.mode & 0o777 });
    } else {
      throw new Error(`host binary ${path}: not a file`);
    }
  };
  for (const binary of binaries) {
    add(binary);
    for (const library of libraries(binary)) add(library);
  }
  return { files, symlinks };
}
