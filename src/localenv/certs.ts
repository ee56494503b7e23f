/**
 * Certificates of the local control plane, made with the `openssl` CLI (Node has no API to issue X.509
 * certificates, and openssl is on every machine that runs this): a CA, the API server's serving certificate, an
 * admin client certificate in `system:masters`, the service-account signing key pair, the aggregation layer's
 * request-header CA with the front proxy's client certificate, and etcd's own CA with its
 * serving certificate and the API server's client certificate (a certificate of the cluster's CA, a Node's or the
 * admin's, is no etcd client). ECDSA P-256 keys: instant
 * to generate, accepted by kube-apiserver for TLS and for service-account tokens (ES256).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface Certificates {
  dir: string;
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  adminCert: string;
  adminKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
  etcdCACert: string;
  etcdServerCert: string;
  etcdServerKey: string;
  /** kube-apiserver's, the only etcd client. */
  etcdClientCert: string;
  etcdClientKey: string;
  /**
   * The aggregation layer's: the request-header CA and the certificate the API server proxies to aggregated APIs
   * with (CN `front-proxy-client`, as kubeadm names it), which they trust for the user in the request headers.
   */
  frontProxyCACert: string;
  frontProxyClientCert: string;
  frontProxyClientKey: string;
}

/** The one name the aggregated APIs accept the front proxy's certificate with. */
export const FRONT_PROXY_CLIENT_NAME = 'front-proxy-client';

export interface CertificateOptions {
  /** IP SANs of the serving certificate, without brackets (`::1`, the service IP, veth addresses). */
  ipAddresses: string[];
  /** DNS SANs of the serving certificate. */
  dnsNames: string[];
  /** Validity; `up` may run for days. */
  days?: number;
}

async function openssl(args: string[]): Promise<void> {
  try {
    await run('openssl', args);
  } catch (e) {
    const error = e as NodeJS.ErrnoException & { stderr?: string };
    if (error.code === 'ENOENT') {
      throw new Error(
        'openssl is needed to make the control plane certificates but is not installed (apt-get install openssl)',
      );
    }
    throw new Error(`openssl ${args[0]} failed: ${error.stderr?.trim() || error.message}`);
  }
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

/** Writes a key and a certificate signed by the CA (`ca` or `etcd-ca`), with the given extensions. */
async function issue(
  dir: string,
  name: string,
  subject: string,
  extensions: string[],
  days: number,
  ca = 'ca',
): Promise<void> {
  const ext = join(dir, `${name}.ext`);
  await writeFile(ext, extensions.join('\n') + '\n');
  await openssl([
    'req',
    '-new',
    ...EC_KEY,
    '-keyout',
    join(dir, `${name}.key`),
    '-out',
    join(dir, `${name}.csr`),
    '-subj',
    subject,
  ]);
  await openssl([
    'x509',
    '-req',
    '-in',
    join(dir, `${name}.csr`),
    '-CA',
    join(dir, `${ca}.crt`),
    '-CAkey',
    join(dir, `${ca}.key`),
    // A random serial per certificate: -CAcreateserial would race on ca.srl between the parallel issues.
    '-set_serial',
    `0x${randomBytes(16).toString('hex')}`,
    '-days',
    String(days),
    '-sha256',
    '-extfile',
    ext,
    '-out',
    join(dir, `${name}.crt`),
  ]);
}

async function createCA(dir: string, name: string, commonName: string, days: number): Promise<void> {
  await openssl([
    'req',
    '-x509',
    '-new',
    ...EC_KEY,
    '-keyout',
    join(dir, `${name}.key`),
    '-out',
    join(dir, `${name}.crt`),
    '-days',
    String(days),
    '-sha256',
    '-subj',
    `/CN=${commonName}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
}

const LEAF = ['basicConstraints=critical,CA:FALSE', 'keyUsage=critical,digitalSignature'];

/** etcd's CA, its serving certificate for loopback (where it listens), and the API server's client certificate. */
async function generateEtcdCertificates(dir: string, days: number): Promise<void> {
  await createCA(dir, 'etcd-ca', 'gardener-ipv6-local-etcd-ca', days);
  const ips = ['::1'];
  await Promise.all([
    issue(
      dir,
      'etcd-server',
      '/CN=etcd',
      [
        ...LEAF,
        'extendedKeyUsage=serverAuth',
        `subjectAltName=${[...ips.map((ip) => `IP:${ip}`), 'DNS:localhost'].join(',')}`,
      ],
      days,
      'etcd-ca',
    ),
    issue(
      dir,
      'etcd-client',
      '/CN=kube-apiserver-etcd-client',
      [...LEAF, 'extendedKeyUsage=clientAuth'],
      days,
      'etcd-ca',
    ),
  ]);
}

/** The request-header CA (a CA of its own: a certificate of the cluster's CA must not pass as the front proxy). */
async function generateFrontProxyCertificates(dir: string, days: number): Promise<void> {
  await createCA(dir, 'front-proxy-ca', 'gardener-ipv6-local-front-proxy-ca', days);
  await issue(
    dir,
    'front-proxy-client',
    `/CN=${FRONT_PROXY_CLIENT_NAME}`,
    [...LEAF, 'extendedKeyUsage=clientAuth'],
    days,
    'front-proxy-ca',
  );
}

/** Generates all certificates and keys into `dir` (which should be private to this control plane). */
export async function generateCertificates(dir: string, opts: CertificateOptions): Promise<Certificates> {
  const days = opts.days ?? 30;
  await Promise.all([
    createCA(dir, 'ca', 'gardener-ipv6-local-ca', days),
    generateEtcdCertificates(dir, days),
    generateFrontProxyCertificates(dir, days),
  ]);
  const sans = [...opts.ipAddresses.map((ip) => `IP:${ip}`), ...opts.dnsNames.map((dns) => `DNS:${dns}`)];
  await Promise.all([
    issue(
      dir,
      'apiserver',
      '/CN=kube-apiserver',
      [
        'basicConstraints=critical,CA:FALSE',
        'keyUsage=critical,digitalSignature',
        'extendedKeyUsage=serverAuth',
        `subjectAltName=${sans.join(',')}`,
      ],
      days,
    ),
    // O=system:masters: bypasses RBAC, which is what an admin kubeconfig for a disposable cluster wants.
    issue(
      dir,
      'admin',
      '/O=system:masters/CN=gardener-ipv6-admin',
      ['basicConstraints=critical,CA:FALSE', 'keyUsage=critical,digitalSignature', 'extendedKeyUsage=clientAuth'],
      days,
    ),
    (async () => {
      await openssl([
        'genpkey',
        '-algorithm',
        'EC',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-out',
        join(dir, 'sa.key'),
      ]);
      await openssl(['pkey', '-in', join(dir, 'sa.key'), '-pubout', '-out', join(dir, 'sa.pub')]);
    })(),
  ]);
  return {
    dir,
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    serverCert: join(dir, 'apiserver.crt'),
    serverKey: join(dir, 'apiserver.key'),
    adminCert: join(dir, 'admin.crt'),
    adminKey: join(dir, 'admin.key'),
    serviceAccountKey: join(dir, 'sa.key'),
    serviceAccountPub: join(dir, 'sa.pub'),
    etcdCACert: join(dir, 'etcd-ca.crt'),
    etcdServerCert: join(dir, 'etcd-server.crt'),
    etcdServerKey: join(dir, 'etcd-server.key'),
    etcdClientCert: join(dir, 'etcd-client.crt'),
    etcdClientKey: join(dir, 'etcd-client.key'),
    frontProxyCACert: join(dir, 'front-proxy-ca.crt'),
    frontProxyClientCert: join(dir, 'front-proxy-client.crt'),
    frontProxyClientKey: join(dir, 'front-proxy-client.key'),
  };
}

export interface ClientCertificate {
  certPEM: string;
  keyPEM: string;
}

/**
 * A client certificate signed by the control plane's CA, e.g. a node's (`system:node:<name>` in `system:nodes`)
 * or kube-proxy's (`system:kube-proxy`). Written into the certificates' folder as `<file>.crt`/`.key`.
 */
export async function issueClientCertificate(
  certs: Pick<Certificates, 'dir'>,
  opts: { file: string; commonName: string; organizations?: string[]; days?: number },
): Promise<ClientCertificate> {
  if (!/^[A-Za-z0-9._-]+$/.test(opts.file))
    throw new Error(`invalid certificate file name ${JSON.stringify(opts.file)}`);
  const escape = (s: string) => s.replace(/[/\\=+,]/g, (c) => `\\${c}`);
  const subject = [...(opts.organizations ?? []).map((o) => `/O=${escape(o)}`), `/CN=${escape(opts.commonName)}`].join(
    '',
  );
  await issue(
    certs.dir,
    opts.file,
    subject,
    ['basicConstraints=critical,CA:FALSE', 'keyUsage=critical,digitalSignature', 'extendedKeyUsage=clientAuth'],
    opts.days ?? 30,
  );
  const [certPEM, keyPEM] = await Promise.all([
    readFile(join(certs.dir, `${opts.file}.crt`), 'utf8'),
    readFile(join(certs.dir, `${opts.file}.key`), 'utf8'),
  ]);
  return { certPEM, keyPEM };
}
