/**
 * Images into a host machine's containerd without copying their layers: the archives' blobs hard-linked into the
 * content store, the layers registered by digest, the image records imported from the archive without its layers.
 *
 * `ctr images import` sends every byte of an archive to containerd, which hashes and writes it again: 2 GB for a seed
 * Node (the machine pods' image, the control plane's, the machines'), on every Node of every `up` and test. But
 * containerd shares content between namespaces: a writer opened with a digest that its backing store already holds
 * (`<root>/io.containerd.content.v1.content/blobs/sha256/<hex>`, the local store's layout) is committed for the
 * namespace without a byte written (`ctr content ingest --expected-digest`). So a host machine links the blobs of
 * .cache/images into that folder, registers each layer by digest, and imports the archive's index, manifest and
 * config (kilobytes). containerd unpacks a layer when a container first needs it, as with `--no-unpack`.
 * A machine pod's image carries these folders rather than the archives; its machine, whose containerd root is an
 * emptyDir, links their blobs symbolically. Where links can't be made (.cache/images on another filesystem), the
 * machine imports the whole archive.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { link, mkdir, readFile, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { createHash, randomBytes } from 'node:crypto';
import { basename, join } from 'node:path';
import { which } from '../../../system/process.js';
import { tar, type TarEntry } from '../../../system/tar.js';

/** The local content store's blob folder under containerd's root. */
export const CONTENT_BLOBS_DIR = join('io.containerd.content.v1.content', 'blobs', 'sha256');

/** What a host machine needs to take an image without copying its layers. */
export interface ArchiveContent {
  /** The folder of the archive's blobs, each file named by the hex of its sha256. */
  blobs: string;
  /** The archive without its layers: oci-layout, index.json, the manifests and configs. */
  metadataArchive: string;
  /** The layers, registered in the namespace by digest once the metadata is imported. */
  layers: { digest: string; size: number }[];
  /**
   * The blobs never change where they are (the files of a machine pod's image): a machine on another filesystem
   * links them symbolically. Blobs of .cache/images may be pruned while a machine runs, so they are hard-linked or
   * imported.
   */
  immutable?: boolean;
}

interface Descriptor {
  digest: string;
  size: number;
}

/** The file that describes a content folder, written last: its presence says the folder is complete. */
const CONTENT_FILE = 'content.json';

/** Where an archive's content is kept: beside it, removed with it. */
export function contentDirOf(archive: string): string {
  return `${archive}.content`;
}

/**
 * The archive's blobs, metadata archive and layers, extracted beside it unless done before. Extracts into a temporary
 * folder renamed at the end: concurrent callers never see half of one.
 */
export async function ensureArchiveContent(archive: string): Promise<ArchiveContent> {
  const dir = contentDirOf(archive);
  if (existsSync(join(dir, CONTENT_FILE))) return readContent(dir);
  const tmp = `${dir}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await mkdir(tmp, { recursive: true });
    await untar(archive, tmp);
    const blobFile = (digest: string) => join(tmp, 'blobs', 'sha256', digest.replace(/^sha256:/, ''));
    const index = JSON.parse(await readFile(join(tmp, 'index.json'), 'utf8')) as { manifests?: Descriptor[] };
    const layers: Descriptor[] = [];
    const metadata: TarEntry[] = [
      { type: 'file', path: 'oci-layout', data: await readFile(join(tmp, 'oci-layout')) },
      { type: 'file', path: 'index.json', data: await readFile(join(tmp, 'index.json')) },
      { type: 'dir', path: 'blobs' },
      { type: 'dir', path: 'blobs/sha256' },
    ];
    for (const m of index.manifests ?? []) {
      const manifestData = await readFile(blobFile(m.digest));
      const manifest = JSON.parse(manifestData.toString()) as { config: Descriptor; layers?: Descriptor[] };
      metadata.push(
        { type: 'file', path: `blobs/sha256/${m.digest.slice(7)}`, data: manifestData },
        {
          type: 'file',
          path: `blobs/sha256/${manifest.config.digest.slice(7)}`,
          data: await readFile(blobFile(manifest.config.digest)),
        },
      );
      layers.push(...(manifest.layers ?? []));
    }
    await writeFile(join(tmp, 'metadata.tar'), tar(metadata));
    await writeFile(
      join(tmp, CONTENT_FILE),
      JSON.stringify({ layers: layers.map(({ digest, size }) => ({ digest, size })) }) + '\n',
    );
    await rm(join(tmp, 'index.json'));
    await rm(join(tmp, 'oci-layout'));
    await rename(tmp, dir).catch((e: NodeJS.ErrnoException) => {
      // Another process renamed its copy first: the same content.
      if (!existsSync(join(dir, CONTENT_FILE))) throw e;
    });
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  return readContent(dir);
}

function readContent(dir: string): ArchiveContent {
  const { layers } = JSON.parse(readFileSync(join(dir, CONTENT_FILE), 'utf8')) as Pick<ArchiveContent, 'layers'>;
  return { blobs: join(dir, 'blobs', 'sha256'), metadataArchive: join(dir, 'metadata.tar'), layers };
}

function untar(archive: string, into: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(which('tar') ?? 'tar', ['-xf', archive, '-C', into], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`tar -xf ${archive}: exit ${code}: ${stderr.trim()}`)),
    );
  });
}

/**
 * Links the content's blobs into the content store under `containerdRoot` (the store looks at its files when a
 * writer opens, so before or while containerd runs): hard links, or symbolic ones to immutable content on another
 * filesystem. False when links can't be made here: the caller imports the archive.
 */
export async function linkBlobs(content: ArchiveContent, containerdRoot: string): Promise<boolean> {
  const target = join(containerdRoot, CONTENT_BLOBS_DIR);
  await mkdir(target, { recursive: true });
  for (const blob of await readdir(content.blobs)) {
    if (!/^[0-9a-f]{64}$/.test(blob)) continue;
    const source = join(content.blobs, blob);
    try {
      await link(source, join(target, blob));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') continue;
      if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'EMLINK') throw e;
      if (!content.immutable) return false;
      await symlink(source, join(target, blob)).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err;
      });
    }
  }
  return true;
}

/** The files of a content folder, for an image that carries it at `dir` (the machine pods' image). */
export function contentFiles(content: ArchiveContent, dir: string): { path: string; source: string }[] {
  const contentDir = join(content.blobs, '..', '..');
  return [
    ...readdirSync(content.blobs).map((blob) => ({
      path: join(dir, 'blobs', 'sha256', blob),
      source: join(content.blobs, blob),
    })),
    { path: join(dir, 'metadata.tar'), source: join(contentDir, 'metadata.tar') },
    { path: join(dir, CONTENT_FILE), source: join(contentDir, CONTENT_FILE) },
  ];
}

/** The content folders under `dir` (a machine pod's image), by folder name. */
export function readContentDirs(dir: string): { name: string; content: ArchiveContent }[] {
  return readdirSync(dir)
    .filter((f) => existsSync(join(dir, f, CONTENT_FILE)))
    .sort()
    .map((f) => ({ name: f, content: { ...readContent(join(dir, f)), immutable: true } }));
}

/**
 * A short folder name for an archive's content in an image (tar's ustar names stop at 100 characters): the hash
 * in the archive's name, else the sha256 of that name.
 */
export function contentFolderName(archive: string): string {
  const name = basename(archive);
  return /-([0-9a-f]{32})\.tar$/.exec(name)?.[1] ?? createHash('sha256').update(name).digest('hex').slice(0, 32);
}

/** A `ctr` invocation: its arguments after the global ones, and the file its stdin reads (seekable). */
export interface CtrCall {
  args: string[];
  stdin: string;
}

/**
 * The ctr calls that take an image whose blobs are linked: the metadata archive imported first, so that its manifest
 * references the layers before they exist in the namespace (containerd's garbage collector removes content nothing
 * references), then each layer registered by digest, stdin the blob itself, which ctr seeks past rather than reads.
 */
export function linkedImportCalls(content: ArchiveContent, snapshotter: string): CtrCall[] {
  return [
    { args: importArgs(snapshotter), stdin: content.metadataArchive },
    ...content.layers.map(({ digest, size }) => ({
      args: [
        'content',
        'ingest',
        '--expected-size',
        String(size),
        '--expected-digest',
        digest,
        `gardener-ipv6-${digest.slice(7, 19)}`,
      ],
      stdin: join(content.blobs, digest.slice(7)),
    })),
  ];
}

/** `ctr images import` of an archive on stdin, named by its index, unpacked when a container needs it. */
export function importArgs(snapshotter: string): string[] {
  return ['images', 'import', '--snapshotter', snapshotter, '--digests', '--no-unpack', '-'];
}
