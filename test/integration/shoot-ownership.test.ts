/**
 * Ownership and deletion of a shoot's seed objects against the real API server, the real DNS extension and a real
 * BIND9: two shoots whose names map to one seed namespace (names with `--`, created here without the webhook that
 * forbids them), a DNSRecord the gardenlet did not create, a seed namespace deleted under its shoot, and a DNS
 * record whose deletion fails while its shoot is deleted.
 */
import { CoreV1Api, type KubernetesObject, type V1Namespace, type V1Secret } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import type { DNSRecord } from '../../src/apis/extensions/v1alpha1/dnsrecord.js';
import { addDNSExtension } from '../../src/extensions/dns/controller.js';
import { FINALIZER as DNS_EXTENSION_FINALIZER } from '../../src/extensions/dns/reconciler.js';
import { localDNSProvider } from '../../src/gardenlet/dns-provider.js';
import { Refs } from '../../src/apis/refs.js';
import { DNS_SECRET_NAME } from '../../src/gardenlet/shoot/components/dns-records.js';
import { startBind9, type Bind9 } from '../../src/localenv/bind9.js';
import { ResourceClient } from '../../src/runtime/client.js';
import { seedIPv6Networks } from '../fixtures/objects.js';
import {
  createSeed,
  createShootOn,
  startGardenlet,
  startManager,
  type RunningControllers,
} from '../support/gardenlet.js';
import { kubeConfig, statusCode, uniqueSuffix } from '../support/kube.js';
import { waitFor } from '../support/wait.js';

const client = new ResourceClient(kubeConfig());
let bind: Bind9;

beforeAll(async () => {
  bind = await startBind9();
});
afterAll(async () => {
  await bind?.stop();
  client.close();
});

/** A gardenlet for one seed (other test files' shoots are not its business) publishing to this file's BIND9. */
async function gardenletFor(seedName: string): Promise<RunningControllers> {
  const dns = localDNSProvider({ server: bind.server, tsigKeyName: bind.tsigKeyName, tsigSecret: bind.tsigSecret });
  const gardenlet = await startGardenlet(kubeConfig(), { seedName, dns });
  onTestFinished(() => gardenlet.stop());
  return gardenlet;
}

/** The DNS extension for one seed namespace only (the other files' DNSRecords name DNS servers that are not here). */
async function dnsExtensionFor(namespace: string): Promise<RunningControllers> {
  const extension = await startManager(kubeConfig(), (manager) =>
    addDNSExtension(manager, { namespace, dnsTimeoutMs: 500, backoff: { baseDelayMs: 100, maxDelayMs: 1_000 } }),
  );
  onTestFinished(() => extension.stop());
  return extension;
}

/** A project namespace of an exact name (`garden-<project>`), deleted when the test finishes. */
async function createProjectNamespace(name: string): Promise<string> {
  const core = kubeConfig().makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name, labels: { 'gardener-ipv6.test/e2e': 'true' } } } });
  onTestFinished(async () => {
    await core.deleteNamespace({ name }).catch((e: unknown) => {
      if (statusCode(e) !== 404) throw e;
    });
  });
  return name;
}

const getShoot = (namespace: string, name: string) => client.get<Shoot & KubernetesObject>(Refs.shoot, name, namespace);

function waitForShoot(
  namespace: string,
  name: string,
  what: string,
  check: (shoot: Shoot) => boolean,
  timeoutMs = 30_000,
): Promise<Shoot> {
  return waitFor(
    async () => {
      const shoot = await getShoot(namespace, name);
      return shoot !== undefined && check(shoot) && shoot;
    },
    { timeoutMs, message: `shoot ${namespace}/${name} ${what}` },
  );
}

const succeeded = (namespace: string, name: string) =>
  waitForShoot(namespace, name, 'to succeed', (s) => s.status?.lastOperation?.state === 'Succeeded');

async function deleteShootAndWait(namespace: string, name: string, timeoutMs = 30_000): Promise<void> {
  await client.delete(Refs.shoot, name, namespace);
  await waitFor(async () => (await getShoot(namespace, name)) === undefined, {
    timeoutMs,
    message: `shoot ${namespace}/${name} to be gone`,
  });
}

async function records(namespace: string): Promise<DNSRecord[]> {
  const list = await client.list<DNSRecord & KubernetesObject>(Refs.dnsRecord, { namespace });
  return list.items.sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
}

function recordsPublished(namespace: string, names: string[]): Promise<DNSRecord[]> {
  return waitFor(
    async () => {
      const all = await records(namespace);
      const wanted = all.filter((r) => names.includes(r.metadata.name ?? ''));
      const published = wanted.every(
        (r) => r.status?.lastOperation?.state === 'Succeeded' && r.status.observedGeneration === r.metadata.generation,
      );
      return wanted.length === names.length && published && wanted;
    },
    { timeoutMs: 20_000, message: `DNSRecords ${names.join(', ')} in ${namespace} to be published` },
  );
}

const names = (objects: { metadata?: { name?: string } }[]) => objects.map((o) => o.metadata?.name).sort();

/**
 * Projects P and `P--x` on a seed of their own with its gardenlet and DNS extension: shoot "x--yy" of project P and
 * shoot "yy" of project "P--x" both map to `shoot--P--x--yy`.
 */
async function collidingProjects() {
  const project = `own-${uniqueSuffix()}`;
  const first = await createProjectNamespace(`garden-${project}--x`);
  const second = await createProjectNamespace(`garden-${project}`);
  const seedNamespace = `shoot--${project}--x--yy`;
  const seedName = await createSeed(client, seedIPv6Networks);
  await dnsExtensionFor(seedNamespace);
  await gardenletFor(seedName);
  return { project, first, second, seedNamespace, seedName };
}

describe('shoots whose names map to one seed namespace', () => {
  it('refuses the second with an error naming the owner, and deleting it leaves the owner intact', async () => {
    const { project, first, second, seedNamespace, seedName } = await collidingProjects();

    const owner = await createShootOn(client, first, 'yy', seedName);
    await succeeded(first, 'yy');
    await recordsPublished(seedNamespace, ['yy-external-v6', 'yy-internal-v6']);

    await createShootOn(client, second, 'x--yy', seedName);
    const refused = await waitForShoot(
      second,
      'x--yy',
      'to be refused',
      (s) => s.status?.lastOperation?.state === 'Error',
    );
    const message =
      `deploying the seed namespace: the seed namespace ${seedNamespace} belongs to shoot "yy" of project ` +
      `"${project}--x" (uid ${owner.metadata.uid})`;
    expect(refused.status?.lastOperation?.description).toContain(message);
    expect(refused.status?.lastErrors).toEqual([
      expect.objectContaining({
        taskID: 'deploying the seed namespace',
        description: expect.stringContaining(message),
      }),
    ]);
    expect(refused.status?.advertisedAddresses).toBeUndefined();
    const namespace = await client.get<V1Namespace>(Refs.namespace, seedNamespace);
    expect(namespace?.metadata?.annotations?.['shoot.gardener.cloud/uid']).toBe(owner.metadata.uid);

    // Nothing of the refused shoot's was written, nothing of the owner's was touched.
    const ownerObjects = async () => ({
      networks: names((await client.list(Refs.network, { namespace: seedNamespace })).items),
      records: (await records(seedNamespace)).map((r) => [
        r.metadata.name,
        r.metadata.uid,
        r.status?.lastOperation?.state,
      ]),
      oscs: names((await client.list(Refs.operatingSystemConfig, { namespace: seedNamespace })).items),
      services: names((await client.list(Refs.service, { namespace: seedNamespace })).items),
      secret: (await client.get<V1Secret>(Refs.secret, DNS_SECRET_NAME, seedNamespace))?.metadata?.uid,
    });
    const before = await ownerObjects();
    expect(before).toMatchObject({
      networks: ['yy'],
      oscs: ['yy-worker-w1'],
      services: ['kube-apiserver'],
      secret: expect.any(String),
    });
    expect(before.records.map((r) => r[0])).toEqual(['yy-external-v6', 'yy-internal-v6']);

    await deleteShootAndWait(second, 'x--yy');
    expect(await ownerObjects()).toEqual(before);
    const ns = await client.get<V1Namespace>(Refs.namespace, seedNamespace);
    expect(ns?.metadata?.deletionTimestamp).toBeUndefined();
    expect((await getShoot(first, 'yy'))?.status?.lastOperation?.state).toBe('Succeeded');

    // The owner's deletion finishes and takes everything with it.
    await deleteShootAndWait(first, 'yy');
    expect(await client.get(Refs.namespace, seedNamespace)).toBeUndefined();
  });

  it('lets the refused shoot have the namespace once the owner is gone', async () => {
    const { first, second, seedNamespace, seedName } = await collidingProjects();

    await createShootOn(client, first, 'yy', seedName);
    await succeeded(first, 'yy');
    const refused = await createShootOn(client, second, 'x--yy', seedName);
    await waitForShoot(second, 'x--yy', 'to be refused', (s) => s.status?.lastOperation?.state === 'Error');

    await deleteShootAndWait(first, 'yy');
    // The refused shoot retries with backoff: give it time to come back.
    await waitForShoot(second, 'x--yy', 'to succeed', (s) => s.status?.lastOperation?.state === 'Succeeded', 90_000);
    const namespace = await client.get<V1Namespace>(Refs.namespace, seedNamespace);
    expect(namespace?.metadata?.annotations?.['shoot.gardener.cloud/uid']).toBe(refused.metadata.uid);
    expect((await succeeded(second, 'x--yy')).status?.lastErrors).toBeUndefined();
    await recordsPublished(seedNamespace, ['x--yy-external-v6', 'x--yy-internal-v6']);
    await deleteShootAndWait(second, 'x--yy');
    expect(await client.get(Refs.namespace, seedNamespace)).toBeUndefined();
  }, 150_000);
});

describe('a shoot outside a project namespace', () => {
  it('is refused by the gardenlet naming its namespace, and leaves the project shoot of its names alone', async () => {
    // Shoot "yy" in namespace P (written past the webhook, which refuses it) maps to the names of "yy" in garden-P.
    const project = `own-${uniqueSuffix()}`;
    const projectNamespace = await createProjectNamespace(`garden-${project}`);
    const stray = await createProjectNamespace(project);
    const seedNamespace = `shoot--${project}--yy`;
    const seedName = await createSeed(client, seedIPv6Networks);
    await dnsExtensionFor(seedNamespace);
    await gardenletFor(seedName);

    // First the stray shoot: it must not take the namespace the project's shoot gets next.
    await createShootOn(client, stray, 'yy', seedName);
    const refused = await waitForShoot(stray, 'yy', 'to be refused', (s) => s.status?.lastOperation?.state === 'Error');
    expect(refused.status?.lastOperation?.description).toContain(
      `deploying the seed namespace: the shoot is in namespace "${project}", not in a project namespace ("garden" ` +
        `or "garden-<project>"): it would take the seed namespace ${seedNamespace} and the DNS names of project ` +
        `"${project}"; it is not deployed (create it in garden-${project})`,
    );
    expect(await client.get(Refs.namespace, seedNamespace)).toBeUndefined();

    const owner = await createShootOn(client, projectNamespace, 'yy', seedName);
    await succeeded(projectNamespace, 'yy');
    await recordsPublished(seedNamespace, ['yy-external-v6', 'yy-internal-v6']);
    const namespace = await client.get<V1Namespace>(Refs.namespace, seedNamespace);
    expect(namespace?.metadata?.annotations?.['shoot.gardener.cloud/uid']).toBe(owner.metadata.uid);

    // Deleting the stray shoot touches nothing of the owner's.
    const recordUIDs = async () => (await records(seedNamespace)).map((r) => r.metadata.uid);
    const before = await recordUIDs();
    await deleteShootAndWait(stray, 'yy');
    expect(await recordUIDs()).toEqual(before);
    expect((await client.get<V1Namespace>(Refs.namespace, seedNamespace))?.metadata?.deletionTimestamp).toBeUndefined();
    expect((await getShoot(projectNamespace, 'yy'))?.status?.lastOperation?.state).toBe('Succeeded');
    await deleteShootAndWait(projectNamespace, 'yy');
  });
});

describe('deleting a shoot', () => {
  /** A project, its seed namespace's DNS extension, a gardenlet and a shoot `alpha` that succeeded. */
  async function shootWithDNS(): Promise<{
    project: string;
    namespace: string;
    seedNamespace: string;
    extension: RunningControllers;
  }> {
    const project = `del-${uniqueSuffix()}`;
    const namespace = await createProjectNamespace(`garden-${project}`);
    const seedNamespace = `shoot--${project}--alpha`;
    const seedName = await createSeed(client, seedIPv6Networks);
    const extension = await dnsExtensionFor(seedNamespace);
    await gardenletFor(seedName);
    await createShootOn(client, namespace, 'alpha', seedName);
    await succeeded(namespace, 'alpha');
    await recordsPublished(seedNamespace, ['alpha-external-v6', 'alpha-internal-v6']);
    return { project, namespace, seedNamespace, extension };
  }

  it('removes every DNSRecord of the seed namespace before their secret, so none keeps its finalizer', async () => {
    const { project, namespace, seedNamespace } = await shootWithDNS();
    // A DNSRecord the gardenlet did not write (an operator's, or an older version's) that uses the same secret.
    await client.create(Refs.dnsRecord, {
      apiVersion: 'extensions.gardener.cloud/v1alpha1',
      kind: 'DNSRecord',
      metadata: { name: 'extra', namespace: seedNamespace },
      spec: {
        type: 'local',
        secretRef: { name: DNS_SECRET_NAME, namespace: seedNamespace },
        // A name of its own shoot: a seed namespace publishes no other (the DNS extension refuses).
        name: `extra.alpha.${project}.external.local.gardener.cloud`,
        recordType: 'AAAA',
        values: ['::1'],
        ttl: 120,
      },
    } as KubernetesObject);
    const [extra] = await recordsPublished(seedNamespace, ['extra']);
    expect(extra?.metadata.finalizers).toContain(DNS_EXTENSION_FINALIZER);

    await deleteShootAndWait(namespace, 'alpha');
    await waitFor(async () => (await client.get(Refs.namespace, seedNamespace)) === undefined, {
      message: `the seed namespace ${seedNamespace} to be gone`,
    });
  });

  it('lets a seed namespace deleted under its shoot go, and creates it again', async () => {
    const { namespace, seedNamespace } = await shootWithDNS();
    const before = await client.get<V1Namespace>(Refs.namespace, seedNamespace);
    await client.delete(Refs.namespace, seedNamespace);
    // Its DNS records are removed by the extension (the secret stays readable until they are gone) and the
    // namespace goes; the shoot gets a new one.
    const after = await waitFor(
      async () => {
        const ns = await client.get<V1Namespace>(Refs.namespace, seedNamespace);
        return ns?.metadata?.uid !== before?.metadata?.uid && !ns?.metadata?.deletionTimestamp && ns;
      },
      { timeoutMs: 40_000, message: `the seed namespace ${seedNamespace} to be replaced` },
    );
    expect(after?.metadata?.annotations?.['shoot.gardener.cloud/uid']).toBe(
      (await getShoot(namespace, 'alpha'))?.metadata.uid,
    );
    await recordsPublished(seedNamespace, ['alpha-external-v6', 'alpha-internal-v6']);
    await deleteShootAndWait(namespace, 'alpha');
  }, 90_000);

  it('shows a DNS record that fails to be deleted in the shoot status, and finishes once it is deleted', async () => {
    const { namespace, seedNamespace, extension } = await shootWithDNS();
    // A wrong TSIG key: BIND9 refuses the record's removal. The gardenlet owns the secret and writes the right key
    // again in any reconcile, so the key is swapped once the deletion runs (no reconcile after that), and with the
    // extension stopped until then, so that it can't remove the records with the right key first.
    await extension.stop();
    await client.delete(Refs.shoot, 'alpha', namespace);
    await waitForShoot(namespace, 'alpha', 'to start deleting', (s) => s.status?.lastOperation?.type === 'Delete');
    const wrongKey = Buffer.from('not the key of this server, 32 b').toString('base64');
    await client.mergePatch(Refs.secret, DNS_SECRET_NAME, seedNamespace, { stringData: { tsigSecret: wrongKey } });
    await dnsExtensionFor(seedNamespace);

    const failing = await waitForShoot(namespace, 'alpha', 'to report the failing DNS record', (s) => {
      const op = s.status?.lastOperation;
      return op?.type === 'Delete' && op.state === 'Error';
    });
    const description = failing.status?.lastOperation?.description ?? '';
    expect(description).toMatch(
      new RegExp(
        `^waiting for the deletion of the DNS records: DNSRecord ${seedNamespace}/alpha-(ex|in)ternal-v6 reports Error while being deleted: `,
      ),
    );
    expect(description).toMatch(/TSIG|BADSIG|BADKEY|NOTAUTH/i);
    expect(failing.status?.lastErrors?.[0]).toMatchObject({
      taskID: 'waiting for the deletion of the DNS records',
      description,
    });

    await client.mergePatch(Refs.secret, DNS_SECRET_NAME, seedNamespace, {
      stringData: { tsigSecret: bind.tsigSecret },
    });
    await waitFor(async () => (await getShoot(namespace, 'alpha')) === undefined, {
      timeoutMs: 40_000,
      message: `shoot ${namespace}/alpha to be gone`,
    });
    expect(await client.get(Refs.namespace, seedNamespace)).toBeUndefined();
  }, 90_000);
});
