/**
 * The shoot's machines through the extension contract, as Gardener's `worker` component: the gardenlet writes the
 * `Worker` `<shoot>` in the seed namespace, one user data Secret per pool that the Worker's pools reference (what a
 * machine boots with: the API server, the bootstrap token, the networks, the worker OperatingSystemConfig's files
 * and the pool's kernel settings), and waits until the provider reports the Worker reconciled and the shoot has
 * every Node Ready, running its pool's latest user data (the checksums of machine-user-data.ts). The provider
 * (provider-local's Worker controller) is never called directly; it reaches the shoot (to drain the Nodes of machines
 * that go) through the seed namespace's `gardener` Secret, written before the Worker. The care controller's checks of
 * the machines are in ../care/machines.ts.
 */
import { networkFamiliesInEffect } from '../../../apis/core/v1beta1/dual-stack-migration.js';
import type { KubernetesObject, V1Secret } from '@kubernetes/client-node';
import type { NetworkingStatus, Shoot } from '../../../apis/core/v1beta1/shoot.js';
import { API_VERSION } from '../../../apis/extensions/v1alpha1/common.js';
import type { OperatingSystemConfig } from '../../../apis/extensions/v1alpha1/operatingsystemconfig.js';
import type { Worker } from '../../../apis/extensions/v1alpha1/worker.js';
import {
  MACHINE_USER_DATA_API_VERSION,
  NODE_APPLIED_USER_DATA_ANNOTATION,
  USER_DATA_KEY,
  userDataChecksum,
  workerUserDataAnnotation,
  MACHINE_FAMILIES_ANNOTATION,
  type MachineUserDataInput,
  type PodNetworkPool,
} from '../../../apis/provider-local/v1alpha1/machine-user-data.js';
import { shootIPFamilies } from '../../../apis/core/v1beta1/helpers.js';
import { CALICO_TYPE } from '../../../apis/calico/v1alpha1/config.js';
import { decodeNetworkConfig } from '../../../apis/calico/v1alpha1/config.js';
import { calicoPoolSettings, calicoSNATToUpstreamDNS } from '../../../apis/calico/v1alpha1/pools.js';
import type { ResourceClient } from '../../../runtime/client.js';
import { applyAll, deleteAll } from '../../apply.js';
import { ErrorWithCodes, NotReadyError, type ComponentContext, type DeployWaiter } from '../../component.js';
import {
  Annotations,
  OPERATION_RECONCILE,
  seedNamespaceName,
  shootLabels,
  WORKER_POOL_LABEL,
} from '../../../apis/core/v1beta1/names.js';
import { Refs } from '../../../apis/refs.js';
import { ensureShootAccessSecret, shootAdminClient, shootAPIServerURL } from '../shoot-client.js';
import { effectiveKubeletConfig } from './kubelet-config.js';
import { machineNetworking, operatingSystemConfigName, workerPools } from './workers.js';

export const WORKER_TYPE = 'local';

export function userDataSecretName(pool: string): string {
  return `worker-user-data-${pool}`;
}

export interface WorkerValues {
  readonly shoot: Shoot;
  readonly networking: NetworkingStatus;
  readonly apiServerURL: string;
  readonly caPEM: string;
  readonly bootstrapToken: string;
  /** Each pool's files: those of its worker OperatingSystemConfig. */
  readonly files: ReadonlyMap<string, NonNullable<OperatingSystemConfig['spec']['files']>>;
}

/**
 * The pod network settings the machines put in force: calico's pools per family as the shoot's NetworkConfig decides
 * them (the same computation as the calico manifests'), and whether the pods' DNS to the machines' upstream resolvers
 * is masqueraded (`snatToUpstreamDNS`), for machines stand in for calico-node here. Carried in the user data, so a
 * change is rolled out by this component like every machine setting. Another networking type, or a providerConfig
 * the admission would refuse: none (routed directly, masqueraded, no DNS rule).
 */
export function podNetworkSettings(shoot: Shoot): { pools: PodNetworkPool[]; snatToUpstreamDNS: boolean } {
  const none = { pools: [], snatToUpstreamDNS: false };
  const networking = shoot.spec.networking;
  if (networking?.type !== CALICO_TYPE) return none;
  // As calico's: one family until a dual-stack migration's Nodes have both (dual-stack-migration.ts).
  const families = networkFamiliesInEffect(shootIPFamilies(shoot), shoot);
  const { config, errors } = decodeNetworkConfig(networking.providerConfig, families);
  if (errors.length > 0) return none;
  return {
    pools: calicoPoolSettings(config, families).map((p) => ({ ...p })),
    snatToUpstreamDNS: calicoSNATToUpstreamDNS(config),
  };
}

/** Each pool's user data. */
export function desiredUserData(values: WorkerValues): Map<string, MachineUserDataInput> {
  const { families, podCIDRs, serviceCIDRs, clusterDNS } = machineNetworking(values.shoot, values.networking);
  const podNetwork = podNetworkSettings(values.shoot);
  return new Map(
    workerPools(values.shoot).map((pool) => [
      pool.name,
      {
        apiVersion: MACHINE_USER_DATA_API_VERSION,
        kind: 'MachineUserData',
        apiServer: { url: values.apiServerURL, caPEM: values.caPEM },
        bootstrapToken: values.bootstrapToken,
        families,
        clusterDNS,
        podCIDRs,
        serviceCIDRs,
        podNetwork,
        files: values.files.get(pool.name) ?? [],
        sysctls: pool.sysctls ?? {},
      },
    ]),
  );
}

/** The Worker of the shoot, with its pools' machine settings and user data references. */
export function desiredWorker(shoot: Shoot): Worker {
  return {
    apiVersion: API_VERSION,
    kind: 'Worker',
    metadata: { name: shoot.metadata.name ?? '', namespace: seedNamespaceName(shoot), labels: shootLabels(shoot) },
    spec: {
      type: WORKER_TYPE,
      region: shoot.spec.region ?? 'local',
      secretRef: { name: 'cloudprovider', namespace: seedNamespaceName(shoot) },
      pools: (shoot.spec.provider?.workers ?? []).map((w) => {
        const image = w.machine?.image as { name?: string; version?: string } | undefined;
        const kubelet = effectiveKubeletConfig(shoot, w);
        return {
          name: w.name,
          machineType: (w.machine as { type?: string } | undefined)?.type ?? 'local',
          machineImage: { name: image?.name ?? 'local', version: image?.version ?? '1.0.0' },
          minimum: w.minimum ?? 0,
          maximum: w.maximum ?? w.minimum ?? 0,
          userDataSecretRef: { name: userDataSecretName(w.name), key: USER_DATA_KEY },
          ...(shoot.spec.kubernetes?.version ? { kubernetesVersion: shoot.spec.kubernetes.version } : {}),
          // As Gardener's Worker: the pool's effective kubelet settings, for the provider to judge its machines by.
          ...(kubelet !== undefined ? { kubeletConfig: kubelet } : {}),
          // machine-controller-manager's settings (the drain timeout), as Gardener copies them.
          ...(w.machineControllerManager ? { machineControllerManager: w.machineControllerManager } : {}),
          // The zones the provider spreads the pool's machines over.
          ...(w.zones !== undefined && w.zones.length > 0 ? { zones: w.zones } : {}),
        };
      }),
    },
  };
}

/** The user data Secrets of pools the Worker had and the shoot no longer has. */
export function staleUserDataSecrets(previous: Pick<Worker, 'spec'> | undefined, shoot: Shoot): string[] {
  const wanted = new Set(workerPools(shoot).map((p) => p.name));
  return (previous?.spec.pools ?? [])
    .map((p) => p.name)
    .filter((name): name is string => typeof name === 'string' && !wanted.has(name))
    .map(userDataSecretName);
}

/**
 * Throws until the provider reconciled the Worker since it was last asked to (Gardener's operation annotation gone,
 * its generation observed, `Succeeded`): NotReadyError, or the provider's error with its codes (a machine that can't
 * start, named with its cause; the provider keeps trying, so does the reconcile).
 */
function assertReconciled(worker: (Worker & KubernetesObject) | undefined, shoot: Shoot): void {
  const last = worker?.status?.lastOperation;
  const current = worker?.status?.observedGeneration === worker?.metadata.generation;
  const asked = worker?.metadata.annotations?.[Annotations.operation] === OPERATION_RECONCILE;
  const lastError = worker?.status?.lastError;
  if (current && (last?.state === 'Error' || last?.state === 'Failed') && lastError?.description) {
    throw new ErrorWithCodes(
      `Worker ${seedNamespaceName(shoot)}/${shoot.metadata.name ?? ''} reports ${last.state}: ${lastError.description}`,
      lastError.codes ?? [],
    );
  }
  if (!current || last?.state !== 'Succeeded') {
    throw new NotReadyError(`Worker: ${last ? `${last.state}: ${last.description}` : 'not reconciled yet'}`);
  }
  if (asked) throw new NotReadyError('Worker: not reconciled yet since it was last asked to');
}

/** What the machines boot with from the shoot's secrets (the flow's `deploy-secrets`): only `deploy` needs them. */
export interface MachineSecrets {
  readonly caPEM: string;
  /** `<id>.<secret>` */
  readonly bootstrapToken: string;
}

export class ShootWorker implements DeployWaiter {
  private readonly shootClient: (ctx: ComponentContext) => Promise<ResourceClient>;

  constructor(
    private readonly client: ResourceClient,
    private readonly shoot: Shoot,
    private readonly networking: NetworkingStatus,
    private readonly opts: {
      readonly secrets?: MachineSecrets;
      /** A client of the shoot's API server, closed after use. @default the shoot's admin client */
      readonly shootClient?: (ctx: ComponentContext) => Promise<ResourceClient>;
    } = {},
  ) {
    this.shootClient = opts.shootClient ?? ((ctx) => shootAdminClient(client, shoot, ctx));
  }

  async deploy(ctx: ComponentContext): Promise<void> {
    const namespace = seedNamespaceName(this.shoot);
    // As gardener-node-agent: a machine boots with the OperatingSystemConfig the seed holds, never without one.
    const files = new Map<string, NonNullable<OperatingSystemConfig['spec']['files']>>();
    for (const pool of workerPools(this.shoot)) {
      const oscName = operatingSystemConfigName(this.shoot, pool.name);
      const osc = await this.client.get<OperatingSystemConfig & KubernetesObject>(
        Refs.operatingSystemConfig,
        oscName,
        namespace,
        { signal: ctx.signal },
      );
      if (osc === undefined)
        throw new NotReadyError(`OperatingSystemConfig ${namespace}/${oscName} does not exist yet`);
      files.set(pool.name, osc.spec.files ?? []);
    }
    const machineSecrets = this.opts.secrets;
    if (machineSecrets === undefined) throw new Error("the Worker's machines need the shoot's CA and bootstrap token");
    const apiServerURL = await shootAPIServerURL(this.client, this.shoot, ctx);
    const userData = desiredUserData({
      shoot: this.shoot,
      networking: this.networking,
      apiServerURL,
      ...machineSecrets,
      files,
    });
    const texts = [...userData].map(([pool, data]) => [pool, JSON.stringify(data)] as const);
    const secrets: V1Secret[] = texts.map(([pool, text]) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: userDataSecretName(pool), namespace, labels: shootLabels(this.shoot) },
      type: 'Opaque',
      stringData: { [USER_DATA_KEY]: text },
    }));
    const worker = desiredWorker(this.shoot);
    // The provider reads the shoot from its Cluster too (its machines' networks, hibernation): reconciled at each deploy.
    worker.metadata.annotations = {
      ...Object.fromEntries(texts.map(([pool, text]) => [workerUserDataAnnotation(pool), userDataChecksum(text)])),
      [Annotations.operation]: OPERATION_RECONCILE,
      [MACHINE_FAMILIES_ANNOTATION]: machineNetworking(this.shoot, this.networking).families.join(','),
    };
    const previous = await this.client.get<Worker & KubernetesObject>(
      Refs.worker,
      this.shoot.metadata.name ?? '',
      namespace,
      { signal: ctx.signal },
    );
    await applyAll(this.client, Refs.secret, secrets, ctx);
    // Before the Worker: the provider drains the Nodes of machines that go through it.
    await ensureShootAccessSecret(this.client, this.shoot, ctx);
    await applyAll(this.client, Refs.worker, [worker], ctx);
    // The user data of pools the shoot no longer has: their machines go with the Worker's new spec.
    await deleteAll(this.client, Refs.secret, staleUserDataSecrets(previous, this.shoot), namespace, ctx);
  }

  /** Ready when the provider reconciled the Worker and the shoot has every Node Ready on its pool's latest user data. */
  async wait(ctx: ComponentContext): Promise<void> {
    const worker = await this.getWorker(ctx);
    assertReconciled(worker, this.shoot);
    const shootClient = await this.shootClient(ctx);
    try {
      // The Nodes of machines scaled away are the provider's to delete (as machine-controller-manager's): it reports
      // Succeeded once they are gone.
      const nodes = await shootClient.list<NodeStatus>(Refs.node, { signal: ctx.signal });
      // Pools at minimum 0 (to be scaled up later): nothing to be Ready.
      if (workerPools(this.shoot).every((p) => p.minimum <= 0)) return;
      const notReady = notReadyNodes(nodes.items);
      if (notReady.length > 0) throw new NotReadyError(`Nodes not Ready yet: ${notReady.join(', ')}`);
      const behind = nodesBehindUserData(nodes.items, this.shoot, worker?.metadata.annotations ?? {});
      if (behind.length > 0) {
        throw new NotReadyError(`Nodes not running their pool's latest user data yet: ${behind.join(', ')}`);
      }
    } finally {
      shootClient.close();
    }
  }

  private getWorker(ctx: ComponentContext): Promise<(Worker & KubernetesObject) | undefined> {
    return this.client.get<Worker & KubernetesObject>(
      Refs.worker,
      this.shoot.metadata.name ?? '',
      seedNamespaceName(this.shoot),
      { signal: ctx.signal },
    );
  }

  /**
   * Asks the provider to reconcile the Worker once more, as the gardenlet's deploy does, when a hibernation leaves its
   * spec as it is: the provider reads the hibernation from the Cluster and stops every machine. Nothing without a
   * Worker (a shoot hibernated before it had one).
   */
  async stopMachines(ctx: ComponentContext): Promise<void> {
    const name = this.shoot.metadata.name ?? '';
    const namespace = seedNamespaceName(this.shoot);
    const worker = await this.client.get<KubernetesObject>(Refs.worker, name, namespace, { signal: ctx.signal });
    if (worker === undefined) return;
    await this.client.mergePatch(
      Refs.worker,
      name,
      namespace,
      { metadata: { annotations: { [Annotations.operation]: OPERATION_RECONCILE } } },
      { signal: ctx.signal },
    );
  }

  /**
   * Hibernated once the provider reconciled the Worker for the hibernation (it reports `Succeeded` once no machine is
   * left, as Gardener's worker actuators with every pool at zero) and no machine's Node is left in the shoot: the
   * provider deletes the Node of a machine it stopped, as machine-controller-manager does, while the API server still
   * answers, so that machines that come back at wake-up register anew.
   */
  async waitHibernated(ctx: ComponentContext): Promise<void> {
    const namespace = seedNamespaceName(this.shoot);
    const worker = await this.getWorker(ctx);
    if (worker !== undefined) assertReconciled(worker, this.shoot);
    const apiServer = await this.client.get<{ status?: { readyReplicas?: number } } & KubernetesObject>(
      Refs.deployment,
      'kube-apiserver',
      namespace,
      { signal: ctx.signal },
    );
    // The control plane is hibernated already: its Nodes went before it.
    if ((apiServer?.status?.readyReplicas ?? 0) === 0) return;
    const shootClient = await this.shootClient(ctx);
    try {
      const nodes = await shootClient.list(Refs.node, { signal: ctx.signal });
      const machines = nodes.items
        .filter((n) => n.metadata?.labels?.[WORKER_POOL_LABEL] !== undefined)
        .map((n) => n.metadata?.name ?? '');
      if (machines.length > 0) {
        throw new NotReadyError(`waiting for the provider to delete the Nodes of the machines: ${machines.join(', ')}`);
      }
    } finally {
      shootClient.close();
    }
  }

  async destroy(ctx: ComponentContext): Promise<void> {
    await this.client.delete(Refs.worker, this.shoot.metadata.name ?? '', seedNamespaceName(this.shoot), {
      signal: ctx.signal,
    });
  }

  /** Gone when the provider removed its finalizer (its machines stopped); then the user data goes too. */
  async waitCleanup(ctx: ComponentContext): Promise<void> {
    const namespace = seedNamespaceName(this.shoot);
    const worker = await this.client.get(Refs.worker, this.shoot.metadata.name ?? '', namespace, {
      signal: ctx.signal,
    });
    if (worker !== undefined) throw new NotReadyError('waiting for the Worker to be deleted (its machines to stop)');
    await deleteAll(
      this.client,
      Refs.secret,
      workerPools(this.shoot).map((p) => userDataSecretName(p.name)),
      namespace,
      ctx,
    );
  }
}

export interface NodeStatus extends KubernetesObject {
  status?: { conditions?: { type: string; status: string; message?: string }[] };
}

/**
 * The pools' Nodes (by their `worker.gardener.cloud/pool` label, which the kubelet registers them with from the user
 * data) whose applied user data (NODE_APPLIED_USER_DATA_ANNOTATION) is not their pool's latest as the Worker's
 * annotations say it, and the pools with fewer Nodes than their minimum; a pool without a checksum there is not
 * judged. Read once the Worker reports Succeeded: the Nodes of machines scaled away are gone by then.
 */
export function nodesBehindUserData(
  nodes: readonly KubernetesObject[],
  shoot: Shoot,
  workerAnnotations: Readonly<Record<string, string>>,
): string[] {
  return workerPools(shoot).flatMap((pool) => {
    const want = workerAnnotations[workerUserDataAnnotation(pool.name)];
    if (want === undefined) return [];
    const ofPool = nodes.filter((n) => n.metadata?.labels?.[WORKER_POOL_LABEL] === pool.name);
    const behind = ofPool
      .filter((n) => n.metadata?.annotations?.[NODE_APPLIED_USER_DATA_ANNOTATION] !== want)
      .map((n) => n.metadata?.name ?? '');
    const minimum = Math.max(0, pool.minimum);
    const missing = ofPool.length < minimum ? [`pool ${pool.name}: ${ofPool.length} of ${minimum} Nodes`] : [];
    return [...behind.sort(), ...missing];
  });
}

/**
 * The Nodes whose Ready condition is not True, each named with what its other conditions say is wrong: those that
 * are `True` (MemoryPressure, or a node agent's own such as node-problem-detector's or provider-local's
 * `MachineProcessCrashLooping`, whose message says which process keeps exiting and why), e.g. `machine-w-0
 * (MachineProcessCrashLooping: kubelet keeps exiting (5 times), last exited with code 1: ...)`.
 */
export function notReadyNodes(nodes: readonly NodeStatus[]): string[] {
  return nodes
    .filter((n) => !n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
    .map((n) => {
      const problems = (n.status?.conditions ?? [])
        .filter((c) => c.type !== 'Ready' && c.status === 'True')
        .map((c) => (c.message ? `${c.type}: ${c.message}` : c.type));
      return `${n.metadata?.name ?? ''}${problems.length > 0 ? ` (${problems.join('; ')})` : ''}`;
    });
}
