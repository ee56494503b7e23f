/**
 * Container images without a registry: an image's files as one layer of an OCI image archive, for
 * `ctr images import`, and the archive's contents extracted beside it (content-store.ts). Which images there are is
 * images.ts's and pod-image.ts's.
 *
 * The archives are content-addressed: same binaries, same bytes, same file name in the cache folder, so they are
 * built once per cache and shared by every machine. They are written as a stream, file by file: the machine pods'
 * image is a few hundred megabytes.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  createReadStream,
  createWriteStream,
  existsSync,
  lstatSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  statSync,
} from 'node:fs';
import { mkdir, readdir, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileEntry, tarSize, tarStream, type TarStreamEntry } from '../../../system/tar.js';
import { contentDirOf, ensureArchiveContent, type ArchiveContent } from './content-store.js';

export interface ImageFile {
  /** Path inside the image, without a leading slash. */
  path: string;
  /** Host file to copy (binaries). */
  source: string;
  /** @default 0o755 */
  mode?: number;
}

export interface ImageSymlink {
  /** Path inside the image, without a leading slash. */
  path: string;
  target: string;
}

export interface ImageSpec {
  /** Full reference, e.g. `registry.k8s.io/pause:3.10`. */
  name: string;
  files: ImageFile[];
  symlinks?: ImageSymlink[];
  dirs?: string[];
  /** Modes of directories other than 0o755 (path → mode), such as /tmp's 0o1777. */
  dirModes?: Record<string, number>;
  /** Entries at or below these paths (no leading slash) belong to `uid` (uid and gid) rather than root. */
  owned?: { readonly uid: number; readonly paths: readonly string[] };
  /** The config's environment, `NAME=value`. @default [DEFAULT_IMAGE_PATH] */
  env?: string[];
  entrypoint?: string[];
  cmd?: string[];
}

export interface BuiltImage {
  name: string;
  /** The OCI archive, for `ctr images import`. */
  archive: string;
  /** Digest of the image manifest. */
  manifestDigest: string;
  /**
   * The archive's blobs and layers, extracted beside it: host machines link them into their containerd's content
   * store (content-store.ts). Absent for archives read elsewhere (a machine pod's).
   */
  content?: ArchiveContent;
}

/** The PATH of images that set no environment of their own. */
export const DEFAULT_IMAGE_PATH = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

const MEDIA = {
  index: 'application/vnd.oci.image.index.v1+json',
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  layer: 'application/vnd.oci.image.layer.v1.tar',
} as const;

/** Go's GOARCH for Node's `process.arch`. */
export function goArch(arch: string = process.arch): string {
  const map: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x' };
  return map[arch] ?? arch;
}

const sha256 = (data: Buffer | string) => `sha256:${createHash('sha256').update(data).digest('hex')}`;

/** The single layer: directories first, then files and links, sorted, so the bytes are stable. */
export function layerEntries(spec: ImageSpec): TarStreamEntry[] {
  const dirs = new Set<string>(spec.dirs ?? []);
  const parentsOf = (path: string) => {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  };
  for (const f of spec.files) parentsOf(f.path);
  for (const l of spec.symlinks ?? []) parentsOf(l.path);
  const entries: TarStreamEntry[] = [...dirs].sort().map((path) => ({
    type: 'dir',
    path,
    ...(spec.dirModes?.[path] !== undefined ? { mode: spec.dirModes[path] } : {}),
  }));
  for (const f of [...spec.files].sort((a, b) => a.path.localeCompare(b.path))) {
    entries.push(fileEntry(f.path, f.source, f.mode ?? 0o755));
  }
  for (const l of [...(spec.symlinks ?? [])].sort((a, b) => a.path.localeCompare(b.path))) {
    entries.push({ type: 'symlink', path: l.path, target: l.target });
  }
  const owned = spec.owned;
  if (owned === undefined) return entries;
  const isOwned = (path: string) => owned.paths.some((p) => path === p || path.startsWith(`${p}/`));
  return entries.map((e) => (isOwned(e.path) ? { ...e, owner: owned.uid } : e));
}

/** The layer's blob: the digest and size of its tar. */
export interface LayerBlob {
  digest: string;
  size: number;
}

export interface OCILayout {
  /** The layout's files but the layer (path → bytes): oci-layout, index.json, the config and manifest blobs. */
  files: Map<string, Buffer>;
  /** Where the layer's blob goes in the layout: `blobs/sha256/<hex>`. */
  layerPath: string;
  manifestDigest: string;
}

const blobPath = (digest: string) => `blobs/sha256/${digest.slice('sha256:'.length)}`;

/** The OCI image layout of a one-layer image: blobs, index.json naming it for containerd, oci-layout. */
export function ociLayout(spec: ImageSpec, layer: LayerBlob, arch = goArch()): OCILayout {
  const layerDigest = layer.digest;
  const config = Buffer.from(
    JSON.stringify({
      architecture: arch,
      os: 'linux',
      config: {
        Env: spec.env ?? [DEFAULT_IMAGE_PATH],
        ...(spec.entrypoint ? { Entrypoint: spec.entrypoint } : {}),
        ...(spec.cmd ? { Cmd: spec.cmd } : {}),
        WorkingDir: '/',
      },
      rootfs: { type: 'layers', diff_ids: [layerDigest] },
    }),
  );
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MEDIA.manifest,
      config: { mediaType: MEDIA.config, digest: sha256(config), size: config.length },
      layers: [{ mediaType: MEDIA.layer, digest: layerDigest, size: layer.size }],
    }),
  );
  const manifestDigest = sha256(manifest);
  const tag = spec.name.slice(spec.name.lastIndexOf(':') + 1);
  const index = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MEDIA.index,
      manifests: [
        {
          mediaType: MEDIA.manifest,
          digest: manifestDigest,
          size: manifest.length,
          platform: { architecture: arch, os: 'linux' },
          // containerd names the image after io.containerd.image.name; ref.name is the OCI tag.
          annotations: { 'io.containerd.image.name': spec.name, 'org.opencontainers.image.ref.name': tag },
        },
      ],
    }),
  );
  const files = new Map<string, Buffer>([
    ['oci-layout', Buffer.from(JSON.stringify({ imageLayoutVersion: '1.0.0' }))],
    ['index.json', index],
    [blobPath(sha256(config)), config],
    [blobPath(manifestDigest), manifest],
  ]);
  return { files, layerPath: blobPath(layerDigest), manifestDigest };
}

/** The entries of a layout's archive, the layer's blob read from `readLayer` (its tar, streamed). */
export function ociArchiveEntries(
  layout: OCILayout,
  layer: LayerBlob,
  readLayer: () => AsyncIterable<Uint8Array>,
): TarStreamEntry[] {
  const files: TarStreamEntry[] = [...layout.files].map(([path, data]) => ({ type: 'file', path, data, mode: 0o644 }));
  files.push({ type: 'file', path: layout.layerPath, size: layer.size, read: readLayer, mode: 0o644 });
  return [
    { type: 'dir', path: 'blobs' },
    { type: 'dir', path: 'blobs/sha256' },
    ...files.sort((a, b) => a.path.localeCompare(b.path)),
  ];
}

/** The layer's blob: its tar streamed through sha256 (nothing is written). */
export async function layerBlob(entries: readonly TarStreamEntry[]): Promise<LayerBlob> {
  const hash = createHash('sha256');
  for await (const chunk of tarStream(entries)) hash.update(chunk);
  return { digest: `sha256:${hash.digest('hex')}`, size: tarSize(entries) };
}

/** Digests of files already hashed in this process, by path and what stat says of them. */
const fileDigests = new Map<string, { stamp: string; digest: string }>();

/** The sha256 of a file, read as a stream; remembered while the file's size, inode and times stay. */
async function fileDigest(path: string): Promise<string> {
  const stat = statSync(path);
  const stamp = `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`;
  const known = fileDigests.get(path);
  if (known?.stamp === stamp) return known.digest;
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  const digest = `sha256:${hash.digest('hex')}`;
  fileDigests.set(path, { stamp, digest });
  return digest;
}

/**
 * Builds the image's archive into `cacheDir` unless an archive of the same content is there already. The file
 * name is derived from the spec and the binaries' digests, so a changed binary gives a new archive. The sources are
 * read as streams (three times: their digests, the layer's digest, the archive), never held in memory whole.
 */
export async function buildImage(spec: ImageSpec, cacheDir: string): Promise<BuiltImage> {
  const sources = [...new Set(spec.files.map((f) => f.source))];
  for (const source of sources) {
    if (!existsSync(source)) throw new Error(`image ${spec.name}: ${source} does not exist`);
  }
  const digests: [string, string][] = [];
  for (const source of sources) digests.push([source, await fileDigest(source)]);
  const key = createHash('sha256')
    .update(JSON.stringify({ spec, arch: goArch(), v: 1 }))
    .update(JSON.stringify(digests))
    .digest('hex')
    .slice(0, 32);
  const safeName = spec.name.replace(/[^A-Za-z0-9.-]+/g, '_');
  const archive = join(cacheDir, `${safeName}-${key}.tar`);
  const digestFile = `${archive}.digest`;
  if (existsSync(archive) && existsSync(digestFile)) {
    // Marked as used: pruning keeps what was used lately.
    const now = new Date();
    await utimes(archive, now, now).catch(() => {});
    return {
      name: spec.name,
      archive,
      manifestDigest: readFileSync(digestFile, 'utf8').trim(),
      content: await ensureArchiveContent(archive),
    };
  }
  const entries = layerEntries(spec);
  const layer = await layerBlob(entries);
  const layout = ociLayout(spec, layer);
  await mkdir(cacheDir, { recursive: true });
  // Write then rename: parallel builders (two machines, two test files, two builds in one process) never see half
  // an archive, nor each other's temporary files.
  const suffix = `${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await pipeline(
      tarStream(ociArchiveEntries(layout, layer, () => tarStream(entries))),
      createWriteStream(`${archive}.${suffix}`),
    );
    await writeFile(`${digestFile}.${suffix}`, layout.manifestDigest + '\n');
    await rename(`${archive}.${suffix}`, archive);
    await rename(`${digestFile}.${suffix}`, digestFile);
  } catch (e) {
    await rm(`${archive}.${suffix}`, { force: true });
    await rm(`${digestFile}.${suffix}`, { force: true });
    throw e;
  }
  await pruneArchives(cacheDir, safeName, archive);
  return {
    name: spec.name,
    archive,
    manifestDigest: layout.manifestDigest,
    content: await ensureArchiveContent(archive),
  };
}

/** Archives of an image unused this long are removed when a new one of it is built (each changed agent makes one). */
export const STALE_ARCHIVE_MS = 3600_000;

/**
 * Removes the archives of the image `safeName` but `keep` that were neither built nor used for STALE_ARCHIVE_MS. A
 * process that still imports one keeps reading it; one that needs it again builds it again.
 */
async function pruneArchives(cacheDir: string, safeName: string, keep: string, now = Date.now()): Promise<void> {
  const pattern = new RegExp(`^${safeName.replace(/[.]/g, '\\.')}-[0-9a-f]{32}\\.tar$`);
  for (const file of await readdir(cacheDir).catch(() => [] as string[])) {
    const path = join(cacheDir, file);
    if (!pattern.test(file) || path === keep) continue;
    const used = await stat(path).then(
      (st) => st.mtimeMs,
      () => now,
    );
    if (now - used > STALE_ARCHIVE_MS) {
      await rm(path, { force: true });
      await rm(`${path}.digest`, { force: true });
      await rm(contentDirOf(path), { recursive: true, force: true });
    }
  }
}

/** A folder's tree as an image's files, links and directories (with their modes); other file types are left out. */
export function treeSpec(root: string): Pick<ImageSpec, 'files' | 'symlinks' | 'dirs' | 'dirModes'> {
  const files: ImageFile[] = [];
  const symlinks: ImageSymlink[] = [];
  const dirs: string[] = [];
  const dirModes: Record<string, number> = {};
  const walk = (rel: string) => {
    for (const name of readdirSync(join(root, rel)).sort()) {
      const path = rel ? `${rel}/${name}` : name;
      const st = lstatSync(join(root, path));
      const mode = st.mode & 0o7777;
      if (st.isSymbolicLink()) symlinks.push({ path, target: readlinkSync(join(root, path)) });
      else if (st.isFile()) files.push({ path, source: join(root, path), mode });
      else if (st.isDirectory()) {
        dirs.push(path);
        if (mode !== 0o755) dirModes[path] = mode;
        walk(path);
      }
    }
  };
  walk('');
  return { files, symlinks, dirs, dirModes };
}
