/**
 * The control plane's Secrets: certificates issued once from the shoot's CA (and etcd's own CA), kept with a hash of
 * what they were issued for; only a change of that (the load-balancer addresses, the CAs) issues them anew and rolls
 * the pods.
 */
import { COMPONENTS, ETCD_CLIENT_SERVICE, ETCD_NAME, INPUTS_ANNOTATION, VPN_SEED } from './names.js';
import { createHash } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import { authenticationConfig, API_SERVER_PORT, type ControlPlaneSpec } from './args.js';
import type { ControlPlaneSecrets } from './certificates.js';
import { issueCertificate, type CertificatePair } from '../../../../pki/certificates.js';
import { apiServerSANs, issueComponentCertificates } from './certificates.js';
import { renderKubeconfig } from '../../../../pki/kubeconfig.js';

const CERT_VALIDITY_MS = 365 * 24 * 3600_000;

/** What the certificates are issued for: a change issues them anew. */
export function certificateInputsHash(spec: ControlPlaneSpec, secrets: ControlPlaneSecrets): string {
  return createHash('sha256')
    .update(
      JSON.stringify([
        apiServerSANs(spec, inSeedNames(spec)),
        spec.addresses,
        secrets.ca.certPEM,
        secrets.serviceAccount.publicPEM,
        secrets.etcdCA?.certPEM ?? null,
      ]),
    )
    .digest('hex')
    .slice(0, 16);
}

/** The API server's names in the seed: the control plane's own clients go through its Service. */
function inSeedNames(spec: ControlPlaneSpec): string[] {
  const service = COMPONENTS.kubeAPIServer.name;
  return [
    service,
    `${service}.${spec.name}`,
    `${service}.${spec.name}.svc`,
    `${service}.${spec.name}.svc.cluster.local`,
  ];
}

/** etcd's names in the seed (its client Service's) and its pod's own loopback. */
function etcdServerNames(namespace: string): { dnsNames: string[]; ipAddresses: string[] } {
  const service = ETCD_CLIENT_SERVICE;
  return {
    dnsNames: [
      service,
      `${service}.${namespace}`,
      `${service}.${namespace}.svc`,
      `${service}.${namespace}.svc.cluster.local`,
      'localhost',
    ],
    ipAddresses: ['::1', '127.0.0.1'],
  };
}

/**
 * The Secrets of etcd, kube-apiserver, kube-controller-manager and kube-scheduler (and kube-apiserver's vpn-seed),
 * with certificates issued now.
 */
export async function controlPlaneSecrets(
  spec: ControlPlaneSpec,
  secrets: ControlPlaneSecrets & { readonly etcdCA: CertificatePair },
  labels: Record<string, string>,
): Promise<V1Secret[]> {
  const notAfter = new Date(Date.now() + CERT_VALIDITY_MS);
  const [{ server, kubeletClient, controllerManager, scheduler }, vpnSeed, etcdServer, etcdClient] = await Promise.all([
    issueComponentCertificates(spec, secrets.ca, { validityMs: CERT_VALIDITY_MS, extraDNSNames: inSeedNames(spec) }),
    issueCertificate(secrets.ca, { commonName: VPN_SEED.user, usages: ['client'], notAfter }),
    issueCertificate(secrets.etcdCA, {
      commonName: ETCD_NAME,
      usages: ['server'],
      notAfter,
      ...etcdServerNames(spec.name),
    }),
    issueCertificate(secrets.etcdCA, { commonName: 'kube-apiserver-etcd-client', usages: ['client'], notAfter }),
  ]);
  const inSeed = `https://${COMPONENTS.kubeAPIServer.name}.${spec.name}.svc:${API_SERVER_PORT}`;
  const kubeconfig = (name: string, pair: CertificatePair) =>
    renderKubeconfig({ name, server: inSeed, caPEM: secrets.ca.certPEM, ...pair });
  const hash = certificateInputsHash(spec, secrets);
  const secret = (name: string, data: Record<string, string>): V1Secret => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: spec.name, labels, annotations: { [INPUTS_ANNOTATION]: hash } },
    type: 'Opaque',
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  });
  return [
    secret(COMPONENTS.etcd.name, {
      'etcd-ca.crt': secrets.etcdCA.certPEM,
      'etcd-server.crt': etcdServer.certPEM,
      'etcd-server.key': etcdServer.keyPEM,
    }),
    secret(COMPONENTS.kubeAPIServer.name, {
      'ca.crt': secrets.ca.certPEM,
      'etcd-ca.crt': secrets.etcdCA.certPEM,
      'etcd-client.crt': etcdClient.certPEM,
      'etcd-client.key': etcdClient.keyPEM,
      'apiserver.crt': server.certPEM,
      'apiserver.key': server.keyPEM,
      'authentication-config.yaml': authenticationConfig(),
      'apiserver-kubelet-client.crt': kubeletClient.certPEM,
      'apiserver-kubelet-client.key': kubeletClient.keyPEM,
      'sa.key': secrets.serviceAccount.privatePEM,
      'sa.pub': secrets.serviceAccount.publicPEM,
    }),
    secret(COMPONENTS.kubeControllerManager.name, {
      'ca.crt': secrets.ca.certPEM,
      'ca.key': secrets.ca.keyPEM,
      'sa.key': secrets.serviceAccount.privatePEM,
      kubeconfig: kubeconfig('kube-controller-manager', controllerManager),
    }),
    secret(COMPONENTS.kubeScheduler.name, { kubeconfig: kubeconfig('kube-scheduler', scheduler) }),
    secret(VPN_SEED.name, { kubeconfig: kubeconfig(VPN_SEED.user, vpnSeed) }),
  ];
}
