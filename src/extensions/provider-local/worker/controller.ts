/**
 * Wiring of provider-local's Worker controller: Workers of type `local`, and their machine StatefulSets (a machine
 * that becomes ready or goes away is news for its Worker's status at once).
 */
import type { KubernetesObject, V1StatefulSet } from '@kubernetes/client-node';
import { Refs } from '../../../apis/refs.js';
import { requestFor, type Controller } from '../../../runtime/controller.js';
import type { Manager } from '../../../runtime/manager.js';
import { specOrMetadataChanged } from '../../../runtime/predicates.js';
import { MACHINE_LABELS } from './machine-pods.js';
import { isLocalWorker, WorkerReconciler } from './reconciler.js';

export const WORKER_CONTROLLER_NAME = 'provider-local-worker';

export interface WorkerControllerOptions {
  readonly workers?: number;
  /** The machine image, when not the image vector's. */
  readonly image?: string;
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
  return manager
    .controller({
      name: WORKER_CONTROLLER_NAME,
      reconciler: new WorkerReconciler({
        client,
        clock,
        ...(options.image ? { image: options.image } : {}),
        statefulSet: (name, namespace) => statefulSets.get(name, namespace) as V1StatefulSet | undefined,
      }),
      ...(options.workers ? { workers: options.workers } : {}),
    })
    .watch(workers, (w) => (isLocalWorker(w) ? [requestFor(w)] : []), specOrMetadataChanged)
    .watch(statefulSets, workersOfNamespace);
}
