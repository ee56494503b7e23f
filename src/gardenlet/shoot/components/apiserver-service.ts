import type { V1Service } from '@kubernetes/client-node';
import { shootIPFamilies } from '../../../apis/core/v1beta1/helpers.js';
import type { Shoot } from '../../../apis/core/v1beta1/shoot.js';
import { formatIP, parseIP, type IPFamily } from '../../../net/cidr.js';
import { seedNamespaceName, shootLabels } from '../../../apis/core/v1beta1/names.js';

export const API_SERVER_SERVICE_NAME = 'kube-apiserver';
export const API_SERVER_PORT = 443;

/**
 * The LoadBalancer Service in front of the shoot's API server, of the shoot's IP families. Its ingress addresses,
 * filled by the provider-local service controller, are what the DNS records publish.
 */
export function desiredAPIServerService(shoot: Shoot): V1Service {
  const families = shootIPFamilies(shoot);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: API_SERVER_SERVICE_NAME,
      namespace: seedNamespaceName(shoot),
      labels: { ...shootLabels(shoot), app: 'kubernetes', role: 'apiserver' },
    },
    spec: {
      type: 'LoadBalancer',
      ipFamilies: families,
      ipFamilyPolicy: families.length > 1 ? 'RequireDualStack' : 'SingleStack',
      selector: { app: 'kubernetes', role: 'apiserver' },
      ports: [{ name: 'kube-apiserver', protocol: 'TCP', port: API_SERVER_PORT, targetPort: API_SERVER_PORT }],
    },
  };
}

/** The service's load balancer addresses by family, canonical (RFC 5952), in the order the service lists them. */
export function ingressIPsByFamily(service: V1Service | undefined): Record<IPFamily, string[]> {
  const result: Record<IPFamily, string[]> = { IPv4: [], IPv6: [] };
  for (const ingress of service?.status?.loadBalancer?.ingress ?? []) {
    const ip = ingress.ip === undefined ? undefined : parseIP(ingress.ip);
    if (ip && !result[ip.family].includes(formatIP(ip))) result[ip.family].push(formatIP(ip));
  }
  return result;
}
