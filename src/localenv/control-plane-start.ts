/**
 * The local control plane's start (control-plane.ts) as ordered steps, each with its undo: the temporary folder,
 * the network namespace, the certificates, etcd, kube-apiserver, the admin kubeconfig, the controllers and the CRDs.
 * The steps record what they made in one state, which the undos and the exit handler read.
 */
import { readFileSync, rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { firstServiceIP } from '../net/cidr.js';
import { ensureBinaries, type BinaryPaths } from './binaries.js';
import { generateCertificates, type Certificates } from './certs.js';
import { onEmergencyExit } from '../system/cleanup.js';
import { installCRDs, readCRDs } from './crds.js';
import { startEtcd, waitForEtcd, type Etcd } from './etcd.js';
import {
  apiServerServiceCIDRs,
  DEFAULT_SERVICE_CIDR,
  startKubeAPIServer,
  waitForReady,
  type KubeAPIServer,
  type KubeAPIServerOptions,
} from './kube-apiserver.js';
import { writeAdminKubeconfig } from './kubeconfig.js';
import { freePorts } from '../system/net.js';
import { addIPv6Veth, createIPv6OnlyNetns, deleteNetns, deleteVeth, type VethPair } from '../system/netns.js';
import { startKubeControllerManager, startKubeScheduler } from './kube-controller-manager.js';
import { graceBefore, type ManagedProcess } from '../system/process.js';
import { crdDir } from '../system/project.js';
import { Steps, type Step } from '../runtime/steps.js';

export interface ControlPlaneOptions {
  /**
   * Run in a fresh IPv6-only network namespace, reachable over an IPv6-only veth pair (needs root). Otherwise it
   * runs on `[::1]` of the current namespace (which may itself be IPv6-only: the test wrapper runs vitest in one).
   */
  ipv6Only?: boolean;
  /** Service range; `fd00:10:2::/112` by default. */
  serviceCIDR?: string;
  /** A service range of the other family (a dual-stack seed's); see apiServerServiceCIDRs. */
  secondaryServiceCIDR?: string;
  /** Where to write the admin kubeconfig; default: `kubeconfig` in the control plane's temporary folder. */
  kubeconfigPath?: string;
  /** Folder with the CRDs to install; default charts/gardener-ipv6/crds; `false` installs none. */
  crds?: string | false;
  /** Progress messages. */
  log?: (line: string) => void;
  /**
   * Also clean up on SIGINT/SIGTERM/SIGHUP (and then end the process if nobody else handles the signal). `up`
   * handles signals itself and passes false. Process exit is always covered.
   */
  handleSignals?: boolean;
  /** For etcd, kube-apiserver and the CRDs together; default 90s (the first start after a build is slower). */
  startTimeoutMs?: number;
  binaries?: Pick<BinaryPaths, 'etcd' | 'kube-apiserver' | 'kube-controller-manager'> &
    Partial<Pick<BinaryPaths, 'kube-scheduler'>>;
  /**
   * Serve nodes (the seed nodes of `up`): the API server listens on `listenAddress` (an address of this namespace
   * the nodes reach, never loopback) with the Node authorizer, kube-controller-manager runs every controller with
   * node IPAM from `podCIDRs`, and kube-scheduler runs. Not with `ipv6Only`.
   */
  nodes?: ControlPlaneNodesOptions;
}

export interface ControlPlaneNodesOptions {
  /** Where the API server listens and what it advertises (the node network's gateway). */
  readonly listenAddress: string;
  /** The Nodes' pod ranges, one per family. */
  readonly podCIDRs: readonly string[];
  readonly nodeCIDRMaskSizes?: { IPv6?: number; IPv4?: number };
}

/** What the start's steps record, for the steps after them, their undo and the exit handler. */
interface ControlPlaneStart {
  readonly opts: ControlPlaneOptions;
  readonly log: (line: string) => void;
  readonly started: number;
  /** By when etcd, kube-apiserver and the CRDs must be ready (ms since the epoch). */
  readonly deadline: number;
  readonly serviceCIDR: string;
  /** In the order they started: stopped last first. */
  readonly processes: ManagedProcess[];
  binaries?: NonNullable<ControlPlaneOptions['binaries']>;
  crds?: V1CustomResourceDefinition[];
  unregisterExitHandler?: () => void;
  dir?: string;
  netns?: string;
  veth?: VethPair;
  listen?: { bindAddress: string; advertiseAddress: string; ports: [number, number, number] };
  certs?: Certificates;
  etcd?: Etcd;
  apiserverOptions?: KubeAPIServerOptions;
  apiserver?: KubeAPIServer;
  /** The admin kubeconfig as written: removed on stop only while it is still that. */
  kubeconfig?: { path: string; text: string };
  installed?: string[];
}

/** GARDENER_IPV6_KEEP_TMP=1 keeps the control plane's folder, to look at its logs. */
const keepFiles = () => process.env.GARDENER_IPV6_KEEP_TMP === '1';

/** What an undo of the namespace removes, at once (the exit handler's too). */
function removeNetns(s: ControlPlaneStart): void {
  // The namespace's deletion would take the veth pair along, but only once the kernel frees it (asynchronously):
  // delete the pair first so that it is gone when stop() returns.
  if (s.veth !== undefined) deleteVeth(s.veth);
  if (s.netns !== undefined) deleteNetns(s.netns);
}

function removeFolder(s: ControlPlaneStart): void {
  if (s.dir !== undefined && !keepFiles()) rmSync(s.dir, { recursive: true, force: true });
}

function removeOwnKubeconfig(s: ControlPlaneStart): void {
  const own = s.kubeconfig;
  if (own === undefined || (s.dir !== undefined && own.path.startsWith(s.dir))) return;
  // Only if it is still what we wrote: never delete a file the user changed since.
  try {
    if (readFileSync(own.path, 'utf8') === own.text) rmSync(own.path, { force: true });
  } catch {
    // Gone already.
  }
}

/** The exit handler: synchronous, it kills rather than stops. */
function removeAllNow(s: ControlPlaneStart): void {
  for (const p of s.processes) p.killNow();
  removeNetns(s);
  removeFolder(s);
  removeOwnKubeconfig(s);
}

/** A step that starts a process and whose undo stops it (the one running then: see restartAPIServer). */
function processStep(
  name: ManagedProcess['name'],
  graceMs: number,
  start: (s: ControlPlaneStart) => ManagedProcess,
): Step<ControlPlaneStart> {
  return {
    name: `start ${name}`,
    run: (s) => void s.processes.push(start(s)),
    undo: async (s, { deadline }) => {
      await s.processes.find((p) => p.name === name)?.stop(graceBefore(deadline, graceMs));
    },
  };
}

const seconds = (s: ControlPlaneStart) => ((Date.now() - s.started) / 1000).toFixed(1);

/** Where etcd and the API server listen: loopback, the namespace's veth address, or the nodes' gateway. */
async function listenAddresses(s: ControlPlaneStart): Promise<NonNullable<ControlPlaneStart['listen']>> {
  if (s.veth !== undefined) {
    // Listen on the veth address only, not on `::`: with an unspecified bind address kube-apiserver's loopback
    // client dials `localhost`, which /etc/hosts may map to 127.0.0.1 alone (no IPv4 here: it never gets
    // ready). Nothing else runs in the fresh namespace, so the well-known ports are free.
    return { bindAddress: s.veth.nsAddress, advertiseAddress: s.veth.nsAddress, ports: [2379, 2380, 6443] };
  }
  const nodes = s.opts.nodes;
  if (nodes !== undefined) {
    const ports = [...(await freePorts(2, '::1')), ...(await freePorts(1, nodes.listenAddress))];
    return {
      bindAddress: nodes.listenAddress,
      advertiseAddress: nodes.listenAddress,
      ports: ports as [number, number, number],
    };
  }
  return {
    bindAddress: '::1',
    advertiseAddress: '::1',
    ports: (await freePorts(3, '::1')) as [number, number, number],
  };
}

function apiServerOptions(s: ControlPlaneStart): KubeAPIServerOptions {
  const { opts, certs, listen } = s;
  return {
    bin: s.binaries!['kube-apiserver'],
    dir: s.dir!,
    certs: certs!,
    etcdURL: s.etcd!.clientURL,
    bindAddress: listen!.bindAddress,
    advertiseAddress: listen!.advertiseAddress,
    port: listen!.ports[2],
    serviceCIDR: s.serviceCIDR,
    ...(opts.secondaryServiceCIDR !== undefined ? { secondaryServiceCIDR: opts.secondaryServiceCIDR } : {}),
    ...(s.netns !== undefined ? { netns: s.netns } : {}),
    // The kubelets ask the API server whether a client may use their API: the admin (system:masters) may.
    ...(opts.nodes !== undefined
      ? { nodes: { kubeletClientCert: certs!.adminCert, kubeletClientKey: certs!.adminKey } }
      : {}),
  };
}

function startControllerManager(s: ControlPlaneStart): ManagedProcess {
  const { nodes, secondaryServiceCIDR } = s.opts;
  const certs = s.certs!;
  return startKubeControllerManager({
    bin: s.binaries!['kube-controller-manager'],
    dir: s.dir!,
    kubeconfigPath: s.kubeconfig!.path,
    ...(s.netns !== undefined ? { netns: s.netns } : {}),
    ...(nodes !== undefined
      ? {
          nodes: {
            clusterCIDRs: nodes.podCIDRs,
            ...(nodes.nodeCIDRMaskSizes ? { nodeCIDRMaskSizes: nodes.nodeCIDRMaskSizes } : {}),
            serviceCIDRs: apiServerServiceCIDRs(s.serviceCIDR, secondaryServiceCIDR),
            caCert: certs.caCert,
            caKey: certs.caKey,
            serviceAccountKey: certs.serviceAccountKey,
          },
        }
      : {}),
  });
}

export const loadKubeConfig = (path: string) => () => {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
};

type ControlPlaneStep = Step<ControlPlaneStart>;

const findBinaries: ControlPlaneStep = {
  name: 'find the binaries',
  run: async (s) => {
    const names = ['etcd', 'kube-apiserver', 'kube-controller-manager'] as const;
    const scheduler = s.opts.nodes ? (['kube-scheduler'] as const) : [];
    s.binaries = s.opts.binaries ?? (await ensureBinaries({ names: [...names, ...scheduler], log: s.log }));
  },
};

const readCRDFiles: ControlPlaneStep = {
  name: 'read the CRDs',
  run: async (s) => void (s.crds = s.opts.crds === false ? [] : await readCRDs(s.opts.crds ?? crdDir())),
};

const registerExitCleanup: ControlPlaneStep = {
  name: 'register the exit cleanup',
  run: (s) => {
    s.unregisterExitHandler = onEmergencyExit(() => removeAllNow(s), { signals: s.opts.handleSignals ?? true });
  },
  undo: (s) => s.unregisterExitHandler?.(),
};

const makeFolder: ControlPlaneStep = {
  name: 'make the temporary folder',
  run: async (s) => {
    // GARDENER_IPV6_TMPDIR: set by hack/test-in-netns.mjs to a folder it removes itself, so even a SIGKILLed test
    // run leaves nothing behind.
    s.dir = await mkdtemp(join(process.env.GARDENER_IPV6_TMPDIR || tmpdir(), 'gardener-ipv6-cp-'));
    s.log(`control plane files (removed on stop): ${s.dir}`);
  },
  undo: removeFolder,
};

const createNetns: ControlPlaneStep = {
  name: 'create the network namespace',
  run: (s) => {
    s.netns = createIPv6OnlyNetns();
    s.veth = addIPv6Veth(s.netns);
    s.log(
      `created network namespace ${s.netns} (IPv6 only), veth ${s.veth.hostInterface} ${s.veth.hostAddress} <-> ${s.veth.nsAddress}`,
    );
  },
  undo: removeNetns,
};

const chooseAddresses: ControlPlaneStep = {
  name: 'choose the addresses',
  run: async (s) => void (s.listen = await listenAddresses(s)),
};

// The certificates first: etcd serves TLS with its own CA from the start.
const generateCerts: ControlPlaneStep = {
  name: 'generate the certificates',
  run: async (s) => {
    s.certs = await generateCertificates(s.dir!, {
      ipAddresses: [...new Set(['::1', s.listen!.advertiseAddress, firstServiceIP(s.serviceCIDR)])],
      dnsNames: [
        'localhost',
        'kubernetes',
        'kubernetes.default',
        'kubernetes.default.svc',
        'kubernetes.default.svc.cluster.local',
      ],
    });
  },
};

const startEtcdStep = processStep('etcd', 5_000, (s) => {
  s.etcd = startEtcd({
    bin: s.binaries!.etcd,
    dir: s.dir!,
    clientPort: s.listen!.ports[0],
    peerPort: s.listen!.ports[1],
    tls: s.certs!,
    ...(s.netns !== undefined ? { netns: s.netns } : {}),
  });
  return s.etcd.process;
});

const waitForEtcdStep: ControlPlaneStep = { name: 'wait for etcd', run: (s) => waitForEtcd(s.etcd!, s.deadline) };

const startAPIServer = processStep('kube-apiserver', 10_000, (s) => {
  s.apiserverOptions = apiServerOptions(s);
  s.apiserver = startKubeAPIServer(s.apiserverOptions);
  return s.apiserver.process;
});

const waitForAPIServer: ControlPlaneStep = {
  name: 'wait for kube-apiserver',
  run: async (s) => {
    await waitForReady(s.apiserver!, s.certs!, s.deadline);
    s.log(`kube-apiserver ready at ${s.apiserver!.url} after ${seconds(s)}s`);
  },
};

const writeKubeconfig: ControlPlaneStep = {
  name: 'write the admin kubeconfig',
  run: async (s) => {
    const path = s.opts.kubeconfigPath ?? join(s.dir!, 'kubeconfig');
    s.kubeconfig = { path, text: await writeAdminKubeconfig(path, s.apiserver!.url, s.certs!) };
  },
  undo: removeOwnKubeconfig,
};

const startControllers = processStep('kube-controller-manager', 10_000, startControllerManager);

const startScheduler = processStep('kube-scheduler', 10_000, (s) => {
  const bin = s.binaries!['kube-scheduler'];
  if (bin === undefined) throw new Error('a control plane with nodes needs the kube-scheduler binary');
  return startKubeScheduler({ bin, dir: s.dir!, kubeconfigPath: s.kubeconfig!.path });
});

const installCRDFiles: ControlPlaneStep = {
  name: 'install the CRDs',
  run: async (s) => {
    const crds = s.crds!;
    s.installed = crds.length > 0 ? await installCRDs(loadKubeConfig(s.kubeconfig!.path)(), crds, s.deadline) : [];
    if (s.installed.length > 0) s.log(`installed ${s.installed.length} CRDs after ${seconds(s)}s`);
  },
};

/** The control plane's start, in order; each step with its undo. */
function controlPlaneSteps(opts: ControlPlaneOptions): ControlPlaneStep[] {
  return [
    findBinaries,
    readCRDFiles,
    registerExitCleanup,
    makeFolder,
    ...(opts.ipv6Only ? [createNetns] : []),
    chooseAddresses,
    generateCerts,
    startEtcdStep,
    // etcd's /health is only reachable from inside its namespace; with --ipv6-only, /readyz (which includes
    // etcd) is the signal.
    ...(opts.ipv6Only ? [] : [waitForEtcdStep]),
    startAPIServer,
    waitForAPIServer,
    writeKubeconfig,
    startControllers,
    ...(opts.nodes !== undefined ? [startScheduler] : []),
    installCRDFiles,
  ];
}

/** The start of a control plane: run it, and undo it to stop what it started. */
export function controlPlaneStart(opts: ControlPlaneOptions): Steps<ControlPlaneStart> {
  const started = Date.now();
  return new Steps('control plane', controlPlaneSteps(opts), {
    opts,
    log: opts.log ?? (() => {}),
    started,
    deadline: started + (opts.startTimeoutMs ?? 90_000),
    serviceCIDR: opts.serviceCIDR ?? DEFAULT_SERVICE_CIDR,
    processes: [],
  });
}
