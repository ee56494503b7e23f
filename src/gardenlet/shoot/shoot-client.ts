/**
 * The gardenlet's own access to a shoot's API server, for what it deploys into the shoot (the machines' bootstrap
 * token and RBAC, CoreDNS): a short-lived `system:masters` client certificate from the shoot's CA, at the
 * load-balancer address of the shoot's primary family (where the gardenlet reaches it, as `up` and the readiness
 * probe do).
 */
import { KubeConfig, type V1Service } from '@kubernetes/client-node';
import type { Shoot } from '../../apis/core/v1beta1/shoot.js';
import { shootIPFamilies } from '../../apis/core/v1beta1/helpers.js';
import { isIPFamily } from '../../apis/validation/ip-families.js';
import { urlHost } from '../../system/net.js';
import { issueCertificate, type CertificatePair } from '../../pki/certificates.js';
import { ResourceClient } from '../../runtime/client.js';
import { NotReadyError, type ComponentContext } from '../component.js';
import { seedNamespaceName } from '../../apis/core/v1beta1/names.js';
import { Refs } from '../../apis/refs.js';
import { API_SERVER_SERVICE_NAME, ingressIPsByFamily } from './components/apiserver-service.js';
import { ensureControlPlaneSecrets } from './components/control-plane.js';

const CLIENT_VALIDITY_MS = 15 * 60_000;

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
