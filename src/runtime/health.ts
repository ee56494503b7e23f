import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface HealthServerOptions {
  /** Address to bind; `::` takes IPv6 and (dual-stack hosts) IPv4. Never `0.0.0.0`. @default '::' */
  host?: string;
  /** 0 picks a free port. */
  port: number;
  /** `/readyz` answers 200 while true, 503 otherwise. */
  readiness: () => boolean;
  /** `/healthz` answers 200 while true, 503 otherwise. @default always healthy */
  liveness?: () => boolean;
  /** Served at `/metrics`. */
  registry: Registry;
}

export interface HealthServer {
  /** The port bound (useful with port 0). */
  readonly port: number;
  close(): Promise<void>;
}

/** Serves `/healthz`, `/readyz` and `/metrics` (Prometheus text format) over plain HTTP. */
export async function startHealthServer(opts: HealthServerOptions): Promise<HealthServer> {
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD' }).end();
      return;
    }
    const probe = (ok: boolean): void => {
      res.writeHead(ok ? 200 : 503, { 'Content-Type': 'text/plain; charset=utf-8' }).end(ok ? 'ok\n' : 'not ok\n');
    };
    switch (path) {
      case '/healthz':
      case '/livez':
        probe(opts.liveness ? safe(opts.liveness) : true);
        return;
      case '/readyz':
        probe(safe(opts.readiness));
        return;
      case '/metrics':
        opts.registry.metrics().then(
          (text) => res.writeHead(200, { 'Content-Type': opts.registry.contentType }).end(text),
          (e: unknown) => res.writeHead(500).end(`collecting metrics failed: ${String(e)}\n`),
        );
        return;
      default:
        res.writeHead(404).end();
    }
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: opts.host ?? '::', port: opts.port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((e) => (e ? reject(e) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function safe(check: () => boolean): boolean {
  try {
    return check();
  } catch {
    return false;
  }
}
