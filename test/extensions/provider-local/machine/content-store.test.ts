import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CONTENT_BLOBS_DIR,
  contentDirOf,
  ensureArchiveContent,
  contentFiles,
  contentFolderName,
  linkBlobs,
  linkedImportCalls,
  readContentDirs,
} from '../../../../src/extensions/provider-local/machine/content-store.js';
import { pauseImageSpec } from '../../../../src/extensions/provider-local/machine/images.js';
import { STALE_ARCHIVE_MS, buildImage } from '../../../../src/extensions/provider-local/machine/image-archive.js';

const dir = mkdtempSync(join(tmpdir(), 'gardener-ipv6-content-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describe("a machine's content store seeded from the archives' blobs", () => {
  it('gives every built image its blobs, layers and metadata archive beside the archive', async () => {
    const binary = join(dir, 'pause-a');
    writeFileSync(binary, 'a pause binary');
    const image = await buildImage(pauseImageSpec(binary), join(dir, 'cache-a'));
    const content = image.content!;
    expect(content.blobs).toBe(join(contentDirOf(image.archive), 'blobs', 'sha256'));
    const blobs = readdirSync(content.blobs);
    // index → manifest → config and layer: the manifest, the config and the layer are blobs, named by their sha256.
    expect(blobs).toHaveLength(3);
    for (const blob of blobs) expect(sha256(readFileSync(join(content.blobs, blob)))).toBe(blob);
    expect(blobs).toContain(image.manifestDigest.replace('sha256:', ''));
    const manifest = JSON.parse(readFileSync(join(content.blobs, image.manifestDigest.slice(7)), 'utf8')) as {
      config: { digest: string };
      layers: { digest: string; size: number }[];
    };
    expect(content.layers).toEqual(manifest.layers.map(({ digest, size }) => ({ digest, size })));
    // The metadata archive: everything of the archive but the layer, which tar(1) reads.
    const listing = execFileSync('tar', ['-tf', content.metadataArchive], { encoding: 'utf8' }).trim().split('\n');
    expect(listing.sort()).toEqual(
      [
        'blobs/',
        'blobs/sha256/',
        `blobs/sha256/${image.manifestDigest.slice(7)}`,
        `blobs/sha256/${manifest.config.digest.slice(7)}`,
        'index.json',
        'oci-layout',
      ].sort(),
    );
    const full = execFileSync('tar', ['-xOf', image.archive, 'index.json'], { encoding: 'utf8' });
    expect(execFileSync('tar', ['-xOf', content.metadataArchive, 'index.json'], { encoding: 'utf8' })).toBe(full);
    // A second build of the same content reuses the archive and its blobs.
    const again = await buildImage(pauseImageSpec(binary), join(dir, 'cache-a'));
    expect(again).toEqual(image);
  });

  it('extracts the content of an archive built before it was kept, once, however many ask at once', async () => {
    const binary = join(dir, 'pause-b');
    writeFileSync(binary, 'another pause binary');
    const image = await buildImage(pauseImageSpec(binary), join(dir, 'cache-b'));
    rmSync(contentDirOf(image.archive), { recursive: true });
    const [first, second] = await Promise.all([
      ensureArchiveContent(image.archive),
      ensureArchiveContent(image.archive),
    ]);
    expect(first).toEqual(image.content);
    expect(second).toEqual(image.content);
    expect(readdirSync(first.blobs)).toHaveLength(3);
    // No temporary folder is left beside the archive.
    expect(readdirSync(join(dir, 'cache-b')).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('links the blobs into containerd’s local store: same inode, no copy, idempotent', async () => {
    const binary = join(dir, 'pause-c');
    writeFileSync(binary, 'a third pause binary');
    const image = await buildImage(pauseImageSpec(binary), join(dir, 'cache-c'));
    const { blobs } = image.content!;
    const root = join(dir, 'machine', 'var', 'lib', 'containerd');
    expect(await linkBlobs(image.content!, root)).toBe(true);
    for (const blob of readdirSync(blobs)) {
      expect(statSync(join(root, CONTENT_BLOBS_DIR, blob)).ino).toBe(statSync(join(blobs, blob)).ino);
    }
    // A second machine start finds them there.
    expect(await linkBlobs(image.content!, root)).toBe(true);
  });

  it('imports the metadata, then registers each layer by digest with its own blob as stdin', async () => {
    const binary = join(dir, 'pause-f');
    writeFileSync(binary, 'a sixth pause binary');
    const { content } = await buildImage(pauseImageSpec(binary), join(dir, 'cache-f'));
    const [layer] = content!.layers;
    const calls = linkedImportCalls(content!, 'overlayfs');
    expect(calls).toEqual([
      {
        args: ['images', 'import', '--snapshotter', 'overlayfs', '--digests', '--no-unpack', '-'],
        stdin: content!.metadataArchive,
      },
      {
        args: [
          'content',
          'ingest',
          '--expected-size',
          String(layer!.size),
          '--expected-digest',
          layer!.digest,
          `gardener-ipv6-${layer!.digest.slice(7, 19)}`,
        ],
        stdin: join(content!.blobs, layer!.digest.slice(7)),
      },
    ]);
    expect(statSync(calls[1]!.stdin).size).toBe(layer!.size);
  });

  it('links nothing, and fails not, where links cross filesystems', async () => {
    const shm = '/dev/shm';
    if (!existsSync(shm) || statSync(shm).dev === statSync(dir).dev) return;
    const binary = join(dir, 'pause-d');
    writeFileSync(binary, 'a fourth pause binary');
    const image = await buildImage(pauseImageSpec(binary), join(dir, 'cache-d'));
    const root = mkdtempSync(join(shm, 'gardener-ipv6-content-store-'));
    try {
      expect(await linkBlobs(image.content!, root)).toBe(false);
      expect(readdirSync(join(root, CONTENT_BLOBS_DIR))).toEqual([]);
      // The blobs of an image's own files never change: linked symbolically instead.
      expect(await linkBlobs({ ...image.content!, immutable: true }, root)).toBe(true);
      for (const blob of readdirSync(image.content!.blobs)) {
        expect(readlinkSync(join(root, CONTENT_BLOBS_DIR, blob))).toBe(join(image.content!.blobs, blob));
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("removes a stale archive's blobs with it", async () => {
    const cache = join(dir, 'cache-e');
    const binary = join(dir, 'pause-e');
    writeFileSync(binary, 'one');
    const old = await buildImage(pauseImageSpec(binary), cache);
    const hoursAgo = new Date(Date.now() - 2 * STALE_ARCHIVE_MS);
    utimesSync(old.archive, hoursAgo, hoursAgo);
    writeFileSync(binary, 'two');
    const latest = await buildImage(pauseImageSpec(binary), cache);
    expect(existsSync(contentDirOf(old.archive))).toBe(false);
    expect(existsSync(latest.content!.blobs)).toBe(true);
  });

  it("is carried by the machine pods' image as a folder that the machine reads back", async () => {
    const binary = join(dir, 'pause-g');
    writeFileSync(binary, 'a seventh pause binary');
    const image = await buildImage(pauseImageSpec(binary), join(dir, 'cache-g'));
    const inImage = join(dir, 'image-root', 'images');
    const folder = contentFolderName(image.archive);
    expect(folder).toMatch(/^[0-9a-f]{32}$/);
    expect(image.archive.endsWith(`-${folder}.tar`)).toBe(true);
    for (const f of contentFiles(image.content!, join(inImage, folder))) {
      mkdirSync(dirname(f.path), { recursive: true });
      writeFileSync(f.path, readFileSync(f.source));
    }
    const [read] = readContentDirs(inImage);
    expect(read!.name).toBe(folder);
    expect(read!.content.layers).toEqual(image.content!.layers);
    expect(read!.content.immutable).toBe(true);
    expect(readdirSync(read!.content.blobs).sort()).toEqual(readdirSync(image.content!.blobs).sort());
    expect(readFileSync(read!.content.metadataArchive)).toEqual(readFileSync(image.content!.metadataArchive));
  });
});
