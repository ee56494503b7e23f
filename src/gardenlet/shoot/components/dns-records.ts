import type { V1Secret } from '@kubernetes/client-node';
import { shootIPFamilies } from '../../../apis/core/v1beta1/helpers.js';
import type { Shoot } from '../../../apis/core/v1beta1/shoot.js';
import { API_VERSION } from '../../../apis/extensions/v1alpha1/common.js';
import type { DNSRecord } from '../../../apis/extensions/v1alpha1/dnsrecord.js';
import { IP_FAMILIES, type IPFamily } from '../../../net/cidr.js';
import { apiServerDomain, seedNamespaceName, shootLabels } from '../../../apis/core/v1beta1/names.js';

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
