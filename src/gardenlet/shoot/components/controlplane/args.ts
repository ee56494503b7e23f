/**
 * The command lines of a shoot's control plane processes, as pure functions of the shoot's networks and its
 * load-balancer addresses: etcd, kube-apiserver, kube-controller-manager (with node IPAM) and kube-scheduler. They
 * run together in a network namespace of their own, like the pods of Gardener's seed; only the API server is
 * reachable from outside, at the load-balancer address(es).
 */
import { join } from 'node:path';
import { urlHost } from '../../../../localenv/net.js';
import type { IPFamily } from '../../../../net/cidr.js';

export const API_SERVER_PORT = 443;
/** Inside the control plane's namespace: etcd on loopback only. */
export const ETCD_CLIENT_URL = 'http://[::1]:2379';
const ETCD_PEER_URL = 'http://[::1]:2380';

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

/**
 * What kube-apiserver binds: the one load-balancer address of a single-stack shoot (nothing of another family
 * listens), `::` for dual-stack, where the namespace holds exactly the two load-balancer addresses (and loopback).
 */
export function apiServerBindAddress(spec: ControlPlaneSpec): string {
  return spec.families.length > 1 ? '::' : primaryAddress(spec);
}

/** `https://[fd00:ff::2]:443`: where the processes inside and the gardenlet reach the API server. */
export function apiServerURL(spec: ControlPlaneSpec, family: IPFamily = spec.families[0]!): string {
  const address = spec.addresses[family];
  if (address === undefined) throw new Error(`no ${family} load-balancer address`);
  return `https://${urlHost(address)}:${API_SERVER_PORT}`;
}

export function etcdArgs(files: ControlPlaneFiles): string[] {
  return [
    '--name=etcd',
    `--data-dir=${files.etcdData}`,
    `--listen-client-urls=${ETCD_CLIENT_URL}`,
    `--advertise-client-urls=${ETCD_CLIENT_URL}`,
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

export function kubeAPIServerArgs(spec: ControlPlaneSpec, files: ControlPlaneFiles): string[] {
  return [
    `--etcd-servers=${ETCD_CLIENT_URL}`,
    `--bind-address=${apiServerBindAddress(spec)}`,
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

export function kubeControllerManagerArgs(spec: ControlPlaneSpec, files: ControlPlaneFiles): string[] {
  const ipam =
    spec.podCIDRs.length > 0
      ? ['--allocate-node-cidrs=true', `--cluster-cidr=${spec.podCIDRs.join(',')}`, ...nodeMaskArgs(spec)]
      : ['--allocate-node-cidrs=false'];
  return [
    `--kubeconfig=${files.controllerManagerKubeconfig}`,
    `--authentication-kubeconfig=${files.controllerManagerKubeconfig}`,
    `--authorization-kubeconfig=${files.controllerManagerKubeconfig}`,
    // Health endpoints on loopback of the control plane's namespace; the gardenlet judges health by the leader
    // Lease it renews.
    '--bind-address=::1',
    '--secure-port=10257',
    ...ipam,
    `--service-cluster-ip-range=${spec.serviceCIDRs.join(',')}`,
    `--cluster-signing-cert-file=${files.caCert}`,
    `--cluster-signing-key-file=${files.caKey}`,
    `--root-ca-file=${files.caCert}`,
    `--service-account-private-key-file=${files.serviceAccountKey}`,
    '--use-service-account-credentials=true',
    '--controllers=*,bootstrapsigner,tokencleaner',
    '--profiling=false',
  ];
}

export function kubeSchedulerArgs(files: ControlPlaneFiles): string[] {
  return [
    `--kubeconfig=${files.schedulerKubeconfig}`,
    `--authentication-kubeconfig=${files.schedulerKubeconfig}`,
    `--authorization-kubeconfig=${files.schedulerKubeconfig}`,
    '--bind-address=::1',
    '--secure-port=10259',
    '--profiling=false',
  ];
}
