/**
 * X.509 certificates for shoot control planes and machines, made in-process (ECDSA P-256, SHA-256) with
 * @peculiar/x509 on Node's WebCrypto: a per-shoot CA, serving and client certificates, and the service-account
 * key pair. In-process because a shoot needs several certificates per start, and an admin kubeconfig wants a
 * validity of hours or minutes, which the `openssl` 3.0 CLI's `-days` can't express.
 */
import 'reflect-metadata';
import { randomBytes, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** A certificate and its private key, PEM-encoded (PKCS#8 key). */
export interface CertificatePair {
  readonly certPEM: string;
  readonly keyPEM: string;
}

async function newKeys(): Promise<CryptoKeyPair> {
  return webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
}

async function privateKeyPEM(key: CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

async function importPrivateKey(pem: string): Promise<CryptoKey> {
  return webcrypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(pem), ALGORITHM, false, ['sign']);
}

/** A positive 128-bit serial: unique enough that two certificates of one CA never share one. */
function serial(): string {
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f;
  return bytes.toString('hex');
}

/** Distinguished-name escaping of the characters RFC 4514 reserves. */
function rdnValue(value: string): string {
  return value.replace(/[\\,+"<>;=]/g, (c) => `\\${c}`);
}

function subject(commonName: string, organizations: readonly string[] = []): string {
  return [...organizations.map((o) => `O=${rdnValue(o)}`), `CN=${rdnValue(commonName)}`].join(', ');
}

export interface Validity {
  /** @default now, minus a minute of clock skew */
  readonly notBefore?: Date;
  readonly notAfter: Date;
}

function window(validity: Validity): { notBefore: Date; notAfter: Date } {
  return { notBefore: validity.notBefore ?? new Date(Date.now() - 60_000), notAfter: validity.notAfter };
}

export async function createCA(commonName: string, validity: Validity): Promise<CertificatePair> {
  const keys = await newKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: subject(commonName),
    ...window(validity),
    keys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPEM: cert.toString('pem'), keyPEM: await privateKeyPEM(keys.privateKey) };
}

export interface CertificateRequest extends Validity {
  readonly commonName: string;
  /** Kubernetes reads these as the user's groups (`system:masters`, `system:nodes`). */
  readonly organizations?: readonly string[];
  readonly usages: readonly ('server' | 'client')[];
  readonly dnsNames?: readonly string[];
  /** Without brackets, any notation: written in binary form. */
  readonly ipAddresses?: readonly string[];
}

/** Issues a certificate for a new key, signed by the CA. */
export async function issueCertificate(ca: CertificatePair, request: CertificateRequest): Promise<CertificatePair> {
  const keys = await newKeys();
  const caCert = new x509.X509Certificate(ca.certPEM);
  const sans = [
    ...(request.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(request.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  const extendedUsages = request.usages.map((u) =>
    u === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth,
  );
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: subject(request.commonName, request.organizations),
    // The CA's subject as encoded (a UTF8String stays one): name chaining compares the bytes.
    issuer: caCert.subjectName,
    ...window(request),
    publicKey: keys.publicKey,
    signingKey: await importPrivateKey(ca.keyPEM),
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension(extendedUsages, false),
      await x509.AuthorityKeyIdentifierExtension.create(caCert, false),
      ...(sans.length > 0 ? [new x509.SubjectAlternativeNameExtension(sans, false)] : []),
    ],
  });
  return { certPEM: cert.toString('pem'), keyPEM: await privateKeyPEM(keys.privateKey) };
}

/** A key pair for signing service-account tokens: private key (PKCS#8) and public key (SPKI), PEM. */
export async function createSigningKeyPair(): Promise<{ privatePEM: string; publicPEM: string }> {
  const keys = await newKeys();
  return {
    privatePEM: await privateKeyPEM(keys.privateKey),
    publicPEM: x509.PemConverter.encode(await webcrypto.subtle.exportKey('spki', keys.publicKey), 'PUBLIC KEY'),
  };
}

/** When a certificate expires. */
export function notAfter(certPEM: string): Date {
  return new x509.X509Certificate(certPEM).notAfter;
}
