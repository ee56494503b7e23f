/**
 * The shoot's control plane as workloads of the seed, as Gardener deploys it into the shoot's seed namespace: etcd
 * (`etcd-main`, a StatefulSet behind the `etcd-main-client` Service), kube-apiserver (a Deployment behind the
 * `kube-apiserver` LoadBalancer Service), kube-controller-manager and kube-scheduler (Deployments), each with probes,
 * resource requests and a PodDisruptionBudget: the desired objects, pure. The flags (`args.ts`) point at files
 * mounted from the Secrets (`secrets.ts`); etcd keeps its data on its Node (a hostPath below
 * `/var/lib/gardener-ipv6/etcd`), pinned to the Node it was first scheduled to.
 */
import {
  COMPONENTS,
  ETCD_CLIENT_SERVICE,
  ETCD_HOST_DIR,
  ETCD_NAME,
  INPUTS_ANNOTATION,
  TO_ETCD_LABEL,
  TO_KUBE_APISERVER_LABEL,
  VPN_SEED,
  type ControlPlaneWorkloadValues,
} from './names.js';
import { controlPlaneNetworkPolicies } from './policies.js';
import { CPU_REQUESTS, LAST_WORDS, livenessProbe, readinessProbe, startupProbe } from './pod-settings.js';
import type { KubernetesObject } from '@kubernetes/client-node';
import { allowedTo } from '../../../../apis/core/v1beta1/network-policy.js';
import {
  controlPlaneFiles,
  etcdArgs,
  kubeAPIServerArgs,
  kubeControllerManagerArgs,
  kubeSchedulerArgs,
  API_SERVER_PORT,
  ETCD_METRICS_PORT,
  ETCD_PORT,
  type ControlPlaneFiles,
  type ControlPlaneNetwork,
} from './args.js';
import type { IPFamily } from '../../../../net/cidr.js';
import { IMAGES } from '../../../../imagevector/images.js';

const MOUNT = '/srv/kubernetes';

/** The files of the control plane, as its pods see them (the Secrets mounted below MOUNT). */
export const POD_FILES: ControlPlaneFiles = {
  ...controlPlaneFiles(MOUNT),
  etcdData: '/var/etcd/data',
  controllerManagerKubeconfig: `${MOUNT}/kubeconfig/kubeconfig`,
  schedulerKubeconfig: `${MOUNT}/kubeconfig/kubeconfig`,
  certDir: '/var/run/kubernetes',
};

/** Every address of the pod: `::` where the seed has IPv6 (Go listens on both families there), else `0.0.0.0`. */
function podListenAddress(families: readonly IPFamily[]): string {
  return families.includes('IPv6') ? '::' : '0.0.0.0';
}

/** Where the control plane's pods listen (every pod address) and find etcd (its Service). */
export function podNetwork(
  values: Pick<ControlPlaneWorkloadValues, 'namespace' | 'seedFamilies'>,
): ControlPlaneNetwork {
  return {
    listenAddress: podListenAddress(values.seedFamilies),
    etcdClientURL: `https://${ETCD_CLIENT_SERVICE}.${values.namespace}.svc:${ETCD_PORT}`,
  };
}

export const etcdPodArgs = (values: ControlPlaneWorkloadValues) => etcdArgs(POD_FILES, podNetwork(values));
export const kubeAPIServerPodArgs = (values: ControlPlaneWorkloadValues) =>
  kubeAPIServerArgs(values.spec, POD_FILES, podNetwork(values));
export const kubeControllerManagerPodArgs = (values: ControlPlaneWorkloadValues) =>
  kubeControllerManagerArgs(values.spec, POD_FILES, podNetwork(values));
export const kubeSchedulerPodArgs = (values: ControlPlaneWorkloadValues) =>
  kubeSchedulerArgs(POD_FILES, podNetwork(values));

function secretVolume(secretName: string, name = 'pki', items?: { key: string; path: string }[]) {
  return { name, secret: { secretName, defaultMode: 0o400, ...(items ? { items } : {}) } };
}

function pdb(values: ControlPlaneWorkloadValues, name: string, labels: Record<string, string>): KubernetesObject {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace: values.namespace, labels: { ...values.labels, ...labels } },
    spec: { maxUnavailable: 1, selector: { matchLabels: labels } },
  } as KubernetesObject;
}

/**
 * What each component may reach under the namespace's `deny-all` (Gardener's labels): kube-apiserver etcd, DNS, the
 * networks its webhooks may live in and its own Service; the controllers DNS and kube-apiserver. etcd only answers.
 */
const NETWORK_LABELS: Readonly<Record<string, Record<string, string>>> = {
  [COMPONENTS.kubeAPIServer.name]: {
    ...allowedTo('to-dns', 'to-public-networks', 'to-private-networks'),
    [TO_ETCD_LABEL]: 'allowed',
    // Its vpn-seed sidecar lists the shoot's Nodes through the kube-apiserver Service, i.e. from its own pod.
    [TO_KUBE_APISERVER_LABEL]: 'allowed',
  },
  [COMPONENTS.kubeControllerManager.name]: { ...allowedTo('to-dns'), [TO_KUBE_APISERVER_LABEL]: 'allowed' },
  [COMPONENTS.kubeScheduler.name]: { ...allowedTo('to-dns'), [TO_KUBE_APISERVER_LABEL]: 'allowed' },
};

function deployment(
  values: ControlPlaneWorkloadValues,
  component: { name: string; labels: Record<string, string> },
  container: Record<string, unknown>,
  volumes: unknown[],
  annotations: Record<string, string>,
): KubernetesObject {
  const labels = { ...component.labels, 'gardener.cloud/role': 'controlplane' };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: component.name, namespace: values.namespace, labels: { ...values.labels, ...labels } },
    spec: {
      replicas: 1,
      revisionHistoryLimit: 2,
      selector: { matchLabels: component.labels },
      template: {
        metadata: { labels: { ...labels, ...NETWORK_LABELS[component.name] }, annotations },
        spec: {
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          terminationGracePeriodSeconds: 15,
          containers: [{ name: component.name, imagePullPolicy: 'IfNotPresent', ...LAST_WORDS, ...container }],
          volumes,
        },
      },
    },
  } as KubernetesObject;
}

/** The sidecar that routes kube-apiserver's pod into the shoot's pod and service networks. */
function vpnSeedContainer(values: ControlPlaneWorkloadValues): Record<string, unknown> {
  return {
    name: VPN_SEED.name,
    image: IMAGES.machine,
    imagePullPolicy: 'IfNotPresent',
    ...LAST_WORDS,
    args: [
      'overlay-peer',
      `--kubeconfig=${MOUNT}/${VPN_SEED.name}/kubeconfig`,
      `--service-cidrs=${values.spec.serviceCIDRs.join(',')}`,
      // The machines' overlay runs over their pod addresses of the shoot's primary family: so does ours.
      `--underlay-family=${values.spec.families[0] ?? 'IPv4'}`,
    ],
    env: [
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_IPS', valueFrom: { fieldRef: { fieldPath: 'status.podIPs' } } },
    ],
    // Its own VXLAN device and routes in the pod's network namespace; nothing else.
    securityContext: { capabilities: { add: ['NET_ADMIN'] } },
    resources: { requests: { cpu: CPU_REQUESTS.vpnSeed, memory: '40Mi' } },
    volumeMounts: [{ name: VPN_SEED.name, mountPath: `${MOUNT}/${VPN_SEED.name}`, readOnly: true }],
  };
}

/** Every object of the control plane but its Secrets (see controlPlaneSecrets). */
export function desiredControlPlaneWorkloads(values: ControlPlaneWorkloadValues): KubernetesObject[] {
  const { namespace } = values;
  const etcdLabels = { ...COMPONENTS.etcd.labels, 'gardener.cloud/role': 'controlplane' };
  const etcd = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: ETCD_NAME, namespace, labels: { ...values.labels, ...etcdLabels } },
    spec: {
      replicas: 1,
      serviceName: ETCD_NAME,
      selector: { matchLabels: COMPONENTS.etcd.labels },
      template: {
        metadata: { labels: etcdLabels },
        spec: {
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          terminationGracePeriodSeconds: 15,
          // The data lives on this Node.
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [
                  { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [values.etcdNode] }] },
                ],
              },
            },
          },
          containers: [
            {
              name: 'etcd',
              image: IMAGES.etcd,
              imagePullPolicy: 'IfNotPresent',
              ...LAST_WORDS,
              command: ['/usr/local/bin/etcd'],
              args: etcdPodArgs(values),
              ports: [{ name: 'client', containerPort: ETCD_PORT, protocol: 'TCP' }],
              readinessProbe: readinessProbe('/health', ETCD_METRICS_PORT, 'HTTP'),
              livenessProbe: livenessProbe('/health', ETCD_METRICS_PORT, 'HTTP'),
              startupProbe: startupProbe('/health', ETCD_METRICS_PORT, 'HTTP'),
              resources: { requests: { cpu: CPU_REQUESTS.etcd, memory: '100Mi' } },
              volumeMounts: [
                { name: 'data', mountPath: '/var/etcd' },
                { name: 'pki', mountPath: POD_FILES.pki, readOnly: true },
              ],
            },
          ],
          volumes: [
            { name: 'data', hostPath: { path: `${ETCD_HOST_DIR}/${namespace}`, type: 'DirectoryOrCreate' } },
            secretVolume(ETCD_NAME),
          ],
        },
      },
    },
  } as KubernetesObject;
  const etcdService = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: ETCD_CLIENT_SERVICE, namespace, labels: { ...values.labels, ...etcdLabels } },
    spec: {
      type: 'ClusterIP',
      selector: COMPONENTS.etcd.labels,
      ports: [{ name: 'client', port: ETCD_PORT, targetPort: ETCD_PORT, protocol: 'TCP' }],
    },
  } as KubernetesObject;
  const annotations = { [INPUTS_ANNOTATION]: values.secretsHash };
  const apiServer = deployment(
    values,
    COMPONENTS.kubeAPIServer,
    {
      image: IMAGES.kubeAPIServer,
      command: ['/usr/local/bin/kube-apiserver'],
      args: kubeAPIServerPodArgs(values),
      ports: [{ name: 'https', containerPort: API_SERVER_PORT, protocol: 'TCP' }],
      readinessProbe: readinessProbe('/readyz', API_SERVER_PORT, 'HTTPS'),
      livenessProbe: livenessProbe('/livez', API_SERVER_PORT, 'HTTPS'),
      startupProbe: startupProbe('/livez', API_SERVER_PORT, 'HTTPS'),
      resources: { requests: { cpu: CPU_REQUESTS.kubeAPIServer, memory: '300Mi' } },
      volumeMounts: [
        { name: 'pki', mountPath: POD_FILES.pki, readOnly: true },
        { name: 'cert-dir', mountPath: POD_FILES.certDir },
      ],
    },
    [
      secretVolume(COMPONENTS.kubeAPIServer.name),
      { name: 'cert-dir', emptyDir: {} },
      secretVolume(VPN_SEED.name, VPN_SEED.name),
    ],
    annotations,
  );
  (apiServer as { spec: { template: { spec: { containers: unknown[] } } } }).spec.template.spec.containers.push(
    vpnSeedContainer(values),
  );
  const controller = (
    component: (typeof COMPONENTS)['kubeControllerManager' | 'kubeScheduler'],
    image: string,
    binary: string,
    args: string[],
    port: number,
    files: string[],
    cpu: string,
  ) =>
    deployment(
      values,
      component,
      {
        image,
        command: [`/usr/local/bin/${binary}`],
        args,
        livenessProbe: livenessProbe('/healthz', port, 'HTTPS'),
        startupProbe: startupProbe('/healthz', port, 'HTTPS'),
        resources: { requests: { cpu, memory: '64Mi' } },
        volumeMounts: [
          { name: 'kubeconfig', mountPath: `${MOUNT}/kubeconfig`, readOnly: true },
          ...(files.length > 0 ? [{ name: 'pki', mountPath: POD_FILES.pki, readOnly: true }] : []),
        ],
      },
      [
        secretVolume(component.name, 'kubeconfig', [{ key: 'kubeconfig', path: 'kubeconfig' }]),
        ...(files.length > 0
          ? [
              secretVolume(
                component.name,
                'pki',
                files.map((f) => ({ key: f, path: f })),
              ),
            ]
          : []),
      ],
      annotations,
    );
  return [
    etcdService,
    etcd,
    apiServer,
    controller(
      COMPONENTS.kubeControllerManager,
      IMAGES.kubeControllerManager,
      'kube-controller-manager',
      kubeControllerManagerPodArgs(values),
      10257,
      ['ca.crt', 'ca.key', 'sa.key'],
      CPU_REQUESTS.kubeControllerManager,
    ),
    controller(
      COMPONENTS.kubeScheduler,
      IMAGES.kubeScheduler,
      'kube-scheduler',
      kubeSchedulerPodArgs(values),
      10259,
      [],
      CPU_REQUESTS.kubeScheduler,
    ),
    pdb(values, ETCD_NAME, COMPONENTS.etcd.labels),
    ...[COMPONENTS.kubeAPIServer, COMPONENTS.kubeControllerManager, COMPONENTS.kubeScheduler].map((c) =>
      pdb(values, c.name, c.labels),
    ),
    ...controlPlaneNetworkPolicies(values),
  ];
}

/** A NetworkPolicy of the control plane's namespace. */

/** A pod on `node` that removes the namespace's etcd data there. */
export function etcdCleanupPod(namespace: string, node: string, name: string): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: { app: 'etcd-data-cleanup' } },
    spec: {
      nodeName: node,
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'cleanup',
          image: IMAGES.busybox,
          imagePullPolicy: 'IfNotPresent',
          // The image's busybox, called by its applet name (the image links only the tests' applets).
          command: ['/bin/busybox', 'rm', '-rf', `/data/${namespace}`],
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
        },
      ],
      volumes: [{ name: 'data', hostPath: { path: ETCD_HOST_DIR, type: 'DirectoryOrCreate' } }],
    },
  } as KubernetesObject;
}
