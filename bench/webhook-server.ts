/**
 * A server of the webhook benchmark, in a process of its own so that its CPU time and RSS are its own:
 * - `webhook`: the admission webhook as `gardener-ipv6 run --components admission` runs it (the runtime composition,
 *   alpha gates on, logging JSON lines to stdout at the default level);
 * - `baseline`: a bare Node HTTPS server with the same certificate that reads the body and answers a fixed
 *   AdmissionReview: what serving HTTPS alone costs.
 * Tells its parent (IPC) `{ port, healthPort? }` once it serves; stops on SIGTERM or when the parent goes away.
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startRuntime } from '../src/app/runtime.js';
import { loadKubeConfig } from '../src/cli/run.js';
import { featureGates } from '../src/featuregate/featuregate.js';
import { localDNSProvider } from '../src/gardenlet/dns-provider.js';
import { newLogger } from '../src/runtime/log.js';

export interface WebhookServerConfig {
  readonly target: 'webhook' | 'baseline';
  /** With `tls.crt`, `tls.key` and `ca.crt`. */
  readonly certDir: string;
  readonly kubeconfig?: string;
}

/** The baseline's one answer. */
export const FIXED_ANSWER = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  response: { uid: '00000000-0000-4000-8000-000000000000', allowed: true },
});

async function startBaseline(certDir: string): Promise<{ port: number; stop(): Promise<void> }> {
  const server = https.createServer(
    {
      cert: readFileSync(join(certDir, 'tls.crt')),
      key: readFileSync(join(certDir, 'tls.key')),
      minVersion: 'TLSv1.2',
    },
    (req, res) => {
      req.on('data', () => {});
      req.on('end', () =>
        res
          .writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(FIXED_ANSWER) })
          .end(FIXED_ANSWER),
      );
    },
  );
  await new Promise<void>((resolve) => server.listen({ host: '::1', port: 0 }, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function startWebhook(
  config: WebhookServerConfig,
): Promise<{ port: number; healthPort: number; stop(): Promise<void> }> {
  const runtime = await startRuntime({
    kubeConfig: loadKubeConfig(config.kubeconfig),
    gates: featureGates({ IPv6SingleStack: true, DualStack: true }),
    logger: newLogger({ name: 'gardener-ipv6' }),
    components: ['admission'],
    webhook: { host: '::1', port: 0, certDir: config.certDir, register: false },
    gardenlet: { dns: localDNSProvider() },
    health: { host: '::1', port: 0 },
  });
  return { port: runtime.webhook!.port, healthPort: runtime.manager.healthPort()!, stop: () => runtime.stop() };
}

const config = JSON.parse(process.argv[2] ?? '{}') as WebhookServerConfig;
const server = config.target === 'baseline' ? await startBaseline(config.certDir) : await startWebhook(config);
const stop = () => void server.stop().finally(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('disconnect', stop);
process.send?.({ port: server.port, ...('healthPort' in server ? { healthPort: server.healthPort } : {}) });
