/**
 * provider-local's Worker controller's reconciler: the generic extension reconciler
 * (src/extensions/common/reconciler.ts) with the Worker actuator (actuator.ts), for Workers of type `local`. Its
 * finalizer is held until the machine pods are gone.
 */
import type { Worker } from '../../../apis/extensions/v1alpha1/worker.js';
import { Refs } from '../../../apis/refs.js';
import { ExtensionReconciler, hasExtensionType } from '../../common/reconciler.js';
import { WorkerActuator, type WorkerActuatorOptions } from './actuator.js';
import { WORKER_TYPE } from './machine-pods.js';

export const WORKER_FINALIZER = 'extensions.gardener.cloud/provider-local';

/** True for Workers this extension serves. */
export function isLocalWorker(worker: object): boolean {
  return hasExtensionType(worker, WORKER_TYPE);
}

export type WorkerReconcilerOptions = WorkerActuatorOptions;

export class WorkerReconciler extends ExtensionReconciler<Worker> {
  constructor(opts: WorkerReconcilerOptions) {
    super({
      client: opts.client,
      ref: Refs.worker,
      extensionType: WORKER_TYPE,
      finalizer: WORKER_FINALIZER,
      actuator: new WorkerActuator(opts),
      ...(opts.clock ? { clock: opts.clock } : {}),
    });
  }
}
