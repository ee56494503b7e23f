/**
 * `applyExampleShoot` lets go at once when its signal aborts, whichever request it is waiting on: an API server
 * can hold a request for seconds (the first write a webhook guards waits for the server's webhook informers), and
 * `up` must stop within its bound after a signal.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { applyExampleShoot } from '../../src/app/local-environment.js';
import { ResourceClient } from '../../src/runtime/client.js';
import { waitFor } from '../support/wait.js';

/** An API server on [::1] that answers what `answer` answers and holds the rest (until the client goes). */
async function apiServer(answer: (req: http.IncomingMessage) => { code: number; body: unknown } | undefined) {
  const seen: string[] = [];
  const closed: string[] = [];
  const server = http.createServer((req, res) => {
    const line = `${req.method} ${req.url}`;
    seen.push(line);
    req.resume();
    req.on('end', () => {
      const a = answer(req);
      if (a) res.writeHead(a.code, { 'Content-Type': 'application/json' }).end(JSON.stringify(a.body));
    });
    res.on('close', () => closed.push(line));
  });
  await new Promise<void>((resolve) => server.listen({ host: '::1', port: 0 }, resolve));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://[::1]:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
    currentContext: 'c',
  });
  const client = new ResourceClient(kc);
  stops.push(async () => {
    client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { client, seen, closed };
}

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

const invalid = {
  code: 422,
  body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 422, reason: 'Invalid', message: 'IPv5' },
};

describe('applyExampleShoot', () => {
  it('stops waiting for the admission probe the API server holds when its signal aborts', async () => {
    const api = await apiServer(() => undefined);
    const stop = new AbortController();
    const applying = applyExampleShoot(api.client, { signal: stop.signal });
    applying.catch(() => {});
    await waitFor(() => api.seen.length === 1, { message: 'the dry-run probe' });
    expect(api.seen[0]).toMatch(
      /^POST \/apis\/core\.gardener\.cloud\/v1beta1\/namespaces\/default\/shoots\?.*dryRun=All/,
    );

    stop.abort(new Error('SIGTERM'));
    let settled: unknown;
    applying.then(
      () => (settled = 'resolved'),
      (e: unknown) => (settled = e),
    );
    // Well within up's stop bound; the held request would otherwise last until the client's own timeout.
    await waitFor(() => settled !== undefined, {
      timeoutMs: 1_000,
      intervalMs: 5,
      message: 'applyExampleShoot to end',
    });
    expect(settled).toBeInstanceOf(Error);
    await waitFor(() => api.closed.length === 1, { timeoutMs: 1_000, message: 'the probe request to be cut' });
  });

  it('applies nothing more once its signal aborted during an apply', async () => {
    const api = await apiServer((req) => (req.method === 'POST' ? invalid : undefined));
    const stop = new AbortController();
    const applying = applyExampleShoot(api.client, { signal: stop.signal });
    applying.catch(() => {});
    // The probe was refused (the webhook answers); the namespace's apply is held.
    await waitFor(() => api.seen.length === 2, { message: 'the namespace apply' });
    expect(api.seen[1]).toMatch(/^PATCH \/api\/v1\/namespaces\/garden-local\?/);

    stop.abort(new Error('SIGTERM'));
    await expect(applying).rejects.toThrow();
    await waitFor(() => api.closed.length === 2, { timeoutMs: 1_000, message: 'the apply request to be cut' });
    expect(api.seen).toHaveLength(2);
  });
});
