/**
 * The shoot's control plane as workloads of the seed, as Gardener deploys it into the shoot's seed namespace: etcd
 * (`etcd-main`, a StatefulSet behind the `etcd-main-client` Service), kube-apiserver (a Deployment behind the
 * `kube-apiserver` LoadBalancer Service), kube-controller-manager and kube-scheduler (Deployments), each with its
 * Secret, probes, resource requests and a PodDisruptionBudget. The flags (`controlplane/args.ts`) point at files
 * mounted from the Secrets.
 *
 * etcd keeps its data on its Node (a hostPath below `/var/lib/gardener-ipv6/etcd`), and the StatefulSet stays on the
 * Node it was first scheduled to, so a restarted pod (or gardenlet) finds the data again.
 *
 * The certificates are issued once from the shoot's CA and kept in the Secrets with a hash of what they were issued
 * for; only a change of that (the load-balancer addresses, the CA) issues them anew and rolls the pods.
 */
import { createHash } from 'node:crypto';
import type { KubernetesObject, V1Secret, V1Service } from '@kubernetes/client-node';
import type { ControlPlaneHealth } from '../care/health.js';
import { urlHost } from '../../../system/net.js';
import { API_SERVER_SERVICE_NAME, ingressIPsByFamily } from './apiserver-service.js';
import { allowedTo } from './network-policies.js';
import { networkPolicyObject } from '../../../apis/core/v1beta1/network-policy.js';
import type { Shoot } from '../../../apis/core/v1beta1/shoot.js';
import {
  apiServerURL,
  authenticationConfig,
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
  type ControlPlaneSpec,
} from './controlplane/args.js';
import type { ControlPlaneSecrets } from './controlplane/certificates.js';
import { shootGet } from '../shoot-get.js';
import type { IPFamily } from '../../../net/cidr.js';
import { issueCertificate, type CertificatePair } from '../../../pki/certificates.js';
import { apiServerSANs, issueComponentCertificates } from './controlplane/certificates.js';
import { renderKubeconfig } from '../../../pki/kubeconfig.js';
import type { ResourceClient } from '../../../runtime/client.js';
import { type ResourceRef, Refs } from '../../../apis/refs.js';
import { NotReadyError, type ComponentContext } from '../../component.js';
import { IMAGES } from '../../../imagevector/images.js';
import { CA_SECRET_NAME, FIELD_MANAGER, shootLabels } from '../../../apis/core/v1beta1/names.js';

export const ETCD_NAME = 'etcd-main';
export const ETCD_CLIENT_SERVICE = 'etcd-main-client';
/** Where etcd keeps its data on its Node. */
export const ETCD_HOST_DIR = '/var/lib/gardener-ipv6/etcd';
const CERT_VALIDITY_MS = 365 * 24 * 3600_000;
/** How long a deploy waits for kube-apiserver before the controllers; then the reconcile comes back later. */
const API_SERVER_READY_TIMEOUT_MS = 90_000;
const API_SERVER_POLL_MS = 1_000;
/** On a Secret and the pod templates: a hash of what its certificates were issued for. */
export const INPUTS_ANNOTATION = 'gardener-ipv6.gardener.cloud/issued-for';
const MOUNT = '/srv/kubernetes';
/**
 * Who scales the workloads to zero for hibernation: a field manager of its own, whose `replicas` the next deploy's
 * forced apply takes over again.
 */
const HIBERNATION_FIELD_MANAGER = 'gardenlet-hibernation';

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
export const VPN_SEED = { name: 'vpn-seed', user: 'gardener-ipv6:vpn-seed' } as const;

/** The files of the control plane, as its pods see them (the Secrets mounted below MOUNT). */
export const POD_FILES: ControlPlaneFiles = {
  ...controlPlaneFiles(MOUNT),
  etcdData: '/var/etcd/data',
  controllerManagerKubeconfig: `${MOUNT}/kubeconfig/kubeconfig`,
  schedulerKubeconfig: `${MOUNT}/kubeconfig/kubeconfig`,
  certDir: '/var/run/kubernetes',
};

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

const httpProbe = (path: string, port: number, scheme: 'HTTP' | 'HTTPS', initialDelaySeconds = 0) => ({
  httpGet: { path, port, scheme },
  initialDelaySeconds,
  periodSeconds: 5,
  timeoutSeconds: 3,
  failureThreshold: 6,
});

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
          containers: [{ name: component.name, imagePullPolicy: 'IfNotPresent', ...container }],
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
    resources: { requests: { cpu: '10m', memory: '40Mi' } },
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
              command: ['/usr/local/bin/etcd'],
              args: etcdPodArgs(values),
              ports: [{ name: 'client', containerPort: ETCD_PORT, protocol: 'TCP' }],
              readinessProbe: httpProbe('/health', ETCD_METRICS_PORT, 'HTTP'),
              livenessProbe: httpProbe('/health', ETCD_METRICS_PORT, 'HTTP', 15),
              resources: { requests: { cpu: '50m', memory: '100Mi' } },
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
      readinessProbe: httpProbe('/readyz', API_SERVER_PORT, 'HTTPS'),
      livenessProbe: httpProbe('/livez', API_SERVER_PORT, 'HTTPS', 15),
      resources: { requests: { cpu: '100m', memory: '300Mi' } },
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
  ) =>
    deployment(
      values,
      component,
      {
        image,
        command: [`/usr/local/bin/${binary}`],
        args,
        livenessProbe: httpProbe('/healthz', port, 'HTTPS', 15),
        resources: { requests: { cpu: '20m', memory: '64Mi' } },
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
    ),
    controller(
      COMPONENTS.kubeScheduler,
      IMAGES.kubeScheduler,
      'kube-scheduler',
      kubeSchedulerPodArgs(values),
      10259,
      [],
    ),
    pdb(values, ETCD_NAME, COMPONENTS.etcd.labels),
    ...[COMPONENTS.kubeAPIServer, COMPONENTS.kubeControllerManager, COMPONENTS.kubeScheduler].map((c) =>
      pdb(values, c.name, c.labels),
    ),
    ...controlPlaneNetworkPolicies(values),
  ];
}

/** A NetworkPolicy of the control plane's namespace. */
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

interface NodeObject extends KubernetesObject {
  status?: { conditions?: { type: string; status: string }[] };
}

interface WorkloadStatus extends KubernetesObject {
  spec?: {
    replicas?: number;
    template?: {
      spec?: { affinity?: { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: unknown } } };
    };
  };
  status?: { readyReplicas?: number; updatedReplicas?: number; observedGeneration?: number };
}

/** The Node etcd's StatefulSet is pinned to, if it was deployed before. */
function pinnedNode(statefulSet: WorkloadStatus | undefined): string | undefined {
  const terms = statefulSet?.spec?.template?.spec?.affinity?.nodeAffinity
    ?.requiredDuringSchedulingIgnoredDuringExecution as
    { nodeSelectorTerms?: { matchExpressions?: { key: string; values?: string[] }[] }[] } | undefined;
  return terms?.nodeSelectorTerms?.[0]?.matchExpressions?.find((e) => e.key === 'kubernetes.io/hostname')?.values?.[0];
}

/** Deploys, waits for and destroys the control plane workloads of one shoot in the seed. */
export class ShootControlPlaneWorkloads {
  constructor(
    private readonly client: ResourceClient,
    private readonly shoot: Shoot,
    private readonly seedFamilies: readonly IPFamily[],
  ) {}

  async deploy(
    spec: ControlPlaneSpec,
    secrets: ControlPlaneSecrets & { readonly etcdCA: CertificatePair },
    ctx: ComponentContext,
  ): Promise<void> {
    const { client } = this;
    const namespace = spec.name;
    const labels = shootLabels(this.shoot);
    const hash = certificateInputsHash(spec, secrets);
    const existing = await Promise.all(
      [...Object.values(COMPONENTS), VPN_SEED].map((c) =>
        client.get<V1Secret>(Refs.secret, c.name, namespace, { signal: ctx.signal }),
      ),
    );
    if (existing.some((s) => s?.metadata?.annotations?.[INPUTS_ANNOTATION] !== hash)) {
      for (const secret of await controlPlaneSecrets(spec, secrets, labels)) await this.apply(Refs.secret, secret, ctx);
    }
    const statefulSet = await client.get<WorkloadStatus>(Refs.statefulSet, ETCD_NAME, namespace, {
      signal: ctx.signal,
    });
    const etcdNode = pinnedNode(statefulSet) ?? (await this.firstReadyNode(ctx));
    const values: ControlPlaneWorkloadValues = {
      namespace,
      spec,
      seedFamilies: this.seedFamilies,
      etcdNode,
      secretsHash: hash,
      labels,
    };
    // As Gardener's flow: the controllers after kube-apiserver is ready. Started earlier they exit (no RBAC, no
    // authentication ConfigMap yet) and their pods begin in CrashLoopBackOff.
    const controllers = new Set<string>([COMPONENTS.kubeControllerManager.name, COMPONENTS.kubeScheduler.name]);
    const objects = desiredControlPlaneWorkloads(values);
    const isController = (o: KubernetesObject) => o.kind === 'Deployment' && controllers.has(o.metadata?.name ?? '');
    for (const object of objects.filter((o) => !isController(o))) await this.apply(refFor(object), object, ctx);
    await this.waitForAPIServer(namespace, ctx);
    for (const object of objects.filter(isController)) await this.apply(refFor(object), object, ctx);
  }

  /** Polls the kube-apiserver Deployment until a replica is ready; NotReadyError after API_SERVER_READY_TIMEOUT_MS. */
  private async waitForAPIServer(namespace: string, ctx: ComponentContext): Promise<void> {
    const deadline = Date.now() + API_SERVER_READY_TIMEOUT_MS;
    for (;;) {
      const d = await this.client.get<WorkloadStatus>(Refs.deployment, COMPONENTS.kubeAPIServer.name, namespace, {
        signal: ctx.signal,
      });
      if ((d?.status?.readyReplicas ?? 0) > 0) return;
      if (Date.now() > deadline) {
        throw new NotReadyError('kube-controller-manager and kube-scheduler wait for kube-apiserver to be ready');
      }
      await new Promise((r) => setTimeout(r, API_SERVER_POLL_MS));
      ctx.signal.throwIfAborted();
    }
  }

  private async apply(ref: ResourceRef, object: KubernetesObject, ctx: ComponentContext): Promise<void> {
    await this.client.apply(ref, object, { fieldManager: FIELD_MANAGER, force: true, signal: ctx.signal });
  }

  private async readyNodes(ctx: ComponentContext): Promise<string[]> {
    return (await this.client.list<NodeObject>(Refs.node, { signal: ctx.signal })).items
      .filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
      .map((n) => n.metadata?.name ?? '')
      .sort();
  }

  private async firstReadyNode(ctx: ComponentContext): Promise<string> {
    const nodes = await this.readyNodes(ctx);
    if (nodes.length === 0) throw new NotReadyError('the seed has no Ready Node for etcd');
    return nodes[0]!;
  }

  /** Ready when every workload has its replicas ready and the API server answers /readyz at its address. */
  async wait(spec: ControlPlaneSpec, caPEM: string, ctx: ComponentContext): Promise<void> {
    const notReady = await workloadsNotReady(this.client, spec.name, ctx.signal);
    if (notReady.length > 0) throw new NotReadyError(`control plane workloads not ready: ${notReady.join(', ')}`);
    const url = apiServerURL(spec);
    let reason: string;
    try {
      // Anonymous: /readyz is public, as in every cluster; the CA is the shoot's.
      const probe = await shootGet(url, caPEM, undefined, '/readyz', 2_000);
      if (probe.status === 200) return;
      reason = `HTTP ${probe.status}`;
    } catch (e) {
      reason = (e as Error).message;
    }
    throw new NotReadyError(`kube-apiserver at ${url} is not ready yet (${reason})`);
  }

  /**
   * Hibernation, as Gardener's: kube-controller-manager and kube-scheduler, then kube-apiserver, then etcd scaled to
   * zero. Everything else stays: the Secrets, the Services, and etcd's data on its Node (the StatefulSet stays pinned
   * there), so that a deploy brings back the same cluster.
   */
  async hibernate(namespace: string, ctx: ComponentContext): Promise<void> {
    const order: (readonly [ResourceRef, string])[][] = [
      [
        [Refs.deployment, COMPONENTS.kubeControllerManager.name],
        [Refs.deployment, COMPONENTS.kubeScheduler.name],
      ],
      [[Refs.deployment, COMPONENTS.kubeAPIServer.name]],
      [[Refs.statefulSet, ETCD_NAME]],
    ];
    for (const group of order) {
      await Promise.all(group.map(([ref, name]) => this.scaleToZero(ref, name, namespace, ctx)));
      const running = await this.podsOf(namespace, group, ctx);
      if (running.length > 0) throw new NotReadyError(`waiting for ${running.join(', ')} to stop`);
    }
  }

  private async scaleToZero(ref: ResourceRef, name: string, namespace: string, ctx: ComponentContext): Promise<void> {
    const w = await this.client.get<WorkloadStatus>(ref, name, namespace, { signal: ctx.signal });
    if (w === undefined || w.spec?.replicas === 0) return;
    await this.client.apply(
      ref,
      { apiVersion: 'apps/v1', kind: w.kind, metadata: { name, namespace }, spec: { replicas: 0 } } as KubernetesObject,
      { fieldManager: HIBERNATION_FIELD_MANAGER, force: true, signal: ctx.signal },
    );
  }

  /** The pods (by name) of the workloads that are still there, stopping or not. */
  private async podsOf(
    namespace: string,
    workloads: readonly (readonly [ResourceRef, string])[],
    ctx: ComponentContext,
  ): Promise<string[]> {
    const byName = new Map<string, Record<string, string>>(Object.values(COMPONENTS).map((c) => [c.name, c.labels]));
    const pods: string[] = [];
    for (const [, name] of workloads) {
      const labels = byName.get(name) ?? {};
      const selector = Object.entries(labels)
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      const list = await this.client.list<PodObject>(Refs.pod, {
        namespace,
        labelSelector: selector,
        signal: ctx.signal,
      });
      pods.push(...list.items.map((p) => `pod ${p.metadata?.name ?? '?'}`));
    }
    return pods;
  }

  /** Deletes the workloads and their Secrets; waitCleanup removes etcd's data from the Nodes. */
  async destroy(namespace: string, ctx: ComponentContext): Promise<void> {
    const deletions: [ResourceRef, string][] = [
      [Refs.deployment, COMPONENTS.kubeAPIServer.name],
      [Refs.deployment, COMPONENTS.kubeControllerManager.name],
      [Refs.deployment, COMPONENTS.kubeScheduler.name],
      [Refs.statefulSet, ETCD_NAME],
      [Refs.service, ETCD_CLIENT_SERVICE],
      ...Object.values(COMPONENTS).map((c): [ResourceRef, string] => [Refs.podDisruptionBudget, c.name]),
      ...[...Object.values(COMPONENTS), VPN_SEED].map((c): [ResourceRef, string] => [Refs.secret, c.name]),
    ];
    await Promise.all(deletions.map(([ref, name]) => this.client.delete(ref, name, namespace, { signal: ctx.signal })));
  }

  /**
   * Done when no control plane pod is left and etcd's data is gone from every Ready Node: a pod per Node removes the
   * shoot's folder below ETCD_HOST_DIR (where etcd ran, and anywhere it may have run before); the pods go with the
   * seed namespace.
   */
  async waitCleanup(namespace: string, ctx: ComponentContext): Promise<void> {
    // The seed namespace is deleted only after this was done: a deletion that runs again finds it going or gone.
    const ns = await this.client.get<KubernetesObject>(Refs.namespace, namespace, undefined, { signal: ctx.signal });
    if (ns === undefined || ns.metadata?.deletionTimestamp !== undefined) return;
    const pods = (await this.client.list<PodObject>(Refs.pod, { namespace, signal: ctx.signal })).items;
    const controlPlane = pods.filter((p) => !p.metadata?.name?.startsWith(CLEANUP_POD_PREFIX));
    if (controlPlane.length > 0) {
      throw new NotReadyError(
        `control plane pods still running: ${controlPlane.map((p) => p.metadata?.name).join(', ')}`,
      );
    }
    const pending: string[] = [];
    for (const node of await this.readyNodes(ctx)) {
      const name = `${CLEANUP_POD_PREFIX}${node}`;
      const pod = pods.find((p) => p.metadata?.name === name);
      if (pod === undefined) {
        await this.apply(Refs.pod, etcdCleanupPod(namespace, node, name), ctx);
        pending.push(node);
      } else if (pod.status?.phase === 'Failed') {
        throw new Error(`removing etcd's data from Node ${node} failed (pod ${namespace}/${name})`);
      } else if (pod.status?.phase !== 'Succeeded') {
        pending.push(node);
      }
    }
    if (pending.length > 0) throw new NotReadyError(`removing etcd's data from Nodes ${pending.join(', ')}`);
  }
}

const CLEANUP_POD_PREFIX = 'etcd-data-cleanup-';

/** The workloads of a control plane, etcd first. */
const WORKLOADS: readonly [ResourceRef, string][] = [
  [Refs.statefulSet, ETCD_NAME],
  [Refs.deployment, COMPONENTS.kubeAPIServer.name],
  [Refs.deployment, COMPONENTS.kubeControllerManager.name],
  [Refs.deployment, COMPONENTS.kubeScheduler.name],
];

/** The workloads that lack ready replicas, as `name (ready/wanted ready)`. */
async function workloadsNotReady(client: ResourceClient, namespace: string, signal?: AbortSignal): Promise<string[]> {
  const notReady: string[] = [];
  for (const [ref, name] of WORKLOADS) {
    const w = await client.get<WorkloadStatus>(ref, name, namespace, signal ? { signal } : {});
    const want = w?.spec?.replicas ?? 1;
    if ((w?.status?.readyReplicas ?? 0) < want)
      notReady.push(`${name} (${w?.status?.readyReplicas ?? 0}/${want} ready)`);
  }
  return notReady;
}

/**
 * The care controller's view of a control plane running as workloads: APIServerAvailable from /readyz at the
 * load-balancer address of the shoot's primary family (its CA from the `ca` Secret), ControlPlaneHealthy from the
 * workloads' ready replicas. Undefined while the seed namespace has no control plane.
 */
export async function controlPlaneWorkloadsHealth(
  client: ResourceClient,
  namespace: string,
): Promise<ControlPlaneHealth | undefined> {
  const [service, ca] = await Promise.all([
    client.get<V1Service>(Refs.service, API_SERVER_SERVICE_NAME, namespace),
    client.get<V1Secret>(Refs.secret, CA_SECRET_NAME, namespace),
  ]);
  if (service === undefined || ca === undefined) return undefined;
  const family = service.spec?.ipFamilies?.[0];
  const address = family === 'IPv4' || family === 'IPv6' ? ingressIPsByFamily(service)[family][0] : undefined;
  let apiServer: ControlPlaneHealth['apiServer'];
  if (address === undefined) {
    apiServer = {
      ok: false,
      reason: 'HealthzRequestFailed',
      message: 'the API server has no load-balancer address yet',
    };
  } else {
    const url = `https://${urlHost(address)}:${API_SERVER_PORT}`;
    try {
      const caPEM = Buffer.from(ca.data?.['ca.crt'] ?? '', 'base64').toString('utf8');
      const probe = await shootGet(url, caPEM, undefined, '/readyz', 2_000);
      apiServer =
        probe.status === 200
          ? { ok: true, reason: 'HealthzRequestSucceeded', message: `API server at ${url} is ready.` }
          : {
              ok: false,
              reason: 'HealthzRequestFailed',
              message: `API server at ${url} answered /readyz with HTTP ${probe.status}`,
            };
    } catch (e) {
      apiServer = {
        ok: false,
        reason: 'HealthzRequestFailed',
        message: `API server at ${url} did not answer /readyz: ${(e as Error).message}`,
      };
    }
  }
  const notReady = await workloadsNotReady(client, namespace);
  return {
    apiServer,
    controlPlane:
      notReady.length > 0
        ? { ok: false, reason: 'DeploymentUnhealthy', message: `not ready: ${notReady.join(', ')}` }
        : {
            ok: true,
            reason: 'ControlPlaneRunning',
            message: 'etcd, kube-apiserver, kube-controller-manager and kube-scheduler are ready in the seed.',
          },
  };
}

interface PodObject extends KubernetesObject {
  status?: { phase?: string };
}

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

function refFor(object: KubernetesObject): ResourceRef {
  switch (object.kind) {
    case 'Service':
      return Refs.service;
    case 'StatefulSet':
      return Refs.statefulSet;
    case 'Deployment':
      return Refs.deployment;
    case 'PodDisruptionBudget':
      return Refs.podDisruptionBudget;
    case 'NetworkPolicy':
      return Refs.networkPolicy;
    case 'Secret':
      return Refs.secret;
    case 'Pod':
      return Refs.pod;
    default:
      throw new Error(`no resource for kind ${object.kind}`);
  }
}
