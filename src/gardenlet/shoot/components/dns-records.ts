import type { V1Secret } from '@kubernetes/client-node';
import { shootIPFamilies } from '../../../apis/core/v1beta1/helpers.js';
import type { Shoot } from '../../../apis/core/v1beta1/shoot.js';
import { API_VERSION } from '../../../apis/extensions/v1alpha1/common.js';
import type { DNSRecord } from '../../../apis/extensions/v1alpha1/dnsrecord.js';
import { IP_FAMILIES, type IPFamily } from '../../../net/cidr.js';
import { apiServerDomain, seedNamespaceName, shootLabels } from '../../../apis/core/v1beta1/names.js';

import type { KubernetesObject, V1Service } from '@kubernetes/client-node';
import type { ResourceClient } from '../../../runtime/client.js';
import { removeFinalizer } from '../../../runtime/finalizers.js';
import { applyAll, deleteAll, waitExtensionReady, waitExtensionsGone, waitGone } from '../../apply.js';
import type { ComponentContext, DeployWaiter } from '../../component.js';
import { Refs } from '../../../apis/refs.js';
import { ingressIPsByFamily } from '../../../net/load-balancer.js';
export const DNS_RECORD_TTL = 120;
const VISIBILITIES = ['external', 'internal'] as const;
/** A and AAAA records of one name live side by side; the IPv6 ones carry the `-v6` suffix GEP-21 asks for. */
const FAMILY_SUFFIX: Readonly<Record<IPFamily, string>> = { IPv4: '', IPv6: '-v6' };
const FAMILY_RECORD_TYPE: Readonly<Record<IPFamily, 'A' | 'AAAA'>> = { IPv4: 'A', IPv6: 'AAAA' };

/** Where the DNS extension publishes: provider type and the secret (server, zone, TSIG key) it reads. */
export interface DNSProviderConfig {
  readonly type: string;
  readonly domain: string;
  /** Secret data for the DNSRecords' `secretRef`, copied into the seed namespace. */
  readonly secretData: Readonly<Record<string, string>>;
}

export const DNS_SECRET_NAME = 'dnsrecord-local';
/** The gardenlet's finalizer on the DNS secret while a DNSRecord of its namespace references it. */
export const DNS_SECRET_FINALIZER = 'gardenlet.gardener.cloud/dnsrecords';

export function dnsRecordName(shoot: Shoot, visibility: 'external' | 'internal', family: IPFamily): string {
  return `${shoot.metadata.name ?? ''}-${visibility}${FAMILY_SUFFIX[family]}`;
}

/** The secret the DNSRecords reference, in the seed namespace. */
export function desiredDNSSecret(shoot: Shoot, provider: DNSProviderConfig): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: DNS_SECRET_NAME, namespace: seedNamespaceName(shoot), labels: shootLabels(shoot) },
    type: 'Opaque',
    stringData: { ...provider.secretData },
  };
}

/**
 * The API server's DNS records: per family of the shoot an external and an internal record whose values are the
 * load balancer addresses of that family.
 */
export function desiredDNSRecords(
  shoot: Shoot,
  ingressIPs: Readonly<Record<IPFamily, readonly string[]>>,
  provider: DNSProviderConfig,
): DNSRecord[] {
  return (shootIPFamilies(shoot) as IPFamily[]).flatMap((family) =>
    VISIBILITIES.map((visibility): DNSRecord => ({
      apiVersion: API_VERSION,
      kind: 'DNSRecord',
      metadata: {
        name: dnsRecordName(shoot, visibility, family),
        namespace: seedNamespaceName(shoot),
        labels: shootLabels(shoot),
      },
      spec: {
        type: provider.type,
        secretRef: { name: DNS_SECRET_NAME, namespace: seedNamespaceName(shoot) },
        name: apiServerDomain(shoot, visibility, provider.domain),
        recordType: FAMILY_RECORD_TYPE[family],
        values: [...ingressIPs[family]],
        ttl: DNS_RECORD_TTL,
      },
    })),
  );
}

/** Records of families the shoot no longer has: they must go. */
export function staleDNSRecordNames(shoot: Shoot): string[] {
  const families = shootIPFamilies(shoot);
  return IP_FAMILIES.filter((f) => !families.includes(f)).flatMap((family) =>
    VISIBILITIES.map((visibility) => dnsRecordName(shoot, visibility, family)),
  );
}

/**
 * The API server's A/AAAA records and the provider secret they reference; records of a family that left go. The
 * secret carries a finalizer of the gardenlet's as long as a DNSRecord of the namespace references it: however the
 * records go (the shoot's deletion, or the namespace deleted under it), the DNS extension can still read the
 * secret to remove them, and no record is left with a finalizer nobody can remove.
 */
export class APIServerDNSRecords implements DeployWaiter {
  constructor(
    private readonly client: ResourceClient,
    private readonly shoot: Shoot,
    private readonly provider: DNSProviderConfig,
    private readonly service: V1Service | undefined,
  ) {}
  async deploy(ctx: ComponentContext) {
    const namespace = seedNamespaceName(this.shoot);
    const secret = desiredDNSSecret(this.shoot, this.provider);
    secret.metadata = { ...secret.metadata, finalizers: [DNS_SECRET_FINALIZER] };
    await applyAll(this.client, Refs.secret, [secret], ctx);
    await applyAll(
      this.client,
      Refs.dnsRecord,
      desiredDNSRecords(this.shoot, ingressIPsByFamily(this.service), this.provider),
      ctx,
    );
    await deleteAll(this.client, Refs.dnsRecord, staleDNSRecordNames(this.shoot), namespace, ctx);
  }
  async wait(ctx: ComponentContext) {
    const namespace = seedNamespaceName(this.shoot);
    for (const record of desiredDNSRecords(this.shoot, ingressIPsByFamily(this.service), this.provider)) {
      await waitExtensionReady(this.client, Refs.dnsRecord, record.metadata.name ?? '', namespace, ctx);
    }
    await waitGone(this.client, Refs.dnsRecord, staleDNSRecordNames(this.shoot), namespace, ctx);
  }
  /** Deletes every DNSRecord of the seed namespace: the namespace is the shoot's, and they all need the secret. */
  async destroy(ctx: ComponentContext) {
    const namespace = seedNamespaceName(this.shoot);
    const records = await this.client.list(Refs.dnsRecord, { namespace, signal: ctx.signal });
    const names = records.items.map((r) => r.metadata?.name ?? '');
    await deleteAll(this.client, Refs.dnsRecord, names, namespace, ctx);
  }
  async waitCleanup(ctx: ComponentContext) {
    const namespace = seedNamespaceName(this.shoot);
    await waitExtensionsGone(this.client, Refs.dnsRecord, 'all', namespace, ctx);
    // The extension reads the secret until the records are gone: remove it last.
    await releaseDNSSecret(this.client, namespace, ctx);
    await deleteAll(this.client, Refs.secret, [DNS_SECRET_NAME], namespace, ctx);
  }
}

/**
 * Removes the gardenlet's finalizer from the namespace's DNS secret once no DNSRecord of the namespace references
 * it any more (until then it keeps it).
 */
export async function releaseDNSSecret(client: ResourceClient, namespace: string, ctx: ComponentContext) {
  const records = await client.list<DNSRecord & KubernetesObject>(Refs.dnsRecord, { namespace, signal: ctx.signal });
  if (records.items.some((r) => usesSecret(r, namespace, DNS_SECRET_NAME))) return;
  const secret = { metadata: { name: DNS_SECRET_NAME, namespace } };
  await removeFinalizer(client, Refs.secret, secret, DNS_SECRET_FINALIZER, { signal: ctx.signal });
}

function usesSecret(record: DNSRecord, namespace: string, name: string): boolean {
  const ref = record.spec?.secretRef;
  return ref?.name === name && (ref.namespace ?? record.metadata.namespace ?? namespace) === namespace;
}
