/**
 * The issuer behind Gardener's `shoots/adminkubeconfig` subresource (served by the admission server's aggregated
 * API, src/admission/admin-kubeconfig-api.ts): a kubeconfig for a shoot with a short-lived client certificate of the
 * requesting user in `system:masters`, signed by the shoot's client CA, which the gardenlet keeps in the InternalSecret
 * `<shoot>.ca-client` of the shoot's project namespace (whichever cluster its seed is). The CA's key stays where it
 * is: only the kubeconfig leaves. Its current context's server is the external API DNS name (resolved through the
 * environment's DNS server); a second context (`<namespace>--<name>-address`) has the load-balancer address, with the
 * certificate still checked against the DNS name (`tls-server-name`), for shells whose resolver does not know the
 * local zone: when the garden holds the shoot's seed namespace (its seed is the garden's own cluster).
 */
import type { KubernetesObject, V1Service } from '@kubernetes/client-node';
import { caClientName, type InternalSecret } from '../apis/core/v1beta1/internalsecret.js';
import { decode } from '../apis/admission.js';
import { shootIPFamilies } from '../apis/core/v1beta1/helpers.js';
import { Shoots } from '../apis/registry.js';
import { urlHost } from '../system/net.js';
import { issueCertificate } from '../pki/certificates.js';
import { renderMultiClusterKubeconfig, type KubeconfigCluster } from '../pki/kubeconfig.js';
import type { ResourceClient } from '../runtime/client.js';
import { API_SERVER_SERVICE_NAME, Labels, seedNamespaceName } from '../apis/core/v1beta1/names.js';
import { Refs } from '../apis/refs.js';
import { ingressIPsByFamily } from '../net/load-balancer.js';
import { isIPFamily } from '../apis/validation/ip-families.js';

export interface AdminKubeconfigOptions {
  /** Validity of the client certificate, in seconds (validated by the caller: 10 minutes to 1 day). */
  readonly expirationSeconds: number;
  /** The certificate's user name: the requesting user's, as in Gardener. */
  readonly user: string;
}

export interface AdminKubeconfig {
  readonly kubeconfig: string;
  /** The client certificate's notAfter. */
  readonly expirationTimestamp: Date;
}

/** The context with the load-balancer address is the current one's name with this suffix. */
export const ADDRESS_CONTEXT_SUFFIX = '-address';

/** Why no kubeconfig can be issued; `reason` is the Status reason to answer with. */
export class AdminKubeconfigError extends Error {
  constructor(
    readonly reason: 'NotFound' | 'BadRequest' | 'Conflict',
    message: string,
  ) {
    super(message);
  }
}

export async function issueShootAdminKubeconfig(
  client: ResourceClient,
  namespace: string,
  name: string,
  opts: AdminKubeconfigOptions,
): Promise<AdminKubeconfig> {
  const raw = await client.get<KubernetesObject>(Refs.shoot, name, namespace);
  if (!raw) throw new AdminKubeconfigError('NotFound', `shoots.core.gardener.cloud "${name}" not found`);
  const shoot = decode(Shoots, raw).value;
  if (!shoot) throw new AdminKubeconfigError('BadRequest', `shoot ${namespace}/${name} cannot be decoded`);
  const external = shoot.status?.advertisedAddresses?.find((a) => a.name === 'external')?.url;
  if (external === undefined) {
    throw new AdminKubeconfigError(
      'BadRequest',
      `shoot ${namespace}/${name} has no external address yet (status.advertisedAddresses); is it reconciled?`,
    );
  }
  const seedNamespace = seedNamespaceName(shoot);
  const secretName = caClientName(name);
  const secret = await client.get<InternalSecret & KubernetesObject>(Refs.internalSecret, secretName, namespace);
  const owner = secret?.metadata?.labels?.[Labels.shootUID];
  if (owner !== undefined && shoot.metadata.uid !== undefined && owner !== shoot.metadata.uid) {
    throw new AdminKubeconfigError(
      'Conflict',
      `shoot ${namespace}/${name}: the CA in ${namespace}/${secretName} belongs to another shoot (uid ${owner}), not to this one`,
    );
  }
  const caPEM = Buffer.from(secret?.data?.['ca.crt'] ?? '', 'base64').toString('utf8');
  const caKeyPEM = Buffer.from(secret?.data?.['ca.key'] ?? '', 'base64').toString('utf8');
  if (!caPEM || !caKeyPEM) {
    throw new AdminKubeconfigError('BadRequest', `shoot ${namespace}/${name} has no certificate authority yet`);
  }
  // Whole seconds, as X.509 keeps them: the certificate lives exactly as long as asked.
  const notBefore = new Date(Math.floor(Date.now() / 1000) * 1000);
  const notAfter = new Date(notBefore.getTime() + opts.expirationSeconds * 1000);
  const credentials = await issueCertificate(
    { certPEM: caPEM, keyPEM: caKeyPEM },
    { commonName: opts.user, organizations: ['system:masters'], usages: ['client'], notBefore, notAfter },
  );
  const contextName = `${namespace}--${name}`;
  const clusters: [KubeconfigCluster, ...KubeconfigCluster[]] = [{ name: contextName, server: external }];
  const service = await client.get<V1Service>(Refs.service, API_SERVER_SERVICE_NAME, seedNamespace);
  const primary = shootIPFamilies(shoot).filter(isIPFamily)[0] ?? 'IPv4';
  const address = service ? ingressIPsByFamily(service)[primary][0] : undefined;
  if (address !== undefined) {
    clusters.push({
      name: `${contextName}${ADDRESS_CONTEXT_SUFFIX}`,
      server: `https://${urlHost(address)}`,
      tlsServerName: new URL(external).hostname,
    });
  }
  return {
    kubeconfig: renderMultiClusterKubeconfig({ clusters, user: contextName, caPEM, ...credentials }),
    expirationTimestamp: notAfter,
  };
}
