/**
 * The names, labels and values of a shoot's control plane in its seed namespace, which the desired objects
 * (workloads.ts, policies.ts, secrets.ts) and the component that deploys them share.
 */
import type { IPFamily } from '../../../../net/cidr.js';
import { API_SERVER_PORT, ETCD_PORT, type ControlPlaneSpec } from './args.js';

export const ETCD_NAME = 'etcd-main';
export const ETCD_CLIENT_SERVICE = 'etcd-main-client';
/** Where etcd keeps its data on its Node. */
export const ETCD_HOST_DIR = '/var/lib/gardener-ipv6/etcd';
/** On a Secret and the pod templates: a hash of what its certificates were issued for. */
export const INPUTS_ANNOTATION = 'gardener-ipv6.gardener.cloud/issued-for';

/**
 * Gardener's labels for reaching a Service's port, `networking.resources.gardener.cloud/to-<service>-tcp-<port>`,
 * and the policies that go with them (`ingress-to-…` on the Service's pods, `egress-to-…` on the labelled pods).
 */
export const TO_ETCD_LABEL = `networking.resources.gardener.cloud/to-${ETCD_CLIENT_SERVICE}-tcp-${ETCD_PORT}`;
export const TO_KUBE_APISERVER_LABEL = `networking.resources.gardener.cloud/to-kube-apiserver-tcp-${API_SERVER_PORT}`;

/** The components and their labels (Gardener's). */
export const COMPONENTS = {
  etcd: { name: ETCD_NAME, labels: { app: 'etcd-statefulset', role: 'main' } },
  kubeAPIServer: { name: 'kube-apiserver', labels: { app: 'kubernetes', role: 'apiserver' } },
  kubeControllerManager: { name: 'kube-controller-manager', labels: { app: 'kubernetes', role: 'controller-manager' } },
  kubeScheduler: { name: 'kube-scheduler', labels: { app: 'kubernetes', role: 'scheduler' } },
} as const;

/**
 * kube-apiserver's sidecar into the shoot's networks (`gardener-ipv6 overlay-peer`, from the machine image): its
 * Secret (a kubeconfig whose user may list Nodes) and the user the shoot binds to that.
 */
export { VPN_SEED } from '../../../../apis/core/v1beta1/names.js';

export interface ControlPlaneWorkloadValues {
  readonly namespace: string;
  readonly spec: ControlPlaneSpec;
  /** The seed's IP families: what the pods listen on. */
  readonly seedFamilies: readonly IPFamily[];
  /** The Node etcd's data lives on. */
  readonly etcdNode: string;
  /** What the Secrets' certificates were issued for (certificateInputsHash): on the pod templates, to roll them. */
  readonly secretsHash: string;
  readonly labels: Readonly<Record<string, string>>;
}
