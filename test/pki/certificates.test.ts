import { X509Certificate, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createCA, createSigningKeyPair, issueCertificate, notAfter } from '../../src/pki/certificates.js';
import { renderKubeconfig } from '../../src/pki/kubeconfig.js';
import { parse } from 'yaml';

const hour = () => new Date(Date.now() + 3600_000);

describe('certificates', () => {
  it('issues a serving certificate with DNS and IP SANs that verifies against its CA', async () => {
    const ca = await createCA('shoot-ca', { notAfter: hour() });
    const server = await issueCertificate(ca, {
      commonName: 'kube-apiserver',
      usages: ['server'],
      dnsNames: ['api.s.p.external.local.gardener.cloud'],
      ipAddresses: ['fd00:ff::2', '10.0.0.1', 'FD00:FF:0::3'],
      notAfter: hour(),
    });
    const caCert = new X509Certificate(ca.certPEM);
    const cert = new X509Certificate(server.certPEM);
    expect(caCert.ca).toBe(true);
    expect(cert.ca).toBe(false);
    expect(cert.verify(caCert.publicKey)).toBe(true);
    expect(cert.checkIssued(caCert)).toBe(true);
    expect(cert.checkHost('api.s.p.external.local.gardener.cloud')).toBe('api.s.p.external.local.gardener.cloud');
    expect(cert.checkIP('fd00:ff::2')).toBe('fd00:ff::2');
    expect(cert.checkIP('fd00:ff::3')).toBe('fd00:ff::3');
    expect(cert.checkIP('10.0.0.1')).toBe('10.0.0.1');
    expect(cert.checkIP('fd00:ff::4')).toBeUndefined();
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    // The key belongs to the certificate.
    const data = Buffer.from('x');
    expect(verify('sha256', data, cert.publicKey, sign('sha256', data, createPrivateKey(server.keyPEM)))).toBe(true);
  });

  it('puts organizations into the subject (Kubernetes groups) and honours a short validity', async () => {
    const ca = await createCA('shoot-ca', { notAfter: hour() });
    const until = new Date(Date.now() + 10 * 60_000);
    const client = await issueCertificate(ca, {
      commonName: 'system:node:machine-0',
      organizations: ['system:nodes'],
      usages: ['client'],
      notAfter: until,
    });
    const cert = new X509Certificate(client.certPEM);
    expect(cert.subject.split('\n').sort()).toEqual(['CN=system:node:machine-0', 'O=system:nodes']);
    expect(Math.abs(notAfter(client.certPEM).getTime() - until.getTime())).toBeLessThan(1000);
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
  });

  it('escapes distinguished-name syntax in names instead of adding attributes', async () => {
    const ca = await createCA('shoot-ca', { notAfter: hour() });
    const client = await issueCertificate(ca, {
      commonName: 'x,O=system:masters',
      usages: ['client'],
      notAfter: hour(),
    });
    const cert = new X509Certificate(client.certPEM);
    expect(cert.subject).not.toMatch(/^O=system:masters$/m);
  });

  it('makes a signing key pair for service-account tokens', async () => {
    const pair = await createSigningKeyPair();
    const data = Buffer.from('token');
    const signature = sign('sha256', data, createPrivateKey(pair.privatePEM));
    expect(verify('sha256', data, createPublicKey(pair.publicPEM), signature)).toBe(true);
  });

  it('renders a kubeconfig with embedded credentials and an optional tls-server-name', () => {
    const config = parse(
      renderKubeconfig({
        name: 'p--s',
        server: 'https://[fd00:ff::2]',
        caPEM: 'CA',
        certPEM: 'CERT',
        keyPEM: 'KEY',
        tlsServerName: 'api.s.p.external.local.gardener.cloud',
      }),
    ) as { clusters: { cluster: Record<string, string> }[]; 'current-context': string };
    expect(config.clusters[0]!.cluster).toEqual({
      server: 'https://[fd00:ff::2]',
      'certificate-authority-data': Buffer.from('CA').toString('base64'),
      'tls-server-name': 'api.s.p.external.local.gardener.cloud',
    });
    expect(config['current-context']).toBe('p--s');
  });
});
