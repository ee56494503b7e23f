/**
 * Container images without a registry: OCI image archives assembled here from binaries (the `pause` sandbox, a
 * static busybox for tests, CoreDNS), imported into each machine's containerd with `ctr images import`. Nothing is
 * pulled: the machines have no route to a registry, and the kubelet never pulls an image that is present
 * (`IfNotPresent` for tagged images; the sandbox image is pinned in containerd's CRI config).
 *
 * The archives are content-addressed: same binaries, same bytes, same file name in the cache folder, so they are
 * built once per cache and shared by every machine.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tar, type TarEntry } from '../../../system/tar.js';
import { IMAGES } from '../../../gardenlet/imagevector/images.js';

/** The sandbox image the kubelet's Kubernetes version expects (kubeadm's default for 1.3x). */
export const PAUSE_IMAGE = 'registry.k8s.io/pause:3.10';
/** The test image: a static busybox with sh, httpd, nc, wget, nslookup. */
export const TEST_IMAGE = IMAGES.busybox;
export const COREDNS_IMAGE = 'local.gardener.cloud/coredns:1';

/** The busybox applets the test image links (each a symlink to /bin/busybox). */
export const BUSYBOX_APPLETS = [
  'cat',
  'echo',
  'env',
  'hostname',
  'httpd',
  'ip',
  'ls',
  'mkdir',
  'nc',
  'nslookup',
  'ping',
  'ps',
  'sh',
  'sleep',
  'timeout',
  'wget',
] as const;

export interface ImageFile {
  /** Path inside the image, without a leading slash. */
  path: string;
  /** Host file to copy (binaries). */
  source: string;
  mode?: number;
}

export interface ImageSpec {
  /** Full reference, e.g. `registry.k8s.io/pause:3.10`. */
  name: string;
  files: ImageFile[];
  symlinks?: { path: string; target: string }[];
  dirs?: string[];
  entrypoint?: string[];
  cmd?: string[];
}

export interface BuiltImage {
  name: string;
  /** The OCI archive, for `ctr images import`. */
  archive: string;
  /** Digest of the image manifest. */
  manifestDigest: string;
}

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
export function layerEntries(spec: ImageSpec, read: (path: string) => Buffer): TarEntry[] {
  const dirs = new Set<string>(spec.dirs ?? []);
  const parentsOf = (path: string) => {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  };
  for (const f of spec.files) parentsOf(f.path);
  for (const l of spec.symlinks ?? []) parentsOf(l.path);
  const entries: TarEntry[] = [...dirs].sort().map((path) => ({ type: 'dir', path }));
  for (const f of [...spec.files].sort((a, b) => a.path.localeCompare(b.path))) {
    entries.push({ type: 'file', path: f.path, data: read(f.source), mode: f.mode ?? 0o755 });
  }
  for (const l of [...(spec.symlinks ?? [])].sort((a, b) => a.path.localeCompare(b.path))) {
    entries.push({ type: 'symlink', path: l.path, target: l.target });
  }
  return entries;
}

export interface OCILayout {
  /** Files of the OCI image layout (path → bytes), for the archive. */
  files: Map<string, Buffer>;
  manifestDigest: string;
}

/** The OCI image layout of a one-layer image: blobs, index.json naming it for containerd, oci-layout. */
export function ociLayout(spec: ImageSpec, layer: Buffer, arch = goArch()): OCILayout {
  const layerDigest = sha256(layer);
  const config = Buffer.from(
    JSON.stringify({
      architecture: arch,
      os: 'linux',
      config: {
        Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
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
      layers: [{ mediaType: MEDIA.layer, digest: layerDigest, size: layer.length }],
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
  const blob = (digest: string) => `blobs/sha256/${digest.slice('sha256:'.length)}`;
  const files = new Map<string, Buffer>([
    ['oci-layout', Buffer.from(JSON.stringify({ imageLayoutVersion: '1.0.0' }))],
    ['index.json', index],
    [blob(layerDigest), layer],
    [blob(sha256(config)), config],
    [blob(manifestDigest), manifest],
  ]);
  return { files, manifestDigest };
}

/** The archive of a layout: a tar of its files. */
export function ociArchive(layout: OCILayout): Buffer {
  const entries: TarEntry[] = [
    { type: 'dir', path: 'blobs' },
    { type: 'dir', path: 'blobs/sha256' },
  ];
  for (const [path, data] of [...layout.files].sort(([a], [b]) => a.localeCompare(b))) {
    entries.push({ type: 'file', path, data, mode: 0o644 });
  }
  return tar(entries);
}

/**
 * Builds the image's archive into `cacheDir` unless an archive of the same content is there already. The file
 * name is derived from the spec and the binaries' digests, so a changed binary gives a new archive.
 */
export async function buildImage(spec: ImageSpec, cacheDir: string): Promise<BuiltImage> {
  const sources = new Map<string, Buffer>();
  const read = (path: string) => {
    let data = sources.get(path);
    if (data === undefined) {
      if (!existsSync(path)) throw new Error(`image ${spec.name}: ${path} does not exist`);
      data = readFileSync(path);
      sources.set(path, data);
    }
    return data;
  };
  for (const f of spec.files) read(f.source);
  const key = createHash('sha256')
    .update(JSON.stringify({ spec, arch: goArch(), v: 1 }))
    .update(JSON.stringify([...sources].map(([path, data]) => [path, sha256(data)])))
    .digest('hex')
    .slice(0, 32);
  const safeName = spec.name.replace(/[^A-Za-z0-9.-]+/g, '_');
  const archive = join(cacheDir, `${safeName}-${key}.tar`);
  const digestFile = `${archive}.digest`;
  if (existsSync(archive) && existsSync(digestFile)) {
    return { name: spec.name, archive, manifestDigest: readFileSync(digestFile, 'utf8').trim() };
  }
  const layout = ociLayout(spec, tar(layerEntries(spec, read)));
  await mkdir(cacheDir, { recursive: true });
  // Write then rename: parallel builders (two machines, two test files, two builds in one process) never see half
  // an archive, nor each other's temporary files.
  const suffix = `${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(`${archive}.${suffix}`, ociArchive(layout));
  await writeFile(`${digestFile}.${suffix}`, layout.manifestDigest + '\n');
  await rename(`${archive}.${suffix}`, archive);
  await rename(`${digestFile}.${suffix}`, digestFile);
  return { name: spec.name, archive, manifestDigest: layout.manifestDigest };
}

export function pauseImageSpec(pauseBinary: string): ImageSpec {
  return { name: PAUSE_IMAGE, files: [{ path: 'pause', source: pauseBinary }], entrypoint: ['/pause'] };
}

/** Debian's busybox-static installs it here. */
export const DEBIAN_STATIC_BUSYBOX = '/bin/busybox';

export function testImageSpec(busyboxBinary = DEBIAN_STATIC_BUSYBOX): ImageSpec {
  return {
    name: TEST_IMAGE,
    files: [{ path: 'bin/busybox', source: busyboxBinary }],
    symlinks: BUSYBOX_APPLETS.map((applet) => ({ path: `bin/${applet}`, target: 'busybox' })),
    dirs: ['etc', 'tmp', 'www'],
    cmd: ['sh'],
  };
}

export function corednsImageSpec(corednsBinary: string): ImageSpec {
  return { name: COREDNS_IMAGE, files: [{ path: 'coredns', source: corednsBinary }], entrypoint: ['/coredns'] };
}

/**
 * The shoot control plane's images (the gardenlet's image vector), each the static binary alone: etcd,
 * kube-apiserver, kube-controller-manager and kube-scheduler, from the binaries in `binDir`.
 */
export function controlPlaneImageSpecs(binDir: string): ImageSpec[] {
  const binary = (name: string, binaryName: string): ImageSpec => ({
    name,
    files: [{ path: `usr/local/bin/${binaryName}`, source: join(binDir, binaryName) }],
    dirs: ['tmp', 'var/lib'],
    entrypoint: [`/usr/local/bin/${binaryName}`],
  });
  return [
    binary(IMAGES.etcd, 'etcd'),
    binary(IMAGES.kubeAPIServer, 'kube-apiserver'),
    binary(IMAGES.kubeControllerManager, 'kube-controller-manager'),
    binary(IMAGES.kubeScheduler, 'kube-scheduler'),
  ];
}

/** The seed's images: a machine's, and the shoot control planes'. */
export function buildSeedImages(binDir: string, cacheDir: string): Promise<BuiltImage[]> {
  return Promise.all([
    buildMachineImages(binDir, cacheDir),
    Promise.all(controlPlaneImageSpecs(binDir).map((spec) => buildImage(spec, cacheDir))),
  ]).then(([machine, controlPlane]) => [...machine, ...controlPlane]);
}

/** The images every machine gets: the sandbox, the test image and CoreDNS, built from the binaries in `binDir`. */
export function buildMachineImages(binDir: string, cacheDir: string): Promise<BuiltImage[]> {
  return Promise.all([
    buildImage(pauseImageSpec(join(binDir, 'pause')), cacheDir),
    buildImage(testImageSpec(), cacheDir),
    buildImage(corednsImageSpec(join(binDir, 'coredns')), cacheDir),
  ]);
}
