/**
 * A plain HTTPS GET against a shoot's API server (readiness probes, `/version`, raw paths such as pod logs), with the
 * shoot's CA and, when given, a client certificate.
 */
import { request } from 'node:https';
import type { CertificatePair } from '../../pki/certificates.js';

/** A GET against the shoot's API server, with a client certificate when given; status and body. */
export function shootGet(
  url: string,
  ca: string,
  /** Without one, the request is anonymous. */
  client: CertificatePair | undefined,
  path: string,
  timeoutMs = 2_000,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, url),
      { ca, ...(client ? { cert: client.certPEM, key: client.keyPEM } : {}), timeout: timeoutMs, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}
