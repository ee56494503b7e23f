/**
 * The DNSRecord reconciler against a small real HTTP API server (test/runtime/fake-apiserver.ts) with a recording
 * publisher in place of the DNS server: finalizer, status and deletion rules.
 */
import type { KubernetesObject, V1Secret } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DNSRecord } from '../../../src/apis/extensions/v1alpha1/dnsrecord.js';
import {
  checkPublishable,
  LocalDNSActuator,
  providerFromSecret,
  type LocalDNSProvider,
  type RRsetPublisher,
} from '../../../src/extensions/dns/actuator.js';
import {
  DEFAULT_RESYNC_INTERVAL_MS,
  DNSRecordReconciler,
  dnsRecordRef,
  FINALIZER,
} from '../../../src/extensions/dns/reconciler.js';
import { DNSUpdateError, type RRset, type RRsetChange, type RRsetRef } from '../../../src/extensions/dns/rfc2136.js';
import { tsigKey } from '../../../src/extensions/dns/tsig.js';
import { ResourceClient } from '../../../src/runtime/client.js';
import { Refs } from '../../../src/apis/refs.js';
import { FakeClock } from '../../../src/runtime/clock.js';
import { silentLogger } from '../../../src/runtime/log.js';
import { FakeApiServer } from '../../runtime/fake-apiserver.js';

const NS = 'shoot--project--shoot';
const NAME = 'api.shoot.project.external.local.gardener.cloud';
const SECRET = Buffer.alloc(32, 7).toString('base64');

/**
 * A zone in memory with RFC 2136's all-or-nothing updates and prerequisites; `calls` records the data RRsets each
 * applied update wrote or removed (owner records are read from `rrsets`).
 */
class InMemoryZone implements RRsetPublisher {
  readonly calls: ({ op: 'replace'; rrset: RRset } | { op: 'delete'; ref: RRsetRef })[] = [];
  readonly providers: LocalDNSProvider[] = [];
  /** `name type` (lower case, no trailing dot) → values. */
  readonly rrsets = new Map<string, string[]>();
  failWith: Error | undefined;

  factory = (p: LocalDNSProvider): RRsetPublisher => {
    this.providers.push(p);
    return this;
  };

  static key(name: string, type: string): string {
    return `${name.toLowerCase().replace(/\.$/, '')} ${type}`;
  }

  async update(change: RRsetChange): Promise<void> {
    if (this.failWith) throw this.failWith;
    for (const p of change.prerequisites ?? []) {
      const current = this.rrsets.get(InMemoryZone.key(p.name, p.type));
      if (p.kind === 'rrset-absent' && current)
        throw new DNSUpdateError('rcode', 'YXRRSET', 'update', { rcode: 'YXRRSET' });
      if (p.kind === 'rrset-equals' && JSON.stringify(current?.toSorted()) !== JSON.stringify([...p.values].sort())) {
        throw new DNSUpdateError('rcode', 'NXRRSET', 'update', { rcode: 'NXRRSET' });
      }
    }
    const data = (name: string) => !name.startsWith('_owner-');
    for (const ref of change.delete ?? []) {
      this.rrsets.delete(InMemoryZone.key(ref.name, ref.type));
      if (data(ref.name)) this.calls.push({ op: 'delete', ref: ref as RRsetRef });
    }
    for (const rrset of change.replace ?? []) {
      this.rrsets.set(InMemoryZone.key(rrset.name, rrset.type), [...rrset.values]);
      if (data(rrset.name)) this.calls.push({ op: 'replace', rrset: rrset as RRset });
    }
  }

  async readTXT(name: string): Promise<string[]> {
    return this.rrsets.get(InMemoryZone.key(name, 'TXT')) ?? [];
  }

  owner(name: string, type = 'AAAA'): string[] | undefined {
    return this.rrsets.get(InMemoryZone.key(`_owner-${type.toLowerCase()}.${name}`, 'TXT'));
  }
}

function secret(data: Record<string, string>): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'dnsrecord-local', namespace: NS },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  };
}

function dnsRecord(overrides: { type?: string; values?: string[]; zone?: string } = {}): DNSRecord {
  return {
    apiVersion: 'extensions.gardener.cloud/v1alpha1',
    kind: 'DNSRecord',
    metadata: { name: 'shoot-external-v6', namespace: NS, generation: 1 },
    spec: {
      type: overrides.type ?? 'local',
      secretRef: { name: 'dnsrecord-local', namespace: NS },
      name: NAME,
      recordType: 'AAAA',
      values: overrides.values ?? ['::1'],
      ttl: 120,
      ...(overrides.zone ? { zone: overrides.zone } : {}),
    },
  };
}

describe('DNSRecordReconciler', () => {
  let api: FakeApiServer;
  let client: ResourceClient;
  let publisher: InMemoryZone;
  let reconciler: DNSRecordReconciler;
  const clock = new FakeClock();
  const ctx = () => ({ signal: new AbortController().signal, logger: silentLogger() });
  const req = { namespace: NS, name: 'shoot-external-v6' };
  const stored = () => api.objects<DNSRecord & KubernetesObject>(dnsRecordRef)[0];
  const statusWrites = () => api.requestsWhere({ method: 'PATCH' }).filter((r) => r.path.endsWith('/status')).length;

  beforeEach(async () => {
    api = await FakeApiServer.start();
    client = new ResourceClient(api.kubeConfig());
    publisher = new InMemoryZone();
    reconciler = new DNSRecordReconciler({
      client,
      clock,
      actuator: new LocalDNSActuator({ client, publisher: publisher.factory }),
    });
    api.upsert(Refs.secret, secret({ server: '[::1]:5353', zone: 'local.gardener.cloud.' }));
  });
  afterEach(async () => {
    client.close();
    await api.close();
  });

  it('adds the finalizer, publishes the RRset and reports Create Succeeded', async () => {
    api.upsert(dnsRecordRef, dnsRecord({ values: ['2001:db8::1', '::1'] }) as unknown as KubernetesObject);
    expect(await reconciler.reconcile(req, ctx())).toEqual({ requeueAfter: DEFAULT_RESYNC_INTERVAL_MS });

    expect(publisher.providers).toEqual([{ server: '[::1]:5353', zone: 'local.gardener.cloud.' }]);
    expect(publisher.calls).toEqual([
      {
        op: 'replace',
        rrset: { zone: 'local.gardener.cloud.', name: NAME, type: 'AAAA', ttl: 120, values: ['2001:db8::1', '::1'] },
      },
    ]);
    const record = stored()!;
    expect(record.metadata.finalizers).toEqual([FINALIZER]);
    expect(record.status).toEqual({
      lastOperation: {
        type: 'Create',
        state: 'Succeeded',
        progress: 100,
        description: `AAAA ${NAME} published at [::1]:5353`,
        lastUpdateTime: '2026-11-21T20:00:00Z',
      },
      observedGeneration: 1,
      zone: 'local.gardener.cloud.',
      providerStatus: {
        apiVersion: 'dns.local.extensions.gardener.cloud/v1alpha1',
        kind: 'DNSRecordStatus',
        published: { zone: 'local.gardener.cloud.', name: NAME, recordType: 'AAAA' },
      },
    });
  });

  it('removes the RRset published before when name or type changed (nothing but validation forbids it)', async () => {
    api.upsert(dnsRecordRef, dnsRecord() as unknown as KubernetesObject);
    await reconciler.reconcile(req, ctx());
    const first = stored()!;
    const renamed = 'api2.shoot.project.external.local.gardener.cloud';
    api.upsert(dnsRecordRef, {
      ...first,
      metadata: { ...first.metadata, generation: 2 },
      spec: { ...first.spec, name: renamed },
    } as unknown as KubernetesObject);
    await reconciler.reconcile(req, ctx());
    expect(publisher.calls.slice(1)).toEqual([
      {
        op: 'replace',
        rrset: { zone: 'local.gardener.cloud.', name: renamed, type: 'AAAA', ttl: 120, values: ['::1'] },
      },
      { op: 'delete', ref: { zone: 'local.gardener.cloud.', name: NAME, type: 'AAAA' } },
    ]);
    expect(stored()!.status?.providerStatus).toMatchObject({ published: { name: renamed } });

    await reconciler.reconcile(req, ctx());
    expect(publisher.calls.at(-1)).toMatchObject({ op: 'replace' }); // nothing left to remove
  });

  it('publishes again on every reconcile without writing an unchanged status', async () => {
    api.upsert(dnsRecordRef, dnsRecord() as unknown as KubernetesObject);
    await reconciler.reconcile(req, ctx());
    await reconciler.reconcile(req, ctx()); // Create → Reconcile
    const writes = statusWrites();
    await clock.advance(60_000);
    await reconciler.reconcile(req, ctx());
    expect(publisher.calls).toHaveLength(3);
    expect(statusWrites()).toBe(writes);
  });

  it('reports Reconcile after the first success, with the new generation', async () => {
    api.upsert(dnsRecordRef, dnsRecord() as unknown as KubernetesObject);
    await reconciler.reconcile(req, ctx());
    const next = stored()!;
    api.upsert(dnsRecordRef, {
      ...next,
      metadata: { ...next.metadata, generation: 2 },
      spec: { ...next.spec, values: ['::2'] },
    });
    await reconciler.reconcile(req, ctx());
    expect(publisher.calls.at(-1)).toMatchObject({ op: 'replace', rrset: { values: ['::2'] } });
    expect(stored()!.status).toMatchObject({
      lastOperation: { type: 'Reconcile', state: 'Succeeded' },
      observedGeneration: 2,
    });
  });

  it("writes the server's answer as Error, returns the error, and clears it after a success", async () => {
    api.upsert(dnsRecordRef, dnsRecord() as unknown as KubernetesObject);
    publisher.failWith = new DNSUpdateError('rcode', 'REFUSED', `update of AAAA ${NAME} at [::1]:5353`, {
      rcode: 'REFUSED',
    });
    await expect(reconciler.reconcile(req, ctx())).rejects.toThrow(
      `update of AAAA ${NAME} at [::1]:5353 failed: REFUSED`,
    );
    expect(stored()!.metadata.finalizers).toEqual([FINALIZER]);
    expect(stored()!.status).toMatchObject({
      lastOperation: {
        type: 'Create',
        state: 'Error',
        description: `update of AAAA ${NAME} at [::1]:5353 failed: REFUSED`,
      },
      lastError: {
        description: `update of AAAA ${NAME} at [::1]:5353 failed: REFUSED`,
        codes: ['ERR_INFRA_UNAUTHORIZED'],
      },
      observedGeneration: 1,
    });

    publisher.failWith = undefined;
    await reconciler.reconcile(req, ctx());
    expect(stored()!.status?.lastError).toBeUndefined();
    expect(stored()!.status?.lastOperation).toMatchObject({ type: 'Create', state: 'Succeeded' });
  });

  it('reports an unreachable server as a retryable dependency problem', async () => {
    api.upsert(dnsRecordRef, dnsRecord() as unknown as KubernetesObject);
    publisher.failWith = new DNSUpdateError(
      'timeout',
      'no answer from [::1]:5353 within 2s',
      `update of AAAA ${NAME} at [::1]:5353`,
    );
    await expect(reconciler.reconcile(req, ctx())).rejects.toThrow('no answer from [::1]:5353 within 2s');
    expect(stored()!.status?.lastError?.codes).toEqual(['ERR_RETRYABLE_INFRA_DEPENDENCIES']);
  });

  it('reports a missing secret as a configuration problem', async () => {
    api.remove(Refs.secret, 'dnsrecord-local', NS);
    api.upsert(dnsRecordRef, dnsRecord() as unknown as KubernetesObject);
    await expect(reconciler.reconcile(req, ctx())).rejects.toThrow(
      `secret ${NS}/dnsrecord-local (spec.secretRef) not found`,
    );
    expect(stored()!.status).toMatchObject({
      lastOperation: { state: 'Error' },
      lastError: { codes: ['ERR_CONFIGURATION_PROBLEM'] },
    });
    expect(publisher.calls).toEqual([]);
  });

  it('reports a value that does not fit the record type as a configuration problem', async () => {
    api.upsert(dnsRecordRef, dnsRecord({ values: ['::1', '192.0.2.1'] }) as unknown as KubernetesObject);
    await expect(reconciler.reconcile(req, ctx())).rejects.toThrow(
      'spec.values[1]: "192.0.2.1" is not an IPv6 address',
    );
    expect(stored()!.status?.lastError?.codes).toEqual(['ERR_CONFIGURATION_PROBLEM']);
    expect(publisher.calls).toEqual([]);
  });

  it("refuses a seed namespace's DNSRecord another shoot's name, publishing nothing", async () => {
    const other = 'shoot--other--intruder';
    const s = secret({ server: '[::1]:5353', zone: 'local.gardener.cloud.' });
    api.upsert(Refs.secret, { ...s, metadata: { ...s.metadata, namespace: other } });
    const r = dnsRecord();
    api.upsert(dnsRecordRef, {
      ...r,
      metadata: { ...r.metadata, namespace: other },
      spec: { ...r.spec, secretRef: { name: 'dnsrecord-local', namespace: other } },
    } as unknown as KubernetesObject);
    await expect(reconciler.reconcile({ namespace: other, name: r.metadata.name! }, ctx())).rejects.toThrow(
      `spec.name: ${NAME} is not a name of shoot other/intruder: a DNSRecord in its seed namespace publishes names ` +
        'in intruder.other.external.local.gardener.cloud or intruder.other.internal.local.gardener.cloud only',
    );
    const stored = api.objects<DNSRecord & KubernetesObject>(dnsRecordRef).find((o) => o.metadata.namespace === other);
    expect(stored!.status?.lastError?.codes).toEqual(['ERR_CONFIGURATION_PROBLEM']);
    expect(publisher.calls).toEqual([]);
  });

  it('leaves DNSRecords of other types alone', async () => {
    api.upsert(dnsRecordRef, dnsRecord({ type: 'aws-route53' }) as unknown as KubernetesObject);
    expect(await reconciler.reconcile(req, ctx())).toBeUndefined();
    expect(publisher.calls).toEqual([]);
    expect(stored()!.metadata.finalizers).toBeUndefined();
    expect(stored()!.status).toBeUndefined();
  });

  it('does nothing for a DNSRecord that is gone', async () => {
    expect(await reconciler.reconcile(req, ctx())).toBeUndefined();
    expect(publisher.calls).toEqual([]);
  });

  describe('deletion', () => {
    const deleting = () => {
      const r = dnsRecord();
      return { ...r, metadata: { ...r.metadata, finalizers: [FINALIZER], deletionTimestamp: '2026-11-21T20:00:00Z' } };
    };

    it('removes the RRset, then the finalizer', async () => {
      api.upsert(dnsRecordRef, deleting() as unknown as KubernetesObject);
      await reconciler.reconcile(req, ctx());
      expect(publisher.calls).toEqual([
        { op: 'delete', ref: { zone: 'local.gardener.cloud.', name: NAME, type: 'AAAA' } },
      ]);
      expect(stored()!.metadata.finalizers).toEqual([]);
    });

    it('keeps the finalizer and reports Delete Error while the server cannot be reached', async () => {
      api.upsert(dnsRecordRef, deleting() as unknown as KubernetesObject);
      publisher.failWith = new DNSUpdateError(
        'unreachable',
        'connection refused by [::1]:5353 (no DNS server there?)',
        `delete of AAAA ${NAME} at [::1]:5353`,
      );
      await expect(reconciler.reconcile(req, ctx())).rejects.toThrow('connection refused by [::1]:5353');
      expect(stored()!.metadata.finalizers).toEqual([FINALIZER]);
      expect(stored()!.status?.lastOperation).toMatchObject({
        type: 'Delete',
        state: 'Error',
        description: `delete of AAAA ${NAME} at [::1]:5353 failed: connection refused by [::1]:5353 (no DNS server there?)`,
      });

      publisher.failWith = undefined;
      await reconciler.reconcile(req, ctx());
      expect(stored()!.metadata.finalizers).toEqual([]);
    });

    it('also removes an RRset published under an earlier name', async () => {
      const r = deleting();
      api.upsert(dnsRecordRef, {
        ...r,
        status: {
          providerStatus: {
            apiVersion: 'dns.local.extensions.gardener.cloud/v1alpha1',
            kind: 'DNSRecordStatus',
            published: { zone: 'local.gardener.cloud.', name: 'old.local.gardener.cloud', recordType: 'AAAA' },
          },
        },
      } as unknown as KubernetesObject);
      await reconciler.reconcile(req, ctx());
      expect(publisher.calls).toEqual([
        { op: 'delete', ref: { zone: 'local.gardener.cloud.', name: NAME, type: 'AAAA' } },
        { op: 'delete', ref: { zone: 'local.gardener.cloud.', name: 'old.local.gardener.cloud', type: 'AAAA' } },
      ]);
    });

    it('does nothing without its finalizer', async () => {
      const r = deleting();
      api.upsert(dnsRecordRef, {
        ...r,
        metadata: { ...r.metadata, finalizers: ['someone-else'] },
      } as unknown as KubernetesObject);
      await reconciler.reconcile(req, ctx());
      expect(publisher.calls).toEqual([]);
      expect(stored()!.metadata.finalizers).toEqual(['someone-else']);
    });
  });

  describe('provider settings', () => {
    it('takes the zone from spec.zone over the secret, and the TSIG key from the secret', async () => {
      api.upsert(
        Refs.secret,
        secret({
          server: '[::1]:5353',
          zone: 'local.gardener.cloud.',
          tsigKeyName: 'gardener-ipv6',
          tsigAlgorithm: 'hmac-sha256',
          tsigSecret: SECRET,
        }),
      );
      api.upsert(dnsRecordRef, dnsRecord({ zone: 'external.local.gardener.cloud' }) as unknown as KubernetesObject);
      await reconciler.reconcile(req, ctx());
      expect(publisher.providers[0]?.tsig).toEqual(tsigKey('gardener-ipv6', 'hmac-sha256', SECRET));
      expect(publisher.calls[0]).toMatchObject({ rrset: { zone: 'external.local.gardener.cloud' } });
      expect(stored()!.status?.zone).toBe('external.local.gardener.cloud.');
    });
  });
  describe('ownership', () => {
    // Not a seed namespace: a seed namespace's DNSRecord is refused another shoot's name before ownership is asked.
    const OTHER = 'dns-intruder';
    const ownerOf = (ns: string, name: string, uid: string) =>
      `heritage=gardener-ipv6,gardener-ipv6/owner=${uid},gardener-ipv6/resource=dnsrecord/${ns}/${name}`;
    const intruder = (secretNamespace = OTHER): DNSRecord => {
      const r = dnsRecord({ values: ['2001:db8::666'] });
      return {
        ...r,
        metadata: { ...r.metadata, namespace: OTHER, name: 'intruder' },
        spec: { ...r.spec, secretRef: { name: 'dnsrecord-local', namespace: secretNamespace } },
      };
    };
    const intruderReq = { namespace: OTHER, name: 'intruder' };
    /** What the API server does on DELETE of an object with finalizers (the fake server deletes at once). */
    const markDeleted = (r: DNSRecord) =>
      api.upsert(dnsRecordRef, {
        ...r,
        metadata: { ...r.metadata, deletionTimestamp: '2026-11-21T20:00:00Z' },
      } as unknown as KubernetesObject);
    const storedIntruder = () =>
      api.objects<DNSRecord & KubernetesObject>(dnsRecordRef).find((r) => r.metadata.namespace === OTHER)!;

    beforeEach(() => {
      const s = secret({ server: '[::1]:5353', zone: 'local.gardener.cloud.' });
      api.upsert(Refs.secret, { ...s, metadata: { ...s.metadata, namespace: OTHER } });
    });

    it('publishes the owner record with the RRset and removes both on deletion', async () => {
      api.upsert(dnsRecordRef, dnsRecord() as unknown as KubernetesObject);
      await reconciler.reconcile(req, ctx());
      const { uid } = stored()!.metadata;
      expect(publisher.owner(NAME)).toEqual([ownerOf(NS, 'shoot-external-v6', uid!)]);

      markDeleted(stored()!);
      await reconciler.reconcile(req, ctx());
      expect(stored()!.metadata.finalizers).toEqual([]);
      expect([...publisher.rrsets.keys()]).toEqual([]);
    });

    it('refuses a second DNSRecord for the same name and type, naming the owner; its deletion keeps the record', async () => {
      api.upsert(dnsRecordRef, dnsRecord() as unknown as KubernetesObject);
      await reconciler.reconcile(req, ctx());
      const uid = stored()!.metadata.uid!;
      const owned = new Map(publisher.rrsets);

      api.upsert(dnsRecordRef, intruder() as unknown as KubernetesObject);
      const message =
        `AAAA ${NAME} is owned by DNSRecord ${NS}/shoot-external-v6 (uid ${uid}) (owner record TXT ` +
        `_owner-aaaa.${NAME}); a DNSRecord may not overwrite another's records`;
      await expect(reconciler.reconcile(intruderReq, ctx())).rejects.toThrow(message);
      expect(storedIntruder().status).toMatchObject({
        lastOperation: { type: 'Create', state: 'Error', description: message },
        lastError: { description: message, codes: ['ERR_CONFIGURATION_PROBLEM'] },
      });
      expect(publisher.rrsets).toEqual(owned);

      markDeleted(storedIntruder());
      await reconciler.reconcile(intruderReq, ctx());
      expect(storedIntruder().metadata.finalizers).toEqual([]);
      expect(publisher.rrsets).toEqual(owned);
    });

    it('refuses another record type at a name of another namespace, allows it in the same namespace', async () => {
      api.upsert(dnsRecordRef, dnsRecord() as unknown as KubernetesObject);
      await reconciler.reconcile(req, ctx());
      const uid = stored()!.metadata.uid!;
      const owned = new Map(publisher.rrsets);

      const a = intruder();
      api.upsert(dnsRecordRef, { ...a, spec: { ...a.spec, recordType: 'A', values: ['192.0.2.66'] } } as never);
      await expect(reconciler.reconcile(intruderReq, ctx())).rejects.toThrow(
        `${NAME} belongs to another namespace: its AAAA records are owned by DNSRecord ${NS}/shoot-external-v6 ` +
          `(uid ${uid}) (owner record TXT _owner-aaaa.${NAME}); a DNSRecord may not add records to it`,
      );
      expect(publisher.rrsets).toEqual(owned);

      const sameShoot = { ...a, metadata: { ...a.metadata, namespace: NS, name: 'shoot-external' } };
      api.upsert(dnsRecordRef, {
        ...sameShoot,
        spec: { ...sameShoot.spec, secretRef: { name: 'dnsrecord-local' }, recordType: 'A', values: ['192.0.2.1'] },
      } as never);
      await reconciler.reconcile({ namespace: NS, name: 'shoot-external' }, ctx());
      expect(publisher.rrsets.get(InMemoryZone.key(NAME, 'A'))).toEqual(['192.0.2.1']);
      expect(publisher.rrsets.get(InMemoryZone.key(NAME, 'AAAA'))).toEqual(['::1']);
    });

    it("refuses another namespace's secret without reading it, and deletes such a record without touching DNS", async () => {
      api.upsert(dnsRecordRef, dnsRecord() as unknown as KubernetesObject);
      await reconciler.reconcile(req, ctx());
      const owned = new Map(publisher.rrsets);
      const calls = publisher.calls.length;

      api.upsert(dnsRecordRef, intruder(NS) as unknown as KubernetesObject);
      await expect(reconciler.reconcile(intruderReq, ctx())).rejects.toThrow(
        `spec.secretRef.namespace: secret ${NS}/dnsrecord-local is not in the DNSRecord's namespace "${OTHER}"; ` +
          'a DNSRecord may only use a secret of its own namespace',
      );
      expect(storedIntruder().status?.lastError?.codes).toEqual(['ERR_CONFIGURATION_PROBLEM']);
      expect(
        api.requestsWhere({ method: 'GET' }).filter((r) => r.path.includes(`/namespaces/${NS}/secrets`)),
      ).toHaveLength(1);

      markDeleted(storedIntruder());
      await reconciler.reconcile(intruderReq, ctx());
      expect(storedIntruder().metadata.finalizers).toEqual([]);
      expect(publisher.calls).toHaveLength(calls);
      expect(publisher.rrsets).toEqual(owned);
    });

    it('adopts a record without owner record (published before owner records) and one of an earlier object of the same name', async () => {
      publisher.rrsets.set(InMemoryZone.key(NAME, 'AAAA'), ['2001:db8::99']);
      api.upsert(dnsRecordRef, dnsRecord() as unknown as KubernetesObject);
      await reconciler.reconcile(req, ctx());
      expect(publisher.rrsets.get(InMemoryZone.key(NAME, 'AAAA'))).toEqual(['::1']);

      // The same namespace and name with a new UID: the object was deleted and created again.
      publisher.rrsets.set(InMemoryZone.key(`_owner-aaaa.${NAME}`, 'TXT'), [ownerOf(NS, 'shoot-external-v6', 'gone')]);
      await reconciler.reconcile(req, ctx());
      expect(publisher.owner(NAME)).toEqual([ownerOf(NS, 'shoot-external-v6', stored()!.metadata.uid!)]);
    });

    it('names a TXT record that is not an owner record as it is', async () => {
      publisher.rrsets.set(InMemoryZone.key(`_owner-aaaa.${NAME}`, 'TXT'), ['something else']);
      api.upsert(dnsRecordRef, dnsRecord() as unknown as KubernetesObject);
      await expect(reconciler.reconcile(req, ctx())).rejects.toThrow(
        `AAAA ${NAME} is owned by an unknown owner (TXT "something else")`,
      );
    });

    it('refuses a name too long for its owner record', async () => {
      const r = dnsRecord();
      const long = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(40)}.gardener.cloud`;
      api.upsert(dnsRecordRef, { ...r, spec: { ...r.spec, name: long } } as unknown as KubernetesObject);
      await expect(reconciler.reconcile(req, ctx())).rejects.toThrow(
        'spec.name (with its owner record label): invalid DNS name',
      );
      expect(stored()!.status?.lastError?.codes).toEqual(['ERR_CONFIGURATION_PROBLEM']);
    });

    it('refuses names with an owner record label', async () => {
      const r = dnsRecord();
      api.upsert(dnsRecordRef, {
        ...r,
        spec: { ...r.spec, name: `_owner-aaaa.${NAME}` },
      } as unknown as KubernetesObject);
      await expect(reconciler.reconcile(req, ctx())).rejects.toThrow(
        'spec.name: labels starting with "_owner-" are for owner records',
      );
      expect(publisher.calls).toEqual([]);
    });
  });
});

describe('providerFromSecret', () => {
  it('reads base64 data and defaults nothing it cannot know', () => {
    expect(providerFromSecret(secret({ server: '[::1]:53' }))).toEqual({ server: '[::1]:53' });
  });

  it('names what is missing', () => {
    expect(() => providerFromSecret(secret({ zone: 'x.' }))).toThrow(`secret ${NS}/dnsrecord-local has no "server"`);
    expect(() => providerFromSecret(secret({ server: '[::1]:53', tsigKeyName: 'k' }))).toThrow(
      'must have both "tsigKeyName" and "tsigSecret"',
    );
    expect(() =>
      providerFromSecret(
        secret({ server: '[::1]:53', tsigKeyName: 'k', tsigSecret: SECRET, tsigAlgorithm: 'hmac-md5' }),
      ),
    ).toThrow('unsupported TSIG algorithm "hmac-md5"');
  });
});

describe('the names a DNSRecord may publish', () => {
  const zone = 'local.gardener.cloud.';
  it.each([
    ['shoot--dev--a', 'api.a.dev.external.local.gardener.cloud'],
    ['shoot--dev--a', 'api.a.dev.internal.local.gardener.cloud.'],
    ['shoot--dev--a', 'a.dev.external.local.gardener.cloud'],
    ['shoot--dev--a', '*.ingress.a.dev.external.LOCAL.gardener.cloud'],
    ['garden', 'api.a.dev.external.local.gardener.cloud'],
    // Project "dev--x", shoot "yy" and project "dev", shoot "x--yy" share the namespace (admission forbids `--`).
    ['shoot--dev--x--yy', 'api.yy.dev--x.external.local.gardener.cloud'],
    ['shoot--dev--x--yy', 'api.x--yy.dev.internal.local.gardener.cloud'],
    ['dns-test', 'anything.local.gardener.cloud'],
  ])('lets %s publish %s', (namespace, name) => {
    expect(() => checkPublishable(namespace, { zone, name }, zone)).not.toThrow();
  });

  it.each([
    ['shoot--dev--a', 'local.gardener.cloud', 'is the apex of zone local.gardener.cloud'],
    ['garden', 'local.gardener.cloud.', 'is the apex of zone local.gardener.cloud'],
    ['dns-test', 'api.example.org', 'is not in zone local.gardener.cloud'],
    ['shoot--dev--a', 'xlocal.gardener.cloud', 'is not in zone local.gardener.cloud'],
    ['shoot--dev--a', 'api.b.dev.external.local.gardener.cloud', 'is not a name of shoot dev/a'],
    ['shoot--dev--a', 'api.a.dev.external.a.dev.external.local.gardener.cloud.x', 'is not in zone'],
    ['shoot--evil--a', 'api.evil.a.external.a.dev.external.local.gardener.cloud', 'is not a name of shoot evil/a'],
    ['shoot--dev--a', 'api.xa.dev.external.local.gardener.cloud', 'is not a name of shoot dev/a'],
  ])('refuses %s %s', (namespace, name, message) => {
    expect(() => checkPublishable(namespace, { zone, name }, zone)).toThrow(message);
  });

  it("takes the shoots' domain from the provider, whatever the record's zone", () => {
    const name = 'api.a.dev.external.local.gardener.cloud';
    expect(() =>
      checkPublishable('shoot--dev--a', { zone: 'external.local.gardener.cloud', name }, zone),
    ).not.toThrow();
  });
});
