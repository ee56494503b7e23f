/**
 * Wiring of provider-local's Worker controller: Workers of type `local`, their machine StatefulSets (a machine
 * that becomes ready or goes away is news for its Worker's status at once), and the Clusters (a shoot hibernated or
 * woken up, or a machine type resized in its CloudProfile, changes its machines, not its Worker).
 */
import type { KubernetesObject, V1StatefulSet } from '@kubernetes/client-node';
import { Refs } from '../../../apis/refs.js';
import { requestFor, type Controller } from '../../../runtime/controller.js';
import type { Manager } from '../../../runtime/manager.js';
import { specOrMetadataChanged } from '../../../runtime/predicates.js';
import { MACHINE_LABELS } from '../machine-contract.js';
import { isLocalWorker, WorkerReconciler } from './reconciler.js';
import { clusterMachineTypes, type MachineOvercommit } from './machine-resources.js';
import { clusterHibernationEnabled, type Cluster } from '../../../apis/extensions/v1alpha1/cluster.js';

export const WORKER_CONTROLLER_NAME = 'provider-local-worker';

export interface WorkerControllerOptions {
  readonly workers?: number;
  /** The machine image, when not the image vector's. */
  readonly image?: string;
  /** How long a machine that goes is drained at most, unless its pool says. @default DEFAULT_DRAIN_TIMEOUT_MS */
  readonly drainTimeoutMs?: number;
  /** Machine pods in user namespaces of their own (machine-pods.ts). @default true */
  readonly machineUserNamespaces?: boolean;
  /** What the seed reserves for a machine (machine-resources.ts). @default DEFAULT_MACHINE_OVERCOMMIT */
  readonly machineOvercommit?: MachineOvercommit;
}

export function addWorkerController(manager: Manager, options: WorkerControllerOptions = {}): Controller {
  const { client, clock } = manager;
  const workers = manager.informer<KubernetesObject>(Refs.worker);
  const statefulSets = manager.informer<KubernetesObject>(Refs.statefulSet);
  const workersOfNamespace = (s: KubernetesObject) =>
    s.metadata?.labels?.[MACHINE_LABELS.app] === MACHINE_LABELS.role
      ? workers
          .list()
          .filter((w) => w.metadata?.namespace === s.metadata?.namespace && isLocalWorker(w))
          .map(requestFor)
      : [];
  const clusters = manager.informer<KubernetesObject>(Refs.cluster);
  // A Cluster is named after its seed namespace.
  const workersOfCluster = (c: KubernetesObject) =>
    workers
      .list()
      .filter((w) => w.metadata?.namespace === c.metadata?.name && isLocalWorker(w))
      .map(requestFor);
  // What of a Cluster changes machines: the shoot's hibernation, and the CloudProfile's machine types (their sizes).
  const machineTypes = (c: KubernetesObject) =>
    JSON.stringify(clusterMachineTypes((c as unknown as Cluster).spec?.cloudProfile));
  const machinesChanged = (c: KubernetesObject, old: KubernetesObject) =>
    clusterHibernationEnabled(c as unknown as Cluster) !== clusterHibernationEnabled(old as unknown as Cluster) ||
    machineTypes(c) !== machineTypes(old);
  return manager
    .controller({
      name: WORKER_CONTROLLER_NAME,
      reconciler: new WorkerReconciler({
        client,
        clock,
        ...(options.image ? { image: options.image } : {}),
        ...(options.drainTimeoutMs !== undefined ? { drainTimeoutMs: options.drainTimeoutMs } : {}),
        ...(options.machineUserNamespaces === false ? { machineUserNamespaces: false } : {}),
        ...(options.machineOvercommit ? { machineOvercommit: options.machineOvercommit } : {}),
        statefulSet: (name, namespace) => statefulSets.get(name, namespace) as V1StatefulSet | undefined,
      }),
      ...(options.workers ? { workers: options.workers } : {}),
    })
    .watch(workers, (w) => (isLocalWorker(w) ? [requestFor(w)] : []), specOrMetadataChanged)
    .watch(statefulSets, workersOfNamespace)
    .watch(clusters, workersOfCluster, machinesChanged);
}
