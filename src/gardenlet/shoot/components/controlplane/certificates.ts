/**
 * The certificates of a shoot control plane's components, issued from the shoot's CA: what the processes and the
 * seed workloads of a control plane alike run with.
 */
import { firstServiceIP } from '../../../../net/cidr.js';
import { issueCertificate, type CertificatePair } from '../../../../pki/certificates.js';
import type { ControlPlaneSpec } from './args.js';

/**
 * The API server's serving names: its domains, the `kubernetes` Service's names, `extraDNSNames`; its load-balancer
 * addresses and the `kubernetes` Service's ClusterIP of each family.
 */
export function apiServerSANs(
  spec: ControlPlaneSpec,
  extraDNSNames: readonly string[] = [],
): { dnsNames: string[]; ipAddresses: string[] } {
  return {
    dnsNames: [
      spec.externalDomain,
      spec.internalDomain,
      'kubernetes',
      'kubernetes.default',
      'kubernetes.default.svc',
      'kubernetes.default.svc.cluster.local',
      ...extraDNSNames,
    ],
    ipAddresses: [
      ...spec.families.map((f) => spec.addresses[f]).filter((a): a is string => a !== undefined),
      ...spec.serviceCIDRs.map(firstServiceIP),
    ],
  };
}

/** The shoot's own keys, kept in the seed namespace: its CA and its service-account signing key. */
export interface ControlPlaneSecrets {
  readonly ca: CertificatePair;
  readonly serviceAccount: { readonly privatePEM: string; readonly publicPEM: string };
  /**
   * etcd's CA, apart from the shoot's: a certificate of the shoot's CA (a kubelet's, an admin's) is no etcd client.
   * Only the control plane's deploy reads it.
   */
  readonly etcdCA?: CertificatePair;
}

export interface ComponentCertificates {
  readonly server: CertificatePair;
  /** The API server's client certificate towards the kubelets. */
  readonly kubeletClient: CertificatePair;
  readonly controllerManager: CertificatePair;
  readonly scheduler: CertificatePair;
}

export async function issueComponentCertificates(
  spec: ControlPlaneSpec,
  ca: CertificatePair,
  opts: { readonly validityMs: number; readonly extraDNSNames?: readonly string[] },
): Promise<ComponentCertificates> {
  const validity = { notAfter: new Date(Date.now() + opts.validityMs) };
  const [server, kubeletClient, controllerManager, scheduler] = await Promise.all([
    issueCertificate(ca, {
      commonName: 'kube-apiserver',
      usages: ['server'],
      ...validity,
      ...apiServerSANs(spec, opts.extraDNSNames),
    }),
    issueCertificate(ca, {
      commonName: 'system:apiserver-kubelet-client',
      organizations: ['system:masters'],
      usages: ['client'],
      ...validity,
    }),
    issueCertificate(ca, { commonName: 'system:kube-controller-manager', usages: ['client'], ...validity }),
    issueCertificate(ca, { commonName: 'system:kube-scheduler', usages: ['client'], ...validity }),
  ]);
  return { server, kubeletClient, controllerManager, scheduler };
}
