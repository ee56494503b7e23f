/**
 * The calico Network controller's reconciler: the generic extension reconciler (src/extensions/common/reconciler.ts)
 * with the calico actuator (actuator.ts), for Networks of type `calico`.
 */
import type { Network } from '../../apis/extensions/v1alpha1/network.js';
import { Refs, type ResourceRef } from '../../apis/refs.js';
import type { Clock } from '../../runtime/clock.js';
import { ExtensionReconciler, hasExtensionType } from '../common/reconciler.js';
import {
  CalicoNetworkActuator,
  EXTENSION_TYPE,
  type CalicoNetworkActuatorOptions,
  type NetworkResult,
} from './actuator.js';

export const FINALIZER = 'extensions.gardener.cloud/calico';

export const networkRef: ResourceRef = Refs.network;

/** True for Networks this extension serves. */
export function isCalicoNetwork(network: object): boolean {
  return hasExtensionType(network, EXTENSION_TYPE);
}

export interface NetworkReconcilerOptions extends CalicoNetworkActuatorOptions {
  readonly clock?: Clock;
}

export class NetworkReconciler extends ExtensionReconciler<Network, NetworkResult> {
  constructor(opts: NetworkReconcilerOptions) {
    const { clock, ...actuator } = opts;
    super({
      client: opts.client,
      ref: networkRef,
      extensionType: EXTENSION_TYPE,
      finalizer: FINALIZER,
      actuator: new CalicoNetworkActuator(actuator),
      ...(clock ? { clock } : {}),
    });
  }
}
