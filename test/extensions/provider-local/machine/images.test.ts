import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, posix } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DEBIAN_STATIC_BUSYBOX,
  E2E_BUSYBOX_IMAGE,
  PAUSE_IMAGE,
  busyboxApplets,
  e2eBusyboxImageSpec,
  TEST_IMAGE,
  pauseImageSpec,
  agnhostImageSpec,
  distrolessIptablesImageSpec,
  glibcDNSTestingImageSpec,
  testImageSpec,
} from '../../../../src/extensions/provider-local/machine/images.js';
import {
  buildImage,
  STALE_ARCHIVE_MS,
  layerBlob,
  layerEntries,
  ociLayout,
  type ImageFile,
  type ImageSpec,
} from '../../../../src/extensions/provider-local/machine/image-archive.js';
import {
  HOST_TOOLS_PATH,
  MACHINE_BUSYBOX_APPLETS,
  MACHINE_HOST_TOOLS,
  MACHINE_IMAGE_FILES_OWNER,
  MACHINE_POD_CNI_DIR,
  machinePodImageSpec,
} from '../../../../src/extensions/provider-local/machine/pod-image.js';
import { lddLibraries } from '../../../../src/extensions/provider-local/machine/host-binaries.js';
import { MACHINE_BINARIES } from '../../../../src/extensions/provider-local/machine/machine-options.js';
import { CNI_PLUGINS } from '../../../../src/extensions/provider-local/machine/config.js';
import { IMAGES, KUBERNETES_VERSION } from '../../../../src/imagevector/images.js';
import { which } from '../../../../src/system/process.js';
import { tar, tarStream } from '../../../../src/system/tar.js';

const dir = mkdtempSync(join(tmpdir(), 'images-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const fakeBinary = join(dir, 'pause-bin');
writeFileSync(fakeBinary, 'not really a binary');

/** A named pipe, which an image leaves out (mkfifo is coreutils'). */
const mkfifoOrSkip = (path: string) => execFileSync('mkfifo', [path]);

const sha = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

describe('OCI images without a registry', () => {
  it('names the image for containerd and links manifest, config and layer by digest', async () => {
    const spec = pauseImageSpec(fakeBinary);
    const chunks: Buffer[] = [];
    for await (const chunk of tarStream(layerEntries(spec))) chunks.push(chunk);
    const layer = Buffer.concat(chunks);
    // The streamed layer is what the in-memory writer gives for the same files.
    expect(layer).toEqual(tar([{ type: 'file', path: 'pause', data: readFileSync(fakeBinary), mode: 0o755 }]));
    const blob = await layerBlob(layerEntries(spec));
    expect(blob).toEqual({ digest: sha(layer), size: layer.length });
    const layout = ociLayout(spec, blob, 'amd64');
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
    expect(config.config.Env).toEqual(['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin']);
    expect(layout.layerPath).toBe(`blobs/sha256/${sha(layer).slice(7)}`);
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

  it("the e2e tests' busybox carries their name and links every applet of Debian's static busybox", () => {
    expect(E2E_BUSYBOX_IMAGE).toBe('registry.k8s.io/e2e-test-images/busybox:1.37.0-2');
    const applets = busyboxApplets();
    for (const applet of ['sh', 'env', 'cat', 'sleep', 'nslookup', 'wget', 'hostname', '[']) {
      expect(applets).toContain(applet);
    }
    expect(applets).not.toContain('busybox');
    const spec = e2eBusyboxImageSpec(applets, fakeBinary);
    expect(spec.name).toBe(E2E_BUSYBOX_IMAGE);
    expect(spec.files).toEqual([{ path: 'bin/busybox', source: fakeBinary }]);
    expect(spec.symlinks).toHaveLength(applets.length);
    expect(new Set(spec.symlinks!.map((l) => l.target))).toEqual(new Set(['busybox']));
    expect(spec.dirModes?.tmp).toBe(0o1777);
  });

  it("agnhost's image carries the name the pinned release's e2e tests pull, and runs the binary", () => {
    const spec = agnhostImageSpec(fakeBinary);
    expect(spec.name).toBe('registry.k8s.io/e2e-test-images/agnhost:2.66.1');
    expect(spec.files).toEqual([{ path: 'agnhost', source: fakeBinary }]);
    expect(spec.entrypoint).toEqual(['/agnhost']);
  });

  it("agnhost's image has its root file system's files, links and directory modes, and the binary at /agnhost", async () => {
    const rootfs = join(dir, 'agnhost-rootfs');
    mkdirSync(join(rootfs, 'usr', 'bin'), { recursive: true });
    mkdirSync(join(rootfs, 'tmp'), { mode: 0o1777 });
    chmodSync(join(rootfs, 'tmp'), 0o1777);
    writeFileSync(join(rootfs, 'usr', 'bin', 'dash'), 'a shell', { mode: 0o755 });
    writeFileSync(join(rootfs, 'usr', 'bin', 'passwd'), 'setuid', { mode: 0o4755 });
    chmodSync(join(rootfs, 'usr', 'bin', 'passwd'), 0o4755);
    symlinkSync('usr/bin', join(rootfs, 'bin'));
    symlinkSync('dash', join(rootfs, 'usr', 'bin', 'sh'));
    mkfifoOrSkip(join(rootfs, 'fifo'));
    const spec = agnhostImageSpec(fakeBinary, rootfs, fakeBinary);
    expect(spec.files).toEqual([
      { path: 'usr/bin/dash', source: join(rootfs, 'usr/bin/dash'), mode: 0o755 },
      { path: 'usr/bin/passwd', source: join(rootfs, 'usr/bin/passwd'), mode: 0o4755 },
      { path: 'agnhost', source: fakeBinary },
      { path: 'coredns', source: fakeBinary },
    ]);
    expect(spec.symlinks).toEqual([
      { path: 'bin', target: 'usr/bin' },
      { path: 'usr/bin/sh', target: 'dash' },
      { path: 'agnhost-2', target: 'agnhost' },
    ]);
    expect(spec.dirModes).toEqual({ tmp: 0o1777 });
    const entries = layerEntries(spec);
    expect(entries.find((e) => e.path === 'tmp')).toEqual({ type: 'dir', path: 'tmp', mode: 0o1777 });
    expect(entries.some((e) => e.path === 'fifo')).toBe(false);
    const chunks: Buffer[] = [];
    for await (const chunk of tarStream(entries)) chunks.push(chunk);
    const layer = Buffer.concat(chunks);
    const listing = execFileSync('tar', ['-tvf', '-'], { input: layer }).toString();
    expect(listing).toMatch(/^drwxrwxrwt .* tmp\/$/m);
    expect(listing).toMatch(/^-rwsr-xr-x .* usr\/bin\/passwd$/m);
    expect(listing).toMatch(/^lrwxrwxrwx .* usr\/bin\/sh -> dash$/m);
  });

  it("the e2e tests' distroless-iptables is the root file system in glibc-dns-testing's very layer", async () => {
    const rootfs = join(dir, 'iptables-rootfs');
    mkdirSync(join(rootfs, 'usr', 'sbin'), { recursive: true });
    writeFileSync(join(rootfs, 'usr', 'sbin', 'conntrack'), 'conntrack', { mode: 0o755 });
    const spec = distrolessIptablesImageSpec(rootfs, fakeBinary);
    expect(spec.name).toBe('registry.k8s.io/build-image/distroless-iptables:v0.9.7');
    expect(spec.files).toContainEqual({
      path: 'usr/sbin/conntrack',
      source: join(rootfs, 'usr/sbin/conntrack'),
      mode: 0o755,
    });
    // The same layer: a machine's containerd keeps and unpacks it once for both images.
    const glibc = glibcDNSTestingImageSpec(rootfs, fakeBinary);
    expect(glibc.name).not.toBe(spec.name);
    expect(await layerBlob(layerEntries(spec))).toEqual(await layerBlob(layerEntries(glibc)));
  });

  it('removes archives of the same image unused for an hour when it builds a new one, and keeps recent ones', async () => {
    const cache = join(dir, 'prune-cache');
    const binary = join(dir, 'prune-pause');
    writeFileSync(binary, 'one');
    const old = await buildImage(pauseImageSpec(binary), cache);
    writeFileSync(binary, 'two');
    const recent = await buildImage(pauseImageSpec(binary), cache);
    const hoursAgo = new Date(Date.now() - 2 * STALE_ARCHIVE_MS);
    utimesSync(old.archive, hoursAgo, hoursAgo);
    const other = join(cache, 'registry.k8s.io_etcd_3.7.3-0-0123456789abcdef0123456789abcdef.tar');
    writeFileSync(other, 'another image');
    utimesSync(other, hoursAgo, hoursAgo);
    writeFileSync(binary, 'three');
    const latest = await buildImage(pauseImageSpec(binary), cache);
    expect(existsSync(old.archive)).toBe(false);
    expect(existsSync(`${old.archive}.digest`)).toBe(false);
    expect(existsSync(recent.archive)).toBe(true);
    expect(existsSync(latest.archive)).toBe(true);
    expect(existsSync(other)).toBe(true);
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
    // tar(1) reads it, and every blob in it is stored under its digest (the layer's was streamed twice: once
    // for its digest, once into the archive).
    const out = join(dir, 'extracted');
    mkdirSync(out);
    execFileSync('tar', ['-xf', c.archive, '-C', out]);
    const blobs = readdirSync(join(out, 'blobs', 'sha256'));
    expect(blobs).toHaveLength(3);
    for (const blob of blobs) expect(sha(readFileSync(join(out, 'blobs', 'sha256', blob))).slice(7)).toBe(blob);
  });
});

/** Where a path of the image leads, following its symlinks inside the image; undefined when nowhere. */
function resolveInImage(spec: ImageSpec, path: string): ImageFile | undefined {
  const files = new Map(spec.files.map((f) => [f.path, f]));
  const links = new Map((spec.symlinks ?? []).map((l) => [l.path, l.target]));
  let current = posix.normalize(path.replace(/^\/+/, ''));
  for (let hops = 0; hops < 40; hops++) {
    const file = files.get(current);
    if (file !== undefined) return file;
    const target = links.get(current);
    if (target === undefined) return undefined;
    current = posix.resolve('/', posix.dirname(current), target).slice(1);
  }
  return undefined;
}

/** The ELF program interpreter (PT_INTERP) of a 64-bit little-endian binary, or undefined for a static one. */
function elfInterpreter(file: string): string | undefined {
  const elf = readFileSync(file);
  if (elf.length < 64 || elf.readUInt32BE(0) !== 0x7f454c46 || elf[4] !== 2 || elf[5] !== 1) return undefined;
  const phoff = Number(elf.readBigUInt64LE(0x20));
  const phentsize = elf.readUInt16LE(0x36);
  for (let i = 0; i < elf.readUInt16LE(0x38); i++) {
    const ph = phoff + i * phentsize;
    if (elf.readUInt32LE(ph) !== 3) continue;
    const offset = Number(elf.readBigUInt64LE(ph + 8));
    const size = Number(elf.readBigUInt64LE(ph + 32));
    return elf
      .subarray(offset, offset + size)
      .toString()
      .replace(/\0+$/, '');
  }
  return undefined;
}

const hostToolsMissing = [
  ...Object.entries(MACHINE_HOST_TOOLS)
    .filter(([tool]) => which(tool, HOST_TOOLS_PATH) === undefined)
    .map(([tool, pkg]) => `${tool} (${pkg})`),
  ...(which('ldd') === undefined ? ['ldd (libc-bin)'] : []),
  ...(existsSync(DEBIAN_STATIC_BUSYBOX) ? [] : ['/bin/busybox (busybox-static)']),
];

describe.runIf(hostToolsMissing.length === 0)("the machine pods' image", () => {
  const binDir = join(dir, 'bin');
  mkdirSync(binDir);
  for (const name of MACHINE_BINARIES) writeFileSync(join(binDir, name), name);
  const agent = { dir, script: join(dir, 'agent.mjs'), packageJson: join(dir, 'package.json') };
  writeFileSync(agent.script, '');
  writeFileSync(agent.packageJson, '{}');
  const spec = machinePodImageSpec({ binDir, agent });
  const paths = [...spec.files, ...(spec.symlinks ?? [])].map((f) => f.path);

  it('carries the images a machine imports and the /etc/passwd and /etc/group the kubelet reads', () => {
    const archive = join(dir, `pause-${'0'.repeat(32)}.tar`);
    const blobs = join(dir, 'pause.tar.content', 'blobs', 'sha256');
    mkdirSync(blobs, { recursive: true });
    const blob = 'a'.repeat(64);
    writeFileSync(join(blobs, blob), 'pause');
    writeFileSync(join(dir, 'pause.tar.content', 'metadata.tar'), 'metadata');
    writeFileSync(join(dir, 'pause.tar.content', 'content.json'), '{"layers":[]}');
    writeFileSync(join(dir, 'passwd'), 'root');
    writeFileSync(join(dir, 'group'), 'root');
    const content = { blobs, metadataArchive: join(dir, 'pause.tar.content', 'metadata.tar'), layers: [] };
    const withImages = machinePodImageSpec({
      binDir,
      agent,
      machineImages: [{ name: 'registry.k8s.io/pause:3.10', archive, manifestDigest: '', content }],
      etc: { passwd: join(dir, 'passwd'), group: join(dir, 'group') },
    });
    // The image's content folder (content-store.ts), not its archive: the machine links the blobs.
    const inImage = `/usr/local/lib/gardener-ipv6/images/${'0'.repeat(32)}`;
    expect(resolveInImage(withImages, `${inImage}/blobs/sha256/${blob}`)?.source).toBe(join(blobs, blob));
    expect(resolveInImage(withImages, `${inImage}/metadata.tar`)?.source).toBe(content.metadataArchive);
    expect(resolveInImage(withImages, `${inImage}/content.json`)?.source).toBe(
      join(dir, 'pause.tar.content', 'content.json'),
    );
    expect(resolveInImage(withImages, `/usr/local/lib/gardener-ipv6/images/${basename(archive)}`)).toBeUndefined();
    expect(resolveInImage(withImages, '/etc/passwd')?.source).toBe(join(dir, 'passwd'));
    expect(resolveInImage(withImages, '/etc/group')?.source).toBe(join(dir, 'group'));
  });

  it("is the image vector's, runs the agent bundle with node and puts the node binaries first in PATH", () => {
    expect(spec.name).toBe(IMAGES.machine);
    expect(spec.name).toBe(`local.gardener.cloud/machine:${KUBERNETES_VERSION}`);
    expect(spec.entrypoint).toEqual([process.execPath, '/usr/local/lib/gardener-ipv6/agent/gardener-ipv6.mjs']);
    expect(spec.cmd).toBeUndefined();
    expect(spec.env).toEqual([
      'PATH=/usr/local/lib/gardener-ipv6/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    ]);
    expect(resolveInImage(spec, process.execPath)?.mode).toBe(0o755);
    expect(resolveInImage(spec, '/usr/local/lib/gardener-ipv6/agent/gardener-ipv6.mjs')?.source).toBe(agent.script);
    expect(resolveInImage(spec, '/usr/local/lib/gardener-ipv6/agent/package.json')?.source).toBe(agent.packageJson);
  });

  it('has the machine binaries in /usr/local/lib/gardener-ipv6/bin and the CNI plugins in its own CNI folder', () => {
    for (const name of MACHINE_BINARIES) {
      expect(resolveInImage(spec, `/usr/local/lib/gardener-ipv6/bin/${name}`)?.source).toBe(join(binDir, name));
    }
    for (const plugin of CNI_PLUGINS) {
      expect(resolveInImage(spec, `${MACHINE_POD_CNI_DIR}/${plugin}`)?.source).toBe(join(binDir, `cni-${plugin}`));
    }
    for (const d of ['etc', 'opt', 'run', 'tmp', 'var/lib']) {
      expect(spec.dirs?.some((x) => x === d || x.startsWith(`${d}/`))).toBe(true);
    }
  });

  it('gives its executables and their folders to an ID no user namespace maps, the rest to root', () => {
    const entries = layerEntries(spec);
    const ownerOf = (path: string) => entries.find((e) => e.path === path)?.owner ?? 0;
    expect(MACHINE_IMAGE_FILES_OWNER).toBeGreaterThanOrEqual(65_536);
    for (const path of [
      'usr',
      'usr/local/lib/gardener-ipv6/bin',
      'usr/local/lib/gardener-ipv6/bin/kubelet',
      `${MACHINE_POD_CNI_DIR.slice(1)}/bridge`,
      'usr/local/lib/gardener-ipv6/agent/gardener-ipv6.mjs',
      'bin',
      'bin/busybox',
      process.execPath.slice(1),
    ]) {
      expect(ownerOf(path), path).toBe(MACHINE_IMAGE_FILES_OWNER);
    }
    for (const path of ['etc', 'etc/passwd', 'var/lib/kubelet', 'run', 'tmp']) expect(ownerOf(path), path).toBe(0);
  });

  it("has busybox's applets but the shell, which is the host's, and no applet hides a host tool", () => {
    expect(resolveInImage(spec, '/bin/busybox')?.source).toBe(DEBIAN_STATIC_BUSYBOX);
    for (const applet of ['cat', 'ls', 'mkdir', 'rm', 'sleep', 'echo', 'touch']) {
      expect(spec.symlinks).toContainEqual({ path: `bin/${applet}`, target: 'busybox' });
    }
    const sh = resolveInImage(spec, '/bin/sh');
    expect(sh?.source).not.toBe(DEBIAN_STATIC_BUSYBOX);
    expect(sh?.source).toBe(realpathSync('/bin/sh'));
    for (const tool of Object.keys(MACHINE_HOST_TOOLS)) {
      expect(MACHINE_BUSYBOX_APPLETS as readonly string[]).not.toContain(tool);
    }
    expect(new Set(paths).size).toBe(paths.length);
  });

  it('has every host tool at its host path, and every shared library each binary loads, and its loader', () => {
    const tools = Object.keys(MACHINE_HOST_TOOLS).map((tool) => which(tool, HOST_TOOLS_PATH)!);
    for (const tool of [...tools, '/bin/sh', process.execPath]) {
      expect(resolveInImage(spec, tool), tool).toBeDefined();
    }
    let dynamic = 0;
    for (const file of spec.files) {
      const libraries = lddLibraries(file.source);
      if (libraries.length > 0) dynamic++;
      for (const library of libraries) {
        expect(resolveInImage(spec, library), `${library} of ${file.path}`).toBeDefined();
      }
      // The loader as the ELF header names it, not as ldd says.
      const interpreter = elfInterpreter(file.source);
      if (interpreter !== undefined) {
        expect(resolveInImage(spec, interpreter), `${interpreter} of ${file.path}`).toBeDefined();
      }
    }
    // node, nft, ip, the util-linux tools, ...: they were checked.
    expect(dynamic).toBeGreaterThanOrEqual(5);
  });

  it('fails when two files want the same path, and when a tool is missing, naming its package', () => {
    expect(() => machinePodImageSpec({ binDir, agent, libraries: () => [DEBIAN_STATIC_BUSYBOX] })).toThrow(
      'image local.gardener.cloud/machine:v1.37.1: two files at /bin/busybox',
    );
    expect(() => machinePodImageSpec({ binDir, agent, toolsPath: binDir })).toThrow(
      /nsenter not found in .* \(Debian package util-linux\)/,
    );
  });
});
