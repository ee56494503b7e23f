/**
 * The local control plane: etcd and kube-apiserver on IPv6 loopback (or in an IPv6-only network namespace),
 * generated certificates, an admin kubeconfig and the project's CRDs. Used by the integration tests' global setup
 * and by `gardener-ipv6 up`. Everything lives in one temporary folder that stop() removes; an exit handler kills
 * the children and removes the folder if the process ends without stop(). It starts as ordered steps with their undo
 * (control-plane-start.ts): a failed start and stop() undo them, last first.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Certificates } from './certs.js';
import { startKubeAPIServer, waitForReady } from './kube-apiserver.js';
import type { VethPair } from '../system/netns.js';
import { describeExit, type ManagedProcess } from '../system/process.js';
import { controlPlaneStart, loadKubeConfig, type ControlPlaneOptions } from './control-plane-start.js';

export type { ControlPlaneNodesOptions, ControlPlaneOptions } from './control-plane-start.js';

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
  if (opts.nodes !== undefined && opts.ipv6Only) throw new Error('a control plane with nodes runs in this namespace');
  const start = controlPlaneStart(opts);
  await start.run();
  const s = start.state;

  let stopping = false;
  let stopped: Promise<void> | undefined;
  const stop = (stopOpts: { deadline?: number } = {}) =>
    (stopped ??= (async () => {
      stopping = true;
      // API server first (the last started, but for the controllers): it would otherwise log etcd connection errors
      // while shutting down.
      const failures = await start.undo({ reason: 'stop', ...stopOpts });
      if (failures.length > 0) throw failures[0]!.error;
    })());

  const restarted = new Set<ManagedProcess>();
  let reportCrash: (message: string) => void = () => {};
  const watchExit = (p: ManagedProcess) =>
    void p.exited.then((exit) => {
      if (!stopping && !restarted.has(p)) reportCrash(`${p.name} ${describeExit(exit)} unexpectedly:\n${p.tail()}`);
    });
  const crashed = new Promise<string>((resolve) => {
    reportCrash = resolve;
    s.processes.forEach(watchExit);
  });

  /** Stops kube-apiserver and starts it again on the same port and etcd, as a restart in a real cluster. */
  const restartAPIServer = async () => {
    const old = s.apiserver!.process;
    restarted.add(old);
    await old.stop(10_000);
    s.apiserver = startKubeAPIServer(s.apiserverOptions!);
    s.processes[s.processes.indexOf(old)] = s.apiserver.process;
    watchExit(s.apiserver.process);
    await waitForReady(s.apiserver, s.certs!, Date.now() + 60_000);
  };

  return {
    server: s.apiserver!.url,
    etcdURL: s.etcd!.clientURL,
    kubeconfigPath: s.kubeconfig!.path,
    dir: s.dir!,
    certs: s.certs!,
    netns: s.netns,
    veth: s.veth,
    processes: s.processes,
    crds: s.installed!,
    crashed,
    kubeConfig: loadKubeConfig(s.kubeconfig!.path),
    restartAPIServer,
    stop,
  };
}
