/**
 * The garden's etcd (`up`'s, the tests'): TLS with client-certificate authentication against a CA of its own, so a
 * local user without its client certificate reads and writes nothing, and neither does a certificate of the
 * cluster's CA (the admin's, a Node's). The API server, its one client, works; it answers anonymous requests on its
 * health endpoints only.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { request as plainRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, type ControlPlane } from '../../src/localenv/control-plane.js';
import { Refs } from '../../src/apis/refs.js';
import { ResourceClient } from '../../src/runtime/client.js';

/** GET `path` of etcd with the given client certificate (or none): the status code, or the error's code. */
function get(url: string, path: string, tls: { ca: Buffer; cert?: Buffer; key?: Buffer }): Promise<string> {
  return new Promise((resolve) => {
    const req = request(`${url}${path}`, { ...tls, timeout: 5_000 }, (res) => {
      res.resume();
      resolve(String(res.statusCode));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    req.end();
  });
}

describe("the garden's etcd", () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startControlPlane({ crds: false });
  }, 120_000);
  afterAll(async () => {
    await cp?.stop();
  });

  it('answers its own client certificate, and the API server works through it', async () => {
    const read = (f: string) => readFileSync(f);
    const tls = {
      ca: read(cp.certs.etcdCACert),
      cert: read(cp.certs.etcdClientCert),
      key: read(cp.certs.etcdClientKey),
    };
    expect(cp.etcdURL).toMatch(/^https:\/\/\[::1\]:\d+$/);
    expect(await get(cp.etcdURL, '/health', tls)).toBe('200');
    const client = new ResourceClient(cp.kubeConfig());
    try {
      expect((await client.list(Refs.namespace, {})).items.length).toBeGreaterThan(0);
    } finally {
      client.close();
    }
  });

  it('refuses a client without a certificate, one of the cluster CA (the admin), and plain HTTP', async () => {
    const read = (f: string) => readFileSync(f);
    const ca = read(cp.certs.etcdCACert);
    // TLS without a client certificate: the handshake fails (certificate required), no answer.
    expect(await get(cp.etcdURL, '/health', { ca })).not.toMatch(/^\d+$/);
    // The admin's certificate is of the cluster's CA, not etcd's.
    const admin = { ca, cert: read(cp.certs.adminCert), key: read(cp.certs.adminKey) };
    expect(await get(cp.etcdURL, '/health', admin)).not.toMatch(/^\d+$/);
    // Plain HTTP gets no answer at all: the TLS listener drops it.
    const plain = await new Promise<string>((resolve) => {
      const req = plainRequest(cp.etcdURL.replace('https:', 'http:') + '/health', { timeout: 5_000 }, (res) => {
        res.resume();
        resolve(String(res.statusCode));
      });
      req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
      req.end();
    });
    expect(plain).not.toMatch(/^\d+$/);
  });

  it("serves anonymous requests the API server's health endpoints only, as a shoot's", async () => {
    const read = (f: string) => readFileSync(f);
    const ca = read(cp.certs.caCert);
    for (const path of ['/readyz', '/livez', '/healthz']) expect(await get(cp.server, path, { ca }), path).toBe('200');
    for (const path of ['/version', '/api', '/apis', '/openapi/v2']) {
      expect(await get(cp.server, path, { ca }), path).toBe('401');
    }
    const admin = { ca, cert: read(cp.certs.adminCert), key: read(cp.certs.adminKey) };
    expect(await get(cp.server, '/version', admin)).toBe('200');
  });
});
