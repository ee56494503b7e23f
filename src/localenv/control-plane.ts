/**
 * The local control plane: etcd and kube-apiserver on IPv6 loopback (or in an IPv6-only network namespace),
 * generated certificates, an admin kubeconfig and the project's CRDs. Used by the integration tests' global setup
 * and by `gardener-ipv6 up`. Everything lives in one temporary folder that stop() removes; an exit handler kills
 * the children and removes the folder if the process ends without stop().
 */
import { readFileSync, rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { firstServiceIP } from '../net/cidr.js';
import { ensureBinaries, type BinaryPaths } from './binaries.js';
import { generateCertificates, type Certificates } from './certs.js';
import { onEmergencyExit } from '../system/cleanup.js';
import { installCRDs, readCRDs } from './crds.js';
import { startEtcd, waitForEtcd } from './etcd.js';
import { apiServerServiceCIDRs, DEFAULT_SERVICE_CIDR, startKubeAPIServer, waitForReady } from './kube-apiserver.js';
import { writeAdminKubeconfig } from './kubeconfig.js';
import { freePorts } from '../system/net.js';
import { addIPv6Veth, createIPv6OnlyNetns, deleteNetns, deleteVeth, type VethPair } from '../system/netns.js';
import { startKubeControllerManager, startKubeScheduler } from './kube-controller-manager.js';
import { describeExit, graceBefore, type ManagedProcess } from '../system/process.js';
import { crdDir } from '../system/project.js';

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

export interface ControlPlane {
  /** `https://[::1]:PORT`, or the namespace's veth address with --ipv6-only. */
  readonly server: string;
  /** `https://[::1]:PORT` (in the namespace with --ipv6-only): TLS, for clients of etcd's own CA only. */
  readonly etcdURL: string;
  readonly kubeconfigPath: string;
  readonly dir: string;
  readonly certs: Certificates;
  readonly netns: string | undefined;
  readonly veth: VethPair | undefined;
  readonly processes: readonly ManagedProcess[];
  /** Names of the installed CRDs. */
  readonly crds: readonly string[];
  /** Resolves with a message if etcd or kube-apiserver exits before stop(). */
  readonly crashed: Promise<string>;
  kubeConfig(): KubeConfig;
  /** Stops kube-apiserver and starts it again (same port, same etcd); resolves when it is ready. */
  restartAPIServer(): Promise<void>;
  /**
   * Stops kube-apiserver, then etcd; deletes the namespace and the temporary folder. Idempotent. With a `deadline`
   * (ms since epoch), what still runs then is killed.
   */
  stop(opts?: { deadline?: number }): Promise<void>;
}

export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const log = opts.log ?? (() => {});
  const started = Date.now();
  const deadline = started + (opts.startTimeoutMs ?? 90_000);
  const serviceCIDR = opts.serviceCIDR ?? DEFAULT_SERVICE_CIDR;
  if (opts.nodes !== undefined && opts.ipv6Only) throw new Error('a control plane with nodes runs in this namespace');
  const binaries =
    opts.binaries ??
    (await ensureBinaries({
      names: ['etcd', 'kube-apiserver', 'kube-controller-manager', ...(opts.nodes ? ['kube-scheduler' as const] : [])],
      log,
    }));
  const crds = opts.crds === false ? [] : await readCRDs(opts.crds ?? crdDir());

  // GARDENER_IPV6_TMPDIR: set by hack/test-in-netns.mjs to a folder it removes itself, so even a SIGKILLed test
  // run leaves nothing behind.
  const dir = await mkdtemp(join(process.env.GARDENER_IPV6_TMPDIR || tmpdir(), 'gardener-ipv6-cp-'));
  log(`control plane files (removed on stop): ${dir}`);
  const processes: ManagedProcess[] = [];
  let netns: string | undefined;
  let veth: VethPair | undefined;
  let ownKubeconfig: { path: string; text: string } | undefined;
  const keep = process.env.GARDENER_IPV6_KEEP_TMP === '1';

  // Synchronous, for exit handlers; stop() runs it after the graceful part.
  const removeAll = () => {
    for (const p of processes) p.killNow();
    // The namespace's deletion would take the veth pair along, but only once the kernel frees it (asynchronously):
    // delete the pair first so that it is gone when stop() returns.
    if (veth !== undefined) deleteVeth(veth);
    if (netns !== undefined) deleteNetns(netns);
    if (!keep) rmSync(dir, { recursive: true, force: true });
    if (ownKubeconfig !== undefined && !ownKubeconfig.path.startsWith(dir)) {
      // Only if it is still what we wrote: never delete a file the user changed since.
      try {
        if (readFileSync(ownKubeconfig.path, 'utf8') === ownKubeconfig.text)
          rmSync(ownKubeconfig.path, { force: true });
      } catch {
        // Gone already.
      }
    }
  };
  const unregister = onEmergencyExit(removeAll, { signals: opts.handleSignals ?? true });

  let stopping = false;
  let stopped: Promise<void> | undefined;
  const stop = (stopOpts: { deadline?: number } = {}) =>
    (stopped ??= (async () => {
      stopping = true;
      // API server first: it would otherwise log etcd connection errors while shutting down.
      for (const p of [...processes].reverse()) {
        await p.stop(graceBefore(stopOpts.deadline, p.name === 'etcd' ? 5_000 : 10_000));
      }
      removeAll();
      unregister();
    })());

  try {
    let bindAddress = '::1';
    let advertiseAddress = '::1';
    let ports: number[];
    if (opts.ipv6Only) {
      netns = createIPv6OnlyNetns();
      veth = addIPv6Veth(netns);
      // Listen on the veth address only, not on `::`: with an unspecified bind address kube-apiserver's loopback
      // client dials `localhost`, which /etc/hosts may map to 127.0.0.1 alone (no IPv4 here: it never gets
      // ready). Nothing else runs in the fresh namespace, so the well-known ports are free.
      bindAddress = veth.nsAddress;
      advertiseAddress = veth.nsAddress;
      ports = [2379, 2380, 6443];
      log(
        `created network namespace ${netns} (IPv6 only), veth ${veth.hostInterface} ${veth.hostAddress} <-> ${veth.nsAddress}`,
      );
    } else if (opts.nodes !== undefined) {
      bindAddress = opts.nodes.listenAddress;
      advertiseAddress = opts.nodes.listenAddress;
      ports = [...(await freePorts(2, '::1')), ...(await freePorts(1, bindAddress))];
    } else {
      ports = await freePorts(3, '::1');
    }
    const [etcdClientPort, etcdPeerPort, apiserverPort] = ports as [number, number, number];

    // The certificates first: etcd serves TLS with its own CA from the start.
    const certs = await generateCertificates(dir, {
      ipAddresses: [...new Set(['::1', advertiseAddress, firstServiceIP(serviceCIDR)])],
      dnsNames: [
        'localhost',
        'kubernetes',
        'kubernetes.default',
        'kubernetes.default.svc',
        'kubernetes.default.svc.cluster.local',
      ],
    });
    const etcd = startEtcd({
      bin: binaries.etcd,
      dir,
      clientPort: etcdClientPort,
      peerPort: etcdPeerPort,
      tls: certs,
      ...(netns !== undefined ? { netns } : {}),
    });
    processes.push(etcd.process);
    // etcd's /health is only reachable from inside its namespace; with --ipv6-only, /readyz (which includes
    // etcd) is the signal.
    if (netns === undefined) await waitForEtcd(etcd, deadline);

    const apiserverOptions = {
      bin: binaries['kube-apiserver'],
      dir,
      certs,
      etcdURL: etcd.clientURL,
      bindAddress,
      advertiseAddress,
      port: apiserverPort,
      serviceCIDR,
      ...(opts.secondaryServiceCIDR !== undefined ? { secondaryServiceCIDR: opts.secondaryServiceCIDR } : {}),
      ...(netns !== undefined ? { netns } : {}),
      // The kubelets ask the API server whether a client may use their API: the admin (system:masters) may.
      ...(opts.nodes !== undefined
        ? { nodes: { kubeletClientCert: certs.adminCert, kubeletClientKey: certs.adminKey } }
        : {}),
    };
    let apiserver = startKubeAPIServer(apiserverOptions);
    processes.push(apiserver.process);
    await waitForReady(apiserver, certs, deadline);
    log(`kube-apiserver ready at ${apiserver.url} after ${((Date.now() - started) / 1000).toFixed(1)}s`);

    const kubeconfigPath = opts.kubeconfigPath ?? join(dir, 'kubeconfig');
    ownKubeconfig = { path: kubeconfigPath, text: await writeAdminKubeconfig(kubeconfigPath, apiserver.url, certs) };
    const kubeConfig = () => {
      const kc = new KubeConfig();
      kc.loadFromFile(kubeconfigPath);
      return kc;
    };
    processes.push(
      startKubeControllerManager({
        bin: binaries['kube-controller-manager'],
        dir,
        kubeconfigPath,
        ...(netns !== undefined ? { netns } : {}),
        ...(opts.nodes !== undefined
          ? {
              nodes: {
                clusterCIDRs: opts.nodes.podCIDRs,
                ...(opts.nodes.nodeCIDRMaskSizes ? { nodeCIDRMaskSizes: opts.nodes.nodeCIDRMaskSizes } : {}),
                serviceCIDRs: apiServerServiceCIDRs(serviceCIDR, opts.secondaryServiceCIDR),
                caCert: certs.caCert,
                caKey: certs.caKey,
                serviceAccountKey: certs.serviceAccountKey,
              },
            }
          : {}),
      }),
    );
    if (opts.nodes !== undefined) {
      const scheduler = binaries['kube-scheduler'];
      if (scheduler === undefined) throw new Error('a control plane with nodes needs the kube-scheduler binary');
      processes.push(startKubeScheduler({ bin: scheduler, dir, kubeconfigPath }));
    }
    const installed = crds.length > 0 ? await installCRDs(kubeConfig(), crds, deadline) : [];
    if (installed.length > 0)
      log(`installed ${installed.length} CRDs after ${((Date.now() - started) / 1000).toFixed(1)}s`);

    const restarted = new Set<ManagedProcess>();
    let reportCrash: (message: string) => void = () => {};
    const watchExit = (p: ManagedProcess) =>
      void p.exited.then((exit) => {
        if (!stopping && !restarted.has(p)) reportCrash(`${p.name} ${describeExit(exit)} unexpectedly:\n${p.tail()}`);
      });
    const crashed = new Promise<string>((resolve) => {
      reportCrash = resolve;
      processes.forEach(watchExit);
    });

    /** Stops kube-apiserver and starts it again on the same port and etcd, as a restart in a real cluster. */
    const restartAPIServer = async () => {
      const old = apiserver.process;
      restarted.add(old);
      await old.stop(10_000);
      apiserver = startKubeAPIServer(apiserverOptions);
      processes[processes.indexOf(old)] = apiserver.process;
      watchExit(apiserver.process);
      await waitForReady(apiserver, certs, Date.now() + 60_000);
    };

    return {
      server: apiserver.url,
      etcdURL: etcd.clientURL,
      kubeconfigPath,
      dir,
      certs,
      netns,
      veth,
      processes,
      crds: installed,
      crashed,
      kubeConfig,
      restartAPIServer,
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
