import { copyWith } from '../../meta/copy.js';
import type { DNSRecord } from './dnsrecord.js';

export const DEFAULT_DNS_RECORD_TTL = 120;

/** Pure: a new object sharing unchanged subtrees with the input. */
export function defaultDNSRecord(input: DNSRecord): DNSRecord {
  if (input.spec.ttl !== undefined) return input;
  return copyWith(input, { spec: copyWith(input.spec, { ttl: DEFAULT_DNS_RECORD_TTL }) });
}
