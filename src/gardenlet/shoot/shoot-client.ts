/**
 * The gardenlet's own access to a shoot's API server, for what it deploys into the shoot (the machines' bootstrap
 * token and RBAC, CoreDNS): a short-lived `system:masters` client certificate from the shoot's CA, at the
 * load-balancer address of the shoot's primary family (where the gardenlet reaches it, as `up` and the readiness
 * probe do). The same access, longer-lived, for the extensions: Gardener's `gardener` Secret in the seed namespace.
 */
import { createHash } from 'node:crypto';
import { KubeConfig, type V1Secret, type V1Service } from '@kubernetes/client-node';
import { parse } from 'yaml';
import type { Shoot } from '../../apis/core/v1beta1/shoot.js';
import { shootIPFamilies } from '../../apis/core/v1beta1/helpers.js';
import { isIPFamily } from '../../apis/validation/ip-families.js';
import { urlHost } from '../../system/net.js';
import { issueCertificate, notAfter, type CertificatePair } from '../../pki/certificates.js';
import { renderKubeconfig } from '../../pki/kubeconfig.js';
import { ResourceClient } from '../../runtime/client.js';
import { NotReadyError, type ComponentContext } from '../component.js';
import {
  FIELD_MANAGER,
  SHOOT_ACCESS_KUBECONFIG_KEY,
  SHOOT_ACCESS_SECRET_NAME,
  seedNamespaceName,
  shootLabels,
} from '../../apis/core/v1beta1/names.js';
import { Refs } from '../../apis/refs.js';
import { API_SERVER_SERVICE_NAME, ingressIPsByFamily } from './components/apiserver-service.js';
import { ensureControlPlaneSecrets } from './components/secrets.js';

const CLIENT_VALIDITY_MS = 15 * 60_000;
/** The extensions' access (the `gardener` Secret): issued anew once less than a third of it is left. */
const EXTENSION_ACCESS_VALIDITY_MS = 30 * 24 * 3600_000;
/** On the `gardener` Secret: a hash of the server and CA its kubeconfig was written for. */
const ISSUED_FOR_ANNOTATION = 'gardener-ipv6.gardener.cloud/issued-for';

/** The shoot API server's URL as the gardenlet reaches it, or NotReadyError while it has no address. */
export async function shootAPIServerURL(client: ResourceClient, shoot: Shoot, ctx: ComponentContext): Promise<string> {
  const service = await client.get<V1Service>(Refs.service, API_SERVER_SERVICE_NAME, seedNamespaceName(shoot), {
    signal: ctx.signal,
  });
  const primary = shootIPFamilies(shoot).filter(isIPFamily)[0] ?? 'IPv4';
  const address = ingressIPsByFamily(service)[primary][0];
  if (address === undefined) throw new NotReadyError(`kube-apiserver has no ${primary} load-balancer address yet`);
  return `https://${urlHost(address)}:443`;
}

/** The shoot's API server URL, CA and a short-lived admin client certificate. */
export async function shootAdminAccess(
  client: ResourceClient,
  shoot: Shoot,
  ctx: ComponentContext,
): Promise<{ server: string; caPEM: string; credentials: CertificatePair }> {
  const [{ ca }, server] = await Promise.all([
    ensureControlPlaneSecrets(client, shoot, ctx),
    shootAPIServerURL(client, shoot, ctx),
  ]);
  const credentials = await issueCertificate(ca, {
    commonName: 'gardener-ipv6:gardenlet',
    organizations: ['system:masters'],
    usages: ['client'],
    notAfter: new Date(Date.now() + CLIENT_VALIDITY_MS),
  });
  return { server, caPEM: ca.certPEM, credentials };
}

/** A client of the shoot; the caller closes it. */
export async function shootAdminClient(
  client: ResourceClient,
  shoot: Shoot,
  ctx: ComponentContext,
): Promise<ResourceClient> {
  const { server, caPEM, credentials } = await shootAdminAccess(client, shoot, ctx);
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'shoot', server, caData: b64(caPEM) }],
    users: [{ name: 'gardenlet', certData: b64(credentials.certPEM), keyData: b64(credentials.keyPEM) }],
    contexts: [{ name: 'shoot', cluster: 'shoot', user: 'gardenlet' }],
    currentContext: 'shoot',
  });
  return new ResourceClient(kc);
}

/**
 * Writes the seed namespace's `gardener` Secret (SHOOT_ACCESS_SECRET_NAME): a kubeconfig of the shoot's API server at
 * its load-balancer address, with a `system:masters` client certificate, as Gardener gives its extensions the shoot.
 * Kept while it is for the same server and CA and has more than a third of its validity left.
 */
export async function ensureShootAccessSecret(
  client: ResourceClient,
  shoot: Shoot,
  ctx: ComponentContext,
): Promise<void> {
  const namespace = seedNamespaceName(shoot);
  const [{ ca }, server, existing] = await Promise.all([
    ensureControlPlaneSecrets(client, shoot, ctx),
    shootAPIServerURL(client, shoot, ctx),
    client.get<V1Secret>(Refs.secret, SHOOT_ACCESS_SECRET_NAME, namespace, { signal: ctx.signal }),
  ]);
  const issuedFor = createHash('sha256').update(`${server}\n${ca.certPEM}`).digest('hex');
  const current = existing?.data?.[SHOOT_ACCESS_KUBECONFIG_KEY];
  if (existing?.metadata?.annotations?.[ISSUED_FOR_ANNOTATION] === issuedFor && current !== undefined) {
    const parsed = parse(Buffer.from(current, 'base64').toString()) as {
      users?: { user?: { 'client-certificate-data'?: string } }[];
    };
    const cert = parsed.users?.[0]?.user?.['client-certificate-data'];
    const left = cert ? notAfter(Buffer.from(cert, 'base64').toString()).getTime() - Date.now() : 0;
    if (left > EXTENSION_ACCESS_VALIDITY_MS / 3) return;
  }
  const credentials = await issueCertificate(ca, {
    commonName: 'gardener-ipv6:extensions',
    organizations: ['system:masters'],
    usages: ['client'],
    notAfter: new Date(Date.now() + EXTENSION_ACCESS_VALIDITY_MS),
  });
  const kubeconfig = renderKubeconfig({ name: 'shoot', server, caPEM: ca.certPEM, ...credentials });
  await client.apply(
    Refs.secret,
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: SHOOT_ACCESS_SECRET_NAME,
        namespace,
        labels: shootLabels(shoot),
        annotations: { [ISSUED_FOR_ANNOTATION]: issuedFor },
      },
      type: 'Opaque',
      data: { [SHOOT_ACCESS_KUBECONFIG_KEY]: Buffer.from(kubeconfig).toString('base64') },
    } as V1Secret & { metadata: object },
    { fieldManager: FIELD_MANAGER, force: true, signal: ctx.signal },
  );
}
