/**
 * The webhook server over real HTTPS on [::1], with a certificate made by the local environment's CA helpers.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AdmissionReviewResponse } from '../../src/admission/review.js';
import { Registry } from 'prom-client';
import { startAdmissionServer, type AdmissionServer, type AdmissionServerOptions } from '../../src/admission/server.js';
import { generateCertificates } from '../../src/localenv/certs.js';
import { newLogger, silentLogger } from '../../src/runtime/log.js';
import { dnsRecordObject, gateSets, ipv6ShootObject } from '../fixtures/objects.js';
import { extensionAdmission } from '../../src/app/extension-admission.js';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

interface TLSFiles {
  dir: string;
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
  certFile: string;
  keyFile: string;
}

async function makeCertificates(): Promise<TLSFiles> {
  const dir = await mkdtemp(join(tmpdir(), 'gardener-ipv6-admission-'));
  const certs = await generateCertificates(dir, { ipAddresses: ['::1'], dnsNames: ['localhost'], days: 1 });
  return {
    dir,
    ca: await readFile(certs.caCert),
    cert: await readFile(certs.serverCert),
    key: await readFile(certs.serverKey),
    certFile: certs.serverCert,
    keyFile: certs.serverKey,
  };
}

function call(
  server: AdmissionServer,
  ca: Buffer,
  opts: { method?: string; path: string; body?: string | Buffer; headers?: Record<string, string>; chunked?: boolean },
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { 'Content-Type': 'application/json', ...opts.headers };
    if (opts.body !== undefined && !opts.chunked) headers['Content-Length'] = Buffer.byteLength(opts.body);
    const req = https.request(
      { host: '::1', port: server.port, method: opts.method ?? 'POST', path: opts.path, ca, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
        );
        res.on('error', reject);
      },
    );
    // The server may answer (413) and stop reading before the whole body is sent.
    req.on('error', (e: NodeJS.ErrnoException) =>
      e.code === 'EPIPE' || e.code === 'ECONNRESET' ? undefined : reject(e),
    );
    if (opts.body !== undefined && opts.chunked) {
      const body = Buffer.from(opts.body);
      for (let i = 0; i < body.length; i += 64 * 1024) req.write(body.subarray(i, i + 64 * 1024));
      req.end();
    } else {
      req.end(opts.body);
    }
  });
}

const reviewOf = (object: unknown, uid = '5d3e1f00-0000-4000-8000-00000000000a') =>
  JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      operation: 'CREATE',
      object,
      resource: { group: 'core.gardener.cloud', version: 'v1beta1', resource: 'shoots' },
    },
  });

describe('admission webhook server', () => {
  let tls: TLSFiles;
  let server: AdmissionServer;
  const lines: Record<string, unknown>[] = [];
  const lookupSeed = vi.fn(async (_name: string): Promise<unknown> => undefined);
  const registry = new Registry();
  let ready = false;

  beforeAll(async () => {
    tls = await makeCertificates();
    const destination = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split('\n'))
          if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    server = await startAdmissionServer({
      tls: { cert: tls.cert, key: tls.key },
      host: '::1',
      port: 0,
      gates: gateSets.none,
      extensionAdmission: extensionAdmission(),
      lookupSeed,
      ready: () => ready,
      metrics: registry,
      logger: newLogger({ destination, level: 'debug' }),
    });
  });

  afterAll(async () => {
    await server?.close();
    if (tls) await rm(tls.dir, { recursive: true, force: true });
  });

  it('listens on the given IPv6 address and reports its bracketed URL', () => {
    expect(server.host).toBe('::1');
    expect(server.port).toBeGreaterThan(0);
    expect(server.url).toBe(`https://[::1]:${server.port}`);
  });

  it('answers a validating review (with the query the API server adds)', async () => {
    const reply = await call(server, tls.ca, { path: '/validate?timeout=10s', body: reviewOf(ipv6ShootObject()) });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json');
    const answer = JSON.parse(reply.body) as AdmissionReviewResponse;
    expect(answer).toMatchObject({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: {
        uid: '5d3e1f00-0000-4000-8000-00000000000a',
        allowed: false,
        status: { code: 422, reason: 'Invalid' },
      },
    });
    expect(answer.response.status?.details?.causes?.[0]?.field).toBe('spec.networking.ipFamilies');
    // A denial is an ordinary answer: logged at debug, with the reasons, and counted.
    expect(lines).toContainEqual(
      expect.objectContaining({
        msg: 'denied',
        webhook: 'validate',
        uid: '5d3e1f00-0000-4000-8000-00000000000a',
        code: 422,
        level: 'debug',
        message: expect.stringContaining('spec.networking.ipFamilies'),
      }),
    );
    expect(lines.filter((l) => l.level !== 'debug' && l.msg !== 'admission webhook server listening')).toEqual([]);
    const counted = await registry.getSingleMetric('admission_webhook_reviews_total')?.get();
    expect(counted?.values).toContainEqual({
      labels: { webhook: 'validate', kind: 'Shoot', result: 'denied' },
      value: 1,
    });
  });

  it('answers a mutating review with a JSON patch', async () => {
    const reply = await call(server, tls.ca, { path: '/mutate', body: reviewOf(dnsRecordObject()) });
    expect(reply.status).toBe(200);
    const answer = JSON.parse(reply.body) as AdmissionReviewResponse;
    expect(answer.response).toMatchObject({ allowed: true, patchType: 'JSONPatch' });
    expect(JSON.parse(Buffer.from(answer.response.patch!, 'base64').toString())).toEqual([
      { op: 'add', path: '/spec/ttl', value: 120 },
    ]);
  });

  it('accepts a chunked body without Content-Length', async () => {
    const reply = await call(server, tls.ca, { path: '/mutate', body: reviewOf(dnsRecordObject()), chunked: true });
    expect(reply.status).toBe(200);
  });

  it('serves /healthz', async () => {
    const reply = await call(server, tls.ca, { method: 'GET', path: '/healthz' });
    expect(reply).toMatchObject({ status: 200, body: 'ok' });
  });

  it('serves /readyz: 503 until its caches are synced', async () => {
    ready = false;
    expect(await call(server, tls.ca, { method: 'GET', path: '/readyz' })).toMatchObject({ status: 503 });
    ready = true;
    expect(await call(server, tls.ca, { method: 'GET', path: '/readyz' })).toMatchObject({ status: 200, body: 'ok' });
  });

  it.each([
    ['an unknown path', { path: '/validating' }, 404],
    ['the root', { path: '/' }, 404],
    ['GET on a webhook path', { method: 'GET', path: '/validate' }, 405],
    ['POST on /healthz', { path: '/healthz', body: '{}' }, 405],
    ['a body that is not JSON', { path: '/validate', body: '{"apiVersion": ' }, 400],
    ['JSON that is not an object', { path: '/validate', body: '[1]' }, 400],
    ['another kind', { path: '/mutate', body: JSON.stringify({ apiVersion: 'v1', kind: 'Status' }) }, 400],
    [
      'an AdmissionReview of v1beta1',
      {
        path: '/validate',
        body: JSON.stringify({
          apiVersion: 'admission.k8s.io/v1beta1',
          kind: 'AdmissionReview',
          request: { uid: 'x' },
        }),
      },
      400,
    ],
    [
      'a review without a request uid',
      {
        path: '/validate',
        body: JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: {} }),
      },
      400,
    ],
    [
      'a non-JSON content type',
      { path: '/validate', body: reviewOf({}), headers: { 'Content-Type': 'text/plain' } },
      415,
    ],
  ])('refuses %s', async (_name, opts, code) => {
    const reply = await call(server, tls.ca, opts);
    expect(reply.status).toBe(code);
    expect(JSON.parse(reply.body)).toMatchObject({ kind: 'Status', status: 'Failure', code });
    if (code === 405) expect(reply.headers.allow).toBeDefined();
  });

  it('refuses a body over 3 MiB with 413, announced or not', async () => {
    const huge = reviewOf({ ...ipv6ShootObject(), padding: 'x'.repeat(3 * 1024 * 1024) });
    for (const chunked of [false, true]) {
      const reply = await call(server, tls.ca, { path: '/validate', body: huge, chunked });
      expect(reply.status, chunked ? 'chunked' : 'Content-Length').toBe(413);
      expect(reply.headers.connection).toBe('close');
    }
    // The server still works afterwards.
    expect((await call(server, tls.ca, { method: 'GET', path: '/healthz' })).status).toBe(200);
  });

  describe('bodies too deep or too wide to decode', () => {
    /** A Shoot review whose providerConfig is `inner` (JSON text), sent as is. */
    const reviewWith = (inner: string, uid = '5d3e1f00-0000-4000-8000-00000000000b') =>
      reviewOf({ ...ipv6ShootObject(), spec: { ...ipv6ShootObject().spec, providerConfig: '@@' } }, uid).replace(
        '"@@"',
        inner,
      );
    const deep = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

    it.each([
      ['nests deeper than 100 levels', deep(1_000_000), /the body nests deeper than 100 levels/],
      ['nests deeper in objects', '{"a":'.repeat(200) + '1' + '}'.repeat(200), /nests deeper than 100 levels/],
      ['holds more than 100000 values', `[${'{},'.repeat(200_000)}{}]`, /more than 100000 values/],
    ])('denies the review of a body that %s, before parsing it', async (_name, inner, message) => {
      for (const path of ['/validate', '/mutate']) {
        for (const chunked of [false, true]) {
          const reply = await call(server, tls.ca, { path, body: reviewWith(inner), chunked });
          expect(reply.status).toBe(200);
          const answer = JSON.parse(reply.body) as AdmissionReviewResponse;
          expect(answer.response).toMatchObject({
            uid: '5d3e1f00-0000-4000-8000-00000000000b',
            allowed: false,
            status: { code: 400, reason: 'BadRequest' },
          });
          expect(answer.response.status?.message).toMatch(message);
        }
      }
      expect(lines).toContainEqual(expect.objectContaining({ msg: 'refused a request', code: 400 }));
    });

    it('admits what stays within the limits (100 levels with the review)', async () => {
      // review { request { object { spec { providerConfig: 96 levels
      const reply = await call(server, tls.ca, { path: '/mutate', body: reviewWith(deep(96)) });
      expect(reply.status).toBe(200);
      expect((JSON.parse(reply.body) as AdmissionReviewResponse).response.allowed).toBe(true);
      const deeper = await call(server, tls.ca, { path: '/mutate', body: reviewWith(deep(97)) });
      expect((JSON.parse(deeper.body) as AdmissionReviewResponse).response.allowed).toBe(false);
    });

    it('answers 400 when the body has no review uid to deny', async () => {
      const reply = await call(server, tls.ca, { path: '/validate', body: deep(500) });
      expect(reply.status).toBe(400);
      expect(JSON.parse(reply.body)).toMatchObject({
        kind: 'Status',
        code: 400,
        message: 'the body nests deeper than 100 levels',
      });
    });
  });

  it('denies a review with an object of more than 10,000 keys before decoding it', async () => {
    const providerConfig = Object.fromEntries(Array.from({ length: 10_001 }, (_, i) => [`k${i}`, 0]));
    const shoot = ipv6ShootObject();
    const reply = await call(server, tls.ca, {
      path: '/validate',
      body: reviewOf({ ...shoot, spec: { ...shoot.spec, networking: { ...shoot.spec.networking, providerConfig } } }),
    });
    expect(reply.status).toBe(200);
    const { response } = JSON.parse(reply.body) as AdmissionReviewResponse;
    expect(response.allowed).toBe(false);
    expect(response.status).toMatchObject({ code: 400, reason: 'BadRequest' });
    expect(response.status?.message).toContain('an object of the body has more than 10000 keys');
  });

  it('denies a review whose object names a key twice, naming its path', async () => {
    // The second ipFamilies would win in JSON.parse: the review judged would not be the object written.
    const body = reviewOf(ipv6ShootObject()).replace(
      '"ipFamilies":["IPv6"]',
      '"ipFamilies":["IPv6"],"ipFamilies":["IPv4"]',
    );
    expect(body).toContain('"ipFamilies":["IPv4"]');
    const reply = await call(server, tls.ca, { path: '/validate', body });
    expect(reply.status).toBe(200);
    const { response } = JSON.parse(reply.body) as AdmissionReviewResponse;
    expect(response).toMatchObject({ uid: '5d3e1f00-0000-4000-8000-00000000000a', allowed: false });
    expect(response.status).toMatchObject({ code: 400, reason: 'BadRequest' });
    expect(response.status?.message).toContain(
      'duplicate field "request.object.spec.networking.ipFamilies": an object of the body names it twice',
    );
    // A duplicate uid leaves no uid to answer: a plain 400.
    const twoUIDs = reviewOf(ipv6ShootObject()).replace('"uid":', '"uid":"a","uid":');
    const plain = await call(server, tls.ca, { path: '/mutate', body: twoUIDs });
    expect(plain.status).toBe(400);
    expect(JSON.parse(plain.body)).toMatchObject({ kind: 'Status', code: 400 });
    expect(JSON.parse(plain.body).message).toContain('duplicate field "request.uid"');
  });

  it('denies with 500 when the seed lookup fails', async () => {
    lookupSeed.mockRejectedValueOnce(new Error('etcdserver: request timed out'));
    const shoot = { ...ipv6ShootObject({ seedName: 'seed-a' }) };
    const reply = await call(server, tls.ca, { path: '/validate', body: reviewOf(shoot) });
    expect(reply.status).toBe(200);
    const answer = JSON.parse(reply.body) as AdmissionReviewResponse;
    expect(answer.response).toMatchObject({ allowed: false, status: { code: 500 } });
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'admission failed', level: 'error' }));
    const counted = await registry.getSingleMetric('admission_webhook_reviews_total')?.get();
    expect(counted?.values).toContainEqual({
      labels: { webhook: 'validate', kind: 'Shoot', result: 'error' },
      value: 1,
    });
  });

  it('counts admitted reviews and kinds it does not admit', async () => {
    const allowed = await call(server, tls.ca, { path: '/mutate', body: reviewOf(dnsRecordObject()) });
    expect(allowed.status).toBe(200);
    const other = JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: { uid: 'x', operation: 'CREATE', kind: { group: '', version: 'v1', kind: 'ConfigMap' }, object: {} },
    });
    expect((await call(server, tls.ca, { path: '/validate', body: other })).status).toBe(200);
    const counted = await registry.getSingleMetric('admission_webhook_reviews_total')?.get();
    expect(counted?.values).toContainEqual(
      expect.objectContaining({ labels: { webhook: 'validate', kind: 'other', result: 'allowed' } }),
    );
    expect(counted?.values).toContainEqual(
      expect.objectContaining({ labels: { webhook: 'mutate', kind: 'DNSRecord', result: 'allowed' } }),
    );
  });
});

describe('admission webhook server lifecycle', () => {
  let tls: TLSFiles;
  beforeAll(async () => {
    tls = await makeCertificates();
  });
  afterAll(async () => {
    if (tls) await rm(tls.dir, { recursive: true, force: true });
  });

  /** A server on [::1] with the certificate above, no extensions' gates and no Seeds, but for `overrides`. */
  const startServer = (overrides: Partial<AdmissionServerOptions> = {}) =>
    startAdmissionServer({
      tls: { cert: tls.cert, key: tls.key },
      host: '::1',
      port: 0,
      gates: gateSets.none,
      extensionAdmission: extensionAdmission(),
      lookupSeed: async () => undefined,
      logger: silentLogger(),
      ...overrides,
    });

  it("keeps an idle connection open past Node's default keep-alive timeout, for the API server to reuse", async () => {
    const server = await startServer();
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const sockets = new Set<unknown>();
      const review = () =>
        new Promise<number>((resolve, reject) => {
          const req = https.request(
            { host: '::1', port: server.port, method: 'POST', path: '/validate', ca: tls.ca, agent },
            (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode ?? 0));
            },
          );
          req.on('socket', (s) => sockets.add(s));
          req.on('error', reject);
          req.end(reviewOf(ipv6ShootObject()));
        });
      expect(await review()).toBe(200);
      // Idle for longer than Node's default keep-alive timeout (5 s, closed after about 6), which closed connections
      // under the API server's feet.
      await new Promise((r) => setTimeout(r, 7_000));
      expect(await review()).toBe(200);
      expect(sockets.size).toBe(1);
    } finally {
      agent.destroy();
      await server.close();
    }
  }, 15_000);

  it('reads the certificate from files, rotates it, and refuses connections after close', async () => {
    const server = await startServer({ tls: { certFile: tls.certFile, keyFile: tls.keyFile } });
    try {
      expect((await call(server, tls.ca, { method: 'GET', path: '/healthz' })).status).toBe(200);
      const next = await makeCertificates();
      try {
        await server.setTLS({ cert: next.cert, key: next.key });
        expect((await call(server, next.ca, { method: 'GET', path: '/healthz' })).status).toBe(200);
        await expect(call(server, tls.ca, { method: 'GET', path: '/healthz' })).rejects.toThrow();
      } finally {
        await rm(next.dir, { recursive: true, force: true });
      }
    } finally {
      await server.close();
    }
    await expect(call(server, tls.ca, { method: 'GET', path: '/healthz' })).rejects.toThrow(/ECONNREFUSED/);
  });

  it('lets a request in flight finish when closing', async () => {
    let release: (seed: unknown) => void = () => {};
    const lookupSeed = vi.fn(() => new Promise<unknown>((resolve) => (release = resolve)));
    const server = await startServer({ lookupSeed });
    const pending = call(server, tls.ca, {
      path: '/validate',
      body: reviewOf(ipv6ShootObject({ seedName: 'seed-a' })),
    });
    await vi.waitFor(() => expect(lookupSeed).toHaveBeenCalled());
    const closed = server.close({ graceMs: 5_000 });
    release(undefined);
    const reply = await pending;
    expect(reply.status).toBe(200);
    await closed;
  });

  /**
   * A server with a 2 MiB budget of body bytes whose seed lookups wait until `release`, and reviews of 1.5 MB that
   * look their seed up.
   */
  async function bodyBudgetServer() {
    let release: (seed: unknown) => void = () => {};
    const gate = new Promise<unknown>((resolve) => (release = resolve));
    const lookupSeed = vi.fn(() => gate);
    const server = await startServer({ lookupSeed, maxInFlightBodyBytes: 2 * 1024 * 1024, inFlightWaitMs: 200 });
    const padding = 'x'.repeat(1_500_000);
    const large = (name: string) =>
      reviewOf({ ...ipv6ShootObject({ seedName: 'seed-a' }), metadata: { name, annotations: { padding } } });
    return { server, lookupSeed, release: (seed: unknown) => release(seed), large };
  }

  it('holds a bounded number of body bytes: a large body waits for room, then gets 429; small ones get in', async () => {
    const { server, lookupSeed, release, large } = await bodyBudgetServer();
    try {
      // 1.5 MB held until its seed lookup answers.
      const held = call(server, tls.ca, { path: '/validate', body: large('held') });
      await vi.waitFor(() => expect(lookupSeed).toHaveBeenCalled());

      const refused = await call(server, tls.ca, { path: '/validate', body: large('refused') });
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBe('1');
      expect(JSON.parse(refused.body)).toMatchObject({
        kind: 'Status',
        status: 'Failure',
        reason: 'TooManyRequests',
        details: { retryAfterSeconds: 1 },
        code: 429,
      });
      // An ordinary review still gets in (its room is kept for it).
      const small = await call(server, tls.ca, { path: '/validate', body: reviewOf(ipv6ShootObject()) });
      expect(small.status).toBe(200);

      // A large one waiting gets in as soon as the held one is answered.
      const waiting = call(server, tls.ca, { path: '/validate', body: large('waiting') });
      await vi.waitFor(() => expect(lookupSeed).toHaveBeenCalledTimes(1));
      release(undefined);
      expect((await held).status).toBe(200);
      const waited = await waiting;
      expect(waited.status, waited.body.slice(0, 200)).toBe(200);
    } finally {
      release(undefined);
      await server.close({ graceMs: 0 });
    }
  });

  it('counts the bytes of a body whose client went until its review ran', async () => {
    const { server, lookupSeed, release, large } = await bodyBudgetServer();
    try {
      // Sent whole, then the client goes while its review waits for the seed lookup.
      const body = large('gone');
      const gone = https.request({
        host: '::1',
        port: server.port,
        method: 'POST',
        path: '/validate',
        ca: tls.ca,
        agent: false,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      });
      const closed = new Promise((resolve) => gone.on('close', resolve));
      gone.on('error', () => {});
      gone.end(body);
      await vi.waitFor(() => expect(lookupSeed).toHaveBeenCalled());
      gone.destroy();
      await closed;

      expect((await call(server, tls.ca, { path: '/validate', body: large('next') })).status).toBe(429);
      release(undefined);
      await vi.waitFor(async () =>
        expect((await call(server, tls.ca, { path: '/validate', body: large('after') })).status).toBe(200),
      );
    } finally {
      release(undefined);
      await server.close({ graceMs: 0 });
    }
  });

  it('fails to start on a port in use', async () => {
    const first = await startServer();
    try {
      await expect(startServer({ port: first.port })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await first.close();
    }
  });
});
