/**
 * The command lines of a shoot's control plane, as pure functions of the shoot's networks, its load-balancer
 * addresses and where its pods run (ControlPlaneNetwork): etcd, kube-apiserver, kube-controller-manager (with node
 * IPAM) and kube-scheduler, each a pod of the seed namespace (seed-workloads.ts).
 */
import { join } from 'node:path';
import { urlHost } from '../../../../system/net.js';
import type { IPFamily } from '../../../../net/cidr.js';

export const API_SERVER_PORT = 443;
export const ETCD_PORT = 2379;
/** etcd's health and metrics, plain HTTP: what the kubelet probes (the client port wants a client certificate). */
export const ETCD_METRICS_PORT = 2381;
/** A single member: its peer URL never leaves the pod. */
const ETCD_PEER_URL = 'http://[::1]:2380';

/** Where the control plane's pods listen and find each other. */
export interface ControlPlaneNetwork {
  /** Every address of a pod: `::` where the seed has IPv6 (Go listens on both families there), else `0.0.0.0`. */
  readonly listenAddress: string;
  /** etcd's client URL as kube-apiserver reaches it (its Service in the seed namespace). */
  readonly etcdClientURL: string;
}

export interface ControlPlaneSpec {
  /** The seed namespace (`shoot--<project>--<shoot>`): names the instance. */
  readonly name: string;
  /** The shoot's IP families, primary first. */
  readonly families: readonly IPFamily[];
  /** The load-balancer address of each family. */
  readonly addresses: Readonly<Partial<Record<IPFamily, string>>>;
  /** Service ranges, in the order of the families. */
  readonly serviceCIDRs: readonly string[];
  /** Pod ranges, in the order of the families; empty for a workerless shoot (no node IPAM then). */
  readonly podCIDRs: readonly string[];
  /** The node mask of each family (kube-controller-manager's node IPAM). */
  readonly nodeCIDRMaskSizes: Readonly<Partial<Record<IPFamily, number>>>;
  /** `api.<shoot>.<project>.external.<domain>` and the internal one. */
  readonly externalDomain: string;
  readonly internalDomain: string;
}

/** Files of one control plane, under its folder. */
export function controlPlaneFiles(dir: string) {
  const pki = join(dir, 'pki');
  return {
    dir,
    pki,
    etcdData: join(dir, 'etcd'),
    caCert: join(pki, 'ca.crt'),
    caKey: join(pki, 'ca.key'),
    serverCert: join(pki, 'apiserver.crt'),
    serverKey: join(pki, 'apiserver.key'),
    kubeletClientCert: join(pki, 'apiserver-kubelet-client.crt'),
    kubeletClientKey: join(pki, 'apiserver-kubelet-client.key'),
    etcdCACert: join(pki, 'etcd-ca.crt'),
    etcdClientCert: join(pki, 'etcd-client.crt'),
    etcdClientKey: join(pki, 'etcd-client.key'),
    etcdServerCert: join(pki, 'etcd-server.crt'),
    etcdServerKey: join(pki, 'etcd-server.key'),
    authenticationConfig: join(pki, 'authentication-config.yaml'),
    serviceAccountKey: join(pki, 'sa.key'),
    serviceAccountPub: join(pki, 'sa.pub'),
    controllerManagerKubeconfig: join(dir, 'kube-controller-manager.kubeconfig'),
    schedulerKubeconfig: join(dir, 'kube-scheduler.kubeconfig'),
    certDir: join(dir, 'cert-dir'),
    logs: join(dir, 'logs'),
  };
}
export type ControlPlaneFiles = ReturnType<typeof controlPlaneFiles>;

export function primaryAddress(spec: ControlPlaneSpec): string {
  const address = spec.addresses[spec.families[0]!];
  if (address === undefined) throw new Error(`no ${spec.families[0]} load-balancer address`);
  return address;
}

/** `https://[fd00:ff::2]:443`: where the processes inside and the gardenlet reach the API server. */
export function apiServerURL(spec: ControlPlaneSpec, family: IPFamily = spec.families[0]!): string {
  const address = spec.addresses[family];
  if (address === undefined) throw new Error(`no ${family} load-balancer address`);
  return `https://${urlHost(address)}:${API_SERVER_PORT}`;
}

/** etcd with TLS and client-certificate authentication (its own CA): kube-apiserver is its only client. */
export function etcdArgs(files: ControlPlaneFiles, net: ControlPlaneNetwork): string[] {
  const listen = urlHost(net.listenAddress);
  return [
    '--name=etcd',
    `--data-dir=${files.etcdData}`,
    `--listen-client-urls=https://${listen}:${ETCD_PORT}`,
    `--advertise-client-urls=${net.etcdClientURL}`,
    `--listen-metrics-urls=http://${listen}:${ETCD_METRICS_PORT}`,
    `--cert-file=${files.etcdServerCert}`,
    `--key-file=${files.etcdServerKey}`,
    '--client-cert-auth=true',
    `--trusted-ca-file=${files.etcdCACert}`,
    `--listen-peer-urls=${ETCD_PEER_URL}`,
    `--initial-advertise-peer-urls=${ETCD_PEER_URL}`,
    `--initial-cluster=etcd=${ETCD_PEER_URL}`,
    '--initial-cluster-state=new',
    // A crash of the process keeps what it wrote (the page cache survives it); only a host crash could lose the
    // last writes, and fsync costs seconds per shoot on slow disks.
    '--unsafe-no-fsync',
    '--log-level=warn',
  ];
}

/** The health endpoints anonymous requests may read; everything else (`/version` included) needs a client. */
export const ANONYMOUS_PATHS = ['/livez', '/readyz', '/healthz'] as const;

/**
 * kube-apiserver's AuthenticationConfiguration, as Gardener configures it: anonymous requests only for the health
 * endpoints (what probes and the care controller read), never for anything else.
 */
export function authenticationConfig(): string {
  return [
    'apiVersion: apiserver.config.k8s.io/v1',
    'kind: AuthenticationConfiguration',
    'anonymous:',
    '  enabled: true',
    '  conditions:',
    ...ANONYMOUS_PATHS.map((path) => `    - path: ${path}`),
    '',
  ].join('\n');
}

/**
 * kube-apiserver closes its open watches within this time when it stops. Without it, they hold its HTTP server's
 * shutdown until their request timeout: a stopped kube-apiserver took 10 s to exit with one watch open (1.2 s with
 * this), and a pod of it was killed at its grace period, so every shoot deletion, hibernation and control plane
 * restart waited for that. Its clients (kubelets, controllers) watch again, from where they were.
 */
export const WATCH_TERMINATION_GRACE_ARG = '--shutdown-watch-termination-grace-period=2s';

export function kubeAPIServerArgs(
  spec: ControlPlaneSpec,
  files: ControlPlaneFiles,
  net: ControlPlaneNetwork,
): string[] {
  return [
    `--etcd-servers=${net.etcdClientURL}`,
    `--etcd-cafile=${files.etcdCACert}`,
    `--etcd-certfile=${files.etcdClientCert}`,
    `--etcd-keyfile=${files.etcdClientKey}`,
    `--bind-address=${net.listenAddress}`,
    `--advertise-address=${primaryAddress(spec)}`,
    `--secure-port=${API_SERVER_PORT}`,
    `--external-hostname=${spec.externalDomain}`,
    `--service-cluster-ip-range=${spec.serviceCIDRs.join(',')}`,
    '--allow-privileged=true',
    '--authorization-mode=Node,RBAC',
    '--enable-admission-plugins=NodeRestriction',
    // Machines whose names nobody knows in advance join with a bootstrap token (TLS bootstrapping).
    '--enable-bootstrap-token-auth=true',
    `--authentication-config=${files.authenticationConfig}`,
    `--cert-dir=${files.certDir}`,
    `--tls-cert-file=${files.serverCert}`,
    `--tls-private-key-file=${files.serverKey}`,
    `--client-ca-file=${files.caCert}`,
    `--kubelet-client-certificate=${files.kubeletClientCert}`,
    `--kubelet-client-key=${files.kubeletClientKey}`,
    '--kubelet-preferred-address-types=InternalIP',
    `--service-account-key-file=${files.serviceAccountPub}`,
    `--service-account-signing-key-file=${files.serviceAccountKey}`,
    `--service-account-issuer=https://${spec.internalDomain}`,
    '--profiling=false',
    WATCH_TERMINATION_GRACE_ARG,
  ];
}

/** The node mask flags kube-controller-manager accepts: one flag single-stack, one per family dual-stack. */
export function nodeMaskArgs(spec: ControlPlaneSpec): string[] {
  if (spec.families.length === 1) {
    const mask = spec.nodeCIDRMaskSizes[spec.families[0]!];
    return mask === undefined ? [] : [`--node-cidr-mask-size=${mask}`];
  }
  return spec.families.flatMap((family) => {
    const mask = spec.nodeCIDRMaskSizes[family];
    return mask === undefined ? [] : [`--node-cidr-mask-size-${family.toLowerCase()}=${mask}`];
  });
}

/**
 * Leader election of kube-controller-manager and kube-scheduler. Each runs as one replica, but keeps leader election
 * on as Gardener's shoots do: a rollout or an evicted pod briefly runs two. Client-go's defaults (a 15-s lease given
 * up when not renewed for 10 s, renewed every 2 s) make a controller exit as soon as its API server answers slowly
 * for 10 s, which on a seed full of shoots is often, and each restart costs more CPU than the lease saved; they also
 * write a Lease every 2 s per component and shoot. A lease of 60 s given up after 40 s, renewed every 10 s, rides out
 * a busy host. A leader that stops releases its lease (kube-scheduler always; kube-controller-manager with its
 * `ControllerManagerReleaseLeaderElectionLockOnExit` gate), so neither a rollout nor a wake-up from hibernation (the
 * controllers stop before their API server) waits for the lease to run out; a crashed one's successor waits up to
 * 60 s.
 */
export const LEADER_ELECTION_ARGS = [
  '--leader-elect=true',
  '--leader-elect-lease-duration=60s',
  '--leader-elect-renew-deadline=40s',
  '--leader-elect-retry-period=10s',
] as const;

export function kubeControllerManagerArgs(
  spec: ControlPlaneSpec,
  files: ControlPlaneFiles,
  net: ControlPlaneNetwork,
): string[] {
  const ipam =
    spec.podCIDRs.length > 0
      ? ['--allocate-node-cidrs=true', `--cluster-cidr=${spec.podCIDRs.join(',')}`, ...nodeMaskArgs(spec)]
      : ['--allocate-node-cidrs=false'];
  return [
    `--kubeconfig=${files.controllerManagerKubeconfig}`,
    `--authentication-kubeconfig=${files.controllerManagerKubeconfig}`,
    `--authorization-kubeconfig=${files.controllerManagerKubeconfig}`,
    // Health endpoints on the pod's addresses, for the kubelet's probes.
    `--bind-address=${net.listenAddress}`,
    '--secure-port=10257',
    ...ipam,
    `--service-cluster-ip-range=${spec.serviceCIDRs.join(',')}`,
    `--cluster-signing-cert-file=${files.caCert}`,
    `--cluster-signing-key-file=${files.caKey}`,
    `--root-ca-file=${files.caCert}`,
    `--service-account-private-key-file=${files.serviceAccountKey}`,
    '--use-service-account-credentials=true',
    '--controllers=*,bootstrapsigner,tokencleaner',
    ...LEADER_ELECTION_ARGS,
    '--feature-gates=ControllerManagerReleaseLeaderElectionLockOnExit=true',
    '--profiling=false',
  ];
}

export function kubeSchedulerArgs(files: ControlPlaneFiles, net: ControlPlaneNetwork): string[] {
  return [
    `--kubeconfig=${files.schedulerKubeconfig}`,
    `--authentication-kubeconfig=${files.schedulerKubeconfig}`,
    `--authorization-kubeconfig=${files.schedulerKubeconfig}`,
    `--bind-address=${net.listenAddress}`,
    '--secure-port=10259',
    ...LEADER_ELECTION_ARGS,
    '--profiling=false',
  ];
}
