/**
 * kube-apiserver for the local control plane: IPv6 bind and advertise addresses, an IPv6 service range, the
 * generated certificates, RBAC; with `nodes`, also what a cluster with nodes needs (the seed nodes of `up`).
 */
import { request } from 'node:https';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { authenticationConfig, WATCH_TERMINATION_GRACE_ARG } from '../gardenlet/shoot/components/controlplane/args.js';
import { FRONT_PROXY_CLIENT_NAME, type Certificates } from './certs.js';
import { urlHost } from '../system/net.js';
import { describeExit, startProcess, type ManagedProcess } from '../system/process.js';

export const DEFAULT_SERVICE_CIDR = 'fd00:10:2::/112';
/**
 * A secondary IPv4 service range, so IPv4 and dual-stack shoots' LoadBalancer Services get ClusterIPs too: the
 * primary family stays IPv6, and allocating an address from a range opens no socket (the namespace has no IPv4).
 */
export const SECONDARY_IPV4_SERVICE_CIDR = '10.96.0.0/16';

/**
 * The service ranges the API server allocates from: the given one, then the given secondary one (a dual-stack seed's
 * second family) or, for an IPv6 primary without one, SECONDARY_IPV4_SERVICE_CIDR.
 */
export function apiServerServiceCIDRs(serviceCIDR: string, secondary?: string): string[] {
  if (secondary !== undefined) return [serviceCIDR, secondary];
  return serviceCIDR.includes(':') ? [serviceCIDR, SECONDARY_IPV4_SERVICE_CIDR] : [serviceCIDR];
}

export interface KubeAPIServerOptions {
  bin: string;
  dir: string;
  certs: Certificates;
  etcdURL: string;
  /** Address to listen on: `::1`, or the namespace's veth address. Not `::` (see control-plane.ts). */
  bindAddress: string;
  /** The address clients use and the `kubernetes` service would point at. */
  advertiseAddress: string;
  port: number;
  serviceCIDR?: string;
  /** A service range of the other family (see apiServerServiceCIDRs). */
  secondaryServiceCIDR?: string;
  netns?: string;
  /**
   * Serve nodes (the seed's): the Node authorizer and NodeRestriction next to RBAC, the advertise address in the
   * `kubernetes` EndpointSlice (it must then be routable, not loopback) and a client certificate for the kubelets.
   */
  nodes?: { kubeletClientCert: string; kubeletClientKey: string };
  extraArgs?: string[];
}

export interface KubeAPIServer {
  process: ManagedProcess;
  /** `https://[::1]:PORT` (the advertise address). */
  url: string;
}

export function startKubeAPIServer(opts: KubeAPIServerOptions): KubeAPIServer {
  const { certs } = opts;
  // As the shoots' API servers: anonymous requests read the health endpoints only, not `/version` nor discovery.
  const authConfig = join(opts.dir, 'authentication-config.yaml');
  writeFileSync(authConfig, authenticationConfig(), { mode: 0o600 });
  const proc = startProcess({
    name: 'kube-apiserver',
    command: opts.bin,
    args: [
      `--etcd-servers=${opts.etcdURL}`,
      `--etcd-cafile=${certs.etcdCACert}`,
      `--etcd-certfile=${certs.etcdClientCert}`,
      `--etcd-keyfile=${certs.etcdClientKey}`,
      `--bind-address=${opts.bindAddress}`,
      `--advertise-address=${opts.advertiseAddress}`,
      `--secure-port=${opts.port}`,
      `--service-cluster-ip-range=${apiServerServiceCIDRs(opts.serviceCIDR ?? DEFAULT_SERVICE_CIDR, opts.secondaryServiceCIDR).join(',')}`,
      // Like a shoot's API server: calico-node (rendered by the network extension) is privileged.
      '--allow-privileged=true',
      `--cert-dir=${join(opts.dir, 'cert-dir')}`,
      `--tls-cert-file=${certs.serverCert}`,
      `--tls-private-key-file=${certs.serverKey}`,
      `--client-ca-file=${certs.caCert}`,
      `--authentication-config=${authConfig}`,
      `--service-account-key-file=${certs.serviceAccountPub}`,
      `--service-account-signing-key-file=${certs.serviceAccountKey}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      // The aggregation layer, as kubeadm sets it up: aggregated APIs (the admission server's
      // shoots/adminkubeconfig) trust the front proxy's certificate for the user in these headers.
      `--requestheader-client-ca-file=${certs.frontProxyCACert}`,
      `--requestheader-allowed-names=${FRONT_PROXY_CLIENT_NAME}`,
      '--requestheader-username-headers=X-Remote-User',
      '--requestheader-uid-headers=X-Remote-Uid',
      '--requestheader-group-headers=X-Remote-Group',
      '--requestheader-extra-headers-prefix=X-Remote-Extra-',
      `--proxy-client-cert-file=${certs.frontProxyClientCert}`,
      `--proxy-client-key-file=${certs.frontProxyClientKey}`,
      // To the endpoints of an APIService's Service: there is no kube-proxy here for its ClusterIP.
      '--enable-aggregator-routing=true',
      ...(opts.nodes !== undefined
        ? [
            '--authorization-mode=Node,RBAC',
            '--enable-admission-plugins=NodeRestriction',
            `--kubelet-client-certificate=${opts.nodes.kubeletClientCert}`,
            `--kubelet-client-key=${opts.nodes.kubeletClientKey}`,
            '--kubelet-preferred-address-types=InternalIP',
          ]
        : [
            '--authorization-mode=RBAC',
            // The endpoint reconciler would publish the advertise address in the `kubernetes` EndpointSlice, and
            // loopback addresses are invalid there: it would log an error every 10s. No pod needs that service
            // without nodes.
            '--endpoint-reconciler-type=none',
          ]),
      '--profiling=false',
      WATCH_TERMINATION_GRACE_ARG,
      ...(opts.extraArgs ?? []),
    ],
    logFile: join(opts.dir, 'kube-apiserver.log'),
    ...(opts.netns !== undefined ? { netns: opts.netns } : {}),
  });
  return { process: proc, url: `https://${urlHost(opts.advertiseAddress)}:${opts.port}` };
}

interface Probe {
  status: number;
  body: string;
}

/** GET a path with the admin client certificate. */
export function adminGet(url: string, certs: Certificates, path: string, timeoutMs = 2000): Promise<Probe> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, url),
      {
        ca: readFileSync(certs.caCert),
        cert: readFileSync(certs.adminCert),
        key: readFileSync(certs.adminKey),
        timeout: timeoutMs,
      },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer in ${timeoutMs}ms`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * Polls /readyz until it answers 200. Fails early when the process exits, and at the deadline with the checks
 * that were still failing and the end of the server's log.
 */
export async function waitForReady(server: KubeAPIServer, certs: Certificates, deadline: number): Promise<void> {
  let last = 'no answer yet';
  for (;;) {
    const exit = server.process.exit();
    if (exit !== undefined) {
      throw new Error(`kube-apiserver ${describeExit(exit)} while starting:\n${server.process.tail()}`);
    }
    try {
      const probe = await adminGet(server.url, certs, '/readyz?verbose');
      if (probe.status === 200) return;
      last = `HTTP ${probe.status}: ${probe.body
        .split('\n')
        .filter((l) => l.includes('failed'))
        .join('; ')}`;
    } catch (e) {
      last = (e as Error).message;
    }
    if (Date.now() > deadline) {
      throw new Error(`kube-apiserver at ${server.url} not ready in time (${last}):\n${server.process.tail()}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
