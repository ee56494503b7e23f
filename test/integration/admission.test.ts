/**
 * The admission webhook behind the real kube-apiserver (shared control plane of the global setup): the API server
 * calls it over HTTPS on [::1] and hands its Status to the client.
 *
 * Four webhook servers run, one with the alpha gates off, one with them on, one that also reads CloudProfiles (as the
 * runtime's webhook does), and one that counts the machines of the stored Shoots (from a cache, as the runtime's
 * webhook does) against an installation limit of 3, each with its own pair of webhook configurations. Every pair only matches objects
 * carrying this run's label (objectSelector), so the other test files sharing the API server never see these
 * webhooks, and all are deleted in afterAll.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_REGISTERED_EXTENSION_TYPES } from '../../src/admission/extensions.js';
import { startAdmissionServer, type AdmissionServer } from '../../src/admission/server.js';
import {
  deployWebhookConfigurations,
  desiredWebhookConfigurations,
  destroyWebhookConfigurations,
  FIELD_MANAGER,
  MUTATING_WEBHOOK_NAME,
  VALIDATING_WEBHOOK_NAME,
  webhookBaseURL,
  WebhookConfigurationRefs,
} from '../../src/admission/webhook-configurations.js';
import type { CloudProfile } from '../../src/apis/core/v1beta1/cloudprofile.js';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import type { DNSRecord } from '../../src/apis/extensions/v1alpha1/dnsrecord.js';
import { localCloudProfile } from '../../src/extensions/provider-local/cloudprofile.js';
import { featureGates, type FeatureGates } from '../../src/featuregate/featuregate.js';
import { Refs } from '../../src/apis/refs.js';
import { generateCertificates } from '../../src/localenv/certs.js';
import { CachedReader } from '../../src/runtime/cached-reader.js';
import { ResourceClient } from '../../src/runtime/client.js';
import { retryOnConflict } from '../../src/runtime/retry.js';
import { asApiError, type ApiError } from '../../src/runtime/errors.js';
import { Informer } from '../../src/runtime/informer.js';
import { silentLogger } from '../../src/runtime/log.js';
import { seedIPv6Networks } from '../fixtures/objects.js';
import { kubeConfig, newTestNamespace, uniqueSuffix } from '../support/kube.js';
import { waitFor } from '../support/wait.js';
import { extensionAdmission } from '../../src/app/extension-admission.js';
import { DEFAULT_LOCAL_ADMISSION_CONFIG } from '../../src/extensions/provider-local/admission.js';

const RUN_LABEL = 'admission-test.gardener-ipv6.gardener.cloud/run';
const run = uniqueSuffix();
const client = new ResourceClient(kubeConfig());
// The webhooks read seeds as the runtime has them read: from one informer's cache, from the server on a miss.
const seedInformer = new Informer({ client, ref: Refs.seed, logger: silentLogger() });
const seedReader = new CachedReader({ informer: seedInformer, client, ref: Refs.seed });
const profileInformer = new Informer({ client, ref: Refs.cloudProfile, logger: silentLogger() });
const profileReader = new CachedReader({ informer: profileInformer, client, ref: Refs.cloudProfile });
const shootInformer = new Informer({ client, ref: Refs.shoot, logger: silentLogger() });
const shootReader = new CachedReader({ informer: shootInformer, client, ref: Refs.shoot });
/** The machines server's installation limit (`--max-machines`). */
const MAX_MACHINES = 3;

/** The webhook servers: the alpha gates off, on, on with CloudProfiles read, and on with the machines counted. */
type Gates = 'off' | 'on' | 'profiles' | 'machines';
const GATES: Record<Gates, FeatureGates> = {
  off: featureGates(),
  on: featureGates({ IPv6SingleStack: true, DualStack: true }),
  profiles: featureGates({ IPv6SingleStack: true, DualStack: true }),
  machines: featureGates({ IPv6SingleStack: true, DualStack: true }),
};
const configName = (gates: Gates) => `gardener-ipv6-test-${run}-${gates}`;
const labels = (gates: Gates) => ({ [RUN_LABEL]: `${run}-${gates}` });

let certDir: string | undefined;
/** The webhook servers' certificate for [::1], and its CA. */
let tls: { cert: Buffer; key: Buffer; ca: Buffer };
const servers: AdmissionServer[] = [];
const deployed: string[] = [];
const seeds: string[] = [];
/** This run's CloudProfile: the other files share the API server, and `local` is theirs. */
const PROFILE = `local-${run}`;

type Obj = KubernetesObject & Record<string, unknown>;

function shoot(namespace: string, gates: Gates, networking: Record<string, unknown>, seedName?: string): Shoot & Obj {
  return {
    apiVersion: 'core.gardener.cloud/v1beta1',
    kind: 'Shoot',
    metadata: { name: 'alpha', namespace, labels: labels(gates) },
    spec: {
      cloudProfileName: 'local',
      region: 'local',
      ...(seedName ? { seedName } : {}),
      provider: { type: 'local', workers: [{ name: 'w1', machine: { type: 'local' }, minimum: 1, maximum: 1 }] },
      kubernetes: { version: '1.31.1' },
      networking: { type: 'calico', ...networking },
    },
  };
}

function dnsRecord(namespace: string, gates: Gates, spec: Partial<DNSRecord['spec']> = {}): DNSRecord & Obj {
  return {
    apiVersion: 'extensions.gardener.cloud/v1alpha1',
    kind: 'DNSRecord',
    metadata: { generateName: 'api-', namespace, labels: labels(gates) },
    spec: {
      type: 'local',
      secretRef: { name: 'dns', namespace },
      name: 'api.alpha.example.com',
      recordType: 'AAAA',
      values: ['2001:db8::10'],
      ...spec,
    },
  };
}

/** The error a call failed with, as the API server sent it. */
async function rejection(call: Promise<unknown>): Promise<ApiError> {
  try {
    await call;
  } catch (e) {
    const error = asApiError(e);
    if (error) return error;
    throw e;
  }
  throw new Error('the API server accepted the request');
}

/**
 * The API server picks webhook configurations up through an informer: wait until both webhooks of `gates` answer,
 * with dry-run creates (no objects are left behind).
 */
async function waitForWebhooks(gates: Gates, namespace = 'default'): Promise<void> {
  const objects = KubernetesObjectApi.makeApiClient(kubeConfig());
  await waitFor(
    async () => {
      const defaulted = await objects.create(dnsRecord(namespace, gates) as KubernetesObject, undefined, 'All');
      return (defaulted as DNSRecord).spec.ttl === 120;
    },
    { timeoutMs: 20_000, message: `the mutating webhook of ${configName(gates)}` },
  );
  await waitFor(
    async () => {
      const invalid = dnsRecord(namespace, gates, { values: ['not-an-address'] });
      const error = await rejection(objects.create(invalid as KubernetesObject, undefined, 'All'));
      return error.message.includes(VALIDATING_WEBHOOK_NAME);
    },
    { timeoutMs: 20_000, message: `the validating webhook of ${configName(gates)}` },
  );
}

beforeAll(async () => {
  certDir = await mkdtemp(join(tmpdir(), 'gardener-ipv6-admission-it-'));
  const certs = await generateCertificates(certDir, { ipAddresses: ['::1'], dnsNames: ['localhost'], days: 1 });
  const [cert, key, ca] = await Promise.all([
    readFile(certs.serverCert),
    readFile(certs.serverKey),
    readFile(certs.caCert),
  ]);
  tls = { cert, key, ca };
  await Promise.all([seedInformer.start(), profileInformer.start(), shootInformer.start()]);
  for (const gates of ['off', 'on', 'profiles', 'machines'] as const) {
    const server = await startAdmissionServer({
      tls: { cert, key },
      host: '::1',
      port: 0,
      gates: GATES[gates],
      extensionAdmission:
        gates === 'machines'
          ? // The installation is this server's Shoots: the other files' shoots share the API server.
            extensionAdmission({ ...DEFAULT_LOCAL_ADMISSION_CONFIG, maxMachines: MAX_MACHINES }, () =>
              shootReader.list().filter((s) => s.metadata?.labels?.[RUN_LABEL] === labels('machines')[RUN_LABEL]),
            )
          : extensionAdmission(),
      lookupSeed: (name) => seedReader.get(name),
      ...(gates === 'profiles' ? { lookupCloudProfile: (name: string) => profileReader.read(name) } : {}),
      ready: () => seedReader.hasSynced() && profileReader.hasSynced(),
      logger: silentLogger(),
      extensions: DEFAULT_REGISTERED_EXTENSION_TYPES,
    });
    servers.push(server);
    const configs = desiredWebhookConfigurations({
      caBundle: ca,
      url: server.url,
      name: configName(gates),
      objectSelector: { matchLabels: labels(gates) },
    });
    deployed.push(configName(gates));
    await deployWebhookConfigurations(client, configs);
    await waitForWebhooks(gates);
  }
}, 120_000);

afterAll(async () => {
  // The configurations first: with failurePolicy Fail they would refuse the labelled objects once the servers stop.
  for (const name of deployed) await destroyWebhookConfigurations(client, name);
  for (const seed of seeds) await client.delete(Refs.seed, seed);
  await client.delete(Refs.cloudProfile, PROFILE);
  await Promise.all(servers.map((s) => s.close()));
  for (const informer of [seedInformer, profileInformer, shootInformer]) {
    informer.stop();
    await informer.stopped();
  }
  if (certDir) await rm(certDir, { recursive: true, force: true });
});

describe('admission webhook behind kube-apiserver', () => {
  it('deploys the configurations with the URL and CA bundle', async () => {
    const validating = await client.get<
      KubernetesObject & { webhooks: { name: string; clientConfig: { url: string } }[] }
    >(
      {
        group: 'admissionregistration.k8s.io',
        version: 'v1',
        plural: 'validatingwebhookconfigurations',
        kind: 'ValidatingWebhookConfiguration',
        namespaced: false,
      },
      configName('off'),
    );
    expect(validating?.webhooks[0]).toMatchObject({
      name: VALIDATING_WEBHOOK_NAME,
      clientConfig: { url: `https://[::1]:${servers[0]!.port}/validate` },
    });
    expect(MUTATING_WEBHOOK_NAME).toBe('default.gardener-ipv6.gardener.cloud');
  });

  it('is not asked about an update that leaves the spec alone, and is about one that changes it', async () => {
    // A validating webhook that fails every call it gets (failurePolicy Fail): a write sent to it fails.
    const calls: string[] = [];
    const failing = https.createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
      calls.push(`${req.method} ${req.url}`);
      req.resume();
      res.writeHead(500).end();
    });
    await new Promise<void>((resolve) => failing.listen({ host: '::1', port: 0 }, resolve));
    const name = `gardener-ipv6-test-${run}-spec-changed`;
    const selected = { [RUN_LABEL]: `${run}-spec-changed` };
    try {
      const { validating } = desiredWebhookConfigurations({
        caBundle: tls.ca,
        url: webhookBaseURL('::1', (failing.address() as AddressInfo).port),
        name,
        objectSelector: { matchLabels: selected },
      });
      deployed.push(name);
      await client.apply(
        WebhookConfigurationRefs.validating,
        validating as KubernetesObject & { metadata: { name: string } },
        {
          fieldManager: FIELD_MANAGER,
          force: true,
        },
      );
      const namespace = await newTestNamespace('admission');
      // Created without the label that makes the configuration match it (a create is always sent).
      const record = dnsRecord(namespace, 'off');
      record.metadata = { name: 'spec-changed', namespace, labels: {} };
      await client.create(Refs.dnsRecord, record);
      const update = (change: (r: DNSRecord & Obj) => void) =>
        retryOnConflict(async () => {
          const current = (await client.get<DNSRecord & Obj>(Refs.dnsRecord, 'spec-changed', namespace))!;
          change(current);
          return client.update(Refs.dnsRecord, current);
        });
      // Labelled by an update that leaves the spec alone: it goes through whether the configuration is in force yet or
      // not.
      await update((r) => (r.metadata.labels = selected));
      // The API server picks the configuration up through an informer: in force once a spec change fails there.
      let ttl = 100;
      let stored: number | undefined;
      await waitFor(
        async () => {
          try {
            await update((r) => (r.spec.ttl = ++ttl));
            stored = ttl;
            return false;
          } catch (e) {
            if (asApiError(e)?.message.includes(`failed calling webhook "${VALIDATING_WEBHOOK_NAME}"`)) return true;
            throw e;
          }
        },
        { timeoutMs: 20_000, message: 'the failing validating webhook in force' },
      );
      const sent = calls.length;
      expect(sent).toBeGreaterThan(0);

      // Labels and annotations only: not sent, so the write goes through though the webhook fails every call.
      const annotated = await update((r) => {
        r.metadata.annotations = { ...r.metadata.annotations, note: 'metadata only' };
      });
      expect(annotated.metadata?.annotations?.note).toBe('metadata only');
      expect(calls).toHaveLength(sent);
      // A spec change is sent, and fails there.
      const error = await rejection(update((r) => (r.spec.ttl = 300)));
      expect(error.message).toContain(`failed calling webhook "${VALIDATING_WEBHOOK_NAME}"`);
      expect(calls.length).toBeGreaterThan(sent);
      expect((await client.get<DNSRecord & Obj>(Refs.dnsRecord, 'spec-changed', namespace))!.spec.ttl).toBe(stored);
    } finally {
      await destroyWebhookConfigurations(client, name);
      failing.closeAllConnections();
      await new Promise((resolve) => failing.close(resolve));
    }
  });

  it('rejects an IPv6 shoot with the gate off, with the causes of the Status', async () => {
    const namespace = await newTestNamespace('garden-admission');
    const networking = {
      ipFamilies: ['IPv6'],
      nodes: '2001:db8:2::/64',
      pods: 'fd00:20:1::/56',
      services: 'fd00:20:2::/112',
    };
    const error = await rejection(client.create(Refs.shoot, shoot(namespace, 'off', networking)));
    expect(error.code).toBe(422);
    expect(error.reason).toBe('Invalid');
    expect(error.message).toBe(
      `admission webhook "${VALIDATING_WEBHOOK_NAME}" denied the request: Shoot.core.gardener.cloud "alpha" is ` +
        'invalid: spec.networking.ipFamilies: Invalid value: ["IPv6"]: IPv6 single-stack networking is not supported',
    );
    expect(error.status?.details?.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.networking.ipFamilies',
        message: 'Invalid value: ["IPv6"]: IPv6 single-stack networking is not supported',
      },
    ]);
    expect(await client.get(Refs.shoot, 'alpha', namespace)).toBeUndefined();
  });

  it('rejects a shoot whose provider, networking or DNS provider type no extension here handles', async () => {
    const namespace = await newTestNamespace('garden-admission');
    const object = shoot(namespace, 'on', { type: 'cilium' });
    object.spec.provider!.type = 'aws';
    object.spec.dns = { providers: [{ type: 'aws-route53', primary: true }, { type: 'other' }] };
    const error = await rejection(client.create(Refs.shoot, object));
    expect(error.code).toBe(422);
    const registered = (what: string, types: string) =>
      `given Shoot uses non-registered ${what} (registered in this installation: ${types})`;
    expect(error.status?.details?.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.provider.type',
        message: `Invalid value: "aws": ${registered('provider type', '"local"')}`,
      },
      {
        reason: 'FieldValueInvalid',
        field: 'spec.networking.type',
        message: `Invalid value: "cilium": ${registered('networking type', '"calico"')}`,
      },
      {
        reason: 'FieldValueInvalid',
        field: 'spec.dns.providers[0].type',
        message: `Invalid value: "aws-route53": ${registered('DNS provider type', '"local"')}`,
      },
    ]);
  });

  it('accepts the IPv6 shoot with the gate on, defaulted by the mutating webhook', async () => {
    const namespace = await newTestNamespace('garden-admission');
    const networking = {
      ipFamilies: ['IPv6'],
      nodes: '2001:db8:2::/64',
      pods: 'fd00:20:1::/56',
      services: 'fd00:20:2::/112',
    };
    await client.create(Refs.shoot, shoot(namespace, 'on', networking));
    const stored = await client.get<Shoot & KubernetesObject>(Refs.shoot, 'alpha', namespace);
    expect(stored?.spec.networking).toEqual({ type: 'calico', ...networking });
    expect(stored?.spec.kubernetes?.kubeControllerManager).toEqual({ nodeCIDRMaskSize: 64 });
  });

  it('gives a shoot without pods and services those of its IPv6 seed', async () => {
    const namespace = await newTestNamespace('garden-admission');
    const seedName = `seed-admission-${uniqueSuffix()}`;
    await client.create(Refs.seed, {
      apiVersion: 'core.gardener.cloud/v1beta1',
      kind: 'Seed',
      metadata: { name: seedName, labels: labels('on') },
      spec: {
        provider: { type: 'local', region: 'local' },
        networks: seedIPv6Networks,
      },
    } as KubernetesObject);
    seeds.push(seedName);

    await client.create(
      Refs.shoot,
      shoot(namespace, 'on', { ipFamilies: ['IPv6'], nodes: '2001:db8:2::/64' }, seedName),
    );
    const stored = await client.get<Shoot & KubernetesObject>(Refs.shoot, 'alpha', namespace);
    expect(stored?.spec.networking).toEqual({
      type: 'calico',
      ipFamilies: ['IPv6'],
      nodes: '2001:db8:2::/64',
      pods: 'fd00:10:3::/56',
      services: 'fd00:10:4::/112',
    });

    // A shoot on a seed that does not exist is refused.
    const orphan = { ...shoot(namespace, 'on', { ipFamilies: ['IPv6'], nodes: '2001:db8:2::/64' }, 'no-such-seed') };
    orphan.metadata = { ...orphan.metadata, name: 'beta' };
    const error = await rejection(client.create(Refs.shoot, orphan));
    expect(error.code).toBe(422);
    expect(error.status?.details?.causes).toContainEqual({
      reason: 'FieldValueInvalid',
      field: 'spec.seedName',
      message: 'Invalid value: "no-such-seed": seed "no-such-seed" not found',
    });
  });

  it('rejects a DNSRecord whose AAAA value is not an IPv6 address, naming spec.values[0]', async () => {
    const namespace = await newTestNamespace('admission');
    const error = await rejection(
      client.create(Refs.dnsRecord, dnsRecord(namespace, 'off', { values: ['203.0.113.10'] })),
    );
    expect(error.code).toBe(422);
    expect(error.status?.details?.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.values[0]',
        message: 'Invalid value: "203.0.113.10": must be a valid IPv6 address',
      },
    ]);
    const created = await client.create<DNSRecord & KubernetesObject>(Refs.dnsRecord, dnsRecord(namespace, 'off'));
    expect(created.spec.ttl).toBe(120);
  });

  it("rejects a DNSRecord that names another namespace's secret, naming spec.secretRef.namespace", async () => {
    const namespace = await newTestNamespace('admission');
    const error = await rejection(
      client.create(
        Refs.dnsRecord,
        dnsRecord(namespace, 'off', { secretRef: { name: 'dnsrecord-local', namespace: 'shoot--victim--a' } }),
      ),
    );
    expect(error.code).toBe(422);
    expect(error.status?.details?.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.secretRef.namespace',
        message:
          `Invalid value: "shoot--victim--a": must be the DNSRecord's namespace "${namespace}": ` +
          'a DNSRecord may only use a secret of its own namespace',
      },
    ]);
  });

  it('rejects an update that changes spec.networking.pods as immutable', async () => {
    const namespace = await newTestNamespace('garden-admission');
    const networking = {
      ipFamilies: ['IPv4'],
      nodes: '10.180.0.0/16',
      pods: '100.96.0.0/11',
      services: '100.64.0.0/13',
    };
    await client.create(Refs.shoot, shoot(namespace, 'off', networking));
    const error = await rejection(
      retryOnConflict(async () => {
        const current = (await client.get<Shoot & KubernetesObject>(Refs.shoot, 'alpha', namespace))!;
        current.spec.networking = { ...current.spec.networking, pods: '100.128.0.0/11' };
        return client.update(Refs.shoot, current);
      }),
    );
    expect(error.code).toBe(422);
    expect(error.status?.details?.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.networking.pods',
        message: 'Invalid value: "100.128.0.0/11": field is immutable',
      },
    ]);
    // A change that is allowed goes through.
    const updated = await retryOnConflict(async () => {
      const current = (await client.get<Shoot & KubernetesObject>(Refs.shoot, 'alpha', namespace))!;
      current.spec.networking = { ...current.spec.networking, nodes: '10.181.0.0/16' };
      return client.update(Refs.shoot, current);
    });
    expect(updated.spec.networking?.nodes).toBe('10.181.0.0/16');
  });

  it('refuses a shoot whose machines take the installation past --max-machines, and updates that grow one', async () => {
    const namespace = await newTestNamespace('garden-admission');
    const networking = { ipFamilies: ['IPv6'], nodes: '2001:db8:2::/64' };
    const withMachines = (name: string, machines: number) => {
      const object = shoot(namespace, 'machines', networking);
      object.metadata.name = name;
      object.spec.provider!.workers = [
        { name: 'w1', machine: { type: 'local' }, minimum: machines, maximum: machines },
      ];
      return object;
    };
    const resize = (name: string, maximum: number, minimum = maximum) =>
      retryOnConflict(async () => {
        const current = (await client.get<Shoot & KubernetesObject>(Refs.shoot, name, namespace))!;
        const provider = current.spec.provider!;
        provider.workers = provider.workers!.map((w) => ({ ...w, minimum, maximum }));
        return client.update(Refs.shoot, current);
      });
    /** The webhook counts what its cache holds: wait until it holds `name` with `machines` machines. */
    const cached = (name: string, machines: number) =>
      waitFor(
        () =>
          (shootInformer.get(name, namespace) as (Shoot & KubernetesObject) | undefined)?.spec.provider?.workers?.[0]
            ?.maximum === machines,
        { message: `shoot ${name} with ${machines} machines in the cache` },
      );

    await client.create(Refs.shoot, withMachines('alpha', 2));
    await cached('alpha', 2);
    const error = await rejection(client.create(Refs.shoot, withMachines('beta', 2)));
    expect(error.code).toBe(422);
    const detail =
      "the installation's other shoots have 2 machines and this shoot's 2 would make 4, more than 3, the most " +
      'machines this installation runs (--max-machines)';
    expect(error.message).toBe(
      `admission webhook "${VALIDATING_WEBHOOK_NAME}" denied the request: Shoot.core.gardener.cloud "beta" is ` +
        `invalid: spec.provider.workers: Invalid value: 2: ${detail}`,
    );
    expect(error.status?.details?.causes).toEqual([
      { reason: 'FieldValueInvalid', field: 'spec.provider.workers', message: `Invalid value: 2: ${detail}` },
    ]);
    expect(await client.get(Refs.shoot, 'beta', namespace)).toBeUndefined();

    // alpha shrinks to 1: beta's 2 fit beside it; alpha may not grow back, but may change without growing.
    await resize('alpha', 1);
    await cached('alpha', 1);
    await client.create(Refs.shoot, withMachines('beta', 2));
    await cached('beta', 2);
    const growth = await rejection(resize('alpha', 2));
    expect(growth.status?.details?.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.provider.workers',
        message:
          "Invalid value: 2: the installation's other shoots have 2 machines and this shoot's 2 would make 4, more " +
          'than 3, the most machines this installation runs (--max-machines)',
      },
    ]);
    const same = await resize('alpha', 1, 0);
    expect(same.spec.provider?.workers?.[0]).toMatchObject({ minimum: 0, maximum: 1 });
  });

  it('leaves objects without the run label alone', async () => {
    const namespace = await newTestNamespace('admission');
    const record = dnsRecord(namespace, 'off', { values: ['203.0.113.10'] });
    record.metadata = { ...record.metadata, labels: {} };
    const created = await client.create<DNSRecord & KubernetesObject>(Refs.dnsRecord, record);
    expect(created.spec.ttl).toBeUndefined();
  });
});

/** This run's CloudProfile: provider-local's, with a preview version above the supported one. */
function cloudProfile(spec: Partial<CloudProfile['spec']> = {}): CloudProfile & Obj {
  const local = localCloudProfile();
  return {
    ...local,
    metadata: { name: PROFILE, labels: labels('profiles') },
    spec: {
      ...local.spec,
      kubernetes: { versions: [{ version: '1.37.1' }, { version: '1.38.0', classification: 'preview' }] },
      ...spec,
    },
  };
}

/**
 * A Shoot of the CloudProfile webhook naming this run's CloudProfile, with `spec` over it; `name` short (a Shoot's
 * and its project's names together are at most 21 characters).
 */
function profiledShoot(namespace: string, name: string, spec: Record<string, unknown> = {}): Shoot & Obj {
  const base = shoot(namespace, 'profiles', { type: 'calico', nodes: '10.180.0.0/16', pods: '100.96.0.0/11' });
  const { cloudProfileName: _, kubernetes: __, ...rest } = base.spec;
  return {
    ...base,
    metadata: { ...base.metadata, name },
    spec: {
      ...rest,
      cloudProfile: { name: PROFILE },
      networking: { ...base.spec.networking, services: '100.64.0.0/13' },
      ...spec,
    },
  };
}

describe('admission against the CloudProfile, behind kube-apiserver', () => {
  beforeAll(async () => {
    // CloudProfiles go through the webhook too: one it refuses is not stored.
    const error = await rejection(
      client.create(Refs.cloudProfile, cloudProfile({ kubernetes: { versions: [{ version: '1.37' }] } })),
    );
    expect(error.status?.details?.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.kubernetes.versions[0].version',
        message: 'Invalid value: "1.37": all Kubernetes versions must match the regex ^([0-9]+\\.){2}[0-9]+$',
      },
    ]);
    const created = await client.create<CloudProfile & KubernetesObject>(Refs.cloudProfile, cloudProfile());
    // Defaulted by the mutating webhook as Gardener defaults a CloudProfile.
    expect(created.spec.machineTypes?.[0]).toMatchObject({ name: 'local', usable: true, architecture: 'amd64' });
    await waitFor(() => profileInformer.get(PROFILE) !== undefined, { message: 'the CloudProfile in the cache' });
  });

  it('gives a Shoot without a version the newest supported one, and a machine image', async () => {
    const namespace = await newTestNamespace('garden-admission');
    await client.create(Refs.shoot, profiledShoot(namespace, 'nover'));
    const stored = (await client.get<Shoot & KubernetesObject>(Refs.shoot, 'nover', namespace))!;
    // Not the preview 1.38.0: a preview version is only had by asking for it.
    expect(stored.spec.kubernetes?.version).toBe('1.37.1');
    expect(stored.spec.provider?.workers?.[0]?.machine).toEqual({
      type: 'local',
      image: { name: 'local', version: '1.0.0' },
    });

    await client.create(Refs.shoot, profiledShoot(namespace, 'minor', { kubernetes: { version: '1.37' } }));
    const minor = await client.get<Shoot & KubernetesObject>(Refs.shoot, 'minor', namespace);
    expect(minor?.spec.kubernetes?.version).toBe('1.37.1');
  });

  it('refuses a version the CloudProfile does not list, naming the ones it does', async () => {
    const namespace = await newTestNamespace('garden-admission');
    const error = await rejection(
      client.create(Refs.shoot, profiledShoot(namespace, 'old', { kubernetes: { version: '1.33.0' } })),
    );
    expect(error.code).toBe(422);
    expect(error.message).toBe(
      `admission webhook "${VALIDATING_WEBHOOK_NAME}" denied the request: Shoot.core.gardener.cloud "old" is ` +
        'invalid: spec.kubernetes.version: Unsupported value: "1.33.0": supported values: "1.37.1", "1.38.0 (preview)"',
    );
    expect(await client.get(Refs.shoot, 'old', namespace)).toBeUndefined();
  });

  it('refuses an unknown machine type and image per worker pool, and a CloudProfile that does not exist', async () => {
    const namespace = await newTestNamespace('garden-admission');
    const pools = [
      { name: 'w1', machine: { type: 'local' }, minimum: 1, maximum: 1 },
      {
        name: 'w2',
        machine: { type: 'm5.large', image: { name: 'gardenlinux', version: '1.0.0' } },
        minimum: 1,
        maximum: 1,
      },
    ];
    const error = await rejection(
      client.create(Refs.shoot, profiledShoot(namespace, 'mach', { provider: { type: 'local', workers: pools } })),
    );
    expect(error.status?.details?.causes).toEqual([
      {
        reason: 'FieldValueNotSupported',
        field: 'spec.provider.workers[1].machine.type',
        message: 'Unsupported value: "m5.large": supported values: "local", "local-2cpu"',
      },
      {
        reason: 'FieldValueInvalid',
        field: 'spec.provider.workers[1].machine.image',
        message:
          'Invalid value: {"name":"gardenlinux","version":"1.0.0"}: machine image version is not supported, ' +
          'supported machine image versions are: [local:1.0.0]',
      },
    ]);

    const missing = await rejection(
      client.create(Refs.shoot, profiledShoot(namespace, 'orph', { cloudProfile: { name: 'no-such-profile' } })),
    );
    expect(missing.status?.details?.causes).toEqual([
      { reason: 'FieldValueNotFound', field: 'spec.cloudProfile.name', message: 'Not found: "no-such-profile"' },
    ]);
  });

  it("refuses a worker sysctl a machine can't have, saying why", async () => {
    const namespace = await newTestNamespace('garden-admission');
    const pool = {
      name: 'w1',
      machine: { type: 'local' },
      minimum: 1,
      maximum: 1,
      sysctls: { 'vm.max_map_count': '262144', 'net.ipv4.tcp_keepalive_time': '600' },
    };
    const error = await rejection(
      client.create(Refs.shoot, profiledShoot(namespace, 'sysctl', { provider: { type: 'local', workers: [pool] } })),
    );
    expect(error.status?.details?.causes).toEqual([
      {
        reason: 'FieldValueForbidden',
        field: 'spec.provider.workers[0].sysctls[vm.max_map_count]',
        message: 'Forbidden: machines share the host kernel; only network-namespace settings (net.*) apply per machine',
      },
    ]);
  });
});
