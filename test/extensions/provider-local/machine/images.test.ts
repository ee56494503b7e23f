import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  PAUSE_IMAGE,
  TEST_IMAGE,
  buildImage,
  layerEntries,
  ociLayout,
  pauseImageSpec,
  testImageSpec,
} from '../../../../src/extensions/provider-local/machine/images.js';
import { tar } from '../../../../src/system/tar.js';

const dir = mkdtempSync(join(tmpdir(), 'images-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const fakeBinary = join(dir, 'pause-bin');
writeFileSync(fakeBinary, 'not really a binary');

const sha = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

describe('OCI images without a registry', () => {
  it('names the image for containerd and links manifest, config and layer by digest', () => {
    const spec = pauseImageSpec(fakeBinary);
    const layer = tar(layerEntries(spec, (p) => readFileSync(p)));
    const layout = ociLayout(spec, layer, 'amd64');
    const index = JSON.parse(layout.files.get('index.json')!.toString());
    expect(index.manifests[0].annotations).toEqual({
      'io.containerd.image.name': PAUSE_IMAGE,
      'org.opencontainers.image.ref.name': '3.10',
    });
    expect(index.manifests[0].platform).toEqual({ architecture: 'amd64', os: 'linux' });
    const manifest = JSON.parse(layout.files.get(`blobs/sha256/${layout.manifestDigest.slice(7)}`)!.toString());
    expect(manifest.layers[0].digest).toBe(sha(layer));
    const config = JSON.parse(layout.files.get(`blobs/sha256/${manifest.config.digest.slice(7)}`)!.toString());
    expect(config.rootfs.diff_ids).toEqual([sha(layer)]);
    expect(config.config.Entrypoint).toEqual(['/pause']);
    // Every blob is stored under its own digest.
    for (const [path, data] of layout.files)
      if (path.startsWith('blobs/')) expect(sha(data).slice(7)).toBe(path.slice(13));
  });

  it('the test image links the busybox applets the tests use', () => {
    const spec = testImageSpec(fakeBinary);
    expect(spec.name).toBe(TEST_IMAGE);
    const links = (spec.symlinks ?? []).map((l) => l.path);
    for (const applet of ['sh', 'httpd', 'nc', 'wget', 'nslookup']) expect(links).toContain(`bin/${applet}`);
  });

  it('builds an archive once per content: same input, same file and digest; changed binary, new archive', async () => {
    const cache = join(dir, 'cache');
    const a = await buildImage(pauseImageSpec(fakeBinary), cache);
    const b = await buildImage(pauseImageSpec(fakeBinary), cache);
    expect(b).toEqual(a);
    writeFileSync(fakeBinary, 'another binary');
    const c = await buildImage(pauseImageSpec(fakeBinary), cache);
    expect(c.archive).not.toBe(a.archive);
    expect(c.manifestDigest).not.toBe(a.manifestDigest);
    // A tar: ustar magic in the first header.
    expect(readFileSync(c.archive).subarray(257, 262).toString()).toBe('ustar');
  });
});
