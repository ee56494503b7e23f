/**
 * What the machines take from the gardenlet's user data. Its checksum per pool, announced on the machine pods (the pod
 * update makes the seed's kubelet refresh the mounted user data at once). The node and pod ranges the machines are
 * built with: those of the IP families the gardenlet wrote the user data with, which the Worker's
 * MACHINE_FAMILIES_ANNOTATION says. The gardenlet writes them once the shoot's control plane serves every family, so
 * a machine that gains a family (a shoot migrating to dual-stack) is built only when its new Node gets ranges of
 * both from kube-controller-manager, whatever else makes the Worker look at its machines earlier.
 */
import type { V1Pod } from '@kubernetes/client-node';
import {
  MACHINE_FAMILIES_ANNOTATION,
  MACHINE_POD_USER_DATA_ANNOTATION,
  workerUserDataAnnotation,
} from '../../../apis/provider-local/v1alpha1/machine-user-data.js';
import type { Worker } from '../../../apis/extensions/v1alpha1/worker.js';
import { isNotFound } from '../../../runtime/errors.js';
import { Refs } from '../../../apis/refs.js';
import { IP_FAMILIES, parseCIDR, type IPFamily } from '../../../net/cidr.js';
import type { ResourceClient } from '../../../runtime/client.js';
import { MACHINE_LABELS } from '../machine-contract.js';
import { nodeCIDRsOf } from './node-addresses.js';
import type { MachineLayout } from './pool-plan.js';

export interface MachineNetworks {
  readonly nodeCIDRs: readonly string[];
  readonly podCIDRs: readonly string[];
}

/** The ranges of `families` among the layout's: node ranges per family (the local default for one without). */
export function machineNetworksOf(
  families: readonly IPFamily[],
  podCIDRs: readonly string[],
  nodes: string | undefined,
) {
  return {
    nodeCIDRs: nodeCIDRsOf(families, nodes),
    podCIDRs: podCIDRs.filter((c) => families.includes(parseCIDR(c)?.family as IPFamily)),
  };
}

/**
 * The networks of a Worker's machines: of the families the gardenlet wrote the machines' user data with (the Worker's
 * MACHINE_FAMILIES_ANNOTATION), else of the shoot's (the layout's).
 */
export function workerMachineNetworks(worker: Worker, layout: MachineLayout): MachineNetworks {
  const families = machineFamiliesOf(worker);
  return families === undefined ? layout : machineNetworksOf(families, layout.podCIDRs, layout.nodes);
}

/** The families of the Worker's annotation, when it holds one or two valid ones. */
export function machineFamiliesOf(worker: Worker): IPFamily[] | undefined {
  const text = worker.metadata.annotations?.[MACHINE_FAMILIES_ANNOTATION];
  if (text === undefined) return undefined;
  const families = text.split(',').map((f) => f.trim());
  const valid = families.length > 0 && families.length <= 2 && new Set(families).size === families.length;
  return valid && families.every((f) => IP_FAMILIES.includes(f as IPFamily)) ? (families as IPFamily[]) : undefined;
}

/** Writes each pool's user data checksum (the Worker's annotation) onto its machine pods that lack it. */
export async function announceUserData(
  client: ResourceClient,
  worker: Worker,
  pods: readonly V1Pod[],
  signal: AbortSignal,
): Promise<void> {
  const annotations = worker.metadata.annotations ?? {};
  for (const pod of pods) {
    const pool = pod.metadata?.labels?.[MACHINE_LABELS.pool];
    const want = pool === undefined ? undefined : annotations[workerUserDataAnnotation(pool)];
    if (want === undefined || pod.metadata?.annotations?.[MACHINE_POD_USER_DATA_ANNOTATION] === want) continue;
    try {
      await client.mergePatch(
        Refs.pod,
        pod.metadata?.name ?? '',
        worker.metadata.namespace ?? '',
        { metadata: { annotations: { [MACHINE_POD_USER_DATA_ANNOTATION]: want } } },
        { signal },
      );
    } catch (e) {
      // A pod deleted meanwhile is replaced by one that mounts the current user data.
      if (!isNotFound(e)) throw e;
    }
  }
}
