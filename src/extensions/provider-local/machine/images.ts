/**
 * Container images without a registry: OCI image archives assembled here from binaries (the `pause` sandbox, a
 * static busybox for tests, CoreDNS, the shoot control plane's components, the machine pods' image), imported into
 * each machine's containerd with `ctr images import`. Nothing is pulled: the machines have no route to a registry,
 * and the kubelet never pulls an image that is present (`IfNotPresent` for tagged images; the sandbox image is
 * pinned in containerd's CRI config).
 *
 * The archives are content-addressed: same binaries, same bytes, same file name in the cache folder, so they are
 * built once per cache and shared by every machine. They are written as a stream, file by file: the machine pods'
 * image is a few hundred megabytes.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileEntry, tarSize, tarStream, type TarStreamEntry } from '../../../system/tar.js';
import { IMAGES } from '../../../imagevector/images.js';
import { bundleAgent, AGENT_BUNDLE_FILE, type AgentBundle } from './agent-bundle.js';
import { CNI_PLUGINS, MACHINE_PATHS } from './config.js';
import { hostBinaryFiles, lddLibraries } from './host-binaries.js';
import { MACHINE_BINARIES } from './machine.js';

/** The sandbox image the kubelet's Kubernetes version expects (kubeadm's default for 1.3x). */
export const PAUSE_IMAGE = 'registry.k8s.io/pause:3.10';
/** The test image: a static busybox with sh, httpd, nc, wget, nslookup. */
export const TEST_IMAGE = IMAGES.busybox;
export const COREDNS_IMAGE = IMAGES.coredns;

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
  const entries: TarStreamEntry[] = [...dirs].sort().map((path) => ({ type: 'dir', path }));
  for (const f of [...spec.files].sort((a, b) => a.path.localeCompare(b.path))) {
    entries.push(fileEntry(f.path, f.source, f.mode ?? 0o755));
  }
  for (const l of [...(spec.symlinks ?? [])].sort((a, b) => a.path.localeCompare(b.path))) {
    entries.push({ type: 'symlink', path: l.path, target: l.target });
  }
  return entries;
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
    return { name: spec.name, archive, manifestDigest: readFileSync(digestFile, 'utf8').trim() };
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
  return { name: spec.name, archive, manifestDigest: layout.manifestDigest };
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
    }
  }
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

export function agnhostImageSpec(agnhostBinary: string): ImageSpec {
  return { name: IMAGES.agnhost, files: [{ path: 'agnhost', source: agnhostBinary }], entrypoint: ['/agnhost'] };
}

export function corednsImageSpec(corednsBinary: string): ImageSpec {
  return { name: COREDNS_IMAGE, files: [{ path: 'coredns', source: corednsBinary }], entrypoint: ['/coredns'] };
}

/** The binaries of a shoot control plane's images (and of the garden's own control plane). */
export const CONTROL_PLANE_BINARIES = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] as const;

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

/** The machine pods' image: a machine's node (containerd, kubelet, kube-proxy) run by this project's agent. */
export const MACHINE_POD_IMAGE = IMAGES.machine;
/**
 * The machine pods' image keeps its own files below here: outside /etc, /opt, /var and /run, which a machine mounts
 * over with its state (machine.ts), so its processes see them too.
 */
export const MACHINE_POD_LIB_DIR = '/usr/local/lib/gardener-ipv6';
/** Where the machine pods' image has the agent bundle and its package.json. */
export const MACHINE_AGENT_DIR = `${MACHINE_POD_LIB_DIR}/agent`;
/** Where the machine pods' image has MACHINE_BINARIES. */
export const MACHINE_POD_BIN_DIR = `${MACHINE_POD_LIB_DIR}/bin`;
/** Where the machine pods' image has the archives of the images every machine imports (buildMachineImages). */
export const MACHINE_POD_IMAGES_DIR = `${MACHINE_POD_LIB_DIR}/images`;
/** The machine pods' PATH: the node binaries first, then the host tools and busybox. */
export const MACHINE_POD_PATH = `${MACHINE_POD_BIN_DIR}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`;
/** Where the host tools are looked for (not the caller's PATH: the image must not depend on it). */
export const HOST_TOOLS_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * The busybox applets of the machine pods' image: the usual file, text and process tools. Mount, namespace and
 * network tools are the host's (MACHINE_HOST_TOOLS), and so is the shell (MACHINE_SHELL). Debian's static busybox
 * prefers its own applets over files in PATH when it runs a command: its `env`, `timeout`, `xargs` and `find -exec`
 * would run busybox's `mount` or `ip`, not util-linux's or iproute2's.
 */
export const MACHINE_BUSYBOX_APPLETS = [
  '[',
  'awk',
  'basename',
  'cat',
  'chmod',
  'chown',
  'cp',
  'cut',
  'date',
  'df',
  'dirname',
  'du',
  'echo',
  'env',
  'false',
  'find',
  'free',
  'grep',
  'gunzip',
  'gzip',
  'head',
  'hostname',
  'id',
  'kill',
  'less',
  'ln',
  'ls',
  'mkdir',
  'mktemp',
  'mv',
  'pidof',
  'printf',
  'ps',
  'pwd',
  'readlink',
  'realpath',
  'rm',
  'rmdir',
  'sed',
  'sleep',
  'sort',
  'stat',
  'tail',
  'tar',
  'tee',
  'test',
  'timeout',
  'top',
  'touch',
  'tr',
  'true',
  'uname',
  'uniq',
  'wc',
  'which',
  'xargs',
] as const;

/**
 * The image's /bin/sh: the host's (dash on Debian). Busybox's sh runs its own applet for every name it has one for,
 * whatever PATH says, and the machine's `sh -c` scripts (its namespace holder, the cgroup moves) must get
 * util-linux's `mount`, not busybox's.
 */
export const MACHINE_SHELL = '/bin/sh';

/**
 * The host tools the machine pods' image carries with their shared libraries, and the Debian package of each: what
 * the machine code runs (machine.ts, node-agent.ts, src/localenv/process.ts) and what kube-proxy's nftables mode
 * shells out to. `tc` is left out: nothing runs it.
 */
export const MACHINE_HOST_TOOLS = {
  nsenter: 'util-linux',
  unshare: 'util-linux',
  setpriv: 'util-linux',
  mount: 'mount',
  umount: 'mount',
  ip: 'iproute2',
  bridge: 'iproute2',
  nft: 'nftables',
  conntrack: 'conntrack',
  sysctl: 'procps',
} as const;

export interface MachinePodImageOptions {
  /** The folder with MACHINE_BINARIES (and the CNI plugins among them, as `cni-<plugin>`). */
  binDir: string;
  /** The agent, from bundleAgent. */
  agent: AgentBundle;
  /** @default process.execPath */
  node?: string;
  /** A static busybox. @default DEBIAN_STATIC_BUSYBOX */
  busybox?: string;
  /** Where MACHINE_HOST_TOOLS are looked for. @default HOST_TOOLS_PATH */
  toolsPath?: string;
  /** A binary's shared libraries, the dynamic loader included. @default lddLibraries */
  libraries?: (binary: string) => string[];
  /** The images the machine imports into its containerd (pause, test image, CoreDNS). */
  machineImages?: readonly BuiltImage[];
  /** /etc/passwd and /etc/group (the kubelet reads them), as host files. */
  etc?: { readonly passwd: string; readonly group: string };
}

/**
 * The machine pods' image: node and the agent bundle (the entrypoint, `node /opt/gardener-ipv6/gardener-ipv6.mjs`;
 * the pod gives the command), MACHINE_BINARIES in /opt/bin, the CNI plugins linked into /opt/cni/bin, the host
 * tools, the host's /bin/sh and node at their host paths with every shared library they load (and the dynamic loader)
 * at its host path, busybox's applets in /bin. Fails when a tool is missing on the host or two of them want the same path.
 */
export function machinePodImageSpec(opts: MachinePodImageOptions): ImageSpec {
  const node = opts.node ?? process.execPath;
  const toolsPath = opts.toolsPath ?? HOST_TOOLS_PATH;
  const tools = Object.entries(MACHINE_HOST_TOOLS).map(([tool, pkg]) => {
    const path = toolsPath
      .split(':')
      .map((dir) => join(dir, tool))
      .find((p) => existsSync(p));
    if (path === undefined) {
      throw new Error(`image ${MACHINE_POD_IMAGE}: ${tool} not found in ${toolsPath} (Debian package ${pkg})`);
    }
    return path;
  });
  const host = hostBinaryFiles([node, MACHINE_SHELL, ...tools], opts.libraries ?? lddLibraries);
  const agentDir = MACHINE_AGENT_DIR.slice(1);
  const binDir = MACHINE_POD_BIN_DIR.slice(1);
  const files: ImageFile[] = [
    { path: 'bin/busybox', source: opts.busybox ?? DEBIAN_STATIC_BUSYBOX },
    ...MACHINE_BINARIES.map((name) => ({ path: `${binDir}/${name}`, source: join(opts.binDir, name) })),
    { path: `${agentDir}/${AGENT_BUNDLE_FILE}`, source: opts.agent.script, mode: 0o644 },
    { path: `${agentDir}/package.json`, source: opts.agent.packageJson, mode: 0o644 },
    ...host.files,
    ...(opts.machineImages ?? []).map((image) => ({
      path: `${MACHINE_POD_IMAGES_DIR.slice(1)}/${basename(image.archive)}`,
      source: image.archive,
      mode: 0o644,
    })),
    ...(opts.etc
      ? [
          { path: 'etc/passwd', source: opts.etc.passwd, mode: 0o644 },
          { path: 'etc/group', source: opts.etc.group, mode: 0o644 },
        ]
      : []),
  ];
  const symlinks: ImageSymlink[] = [
    ...MACHINE_BUSYBOX_APPLETS.map((applet) => ({ path: `bin/${applet}`, target: 'busybox' })),
    ...CNI_PLUGINS.map((plugin) => ({
      path: `${MACHINE_PATHS.cniBinDir.slice(1)}/${plugin}`,
      target: `${MACHINE_POD_BIN_DIR}/cni-${plugin}`,
    })),
    ...host.symlinks,
  ];
  const taken = new Set<string>();
  for (const { path } of [...files, ...symlinks]) {
    if (taken.has(path)) throw new Error(`image ${MACHINE_POD_IMAGE}: two files at /${path}`);
    taken.add(path);
  }
  return {
    name: MACHINE_POD_IMAGE,
    files,
    symlinks,
    dirs: [
      'dev',
      'etc/cni/net.d',
      'etc/containerd',
      'etc/kubernetes',
      MACHINE_PATHS.cniBinDir.slice(1),
      'proc',
      'root',
      'run',
      'sys',
      'tmp',
      'var/lib/containerd',
      'var/lib/kubelet',
      'var/log',
    ],
    env: [`PATH=${MACHINE_POD_PATH}`],
    entrypoint: [node, `${MACHINE_AGENT_DIR}/${AGENT_BUNDLE_FILE}`],
  };
}

/** A machine's /etc/passwd and /etc/group: root, and nobody for the kubelet's user namespace lookups. */
export const MACHINE_ETC = {
  passwd: 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n',
  group: 'root:x:0:\nnogroup:x:65534:\n',
} as const;

/**
 * Bundles the agent (into `<cacheDir>/agent`) and builds the machine pods' image from it, `binDir` and the images
 * every machine imports.
 */
export async function buildMachinePodImage(binDir: string, cacheDir: string): Promise<BuiltImage> {
  const [agent, machineImages] = await Promise.all([
    bundleAgent(join(cacheDir, 'agent')),
    buildMachineImages(binDir, cacheDir),
  ]);
  const etcDir = join(cacheDir, 'machine-etc');
  await mkdir(etcDir, { recursive: true });
  const etc = { passwd: join(etcDir, 'passwd'), group: join(etcDir, 'group') };
  // Write then rename, as the archives: a parallel build never reads half a file.
  for (const [file, content] of [
    [etc.passwd, MACHINE_ETC.passwd],
    [etc.group, MACHINE_ETC.group],
  ] as const) {
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(tmp, content);
    await rename(tmp, file);
  }
  return buildImage(machinePodImageSpec({ binDir, agent, machineImages, etc }), cacheDir);
}

/** The seed's images: a machine's, the shoot control planes' and the machine pods'. */
export function buildSeedImages(binDir: string, cacheDir: string): Promise<BuiltImage[]> {
  return Promise.all([
    buildMachineImages(binDir, cacheDir),
    Promise.all(controlPlaneImageSpecs(binDir).map((spec) => buildImage(spec, cacheDir))),
    buildMachinePodImage(binDir, cacheDir),
  ]).then(([machine, controlPlane, machinePod]) => [...machine, ...controlPlane, machinePod]);
}

/**
 * The images every machine gets: the sandbox, the test image, CoreDNS and agnhost, built from the binaries in
 * `binDir`.
 */
export function buildMachineImages(binDir: string, cacheDir: string): Promise<BuiltImage[]> {
  return Promise.all([
    buildImage(pauseImageSpec(join(binDir, 'pause')), cacheDir),
    buildImage(testImageSpec(), cacheDir),
    buildImage(corednsImageSpec(join(binDir, 'coredns')), cacheDir),
    buildImage(agnhostImageSpec(join(binDir, 'agnhost')), cacheDir),
  ]);
}
