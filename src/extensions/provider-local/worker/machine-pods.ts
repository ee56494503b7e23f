/**
 * provider-local's machines on a real seed: one StatefulSet of machine pods per worker pool, as Gardener's local
 * provider runs its machines as pods of the seed. A machine pod is privileged in a user namespace of its own: it runs
 * containerd, the kubelet and kube-proxy of one shoot Node (machine/pod-agent.ts) as root of that namespace, an
 * unprivileged user of the seed's host, whose cgroups the seed Node delegates to it (machine/cgroup-delegation.ts).
 * It takes its address from the seed's pod network and its node address from the shoot's node range (the pool's
 * slice of it, by ordinal: node-addresses.ts), mounts the pool's user data, runs from a read-only image and keeps its
 * node state (containerd's snapshots, the kubelet's certificate) in an emptyDir.
 *
 * The pod's name is the Node's: `machine-<pool>-<ordinal>`, stable, so a machine pod deleted by hand comes back as the
 * same Node; scaling down removes the highest ordinals, as a MachineDeployment would remove machines.
 */
import type {
  V1NetworkPolicy,
  V1PodTemplateSpec,
  V1ResourceRequirements,
  V1StatefulSet,
} from '@kubernetes/client-node';
import type { Worker, WorkerPool } from '../../../apis/extensions/v1alpha1/worker.js';
import { IMAGES } from '../../../imagevector/images.js';
import { networkPolicyObject } from '../../../apis/core/v1beta1/network-policy.js';
import {
  ALLOWED_SOURCE_PREFIXES_ANNOTATION,
  MACHINE_LABELS,
  MACHINE_POD_ENV,
  MACHINE_POD_MOUNTS,
  MACHINE_READINESS,
} from '../machine-contract.js';

export const WORKER_TYPE = 'local';
/**
 * What a machine reaches under its namespace's `deny-all`, with the seed's egress policies (Gardener's labels): what
 * a cloud machine reaches, DNS, the public and the private networks. Its own paths (to the other machines and
 * kube-apiserver) are provider-local's policies (machinePodNetworkPolicies).
 */
export const MACHINE_NETWORK_LABELS = {
  'networking.gardener.cloud/to-dns': 'allowed',
  'networking.gardener.cloud/to-public-networks': 'allowed',
  'networking.gardener.cloud/to-private-networks': 'allowed',
} as const;
/** Gardener's labels of kube-apiserver's pods, which extensions rely on. */
export const KUBE_APISERVER_POD_LABELS = { app: 'kubernetes', role: 'apiserver' } as const;
export const MACHINE_POLICY_NAMES = {
  machines: 'allow-machine-pods',
  apiServer: 'allow-kube-apiserver-to-machine-pods',
} as const;

/** Over the seed's pod readiness: a machine pod is Ready once its Node is. */
const READINESS_PERIOD_SECONDS = 2;
/** Time to stop the machine's processes (kubelet, containerd and its pods) before the seed kills the pod. */
export const MACHINE_TERMINATION_GRACE_SECONDS = 30;

/**
 * How many machines of a pool start at once, as machine-controller-manager's `maxSurge` bounds a rollout: each one
 * starts containerd, a kubelet and kube-proxy, and a large pool started at once starves the seed's Nodes (none of
 * them gets Ready while all compete).
 */
export const MACHINES_STARTING_AT_ONCE = 3;

/**
 * The replicas of a pool's StatefulSet on the way to `want`: never more than `atOnce` machines not Ready, never
 * fewer than run already (scaling up); scaling down goes to `want` at once.
 */
export function boundedReplicas(
  want: number,
  current: { replicas: number; ready: number },
  atOnce = MACHINES_STARTING_AT_ONCE,
): number {
  if (want <= current.replicas) return want;
  return Math.min(want, Math.max(current.replicas, current.ready + atOnce));
}

export function machineStatefulSetName(pool: string): string {
  return `machine-${pool}`;
}

export interface MachinePodValues {
  readonly namespace: string;
  readonly pool: WorkerPool & { name: string };
  /** The Secret and key of the pool's user data. */
  readonly userData: { readonly name: string; readonly key: string };
  /** @default IMAGES.machine */
  readonly image?: string;
  /** The shoot's node range of each family, in family order: where the machines' node addresses come from. */
  readonly nodeCIDRs: readonly string[];
  /** The index of the pool's first machine in the node ranges (node-addresses.ts). */
  readonly firstMachine: number;
  /** The shoot's region (the Worker's `spec.region`), the Nodes' topology label. */
  readonly region?: string;
  /** How many machines run now: the pool's minimum, or fewer while they start a few at a time. */
  readonly replicas?: number;
  /**
   * Each machine in a user namespace of its own (`hostUsers: false`). Off only for a seed whose Nodes can't run such
   * pods (docs/security.md), and to measure what containment costs (`npm run bench -- machines`). @default true
   */
  readonly userNamespace?: boolean;
  /**
   * The shoot's pod ranges: its pods' traffic leaves the machine with their addresses where the pool has no outgoing
   * NAT, so the seed Node lets the machine pod send from them (ALLOWED_SOURCE_PREFIXES_ANNOTATION, anti-spoofing.ts).
   */
  readonly podCIDRs?: readonly string[];
  /** The machine's CPU and memory, from its machine type (machine-resources.ts). */
  readonly resources: V1ResourceRequirements;
}

/** The StatefulSet of a pool's machine pods. */
export function desiredMachineStatefulSet(values: MachinePodValues): V1StatefulSet {
  const { pool, namespace } = values;
  const name = machineStatefulSetName(pool.name);
  const selector = { [MACHINE_LABELS.app]: MACHINE_LABELS.role, [MACHINE_LABELS.pool]: pool.name };
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace, labels: selector },
    spec: {
      serviceName: name,
      replicas: values.replicas ?? Math.max(0, pool.minimum ?? 0),
      // Machines come and go independently of each other, as a MachineDeployment's.
      podManagementPolicy: 'Parallel',
      // The Worker replaces outdated machines itself, drained first and with a new Node (machine-rollout.ts).
      updateStrategy: { type: 'OnDelete' },
      selector: { matchLabels: selector },
      template: machinePodTemplate(values, selector),
    },
  };
}

function machinePodTemplate(values: MachinePodValues, selector: Record<string, string>): V1PodTemplateSpec {
  return {
    metadata: {
      labels: { ...selector, ...MACHINE_NETWORK_LABELS },
      ...(values.podCIDRs !== undefined && values.podCIDRs.length > 0
        ? { annotations: { [ALLOWED_SOURCE_PREFIXES_ANNOTATION]: JSON.stringify(values.podCIDRs) } }
        : {}),
    },
    spec: {
      // Machines of a pool spread over the seed's Nodes where they can.
      affinity: {
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              weight: 100,
              podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: selector } },
            },
          ],
        },
      },
      // Root in the machine, and in every pod on it, is an unprivileged user of the seed's host.
      ...(values.userNamespace === false ? {} : { hostUsers: false }),
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      terminationGracePeriodSeconds: MACHINE_TERMINATION_GRACE_SECONDS,
      containers: [
        {
          name: 'machine',
          image: values.image ?? IMAGES.machine,
          imagePullPolicy: 'IfNotPresent',
          args: ['machine', `--user-data=${MACHINE_POD_MOUNTS.userData}`],
          env: [
            { name: MACHINE_POD_ENV.nodeName, valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: MACHINE_POD_ENV.podIPs, valueFrom: { fieldRef: { fieldPath: 'status.podIPs' } } },
            { name: MACHINE_POD_ENV.nodeCIDRs, value: values.nodeCIDRs.join(',') },
            { name: MACHINE_POD_ENV.firstMachine, value: String(values.firstMachine) },
            ...(values.pool.zones !== undefined && values.pool.zones.length > 0
              ? [{ name: MACHINE_POD_ENV.zones, value: values.pool.zones.join(',') }]
              : []),
            ...(values.region ? [{ name: MACHINE_POD_ENV.region, value: values.region }] : []),
          ],
          // A node: its own containers, mounts, cgroups and kernel settings of its network namespace, all in
          // the pod's user namespace (hostUsers above). Its image is read-only: what it writes is on volumes.
          securityContext: { privileged: true, readOnlyRootFilesystem: true },
          // Why the agent stopped, in the pod's status: its own last words, else the end of its log.
          terminationMessagePath: MACHINE_POD_MOUNTS.terminationLog,
          terminationMessagePolicy: 'FallbackToLogsOnError',
          // Over the network: the seed runs nothing inside a machine.
          ports: [{ name: 'readiness', containerPort: MACHINE_READINESS.port, protocol: 'TCP' }],
          readinessProbe: {
            httpGet: { path: MACHINE_READINESS.path, port: 'readiness' },
            periodSeconds: READINESS_PERIOD_SECONDS,
          },
          resources: values.resources,
          volumeMounts: [
            { name: 'user-data', mountPath: dirOf(MACHINE_POD_MOUNTS.userData), readOnly: true },
            { name: 'state', mountPath: MACHINE_POD_MOUNTS.stateDir },
            { name: 'tmp', mountPath: MACHINE_POD_MOUNTS.tmpDir },
          ],
        },
      ],
      volumes: [
        {
          name: 'user-data',
          secret: {
            secretName: values.userData.name,
            items: [{ key: values.userData.key, path: baseOf(MACHINE_POD_MOUNTS.userData) }],
          },
        },
        // containerd's overlay snapshots need a filesystem that is no overlay itself.
        { name: 'state', emptyDir: {} },
        { name: 'tmp', emptyDir: {} },
      ],
    },
  };
}

/** The user data Secret of a pool, or why it has none. */
export function userDataOf(pool: WorkerPool): { name: string; key: string } | string {
  const ref = pool.userDataSecretRef;
  if (!ref?.name || !ref.key) return `pool ${pool.name ?? '?'}: spec.pools[].userDataSecretRef needs name and key`;
  return { name: ref.name, key: ref.key };
}

/** The Worker's pools with names, in order. */
export function namedPools(worker: Worker): (WorkerPool & { name: string })[] {
  return (worker.spec.pools ?? []).filter((p): p is WorkerPool & { name: string } => typeof p.name === 'string');
}

function dirOf(path: string): string {
  return path.slice(0, path.lastIndexOf('/'));
}

function baseOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/**
 * provider-local's NetworkPolicies of a shoot's namespace: machines talk to each other and to kube-apiserver's pods
 * (their overlay and its API), and kube-apiserver's pods to them (its side of the overlay: webhooks, `pods/proxy`,
 * logs and exec in the shoot travel in it), whatever else `deny-all` forbids.
 */
export function machinePodNetworkPolicies(namespace: string): V1NetworkPolicy[] {
  const machines = { podSelector: { matchLabels: { [MACHINE_LABELS.app]: MACHINE_LABELS.role } } };
  const apiServer = { podSelector: { matchLabels: { ...KUBE_APISERVER_POD_LABELS } } };
  const labels = { 'app.kubernetes.io/managed-by': 'provider-local' };
  const policy = (name: string, description: string, selected: object, peers: object[]): V1NetworkPolicy =>
    networkPolicyObject({ name, namespace, labels }, description, {
      ...selected,
      policyTypes: ['Ingress', 'Egress'],
      ingress: [{ from: peers }],
      egress: [{ to: peers }],
    });
  return [
    policy(
      MACHINE_POLICY_NAMES.machines,
      'Allows traffic between the machine pods, and between them and kube-apiserver.',
      machines,
      [machines, apiServer],
    ),
    policy(
      MACHINE_POLICY_NAMES.apiServer,
      "Allows traffic between kube-apiserver and the machine pods (its side of the machines' overlay).",
      apiServer,
      [machines],
    ),
  ];
}
