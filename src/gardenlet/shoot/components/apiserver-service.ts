import type { V1Service } from '@kubernetes/client-node';
import { shootIPFamilies } from '../../../apis/core/v1beta1/helpers.js';
import type { Shoot } from '../../../apis/core/v1beta1/shoot.js';
import { API_SERVER_SERVICE_NAME, seedNamespaceName, shootLabels } from '../../../apis/core/v1beta1/names.js';

// Defined below the components (admission issues kubeconfigs with them too); the gardenlet's take them from here.
export { API_SERVER_SERVICE_NAME };
export { ingressIPsByFamily } from '../../../net/load-balancer.js';

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
