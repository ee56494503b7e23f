/**
 * The machine pods' image: node, this project's agent, the machine binaries, the host tools they need and the
 * images every machine imports, assembled as the other images are (image-archive.ts).
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { IMAGES } from '../../../imagevector/images.js';
import { bundleAgent, AGENT_BUNDLE_FILE, type AgentBundle } from './agent-bundle.js';
import { contentFiles, contentFolderName } from './content-store.js';
import { CNI_PLUGINS } from './config.js';
import { NETWORK_POLICY_CNI_PLUGIN, networkPolicyCNIPluginScript } from './network-policy/cni-hook.js';
import { hostBinaryFiles, lddLibraries } from './host-binaries.js';
import { buildMachineImages, controlPlaneImageSpecs, DEBIAN_STATIC_BUSYBOX } from './images.js';
import { buildImage, type BuiltImage, type ImageFile, type ImageSpec, type ImageSymlink } from './image-archive.js';
import { MACHINE_BINARIES } from './machine-options.js';

/** The machine pods' image: a machine's node (containerd, kubelet, kube-proxy) run by this project's agent. */
export const MACHINE_POD_IMAGE = IMAGES.machine;
/**
 * The machine pods' image keeps its own files below here: outside /etc, /opt, /var and /run, which a machine mounts
 * over with its state (holder.ts), so its processes see them too.
 */
export const MACHINE_POD_LIB_DIR = '/usr/local/lib/gardener-ipv6';
/** Where the machine pods' image has the agent bundle and its package.json. */
export const MACHINE_AGENT_DIR = `${MACHINE_POD_LIB_DIR}/agent`;
/** Where the machine pods' image has MACHINE_BINARIES. */
export const MACHINE_POD_BIN_DIR = `${MACHINE_POD_LIB_DIR}/bin`;
/**
 * Where the machine pods' image has the CNI plugins under the names containerd looks for, the NetworkPolicy plugin
 * among them: containerd's only CNI folder in a machine pod (MachineOptions.cniBinDir).
 */
export const MACHINE_POD_CNI_DIR = `${MACHINE_POD_LIB_DIR}/cni`;
/**
 * The owner (uid and gid) of the image's executables and libraries, and of their folders: an ID outside every pod's
 * user namespace (the kubelet maps 65536 IDs from 0), so that root in the machine, or in a pod on it, has no
 * override over them and can change none of them, even through a writable mount of the machine's `/`. The rest of
 * the image (/etc, /var, /run, /tmp, ...) is root's: the machine's state is mounted there.
 */
export const MACHINE_IMAGE_FILES_OWNER = 1_000_000;
/** The image's top folders that are not its executables' (the machine mounts its state over most of them). */
const MACHINE_IMAGE_STATE_FOLDERS = new Set(['dev', 'etc', 'opt', 'proc', 'root', 'run', 'sys', 'tmp', 'var']);
/** Where the machine pods' image has the content folders of the images every machine takes (buildMachineImages). */
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
 * the machine code runs (machine.ts and its parts, node-agent.ts, src/system/process.ts) and what kube-proxy's nftables mode
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
  /** The NetworkPolicy CNI plugin (networkPolicyCNIPluginScript for the image's node), as a host file. */
  networkPolicyPlugin?: string;
}

/**
 * The machine pods' image: node and the agent bundle (the entrypoint, `node MACHINE_AGENT_DIR/gardener-ipv6.mjs`;
 * the pod gives the command), MACHINE_BINARIES in MACHINE_POD_BIN_DIR, the CNI plugins (and the NetworkPolicy
 * plugin) in MACHINE_POD_CNI_DIR, the host tools, the host's /bin/sh and node at their host paths with every shared
 * library they load (and the dynamic loader) at its host path, busybox's applets in /bin; the executables and their
 * folders owned by MACHINE_IMAGE_FILES_OWNER. Fails when a tool is missing on the host or two of them want the same
 * path.
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
    // Each image as its content folder (content-store.ts): the machine links the blobs rather than importing them.
    ...(opts.machineImages ?? []).flatMap((image) => {
      if (image.content === undefined) throw new Error(`image ${MACHINE_POD_IMAGE}: ${image.name} has no content`);
      return contentFiles(image.content, `${MACHINE_POD_IMAGES_DIR.slice(1)}/${contentFolderName(image.archive)}`).map(
        (f) => ({ ...f, mode: 0o644 }),
      );
    }),
    ...(opts.networkPolicyPlugin
      ? [{ path: `${MACHINE_POD_CNI_DIR.slice(1)}/${NETWORK_POLICY_CNI_PLUGIN}`, source: opts.networkPolicyPlugin }]
      : []),
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
      path: `${MACHINE_POD_CNI_DIR.slice(1)}/${plugin}`,
      target: `${MACHINE_POD_BIN_DIR}/cni-${plugin}`,
    })),
    ...host.symlinks,
  ];
  const taken = new Set<string>();
  for (const { path } of [...files, ...symlinks]) {
    if (taken.has(path)) throw new Error(`image ${MACHINE_POD_IMAGE}: two files at /${path}`);
    taken.add(path);
  }
  const executableFolders = new Set(
    [...taken].map((path) => path.split('/')[0]!).filter((top) => !MACHINE_IMAGE_STATE_FOLDERS.has(top)),
  );
  return {
    name: MACHINE_POD_IMAGE,
    files,
    symlinks,
    owned: { uid: MACHINE_IMAGE_FILES_OWNER, paths: [...executableFolders].sort() },
    dirs: [
      'dev',
      'etc/cni/net.d',
      'etc/containerd',
      'etc/kubernetes',
      // The machine mounts its state over /opt, /var and /run (holder.ts): the read-only image has the folders.
      'opt',
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
  const networkPolicyPlugin = join(etcDir, NETWORK_POLICY_CNI_PLUGIN);
  // Write then rename, as the archives: a parallel build never reads half a file.
  for (const [file, content] of [
    [etc.passwd, MACHINE_ETC.passwd],
    [etc.group, MACHINE_ETC.group],
    // The image's node is this one, at the same path.
    [networkPolicyPlugin, networkPolicyCNIPluginScript(process.execPath)],
  ] as const) {
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(tmp, content);
    await rename(tmp, file);
  }
  return buildImage(machinePodImageSpec({ binDir, agent, machineImages, etc, networkPolicyPlugin }), cacheDir);
}

/** The seed's images: a machine's, the shoot control planes' and the machine pods'. */
export function buildSeedImages(binDir: string, cacheDir: string): Promise<BuiltImage[]> {
  return Promise.all([
    buildMachineImages(binDir, cacheDir),
    Promise.all(controlPlaneImageSpecs(binDir).map((spec) => buildImage(spec, cacheDir))),
    buildMachinePodImage(binDir, cacheDir),
  ]).then(([machine, controlPlane, machinePod]) => [...machine, ...controlPlane, machinePod]);
}
