/**
 * kube-controller-manager of the local control plane. Without nodes only the controllers an API server without
 * nodes needs: the namespace controller (a deleted namespace is emptied and goes away, as the gardenlet's shoot
 * deletion expects) and the garbage collector (owner references). With nodes (the seed nodes of `up`), every
 * default controller, node IPAM from the seed's pod ranges and the service-account and root-CA publishers that
 * pods need. It serves nothing: `--secure-port=0`.
 */
import { join } from 'node:path';
import { startProcess, type ManagedProcess } from '../system/process.js';

export const CONTROLLERS = ['namespace-controller', 'garbage-collector-controller'];

export interface NodeControllersOptions {
  /** The pod ranges the Nodes' podCIDRs come from, one per family. */
  readonly clusterCIDRs: readonly string[];
  /** @default 64 (IPv6) and 24 (IPv4), as Gardener's seeds */
  readonly nodeCIDRMaskSizes?: { IPv6?: number; IPv4?: number };
  /** The API server's service ranges, as it was given them. */
  readonly serviceCIDRs: readonly string[];
  readonly caCert: string;
  readonly caKey: string;
  readonly serviceAccountKey: string;
}

export interface KubeControllerManagerOptions {
  bin: string;
  dir: string;
  kubeconfigPath: string;
  netns?: string;
  nodes?: NodeControllersOptions;
}

/** The flags of every controller a cluster with nodes needs (a pure function: tested on its own). */
export function nodeControllerArgs(nodes: NodeControllersOptions): string[] {
  const ipv6 = nodes.clusterCIDRs.filter((c) => c.includes(':'));
  const ipv4 = nodes.clusterCIDRs.filter((c) => !c.includes(':'));
  const mask6 = nodes.nodeCIDRMaskSizes?.IPv6 ?? 64;
  const mask4 = nodes.nodeCIDRMaskSizes?.IPv4 ?? 24;
  // One flag for a single-stack range, one per family for dual-stack (kube-controller-manager refuses the other).
  const masks =
    ipv6.length > 0 && ipv4.length > 0
      ? [`--node-cidr-mask-size-ipv6=${mask6}`, `--node-cidr-mask-size-ipv4=${mask4}`]
      : [`--node-cidr-mask-size=${ipv6.length > 0 ? mask6 : mask4}`];
  return [
    '--controllers=*',
    '--allocate-node-cidrs=true',
    `--cluster-cidr=${nodes.clusterCIDRs.join(',')}`,
    ...masks,
    `--service-cluster-ip-range=${nodes.serviceCIDRs.join(',')}`,
    `--cluster-signing-cert-file=${nodes.caCert}`,
    `--cluster-signing-key-file=${nodes.caKey}`,
    `--root-ca-file=${nodes.caCert}`,
    `--service-account-private-key-file=${nodes.serviceAccountKey}`,
    '--use-service-account-credentials=true',
  ];
}

export function startKubeControllerManager(opts: KubeControllerManagerOptions): ManagedProcess {
  return startProcess({
    name: 'kube-controller-manager',
    command: opts.bin,
    args: [
      `--kubeconfig=${opts.kubeconfigPath}`,
      ...(opts.nodes !== undefined
        ? nodeControllerArgs(opts.nodes)
        : [`--controllers=${CONTROLLERS.join(',')}`, '--use-service-account-credentials=false']),
      '--secure-port=0',
      '--leader-elect=false',
      // A namespace with nothing left in it goes at once; the default resync is for large clusters.
      '--concurrent-namespace-syncs=5',
    ],
    logFile: join(opts.dir, 'kube-controller-manager.log'),
    ...(opts.netns !== undefined ? { netns: opts.netns } : {}),
  });
}

/** kube-scheduler of the local control plane with nodes; serves nothing (`--secure-port=0`). */
export function startKubeScheduler(opts: {
  bin: string;
  dir: string;
  kubeconfigPath: string;
  netns?: string;
}): ManagedProcess {
  return startProcess({
    name: 'kube-scheduler',
    command: opts.bin,
    args: [`--kubeconfig=${opts.kubeconfigPath}`, '--secure-port=0', '--leader-elect=false'],
    logFile: join(opts.dir, 'kube-scheduler.log'),
    ...(opts.netns !== undefined ? { netns: opts.netns } : {}),
  });
}
