/**
 * The counterpart of Gardener's `shoots/adminkubeconfig` subresource: a kubeconfig for a shoot with a short-lived
 * `system:masters` client certificate, signed by the shoot's CA from its seed namespace. Its server is the external
 * API DNS name (resolved through the environment's DNS server); with `pinAddress` it is the load-balancer address,
 * and the certificate is still checked against the DNS name (`tls-server-name`), for shells whose resolver does not
 * know the local zone.
 */
import type { KubernetesObject, V1Secret, V1Service } from '@kubernetes/client-node';
import { decode } from '../../apis/admission.js';
import { shootIPFamilies } from '../../apis/core/v1beta1/helpers.js';
import { Shoots } from '../../apis/registry.js';
import { urlHost } from '../../system/net.js';
import { issueCertificate } from '../../pki/certificates.js';
import { renderKubeconfig } from '../../pki/kubeconfig.js';
import type { ResourceClient } from '../../runtime/client.js';
import { Labels, seedNamespaceName } from '../../apis/core/v1beta1/names.js';
import { Refs } from '../../apis/refs.js';
import { ingressIPsByFamily, API_SERVER_SERVICE_NAME } from './components/apiserver-service.js';
import { CA_SECRET_NAME } from './components/control-plane.js';
import { isIPFamily } from '../../apis/validation/ip-families.js';

export interface AdminKubeconfigOptions {
  /** Validity of the client certificate, in seconds. Gardener allows 10 minutes to 1 day. */
  readonly expirationSeconds: number;
  /** Server at the load-balancer address of the primary family, with `tls-server-name`. */
  readonly pinAddress?: boolean;
  /** The certificate's user name. @default 'gardener-ipv6-admin' */
  readonly user?: string;
}

export const MIN_EXPIRATION_SECONDS = 600;
export const MAX_EXPIRATION_SECONDS = 86_400;

export class AdminKubeconfigError extends Error {}

export async function shootAdminKubeconfig(
  client: ResourceClient,
  namespace: string,
  name: string,
  opts: AdminKubeconfigOptions,
): Promise<string> {
  if (
    !Number.isInteger(opts.expirationSeconds) ||
    opts.expirationSeconds < MIN_EXPIRATION_SECONDS ||
    opts.expirationSeconds > MAX_EXPIRATION_SECONDS
  ) {
    throw new AdminKubeconfigError(
      `expiration must be between ${MIN_EXPIRATION_SECONDS} and ${MAX_EXPIRATION_SECONDS} seconds (10m to 24h)`,
    );
  }
  const raw = await client.get<KubernetesObject>(Refs.shoot, name, namespace);
  if (!raw) throw new AdminKubeconfigError(`shoot ${namespace}/${name} not found`);
  const shoot = decode(Shoots, raw).value;
  if (!shoot) throw new AdminKubeconfigError(`shoot ${namespace}/${name} cannot be decoded`);
  const external = shoot.status?.advertisedAddresses?.find((a) => a.name === 'external')?.url;
  if (external === undefined) {
    throw new AdminKubeconfigError(
      `shoot ${namespace}/${name} has no external address yet (status.advertisedAddresses); is it reconciled?`,
    );
  }
  const seedNamespace = seedNamespaceName(shoot);
  const secret = await client.get<V1Secret>(Refs.secret, CA_SECRET_NAME, seedNamespace);
  const owner = secret?.metadata?.labels?.[Labels.shootUID];
  if (owner !== undefined && shoot.metadata.uid !== undefined && owner !== shoot.metadata.uid) {
    throw new AdminKubeconfigError(
      `shoot ${namespace}/${name}: the CA in ${seedNamespace} belongs to another shoot (uid ${owner}), not to this one`,
    );
  }
  const caPEM = Buffer.from(secret?.data?.['ca.crt'] ?? '', 'base64').toString('utf8');
  const caKeyPEM = Buffer.from(secret?.data?.['ca.key'] ?? '', 'base64').toString('utf8');
  if (!caPEM || !caKeyPEM) {
    throw new AdminKubeconfigError(
      `shoot ${namespace}/${name} has no CA yet (secret ${seedNamespace}/${CA_SECRET_NAME})`,
    );
  }
  const credentials = await issueCertificate(
    { certPEM: caPEM, keyPEM: caKeyPEM },
    {
      commonName: opts.user ?? 'gardener-ipv6-admin',
      organizations: ['system:masters'],
      usages: ['client'],
      notAfter: new Date(Date.now() + opts.expirationSeconds * 1000),
    },
  );
  const externalHost = new URL(external).hostname;
  let server = external;
  let tlsServerName: string | undefined;
  if (opts.pinAddress) {
    const service = await client.get<V1Service>(Refs.service, API_SERVER_SERVICE_NAME, seedNamespace);
    const primary = shootIPFamilies(shoot).filter(isIPFamily)[0] ?? 'IPv4';
    const address = ingressIPsByFamily(service)[primary][0];
    if (address === undefined)
      throw new AdminKubeconfigError(`shoot ${namespace}/${name} has no ${primary} address yet`);
    server = `https://${urlHost(address)}`;
    tlsServerName = externalHost;
  }
  return renderKubeconfig({
    name: `${namespace}--${name}`,
    server,
    caPEM,
    ...credentials,
    ...(tlsServerName !== undefined ? { tlsServerName } : {}),
  });
}
