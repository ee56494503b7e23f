/**
 * The control plane's NetworkPolicies under the seed namespace's `deny-all`, as gardener-resource-manager derives
 * them from Gardener's Services. Pure.
 */
import {
  COMPONENTS,
  ETCD_CLIENT_SERVICE,
  TO_ETCD_LABEL,
  TO_KUBE_APISERVER_LABEL,
  type ControlPlaneWorkloadValues,
} from './names.js';
import type { KubernetesObject } from '@kubernetes/client-node';
import { networkPolicyObject } from '../../../../apis/core/v1beta1/network-policy.js';
import { API_SERVER_PORT, ETCD_PORT } from './args.js';

function networkPolicy(
  values: ControlPlaneWorkloadValues,
  name: string,
  description: string,
  spec: Record<string, unknown>,
): KubernetesObject {
  return networkPolicyObject(
    { name, namespace: values.namespace, labels: values.labels },
    description,
    spec,
  ) as KubernetesObject;
}

/**
 * The paths between the control plane's components under `deny-all`, as gardener-resource-manager derives them
 * from Gardener's Services: etcd's client port from pods labelled for it, kube-apiserver's port from anywhere (its
 * clients are the world: users, machines, the gardenlet), and egress to each from the pods labelled for it.
 */
const ETCD_TARGET = `${ETCD_CLIENT_SERVICE}-tcp-${ETCD_PORT}`;
const API_SERVER_TARGET = `${COMPONENTS.kubeAPIServer.name}-tcp-${API_SERVER_PORT}`;
export const CONTROL_PLANE_POLICY_NAMES = [
  `ingress-to-${ETCD_TARGET}`,
  `egress-to-${ETCD_TARGET}`,
  `ingress-to-${API_SERVER_TARGET}-from-world`,
  `egress-to-${API_SERVER_TARGET}`,
] as const;

export function controlPlaneNetworkPolicies(values: ControlPlaneWorkloadValues): KubernetesObject[] {
  const tcp = (port: number) => [{ protocol: 'TCP', port }];
  const etcd = ETCD_TARGET;
  const apiServer = API_SERVER_TARGET;
  return [
    networkPolicy(
      values,
      `ingress-to-${etcd}`,
      `Allows ingress to etcd's client port from pods labelled ${TO_ETCD_LABEL}.`,
      {
        podSelector: { matchLabels: COMPONENTS.etcd.labels },
        policyTypes: ['Ingress'],
        ingress: [{ from: [{ podSelector: { matchLabels: { [TO_ETCD_LABEL]: 'allowed' } } }], ports: tcp(ETCD_PORT) }],
      },
    ),
    networkPolicy(
      values,
      `egress-to-${etcd}`,
      `Allows egress from pods labelled ${TO_ETCD_LABEL} to etcd's client port.`,
      {
        podSelector: { matchLabels: { [TO_ETCD_LABEL]: 'allowed' } },
        policyTypes: ['Egress'],
        egress: [{ to: [{ podSelector: { matchLabels: COMPONENTS.etcd.labels } }], ports: tcp(ETCD_PORT) }],
      },
    ),
    networkPolicy(
      values,
      `ingress-to-${apiServer}-from-world`,
      "Allows ingress to kube-apiserver's port from anywhere.",
      {
        podSelector: { matchLabels: COMPONENTS.kubeAPIServer.labels },
        policyTypes: ['Ingress'],
        ingress: [{ ports: tcp(API_SERVER_PORT) }],
      },
    ),
    networkPolicy(
      values,
      `egress-to-${apiServer}`,
      `Allows egress from pods labelled ${TO_KUBE_APISERVER_LABEL} to kube-apiserver's port.`,
      {
        podSelector: { matchLabels: { [TO_KUBE_APISERVER_LABEL]: 'allowed' } },
        policyTypes: ['Egress'],
        egress: [
          { to: [{ podSelector: { matchLabels: COMPONENTS.kubeAPIServer.labels } }], ports: tcp(API_SERVER_PORT) },
        ],
      },
    ),
  ];
}
