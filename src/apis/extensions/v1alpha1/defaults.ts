import { deepCopy } from '../../meta/objects.js';
import type { DNSRecord } from './dnsrecord.js';

export const DEFAULT_DNS_RECORD_TTL = 120;

export function defaultDNSRecord(input: DNSRecord): DNSRecord {
  const record = deepCopy(input);
  if (record.spec.ttl === undefined) record.spec.ttl = DEFAULT_DNS_RECORD_TTL;
  return record;
}
