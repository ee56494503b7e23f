/**
 * Deploys, waits for, hibernates and destroys the shoot's control plane workloads in its seed namespace (the objects
 * of controlplane/workloads.ts, network-policies.ts and secrets.ts), and reports their health to the care controller.
 */
import {
  COMPONENTS,
  ETCD_CLIENT_SERVICE,
  ETCD_NAME,
  INPUTS_ANNOTATION,
  VPN_SEED,
  type ControlPlaneWorkloadValues,
} from './names.js';
import { desiredControlPlaneWorkloads, etcdCleanupPod } from './workloads.js';
import { healthOf } from '../../../resourcemanager/objects.js';
import { certificateInputsHash, controlPlaneSecrets } from './secrets.js';
import type { KubernetesObject, V1Secret } from '@kubernetes/client-node';
import type { Shoot } from '../../../../apis/core/v1beta1/shoot.js';
import { apiServerURL, type ControlPlaneSpec } from './args.js';
import type { ControlPlaneSecrets } from './certificates.js';
import { shootGet } from '../../shoot-get.js';
import type { IPFamily } from '../../../../net/cidr.js';
import { issueCertificate, type CertificatePair } from '../../../../pki/certificates.js';
import type { Lease } from '../../../../runtime/leader-election.js';
import { LEADING_CONTROLLERS, notLeading, type ControllerPod } from './leadership.js';
import type { ResourceClient } from '../../../../runtime/client.js';
import { type ResourceRef, Refs } from '../../../../apis/refs.js';
import { NotReadyError, retryWhileNotReady, type ComponentContext } from '../../../component.js';
import { realClock } from '../../../../runtime/clock.js';
import { formatLabelSelector } from '../../../../apis/meta/label-selector.js';
import { FIELD_MANAGER, shootLabels } from '../../../../apis/core/v1beta1/names.js';

/** How long a deploy waits for kube-apiserver before the controllers; then the reconcile comes back later. */
const API_SERVER_READY_TIMEOUT_MS = 90_000;
const API_SERVER_POLL_MS = 1_000;
/**
 * Who scales the workloads to zero for hibernation: a field manager of its own, whose `replicas` the next deploy's
 * forced apply takes over again.
 */
const HIBERNATION_FIELD_MANAGER = 'gardenlet-hibernation';

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
    await retryWhileNotReady(
      async () => {
        const d = await this.client.get<WorkloadStatus>(Refs.deployment, COMPONENTS.kubeAPIServer.name, namespace, {
          signal: ctx.signal,
        });
        if ((d?.status?.readyReplicas ?? 0) === 0) {
          throw new NotReadyError('kube-controller-manager and kube-scheduler wait for kube-apiserver to be ready');
        }
      },
      { clock: realClock, forMs: API_SERVER_READY_TIMEOUT_MS, intervalMs: API_SERVER_POLL_MS, signal: ctx.signal },
    );
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

  /**
   * Ready when every workload is rolled out (its replicas ready, no pod of an earlier template left), the API server
   * answers /readyz at its address, and a current pod of each controller leads (controlplane/leadership.ts).
   */
  async wait(spec: ControlPlaneSpec, ca: CertificatePair, ctx: ComponentContext): Promise<void> {
    const notReady = await workloadsNotReady(this.client, spec.name, ctx.signal);
    if (notReady.length > 0) throw new NotReadyError(`control plane workloads not ready: ${notReady.join(', ')}`);
    const url = apiServerURL(spec);
    let reason: string;
    try {
      // Anonymous: /readyz is public, as in every cluster; the CA is the shoot's.
      const probe = await shootGet(url, ca.certPEM, undefined, '/readyz', 2_000);
      if (probe.status === 200) return await this.waitForLeaders(spec.name, url, ca, ctx);
      reason = `HTTP ${probe.status}`;
    } catch (e) {
      if (e instanceof NotReadyError) throw e;
      reason = (e as Error).message;
    }
    throw new NotReadyError(`kube-apiserver at ${url} is not ready yet (${reason})`);
  }

  private async waitForLeaders(namespace: string, url: string, ca: CertificatePair, ctx: ComponentContext) {
    const credentials = await issueCertificate(ca, {
      commonName: 'gardener-ipv6:gardenlet',
      organizations: ['system:masters'],
      usages: ['client'],
      notAfter: new Date(Date.now() + 5 * 60_000),
    });
    const reasons: string[] = [];
    for (const controller of LEADING_CONTROLLERS) {
      const path = `/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/${controller.name}`;
      const [answer, pods] = await Promise.all([
        shootGet(url, ca.certPEM, credentials, path, 5_000),
        this.client.list<ControllerPod>(Refs.pod, {
          namespace,
          labelSelector: formatLabelSelector({ matchLabels: controller.labels }),
          signal: ctx.signal,
        }),
      ]);
      if (answer.status !== 200 && answer.status !== 404) {
        throw new NotReadyError(`reading the Lease of ${controller.name}: HTTP ${answer.status}`);
      }
      const lease = answer.status === 200 ? (JSON.parse(answer.body) as Lease) : undefined;
      const reason = notLeading(controller.name, lease, pods.items, new Date());
      if (reason !== undefined) reasons.push(reason);
    }
    if (reasons.length > 0) throw new NotReadyError(reasons.join('; '));
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
      const list = await this.client.list<PodObject>(Refs.pod, {
        namespace,
        labelSelector: formatLabelSelector({ matchLabels: byName.get(name) ?? {} }),
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
   * shoot's folder below ETCD_HOST_DIR (where etcd ran, and anywhere it may have run before), as soon as etcd's pod is
   * gone (while the other pods still stop); the pods go with the seed namespace.
   */
  async waitCleanup(namespace: string, ctx: ComponentContext): Promise<void> {
    // The seed namespace is deleted only after this was done: a deletion that runs again finds it going or gone.
    const ns = await this.client.get<KubernetesObject>(Refs.namespace, namespace, undefined, { signal: ctx.signal });
    if (ns === undefined || ns.metadata?.deletionTimestamp !== undefined) return;
    const pods = (await this.client.list<PodObject>(Refs.pod, { namespace, signal: ctx.signal })).items;
    const controlPlane = pods.filter((p) => !p.metadata?.name?.startsWith(CLEANUP_POD_PREFIX));
    const running = `control plane pods still running: ${controlPlane.map((p) => p.metadata?.name).join(', ')}`;
    // etcd's data goes once etcd stopped writing it.
    if (controlPlane.some(isEtcdPod)) throw new NotReadyError(running);
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
    const waiting = [
      ...(controlPlane.length > 0 ? [running] : []),
      ...(pending.length > 0 ? [`removing etcd's data from Nodes ${pending.join(', ')}`] : []),
    ];
    if (waiting.length > 0) throw new NotReadyError(waiting.join('; '));
  }
}

/** A pod of etcd's StatefulSet (by its labels). */
function isEtcdPod(pod: KubernetesObject): boolean {
  const labels = pod.metadata?.labels ?? {};
  return Object.entries(COMPONENTS.etcd.labels).every(([key, value]) => labels[key] === value);
}

const CLEANUP_POD_PREFIX = 'etcd-data-cleanup-';

/** The workloads of a control plane, etcd first. */
const WORKLOADS: readonly [ResourceRef, string][] = [
  [Refs.statefulSet, ETCD_NAME],
  [Refs.deployment, COMPONENTS.kubeAPIServer.name],
  [Refs.deployment, COMPONENTS.kubeControllerManager.name],
  [Refs.deployment, COMPONENTS.kubeScheduler.name],
];

/** The workloads not rolled out yet (replicas not ready, or pods of an earlier template left), with why. */
export async function workloadsNotReady(
  client: ResourceClient,
  namespace: string,
  signal?: AbortSignal,
): Promise<string[]> {
  const notReady: string[] = [];
  for (const [ref, name] of WORKLOADS) {
    const w = await client.get<WorkloadStatus>(ref, name, namespace, signal ? { signal } : {});
    if (w === undefined) {
      notReady.push(`${name} (not there)`);
      continue;
    }
    const health = healthOf(w);
    if (!health.healthy || health.progressing) notReady.push(health.message ?? name);
  }
  return notReady;
}

interface PodObject extends KubernetesObject {
  status?: { phase?: string };
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
