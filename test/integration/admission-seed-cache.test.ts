/**
 * The webhook's seed context from the shared cache, with the Seeds in the real kube-apiserver (shared control plane
 * of the global setup): reviews are posted to the webhook over HTTPS on [::1] as the API server would.
 *
 * The client under the cache can hold back the first list (the cache is not synced) and the watch events (a seed
 * created a moment ago is not cached yet), so that each path is taken for certain; it counts the GETs of seeds.
 */
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRuntime } from '../../src/app/runtime.js';
import type { AdmissionReviewResponse } from '../../src/admission/review.js';
import { startAdmissionServer, type AdmissionServer } from '../../src/admission/server.js';
import { featureGates } from '../../src/featuregate/featuregate.js';
import { localDNSProvider } from '../../src/gardenlet/dns-provider.js';
import { Refs, type ResourceRef } from '../../src/apis/refs.js';
import { generateCertificates } from '../../src/localenv/certs.js';
import { CachedReader } from '../../src/runtime/cached-reader.js';
import {
  ResourceClient,
  type CallOptions,
  type ListOptions,
  type WatchEventType,
  type WatchOptions,
} from '../../src/runtime/client.js';
import { Informer } from '../../src/runtime/informer.js';
import { silentLogger } from '../../src/runtime/log.js';
import { seedIPv6Networks } from '../fixtures/objects.js';
import { kubeConfig, uniqueSuffix } from '../support/kube.js';
import { applyLocalCloudProfile } from '../support/shoot.js';
import { waitFor } from '../support/wait.js';
import { extensionAdmission } from '../../src/app/extension-admission.js';

const gates = featureGates({ IPv6SingleStack: true, DualStack: true });
const client = new ResourceClient(kubeConfig());

/** A real client that can hold back its first list and its watch events, and counts GETs of seeds. */
class HoldingClient extends ResourceClient {
  seedGets = 0;
  private releaseList: () => void = () => {};
  private readonly listReleased = new Promise<void>((resolve) => (this.releaseList = resolve));
  private held: (() => void)[] | undefined;

  override async get<T extends KubernetesObject = KubernetesObject>(
    ref: ResourceRef,
    name: string,
    namespace?: string,
    opts?: CallOptions,
  ): Promise<T | undefined> {
    if (ref.plural === Refs.seed.plural) this.seedGets++;
    return super.get<T>(ref, name, namespace, opts);
  }

  override async list<T extends KubernetesObject = KubernetesObject>(ref: ResourceRef, opts?: ListOptions) {
    await this.listReleased;
    return super.list<T>(ref, opts);
  }

  override watch<T extends KubernetesObject = KubernetesObject>(
    ref: ResourceRef,
    opts: WatchOptions,
    onEvent: (type: WatchEventType, obj: T) => void,
    onDone: (err?: unknown) => void,
  ) {
    return super.watch<T>(
      ref,
      opts,
      (type, obj) => (this.held ? this.held.push(() => onEvent(type, obj)) : onEvent(type, obj)),
      onDone,
    );
  }

  completeList(): void {
    this.releaseList();
  }

  holdWatchEvents(): void {
    this.held ??= [];
  }

  deliverWatchEvents(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const deliver of held) deliver();
  }
}

let certDir: string;
let ca: Buffer;
let cert: Buffer;
let key: Buffer;
const seedNames: string[] = [];

beforeAll(async () => {
  certDir = await mkdtemp(join(tmpdir(), 'gardener-ipv6-seed-cache-'));
  const certs = await generateCertificates(certDir, { ipAddresses: ['::1'], dnsNames: ['localhost'], days: 1 });
  [ca, cert, key] = await Promise.all([readFile(certs.caCert), readFile(certs.serverCert), readFile(certs.serverKey)]);
  // The layout of `--webhook-cert-dir`, for the runtime.
  await copyFile(certs.serverCert, join(certDir, 'tls.crt'));
  await copyFile(certs.serverKey, join(certDir, 'tls.key'));
});

afterAll(async () => {
  for (const name of seedNames) await client.delete(Refs.seed, name);
  client.close();
  if (certDir) await rm(certDir, { recursive: true, force: true });
});

async function createSeed(): Promise<string> {
  const name = `seed-cache-${uniqueSuffix()}`;
  await client.create(Refs.seed, {
    apiVersion: 'core.gardener.cloud/v1beta1',
    kind: 'Seed',
    metadata: { name },
    spec: { provider: { type: 'local', region: 'local' }, networks: seedIPv6Networks },
  } as KubernetesObject);
  seedNames.push(name);
  return name;
}

function request(port: number, method: string, path: string, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '::1',
        port,
        method,
        path,
        ca,
        agent: false,
        headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The validating webhook's answer for an IPv6 shoot on `seedName` without pods and services of its own. */
async function validateShootOn(
  port: number,
  seedName: string,
  cloudProfileName = 'local',
): Promise<AdmissionReviewResponse['response']> {
  const review = {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `uid-${uniqueSuffix()}`,
      kind: { group: 'core.gardener.cloud', version: 'v1beta1', kind: 'Shoot' },
      operation: 'CREATE',
      object: {
        apiVersion: 'core.gardener.cloud/v1beta1',
        kind: 'Shoot',
        metadata: { name: 'alpha', namespace: 'garden-dev' },
        spec: {
          seedName,
          cloudProfile: { name: cloudProfileName },
          region: 'local',
          provider: { type: 'local', workers: [{ name: 'w1', machine: { type: 'local' }, minimum: 1, maximum: 1 }] },
          networking: { type: 'calico', ipFamilies: ['IPv6'], nodes: '2001:db8:2::/64' },
        },
      },
    },
  };
  const reply = await request(port, 'POST', '/validate', JSON.stringify(review));
  expect(reply.status).toBe(200);
  return (JSON.parse(reply.body) as AdmissionReviewResponse).response;
}

const notFound = (seedName: string) =>
  expect.objectContaining({
    allowed: false,
    status: expect.objectContaining({
      details: expect.objectContaining({
        causes: [
          {
            reason: 'FieldValueInvalid',
            field: 'spec.seedName',
            message: `Invalid value: "${seedName}": seed "${seedName}" not found`,
          },
        ],
      }),
    }),
  });

describe('admission webhook with the seed cache', () => {
  let holding: HoldingClient;
  let informer: Informer;
  let reader: CachedReader;
  let server: AdmissionServer;

  beforeAll(async () => {
    holding = new HoldingClient(kubeConfig());
    informer = new Informer({ client: holding, ref: Refs.seed, logger: silentLogger() });
    reader = new CachedReader({ informer, client: holding, ref: Refs.seed });
    void informer.start();
    server = await startAdmissionServer({
      tls: { cert, key },
      host: '::1',
      port: 0,
      gates,
      extensionAdmission: extensionAdmission(),
      lookupSeed: (name) => reader.read(name),
      ready: () => reader.hasSynced(),
      logger: silentLogger(),
    });
  });

  afterAll(async () => {
    holding?.completeList();
    holding?.deliverWatchEvents();
    informer?.stop();
    await informer?.stopped();
    await server?.close();
    holding?.close();
  });

  it('is not ready before its cache synced, and reads seeds from the API server meanwhile', async () => {
    expect((await request(server.port, 'GET', '/readyz')).status).toBe(503);
    const seedName = await createSeed();
    expect(await validateShootOn(server.port, seedName)).toMatchObject({ allowed: true });
    expect(holding.seedGets).toBe(1);
    expect((await request(server.port, 'GET', '/readyz')).status).toBe(503);

    holding.completeList();
    await waitFor(async () => (await request(server.port, 'GET', '/readyz')).status === 200, {
      message: 'the webhook to get ready',
    });
    // Synced: the seed comes from the cache.
    expect(await validateShootOn(server.port, seedName)).toMatchObject({ allowed: true });
    expect(holding.seedGets).toBe(1);
  });

  it('finds a seed created after it started that the cache has not seen yet (cache miss), then from the cache', async () => {
    expect(reader.hasSynced()).toBe(true);
    holding.holdWatchEvents();
    const seedName = await createSeed();
    const gets = holding.seedGets;
    expect(informer.get(seedName)).toBeUndefined();
    expect(await validateShootOn(server.port, seedName)).toMatchObject({ allowed: true });
    expect(holding.seedGets).toBe(gets + 1);

    holding.deliverWatchEvents();
    await waitFor(() => informer.get(seedName) !== undefined, { message: 'the seed in the cache' });
    expect(await validateShootOn(server.port, seedName)).toMatchObject({ allowed: true });
    expect(holding.seedGets).toBe(gets + 1);
  });

  it('does not find a deleted seed', async () => {
    const seedName = await createSeed();
    await waitFor(() => informer.get(seedName) !== undefined, { message: 'the seed in the cache' });
    expect(await validateShootOn(server.port, seedName)).toMatchObject({ allowed: true });

    await client.delete(Refs.seed, seedName);
    await waitFor(() => informer.get(seedName) === undefined, { message: 'the deletion in the cache' });
    expect(await validateShootOn(server.port, seedName)).toEqual(notFound(seedName));
  });

  it('does not find a seed that never existed', async () => {
    expect(await validateShootOn(server.port, 'no-such-seed')).toEqual(notFound('no-such-seed'));
  });
});

describe('runtime composition of the webhook', () => {
  it('serves reviews from the shared seed cache, ready once the caches synced, and counts them in its metrics', async () => {
    const seedName = await createSeed();
    // The Shoots name it: the webhook reads it from its CloudProfile cache, as it reads the Seed from its own.
    await applyLocalCloudProfile(client);
    const runtime = await startRuntime({
      kubeConfig: kubeConfig(),
      gates,
      logger: silentLogger(),
      components: ['admission'],
      webhook: { host: '::1', port: 0, register: false, certDir },
      gardenlet: { dns: localDNSProvider() },
      health: { host: '::1', port: 0 },
    });
    try {
      const webhook = runtime.webhook!;
      expect(runtime.readers.seeds.hasSynced()).toBe(true);
      expect(runtime.readers.cloudProfiles.hasSynced()).toBe(true);
      // The Shoots whose machines provider-local counts (--max-machines): ready waits for them too.
      expect(runtime.readers.shoots.hasSynced()).toBe(true);
      expect((await request(webhook.port, 'GET', '/readyz')).status).toBe(200);
      expect((await fetch(`http://[::1]:${runtime.manager.healthPort()}/readyz`)).status).toBe(200);
      expect(await validateShootOn(webhook.port, seedName)).toMatchObject({ allowed: true });
      expect(await validateShootOn(webhook.port, 'no-such-seed')).toEqual(notFound('no-such-seed'));
      const missingProfile = `no-such-profile-${uniqueSuffix()}`;
      expect(await validateShootOn(webhook.port, seedName, missingProfile)).toMatchObject({
        allowed: false,
        status: {
          details: {
            causes: [expect.objectContaining({ field: 'spec.cloudProfile.name', reason: 'FieldValueNotFound' })],
          },
        },
      });
      const metrics = await (await fetch(`http://[::1]:${runtime.manager.healthPort()}/metrics`)).text();
      // The synced caches answered every lookup, a name they lack as none: no review read from the API server (a
      // miss), as Gardener's admission plugins read their listers.
      expect(metrics).toContain('cached_reader_reads_total{resource="seeds.core.gardener.cloud",result="hit"} 3');
      expect(metrics).not.toContain('cached_reader_reads_total{resource="seeds.core.gardener.cloud",result="miss"}');
      expect(metrics).toContain(
        'cached_reader_reads_total{resource="cloudprofiles.core.gardener.cloud",result="hit"} 3',
      );
      expect(metrics).not.toContain(
        'cached_reader_reads_total{resource="cloudprofiles.core.gardener.cloud",result="miss"}',
      );
      expect(metrics).toContain('admission_webhook_reviews_total{webhook="validate",kind="Shoot",result="allowed"} 1');
      expect(metrics).toContain('admission_webhook_reviews_total{webhook="validate",kind="Shoot",result="denied"} 2');
    } finally {
      await runtime.stop();
    }
  });
});
