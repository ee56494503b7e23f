/**
 * The admission webhook's serving certificate: from a folder (a Helm deployment's Secret), or generated for the run
 * with its own CA (the local environment), for the addresses and the Service name the API server reaches it at.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOCAL_API_SERVICE_REFERENCE, serviceDNSName } from '../admission/apiservice.js';

export interface WebhookTLS {
  cert: string;
  key: string;
  ca: string;
  cleanup(): void;
}

/** `certDir` and `advertiseHost` as WebhookOptions (runtime.ts) say them. */
export async function webhookTLS(options: {
  readonly certDir?: string;
  readonly advertiseHost?: string;
}): Promise<WebhookTLS> {
  if (options.certDir) {
    const read = (name: string) => readFileSync(join(options.certDir!, name), 'utf8');
    return { cert: read('tls.crt'), key: read('tls.key'), ca: read('ca.crt'), cleanup: () => {} };
  }
  const dir = mkdtempSync(join(process.env.GARDENER_IPV6_TMPDIR ?? tmpdir(), 'gardener-ipv6-webhook-'));
  const advertise = options.advertiseHost ?? '::1';
  const { generateCertificates } = await import('../localenv/certs.js');
  const certs = await generateCertificates(dir, {
    ipAddresses: [...new Set(['::1', advertise])],
    // The aggregator checks the name of the Service the APIService names.
    dnsNames: ['localhost', serviceDNSName(LOCAL_API_SERVICE_REFERENCE)],
    days: 365,
  });
  return {
    cert: readFileSync(certs.serverCert, 'utf8'),
    key: readFileSync(certs.serverKey, 'utf8'),
    ca: readFileSync(certs.caCert, 'utf8'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return bare === '::1' || bare === 'localhost' || bare.startsWith('127.');
}
