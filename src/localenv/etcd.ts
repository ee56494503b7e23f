/**
 * A single-member etcd for the local control plane, on an IPv6 loopback address only (etcd's defaults are
 * `localhost` URLs, which would also bind 127.0.0.1), serving TLS to clients with a certificate of its own CA only:
 * another local user can neither read nor write it (the API server holds the one client certificate).
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import type { Certificates } from './certs.js';
import { join } from 'node:path';
import { describeExit, startProcess, type ManagedProcess } from '../system/process.js';

export interface EtcdOptions {
  bin: string;
  /** Data and log folder (temporary). */
  dir: string;
  clientPort: number;
  peerPort: number;
  netns?: string;
  /** etcd's CA, serving certificate and the client certificate the health check uses. */
  tls: Pick<Certificates, 'etcdCACert' | 'etcdServerCert' | 'etcdServerKey' | 'etcdClientCert' | 'etcdClientKey'>;
}

export interface Etcd {
  process: ManagedProcess;
  /** `https://[::1]:PORT`, for kube-apiserver's --etcd-servers. */
  clientURL: string;
  tls: EtcdOptions['tls'];
}

export function startEtcd(opts: EtcdOptions): Etcd {
  // Loopback only, IPv6: the serving certificate names `::1`.
  const host = '[::1]';
  const clientURL = `https://${host}:${opts.clientPort}`;
  const peerURL = `http://${host}:${opts.peerPort}`;
  const proc = startProcess({
    name: 'etcd',
    command: opts.bin,
    args: [
      '--name=default',
      `--data-dir=${join(opts.dir, 'data')}`,
      `--listen-client-urls=${clientURL}`,
      `--advertise-client-urls=${clientURL}`,
      `--listen-peer-urls=${peerURL}`,
      `--initial-advertise-peer-urls=${peerURL}`,
      `--initial-cluster=default=${peerURL}`,
      '--initial-cluster-state=new',
      `--cert-file=${opts.tls.etcdServerCert}`,
      `--key-file=${opts.tls.etcdServerKey}`,
      '--client-cert-auth=true',
      `--trusted-ca-file=${opts.tls.etcdCACert}`,
      // The data is thrown away: fsync only costs time (seconds per test run on slow disks).
      '--unsafe-no-fsync',
      '--log-level=warn',
    ],
    logFile: join(opts.dir, 'etcd.log'),
    ...(opts.netns !== undefined ? { netns: opts.netns } : {}),
  });
  return { process: proc, clientURL, tls: opts.tls };
}

/** GET /health once, with the client certificate: true when etcd answers `"health":"true"`. */
function healthy(etcd: Etcd): Promise<boolean> {
  return new Promise((resolve) => {
    const tls = {
      ca: readFileSync(etcd.tls.etcdCACert),
      cert: readFileSync(etcd.tls.etcdClientCert),
      key: readFileSync(etcd.tls.etcdClientKey),
    };
    const req = request(`${etcd.clientURL}/health`, { timeout: 1000, ...tls }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve(res.statusCode === 200 && /"health":\s*"true"/.test(body)));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

/**
 * Waits until etcd reports healthy. Only possible from the same network namespace; inside a separate one the API
 * server's /readyz (which checks etcd) is the signal instead.
 */
export async function waitForEtcd(etcd: Etcd, deadline: number): Promise<void> {
  for (;;) {
    const exit = etcd.process.exit();
    if (exit !== undefined) throw new Error(`etcd ${describeExit(exit)} while starting:\n${etcd.process.tail()}`);
    if (await healthy(etcd)) return;
    if (Date.now() > deadline)
      throw new Error(`etcd at ${etcd.clientURL} not healthy in time:\n${etcd.process.tail()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
