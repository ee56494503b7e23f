/**
 * The shoot's secrets in its seed namespace, as Gardener's secrets manager keeps them: the CA (`ca`), the
 * service-account signing key, etcd's CA (`ca-etcd`) and the machines' bootstrap token, each created on first use and
 * kept for the shoot's life (never replaced: every certificate and kubeconfig issued from them stays valid). The flow's
 * `deploy-secrets` task hands them to the control plane, the machine bootstrap and the Worker; the Secrets go with the
 * seed namespace.
 */
import type { V1Secret } from '@kubernetes/client-node';
import { randomInt } from 'node:crypto';
import type { Shoot } from '../../../apis/core/v1beta1/shoot.js';
import {
  CA_SECRET_NAME,
  ETCD_CA_SECRET_NAME,
  SERVICE_ACCOUNT_KEY_SECRET_NAME,
  seedNamespaceName,
  shootLabels,
} from '../../../apis/core/v1beta1/names.js';
import { BOOTSTRAP_TOKEN_PATTERN } from '../../../apis/provider-local/v1alpha1/machine-user-data.js';
import { Refs } from '../../../apis/refs.js';
import { createCA, createSigningKeyPair, type CertificatePair } from '../../../pki/certificates.js';
import type { ResourceClient } from '../../../runtime/client.js';
import { isAlreadyExists } from '../../../runtime/errors.js';
import type { ComponentContext } from '../../component.js';

/** The seed namespace's Secret with the machines' bootstrap token. */
export const BOOTSTRAP_TOKEN_SECRET = 'machine-bootstrap-token';
/** How long a shoot's CA lives (Gardener's: ten years). */
const CA_VALIDITY_MS = 10 * 365 * 24 * 3600_000;

/** What `deploy-secrets` hands on: the control plane's secrets and the machines' bootstrap token (`<id>.<secret>`). */
export interface ShootSecretValues {
  readonly ca: CertificatePair;
  readonly serviceAccount: { readonly privatePEM: string; readonly publicPEM: string };
  readonly etcdCA: CertificatePair;
  readonly bootstrapToken: string;
}

const b64 = (text: string) => Buffer.from(text).toString('base64');
const unb64 = (text: string | undefined) => Buffer.from(text ?? '', 'base64').toString('utf8');

/** Reads a Secret, or creates it with `make()`'s data when it doesn't exist yet; never replaces one. */
export async function getOrCreateSecret(
  client: ResourceClient,
  shoot: Shoot,
  name: string,
  make: () => Promise<Record<string, string>>,
  ctx: ComponentContext,
): Promise<Record<string, string>> {
  const namespace = seedNamespaceName(shoot);
  const read = async () => (await client.get<V1Secret>(Refs.secret, name, namespace, { signal: ctx.signal }))?.data;
  const existing = await read();
  if (existing) return existing;
  const data = Object.fromEntries(Object.entries(await make()).map(([k, v]) => [k, b64(v)]));
  const secret: V1Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, labels: { ...shootLabels(shoot), 'gardener.cloud/purpose': name } },
    type: 'Opaque',
    data,
  };
  try {
    await client.create(Refs.secret, secret, { signal: ctx.signal });
    return data;
  } catch (e) {
    // Another reconcile created it first: that one counts.
    if (!isAlreadyExists(e)) throw e;
    return (await read()) ?? data;
  }
}

/** A CA kept in the Secret `name` of the seed namespace (`ca.crt`, `ca.key`), created on first use. */
async function getOrCreateCA(
  client: ResourceClient,
  shoot: Shoot,
  name: string,
  commonNamePrefix: string,
  ctx: ComponentContext,
): Promise<CertificatePair> {
  const data = await getOrCreateSecret(
    client,
    shoot,
    name,
    async () => {
      const pair = await createCA(`${commonNamePrefix}-${seedNamespaceName(shoot)}`, {
        notAfter: new Date(Date.now() + CA_VALIDITY_MS),
      });
      return { 'ca.crt': pair.certPEM, 'ca.key': pair.keyPEM };
    },
    ctx,
  );
  return { certPEM: unb64(data['ca.crt']), keyPEM: unb64(data['ca.key']) };
}

/** The shoot's CA and service-account key pair, created on first use. */
export async function ensureControlPlaneSecrets(
  client: ResourceClient,
  shoot: Shoot,
  ctx: ComponentContext,
): Promise<Pick<ShootSecretValues, 'ca' | 'serviceAccount'>> {
  const [ca, sa] = await Promise.all([
    getOrCreateCA(client, shoot, CA_SECRET_NAME, 'shoot-ca', ctx),
    getOrCreateSecret(
      client,
      shoot,
      SERVICE_ACCOUNT_KEY_SECRET_NAME,
      async () => {
        const pair = await createSigningKeyPair();
        return { id_rsa: pair.privatePEM, 'id_rsa.pub': pair.publicPEM };
      },
      ctx,
    ),
  ]);
  return { ca, serviceAccount: { privatePEM: unb64(sa.id_rsa), publicPEM: unb64(sa['id_rsa.pub']) } };
}

/** etcd's CA (`ca-etcd`), created on first use and kept for the shoot's life. */
export function ensureEtcdCA(client: ResourceClient, shoot: Shoot, ctx: ComponentContext): Promise<CertificatePair> {
  return getOrCreateCA(client, shoot, ETCD_CA_SECRET_NAME, 'etcd-ca', ctx);
}

const TOKEN_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

function randomToken(length: number): string {
  return Array.from({ length }, () => TOKEN_ALPHABET[randomInt(TOKEN_ALPHABET.length)]).join('');
}

/** A new bootstrap token, `<6>.<16>` of [a-z0-9]. */
export function newBootstrapToken(): { id: string; secret: string } {
  return { id: randomToken(6), secret: randomToken(16) };
}

/** The shoot's bootstrap token (`<id>.<secret>`), created on first use and kept in the seed namespace. */
export async function ensureBootstrapToken(
  client: ResourceClient,
  shoot: Shoot,
  ctx: ComponentContext,
): Promise<string> {
  const data = await getOrCreateSecret(
    client,
    shoot,
    BOOTSTRAP_TOKEN_SECRET,
    async () => {
      const token = newBootstrapToken();
      return { 'token-id': token.id, 'token-secret': token.secret };
    },
    ctx,
  );
  const text = (key: string) => unb64(data[key]);
  const token = `${text('token-id')}.${text('token-secret')}`;
  if (!BOOTSTRAP_TOKEN_PATTERN.test(token))
    throw new Error(`Secret ${BOOTSTRAP_TOKEN_SECRET} holds no valid bootstrap token`);
  return token;
}

/** The shoot's secrets: created once, read at every reconcile; they go with the seed namespace. */
export class ShootSecrets {
  constructor(
    private readonly client: ResourceClient,
    private readonly shoot: Shoot,
  ) {}

  async deploy(ctx: ComponentContext): Promise<ShootSecretValues> {
    const [controlPlane, etcdCA, bootstrapToken] = await Promise.all([
      ensureControlPlaneSecrets(this.client, this.shoot, ctx),
      ensureEtcdCA(this.client, this.shoot, ctx),
      ensureBootstrapToken(this.client, this.shoot, ctx),
    ]);
    return { ...controlPlane, etcdCA, bootstrapToken };
  }
}
