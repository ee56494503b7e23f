/**
 * The `local` DNS extension against the real API server and a real BIND9: DNSRecords become records a resolver
 * answers, changes replace them, deletion removes them, and a DNS server outage shows as Error and heals by itself.
 */
import { Resolver } from 'node:dns/promises';
import { CoreV1Api, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { DNSRecord } from '../../src/apis/extensions/v1alpha1/dnsrecord.js';
import { addDNSExtension } from '../../src/extensions/dns/controller.js';
import { dnsRecordRef, FINALIZER } from '../../src/extensions/dns/reconciler.js';
import { localDNSProvider } from '../../src/gardenlet/dns-provider.js';
import { DNS_SECRET_NAME } from '../../src/gardenlet/shoot/components/dns-records.js';
import { startBind9, type Bind9 } from '../../src/localenv/bind9.js';
import { ResourceClient } from '../../src/runtime/client.js';
import { retryOnConflict } from '../../src/runtime/retry.js';
import { Refs } from '../../src/apis/refs.js';
import { startManager, type RunningControllers } from '../support/gardenlet.js';
import { kubeConfig, newTestNamespace } from '../support/kube.js';
import { waitFor } from '../support/wait.js';
import { queryDNS } from '../support/dns.js';

const client = new ResourceClient(kubeConfig());
const API_NAME = 'api.alpha.dev.external.local.gardener.cloud';
let bind: Bind9;

/** The sorted values of BIND9 for the name, or the error code. */
const resolve = (type: 'AAAA' | 'A', name = API_NAME) => queryDNS(bind.server, type, name);

/** The owner record of API_NAME's `type` RRset, or the error code. */
async function ownerTXT(type: 'AAAA' | 'A', name = API_NAME): Promise<string[] | string> {
  const resolver = new Resolver({ timeout: 1000, tries: 1 });
  resolver.setServers([bind.server]);
  try {
    return (await resolver.resolveTxt(`_owner-${type.toLowerCase()}.${name}`)).map((strings) => strings.join(''));
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? String(e);
  }
}

const owner = (record: DNSRecord) =>
  `heritage=gardener-ipv6,gardener-ipv6/owner=${record.metadata.uid},` +
  `gardener-ipv6/resource=dnsrecord/${record.metadata.namespace}/${record.metadata.name}`;

function dnsRecord(namespace: string, name: string, recordType: 'A' | 'AAAA', values: string[]): DNSRecord {
  return {
    apiVersion: 'extensions.gardener.cloud/v1alpha1',
    kind: 'DNSRecord',
    metadata: { name, namespace },
    spec: {
      type: 'local',
      secretRef: { name: DNS_SECRET_NAME, namespace },
      name: API_NAME,
      recordType,
      values,
      ttl: 120,
    },
  };
}

async function getRecord(namespace: string, name: string): Promise<DNSRecord | undefined> {
  return (await client.get(dnsRecordRef, name, namespace)) as DNSRecord | undefined;
}

/** Waits until the record reports `state` for its current generation and returns it. */
function waitForState(namespace: string, name: string, state: string, timeoutMs = 15_000): Promise<DNSRecord> {
  return waitFor(
    async () => {
      const r = await getRecord(namespace, name);
      return r?.status?.lastOperation?.state === state && r.status.observedGeneration === r.metadata.generation && r;
    },
    { timeoutMs, message: `DNSRecord ${namespace}/${name} to be ${state}` },
  );
}

/**
 * Creates the secret as the gardenlet writes it, and starts the extension for that namespace only. A short resync
 * republishes quickly (healing after an outage); a long one keeps the first operation's type observable.
 */
async function startExtension(namespace: string, resyncIntervalMs = 500): Promise<RunningControllers> {
  const provider = localDNSProvider({
    server: bind.server,
    tsigKeyName: bind.tsigKeyName,
    tsigSecret: bind.tsigSecret,
  });
  await client.create(Refs.secret, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: DNS_SECRET_NAME, namespace },
    stringData: { ...provider.secretData },
  } as KubernetesObject);
  return startManager(kubeConfig(), (manager) =>
    addDNSExtension(manager, {
      namespace,
      resyncIntervalMs,
      dnsTimeoutMs: 500,
      backoff: { baseDelayMs: 100, maxDelayMs: 1000 },
    }),
  );
}

beforeAll(async () => {
  bind = await startBind9();
});
afterAll(async () => {
  await bind?.stop();
  client.close();
});

describe('DNS extension (local)', () => {
  it('publishes AAAA and A records, replaces changed values, and removes deleted records', async () => {
    const ns = await newTestNamespace('dns');
    const extension = await startExtension(ns, 60_000);
    try {
      await client.create(dnsRecordRef, dnsRecord(ns, 'alpha-external-v6', 'AAAA', ['::1']) as KubernetesObject);
      await client.create(dnsRecordRef, dnsRecord(ns, 'alpha-external', 'A', ['127.0.0.1']) as KubernetesObject);

      const published = await waitForState(ns, 'alpha-external-v6', 'Succeeded');
      expect(published.metadata.finalizers).toContain(FINALIZER);
      expect(published.status).toMatchObject({
        lastOperation: { type: 'Create', description: `AAAA ${API_NAME} published at ${bind.server}` },
        zone: 'local.gardener.cloud.',
        observedGeneration: 1,
      });
      await waitForState(ns, 'alpha-external', 'Succeeded');
      expect(await resolve('AAAA')).toEqual(['::1']);
      expect(await resolve('A')).toEqual(['127.0.0.1']);
      expect(await ownerTXT('AAAA')).toEqual([owner(published)]);
      expect(await ownerTXT('A')).toEqual([owner((await getRecord(ns, 'alpha-external'))!)]);

      await retryOnConflict(async () => {
        const r = (await getRecord(ns, 'alpha-external-v6'))!;
        await client.update(dnsRecordRef, {
          ...r,
          spec: { ...r.spec, values: ['2001:db8::1', '2001:DB8::2'] },
        } as KubernetesObject);
      });
      await waitFor(async () => JSON.stringify(await resolve('AAAA')) === '["2001:db8::1","2001:db8::2"]', {
        message: 'the new AAAA values, and only them',
      });
      expect((await waitForState(ns, 'alpha-external-v6', 'Succeeded')).status?.observedGeneration).toBe(2);

      // Only validation makes spec.name immutable; should it change anyway, the old name must not keep resolving.
      const renamed = 'api.renamed.dev.external.local.gardener.cloud';
      await retryOnConflict(async () => {
        const r = (await getRecord(ns, 'alpha-external-v6'))!;
        await client.update(dnsRecordRef, { ...r, spec: { ...r.spec, name: renamed } } as KubernetesObject);
      });
      await waitFor(
        async () => (await resolve('AAAA', renamed)).length === 2 && (await resolve('AAAA')) === 'ENODATA',
        {
          message: 'the AAAA RRset to move to the new name',
        },
      );
      await retryOnConflict(async () => {
        const r = (await getRecord(ns, 'alpha-external-v6'))!;
        await client.update(dnsRecordRef, { ...r, spec: { ...r.spec, name: API_NAME } } as KubernetesObject);
      });
      await waitFor(
        async () => (await resolve('AAAA', renamed)) === 'ENOTFOUND' && (await resolve('AAAA')).length === 2,
        {
          message: 'the AAAA RRset to move back',
        },
      );

      await client.delete(dnsRecordRef, 'alpha-external-v6', ns);
      await waitFor(async () => (await getRecord(ns, 'alpha-external-v6')) === undefined, {
        message: 'the DNSRecord to be gone (finalizer removed)',
      });
      expect(await resolve('AAAA')).toBe('ENODATA');
      expect(await resolve('A')).toEqual(['127.0.0.1']);
      expect(await ownerTXT('AAAA')).toBe('ENOTFOUND');

      await client.delete(dnsRecordRef, 'alpha-external', ns);
      await waitFor(async () => (await getRecord(ns, 'alpha-external')) === undefined, {
        message: 'the A DNSRecord to be gone',
      });
      expect(await resolve('A')).toBe('ENOTFOUND');
      expect(await ownerTXT('A')).toBe('ENOTFOUND');
    } finally {
      await extension.stop();
    }
  });

  it("lets no DNSRecord of another namespace take or remove a shoot's name", async () => {
    const [victimNs, intruderNs] = [await newTestNamespace('dns-victim'), await newTestNamespace('dns-intruder')];
    const victimExtension = await startExtension(victimNs, 60_000);
    const intruderExtension = await startExtension(intruderNs, 60_000);
    try {
      await client.create(dnsRecordRef, dnsRecord(victimNs, 'alpha-external-v6', 'AAAA', ['::1']) as KubernetesObject);
      const victim = await waitForState(victimNs, 'alpha-external-v6', 'Succeeded');
      expect(await resolve('AAAA')).toEqual(['::1']);
      expect(await ownerTXT('AAAA')).toEqual([owner(victim)]);
      const untouched = async () => {
        expect(await resolve('AAAA')).toEqual(['::1']);
        expect(await ownerTXT('AAAA')).toEqual([owner(victim)]);
      };
      const deleteAndWaitGone = async (name: string) => {
        await client.delete(dnsRecordRef, name, intruderNs);
        await waitFor(async () => (await getRecord(intruderNs, name)) === undefined, {
          message: `DNSRecord ${intruderNs}/${name} to be gone (finalizer removed)`,
        });
      };

      // 1. The victim's secret, created directly (no webhook here): the extension refuses it.
      const borrowed = dnsRecord(intruderNs, 'borrowed-secret', 'AAAA', ['2001:db8::666']);
      borrowed.spec.secretRef = { name: DNS_SECRET_NAME, namespace: victimNs };
      await client.create(dnsRecordRef, borrowed as KubernetesObject);
      const refused = await waitForState(intruderNs, 'borrowed-secret', 'Error');
      expect(refused.status?.lastError).toMatchObject({
        description:
          `spec.secretRef.namespace: secret ${victimNs}/${DNS_SECRET_NAME} is not in the DNSRecord's namespace ` +
          `"${intruderNs}"; a DNSRecord may only use a secret of its own namespace`,
        codes: ['ERR_CONFIGURATION_PROBLEM'],
      });
      await untouched();
      await deleteAndWaitGone('borrowed-secret');
      await untouched();

      // 2. Its own valid secret, the same name: refused, naming the owner.
      await client.create(
        dnsRecordRef,
        dnsRecord(intruderNs, 'same-name', 'AAAA', ['2001:db8::666']) as KubernetesObject,
      );
      const taken = await waitForState(intruderNs, 'same-name', 'Error');
      expect(taken.status?.lastError).toMatchObject({
        description:
          `AAAA ${API_NAME} is owned by DNSRecord ${victimNs}/alpha-external-v6 (uid ${victim.metadata.uid}) ` +
          `(owner record TXT _owner-aaaa.${API_NAME}); a DNSRecord may not overwrite another's records`,
        codes: ['ERR_CONFIGURATION_PROBLEM'],
      });
      await untouched();
      await deleteAndWaitGone('same-name');
      await untouched();

      // 3. Another record type at the victim's name: the name is the victim's namespace's.
      await client.create(dnsRecordRef, dnsRecord(intruderNs, 'beside', 'A', ['192.0.2.66']) as KubernetesObject);
      const beside = await waitForState(intruderNs, 'beside', 'Error');
      expect(beside.status?.lastError?.description).toBe(
        `${API_NAME} belongs to another namespace: its AAAA records are owned by DNSRecord ` +
          `${victimNs}/alpha-external-v6 (uid ${victim.metadata.uid}) (owner record TXT _owner-aaaa.${API_NAME}); ` +
          'a DNSRecord may not add records to it',
      );
      expect(await resolve('A')).toBe('ENODATA');
      await deleteAndWaitGone('beside');
      await untouched();

      await client.delete(dnsRecordRef, 'alpha-external-v6', victimNs);
      await waitFor(async () => (await getRecord(victimNs, 'alpha-external-v6')) === undefined, {
        message: "the victim's DNSRecord to be gone",
      });
      expect(await resolve('AAAA')).toBe('ENOTFOUND');
      expect(await ownerTXT('AAAA')).toBe('ENOTFOUND');
    } finally {
      await intruderExtension.stop();
      await victimExtension.stop();
    }
  });

  it("publishes a seed namespace's own shoot's names only, never another shoot's or the zone's apex", async () => {
    const project = `dns${Date.now().toString(36)}`;
    const ns = `shoot--${project}--a`;
    const core = kubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: ns, labels: { 'gardener-ipv6.test/e2e': 'true' } } } });
    onTestFinished(() => core.deleteNamespace({ name: ns }).then(() => undefined));
    const extension = await startExtension(ns, 60_000);
    onTestFinished(() => extension.stop());
    const own = `api.a.${project}.external.local.gardener.cloud`;
    const others = `api.b.${project}.external.local.gardener.cloud`;
    const named = (name: string, spec: string) => {
      const r = dnsRecord(ns, name, 'AAAA', ['2001:db8::66']);
      r.spec.name = spec;
      return r as KubernetesObject;
    };

    await client.create(dnsRecordRef, named('others', others));
    await client.create(dnsRecordRef, named('apex', 'local.gardener.cloud'));
    await client.create(dnsRecordRef, named('own', own));
    const refused = await waitForState(ns, 'others', 'Error');
    expect(refused.status?.lastError).toMatchObject({
      description:
        `spec.name: ${others} is not a name of shoot ${project}/a: a DNSRecord in its seed namespace publishes ` +
        `names in a.${project}.external.local.gardener.cloud or a.${project}.internal.local.gardener.cloud only`,
      codes: ['ERR_CONFIGURATION_PROBLEM'],
    });
    const apex = await waitForState(ns, 'apex', 'Error');
    expect(apex.status?.lastError?.description).toBe(
      'spec.name: local.gardener.cloud is the apex of zone local.gardener.cloud',
    );
    await waitForState(ns, 'own', 'Succeeded');
    // BIND9 has the shoot's own name, nothing of the refused ones; the apex keeps only the zone's records.
    expect(await resolve('AAAA', own)).toEqual(['2001:db8::66']);
    expect(await resolve('AAAA', others)).toBe('ENOTFOUND');
    expect(await resolve('AAAA', 'local.gardener.cloud')).toBe('ENODATA');
    expect(await ownerTXT('AAAA', others)).toBe('ENOTFOUND');
    for (const name of ['others', 'apex', 'own']) await client.delete(dnsRecordRef, name, ns);
    await waitFor(async () => (await client.list(dnsRecordRef, { namespace: ns })).items.length === 0, {
      message: 'the DNSRecords to be gone',
    });
    expect(await resolve('AAAA', own)).toBe('ENOTFOUND');
  });

  it('takes over the name of DNSRecords deleted while no extension ran, and removes their other records', async () => {
    const [goneNs, nextNs] = [await newTestNamespace('dns-gone'), await newTestNamespace('dns-next')];
    const goneExtension = await startExtension(goneNs, 60_000);
    let stopped = false;
    try {
      await client.create(
        dnsRecordRef,
        dnsRecord(goneNs, 'alpha-external-v6', 'AAAA', ['2001:db8::1']) as KubernetesObject,
      );
      await client.create(dnsRecordRef, dnsRecord(goneNs, 'alpha-external', 'A', ['192.0.2.1']) as KubernetesObject);
      const goneV6 = await waitForState(goneNs, 'alpha-external-v6', 'Succeeded');
      const goneV4 = await waitForState(goneNs, 'alpha-external', 'Succeeded');

      // The extension is gone (uninstalled, say) and the records are deleted by removing their finalizers.
      await goneExtension.stop();
      stopped = true;
      for (const name of ['alpha-external-v6', 'alpha-external']) {
        await client.mergePatch(dnsRecordRef, name, goneNs, { metadata: { finalizers: null } });
        await client.delete(dnsRecordRef, name, goneNs);
        await waitFor(async () => (await getRecord(goneNs, name)) === undefined, { message: `${goneNs}/${name} gone` });
      }
      expect(await resolve('AAAA')).toEqual(['2001:db8::1']);
      expect(await ownerTXT('AAAA')).toEqual([owner(goneV6)]);
      expect(await ownerTXT('A')).toEqual([owner(goneV4)]);

      // Another namespace's DNSRecord for the name: its owners are gone, so it takes the AAAA records over and
      // removes the A records, which would still send clients to the old address.
      const nextExtension = await startExtension(nextNs, 60_000);
      try {
        await client.create(
          dnsRecordRef,
          dnsRecord(nextNs, 'alpha-external-v6', 'AAAA', ['2001:db8::2']) as KubernetesObject,
        );
        const next = await waitForState(nextNs, 'alpha-external-v6', 'Succeeded');
        expect(await resolve('AAAA')).toEqual(['2001:db8::2']);
        expect(await ownerTXT('AAAA')).toEqual([owner(next)]);
        expect(await resolve('A')).toBe('ENODATA');
        expect(await ownerTXT('A')).toBe('ENOTFOUND');
        await client.delete(dnsRecordRef, 'alpha-external-v6', nextNs);
        await waitFor(async () => (await getRecord(nextNs, 'alpha-external-v6')) === undefined, {
          message: 'the next DNSRecord to be gone',
        });
        expect(await resolve('AAAA')).toBe('ENOTFOUND');
      } finally {
        await nextExtension.stop();
      }
    } finally {
      if (!stopped) await goneExtension.stop();
    }
  });

  it('reports Error while BIND9 is down and heals when it is back, for reconcile and delete', async () => {
    const ns = await newTestNamespace('dns');
    const extension = await startExtension(ns);
    try {
      await client.create(dnsRecordRef, dnsRecord(ns, 'alpha-external-v6', 'AAAA', ['::1']) as KubernetesObject);
      await waitForState(ns, 'alpha-external-v6', 'Succeeded');
      expect(await resolve('AAAA')).toEqual(['::1']);

      const { port, tsigSecret } = bind;
      await bind.stop();
      const failed = await waitForState(ns, 'alpha-external-v6', 'Error');
      expect(failed.status?.lastOperation?.description).toBe(
        `update of AAAA ${API_NAME} at [::1]:${port} failed: connection refused by [::1]:${port} (no DNS server there?)`,
      );
      expect(failed.status?.lastError?.codes).toEqual(['ERR_RETRYABLE_INFRA_DEPENDENCIES']);

      // A restarted BIND9 starts with an empty zone: the extension publishes the record again by itself.
      bind = await startBind9({ port, tsigSecret });
      await waitForState(ns, 'alpha-external-v6', 'Succeeded');
      await waitFor(async () => JSON.stringify(await resolve('AAAA')) === '["::1"]', { message: 'AAAA ::1 again' });
      expect((await getRecord(ns, 'alpha-external-v6'))!.status?.lastError).toBeUndefined();

      await bind.stop();
      await client.delete(dnsRecordRef, 'alpha-external-v6', ns);
      const stuck = await waitFor(
        async () => {
          const r = await getRecord(ns, 'alpha-external-v6');
          return r?.status?.lastOperation?.type === 'Delete' && r.status.lastOperation.state === 'Error' && r;
        },
        { timeoutMs: 15_000, message: 'the deletion to report Error' },
      );
      expect(stuck.metadata.finalizers).toContain(FINALIZER);
      expect(stuck.status?.lastOperation?.description).toMatch(/^delete of AAAA .* failed: connection refused by/);

      bind = await startBind9({ port, tsigSecret });
      await waitFor(async () => (await getRecord(ns, 'alpha-external-v6')) === undefined, {
        timeoutMs: 15_000,
        message: 'the DNSRecord to be gone once BIND9 is back',
      });
    } finally {
      await extension.stop();
    }
  });
});
