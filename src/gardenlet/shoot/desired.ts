/**
 * Everything the shoot reconcile creates in the seed, as pure functions of the (admitted) Seed and Shoot. The
 * reconciler deploys these; `gardener-ipv6 render` prints them.
 */
import type {
  KubernetesObject,
  V1LoadBalancerIngress,
  V1Namespace,
  V1NetworkPolicy,
  V1Secret,
  V1Service,
} from '@kubernetes/client-node';
import type { Seed } from '../../apis/core/v1beta1/seed.js';
import type { NetworkingStatus, Shoot } from '../../apis/core/v1beta1/shoot.js';
import type { DNSRecord } from '../../apis/extensions/v1alpha1/dnsrecord.js';
import type { Network } from '../../apis/extensions/v1alpha1/network.js';
import type { OperatingSystemConfig } from '../../apis/extensions/v1alpha1/operatingsystemconfig.js';
import { seedNamespaceName, shootLabels } from '../../apis/core/v1beta1/names.js';
import { desiredAPIServerService, ingressIPsByFamily } from './components/apiserver-service.js';
import { desiredDNSRecords, desiredDNSSecret, type DNSProviderConfig } from './components/dns-records.js';
import { desiredSeedNamespace } from './components/namespace.js';
import { desiredNetworkPolicies } from './components/network-policies.js';
import { desiredNetwork } from './components/network.js';
import { desiredOperatingSystemConfigs } from './components/operating-system-config.js';
import { shootNetworkingStatus } from '../../apis/core/v1beta1/networks.js';

export interface ShootObjects {
  namespace: V1Namespace;
  service: V1Service;
  network?: Network;
  dnsSecret: V1Secret;
  dnsRecords: DNSRecord[];
  /** One per worker pool. */
  operatingSystemConfigs: OperatingSystemConfig[];
  networkPolicies: V1NetworkPolicy[];
  networking: NetworkingStatus;
}

/**
 * The objects of one shoot, given its API server service as the cluster holds it (with the load balancer status
 * the provider-local controller set).
 */
export function desiredShootObjects(
  seed: Seed,
  shoot: Shoot,
  service: V1Service,
  dns: DNSProviderConfig,
): ShootObjects {
  const networking = shootNetworkingStatus(shoot, seed);
  const network = desiredNetwork(shoot);
  return {
    namespace: desiredSeedNamespace(shoot),
    service,
    ...(network ? { network } : {}),
    dnsSecret: desiredDNSSecret(shoot, dns),
    dnsRecords: desiredDNSRecords(shoot, ingressIPsByFamily(service), dns),
    operatingSystemConfigs: desiredOperatingSystemConfigs(shoot),
    networkPolicies: desiredNetworkPolicies({
      namespace: seedNamespaceName(shoot),
      seed,
      shootNetworks: networking,
      labels: shootLabels(shoot),
    }),
    networking,
  };
}

/**
 * The objects as `render` prints them: the service with the addresses `ingress` says its provider would give it
 * (provider-local's, for `render`).
 */
export function renderShootObjects(
  seed: Seed,
  shoot: Shoot,
  ingress: (service: V1Service) => V1LoadBalancerIngress[],
  dns: DNSProviderConfig,
): KubernetesObject[] {
  const service = desiredAPIServerService(shoot);
  service.status = { loadBalancer: { ingress: ingress(service) } };
  const objects = desiredShootObjects(seed, shoot, service, dns);
  return [
    objects.namespace,
    objects.service,
    ...(objects.network ? [objects.network] : []),
    objects.dnsSecret,
    ...objects.dnsRecords,
    ...objects.operatingSystemConfigs,
    ...objects.networkPolicies,
  ] as KubernetesObject[];
}
