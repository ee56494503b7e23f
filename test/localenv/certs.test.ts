import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateCertificates, issueClientCertificate } from '../../src/localenv/certs.js';
import { writeAdminKubeconfig } from '../../src/localenv/kubeconfig.js';
import { parse } from 'yaml';

const dir = mkdtempSync(join(tmpdir(), 'gardener-ipv6-certs-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const openssl = (...args: string[]) => execFileSync('openssl', args, { encoding: 'utf8' });

describe('control plane certificates', async () => {
  const certs = await generateCertificates(dir, {
    ipAddresses: ['::1', 'fd00:10:2::1'],
    dnsNames: ['localhost', 'kubernetes.default.svc'],
  });

  it('issues a serving certificate for the IPv6 addresses, signed by the CA', () => {
    const sans = openssl('x509', '-in', certs.serverCert, '-noout', '-ext', 'subjectAltName');
    expect(sans).toContain('IP Address:0:0:0:0:0:0:0:1');
    expect(sans).toContain('IP Address:FD00:10:2:0:0:0:0:1');
    expect(sans).toContain('DNS:kubernetes.default.svc');
    expect(sans).not.toMatch(/127\.0\.0\.1/);
    expect(openssl('verify', '-CAfile', certs.caCert, certs.serverCert)).toContain('OK');
    expect(openssl('x509', '-in', certs.serverCert, '-noout', '-ext', 'extendedKeyUsage')).toContain(
      'TLS Web Server Authentication',
    );
  });

  it('issues client certificates for nodes and kube-proxy, signed by the CA', async () => {
    const node = await issueClientCertificate(certs, {
      file: 'node-a',
      commonName: 'system:node:a',
      organizations: ['system:nodes'],
    });
    const file = join(dir, 'node-a.crt');
    expect(await readFile(file, 'utf8')).toBe(node.certPEM);
    expect(node.keyPEM).toContain('PRIVATE KEY');
    expect(openssl('x509', '-in', file, '-noout', '-subject')).toMatch(/O\s*=\s*system:nodes, CN\s*=\s*system:node:a/);
    expect(openssl('x509', '-in', file, '-noout', '-ext', 'extendedKeyUsage')).toContain(
      'TLS Web Client Authentication',
    );
    expect(openssl('verify', '-CAfile', certs.caCert, file)).toContain('OK');
    await expect(issueClientCertificate(certs, { file: '../x', commonName: 'x' })).rejects.toThrow(
      /invalid certificate file name/,
    );
  });

  it('issues an admin client certificate in system:masters', () => {
    expect(openssl('x509', '-in', certs.adminCert, '-noout', '-subject')).toMatch(/O\s*=\s*system:masters/);
    expect(openssl('x509', '-in', certs.adminCert, '-noout', '-ext', 'extendedKeyUsage')).toContain(
      'TLS Web Client Authentication',
    );
    expect(openssl('verify', '-CAfile', certs.caCert, certs.adminCert)).toContain('OK');
  });

  it('makes a service-account key pair', async () => {
    expect(await readFile(certs.serviceAccountKey, 'utf8')).toContain('PRIVATE KEY');
    expect(await readFile(certs.serviceAccountPub, 'utf8')).toContain('BEGIN PUBLIC KEY');
  });

  it('writes a private, self-contained admin kubeconfig with a bracketed IPv6 server', async () => {
    const path = join(dir, 'kubeconfig');
    await writeAdminKubeconfig(path, 'https://[::1]:6443', certs);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const config = parse(await readFile(path, 'utf8'));
    expect(config.clusters[0].cluster.server).toBe('https://[::1]:6443');
    expect(Buffer.from(config.clusters[0].cluster['certificate-authority-data'], 'base64').toString()).toBe(
      await readFile(certs.caCert, 'utf8'),
    );
    expect(config.users[0].user['client-key-data']).toBeTruthy();
    expect(config['current-context']).toBe(config.contexts[0].name);
  });
});
