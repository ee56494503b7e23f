/**
 * A single-member etcd for the local control plane, on an IPv6 loopback address only (etcd's defaults are
 * `localhost` URLs, which would also bind 127.0.0.1).
 */
import { request } from 'node:http';
import { join } from 'node:path';
import { urlHost } from './net.js';
import { describeExit, startProcess, type ManagedProcess } from './process.js';

export interface EtcdOptions {
  bin: string;
  /** Data and log folder (temporary). */
  dir: string;
  /** Listen address, `::1` unless told otherwise. */
  address?: string;
  clientPort: number;
  peerPort: number;
  netns?: string;
}

export interface Etcd {
  process: ManagedProcess;
  /** `http://[::1]:PORT`, for kube-apiserver's --etcd-servers. */
  clientURL: string;
}

export function startEtcd(opts: EtcdOptions): Etcd {
  const host = urlHost(opts.address ?? '::1');
  const clientURL = `http://${host}:${opts.clientPort}`;
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
      // The data is thrown away: fsync only costs time (seconds per test run on slow disks).
      '--unsafe-no-fsync',
      '--log-level=warn',
    ],
    logFile: join(opts.dir, 'etcd.log'),
    ...(opts.netns !== undefined ? { netns: opts.netns } : {}),
  });
  return { process: proc, clientURL };
}

/** GET /health once: true when etcd answers `"health":"true"`. */
function healthy(clientURL: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(`${clientURL}/health`, { timeout: 1000 }, (res) => {
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
    if (await healthy(etcd.clientURL)) return;
    if (Date.now() > deadline)
      throw new Error(`etcd at ${etcd.clientURL} not healthy in time:\n${etcd.process.tail()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
