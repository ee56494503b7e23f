import type { DNSProviderConfig } from './shoot/components/dns-records.js';
import { DEFAULT_DOMAIN } from '../apis/core/v1beta1/names.js';

/** The DNS server the local DNS extension publishes to: BIND9 on the host's IPv6 loopback by default. */
export interface LocalDNSOptions {
  readonly server?: string;
  readonly domain?: string;
  readonly tsigKeyName?: string;
  readonly tsigSecret?: string;
}

export const DEFAULT_DNS_SERVER = '[::1]:53';

/** The secret keys the DNS extension reads (see src/extensions/dns). */
export function localDNSProvider(options: LocalDNSOptions = {}): DNSProviderConfig {
  const domain = options.domain ?? DEFAULT_DOMAIN;
  return {
    type: 'local',
    domain,
    secretData: {
      server: options.server ?? DEFAULT_DNS_SERVER,
      zone: `${domain}.`,
      ...(options.tsigKeyName && options.tsigSecret
        ? { tsigKeyName: options.tsigKeyName, tsigAlgorithm: 'hmac-sha256', tsigSecret: options.tsigSecret }
        : {}),
    },
  };
}
