/**
 * A machine pod's CPU and memory, from its pool's machine type in the shoot's CloudProfile (which the namespace's
 * Cluster carries, as Gardener's provider extensions read it). A machine is sized as a VM: the type's CPU and memory
 * are the pod's limits, all it may ever use, so one machine cannot take what its seed Node's other pods need. What the
 * seed's scheduler reserves for it (its requests) is the type's figures divided by an overcommit ratio, as a
 * hypervisor overcommits vCPUs and memory (KubeVirt's `cpuAllocationRatio`, 10 by default, turns each vCPU into a
 * request of 100m): machines idle most of the time, and nominal types (the local `1` CPU and `8Gi`) would otherwise
 * leave room for one machine on a small seed. A type the seed cannot fit even so stays Pending, and the Worker says
 * why (machine-problems.ts).
 */
import type { V1ResourceRequirements } from '@kubernetes/client-node';
import type { MachineType } from '../../../apis/core/v1beta1/cloudprofile.js';
import { quantityValue } from '../../../apis/validation/quantity.js';

/** How much more a seed's machines may use together than its scheduler reserves for them, per resource. */
export interface MachineOvercommit {
  readonly cpu: number;
  readonly memory: number;
}

/** A request of a tenth of the type's CPU (KubeVirt's default) and an eighth of its memory. */
export const DEFAULT_MACHINE_OVERCOMMIT: MachineOvercommit = { cpu: 10, memory: 8 };

const MEBIBYTE = 2 ** 20;

/** The machine types of the CloudProfile that a Cluster carries (`spec.cloudProfile`), as it holds them. */
export function clusterMachineTypes(cloudProfile: unknown): unknown {
  return (cloudProfile as { spec?: { machineTypes?: unknown } } | undefined)?.spec?.machineTypes;
}

/** The machine type named `name` in the CloudProfile that a Cluster carries (`spec.cloudProfile`), if any. */
export function clusterMachineType(cloudProfile: unknown, name: string | undefined): MachineType | undefined {
  const types = clusterMachineTypes(cloudProfile);
  if (!Array.isArray(types)) return undefined;
  return (types as MachineType[]).find((t) => typeof t === 'object' && t !== null && t.name === name);
}

/** Whether `overcommit` holds ratios a seed can use: finite and at least 1 (no request above the limit). */
export function invalidOvercommit(overcommit: MachineOvercommit): string | undefined {
  for (const [resource, ratio] of Object.entries(overcommit)) {
    if (!Number.isFinite(ratio) || ratio < 1) return `the ${resource} overcommit must be a number ≥ 1, not ${ratio}`;
  }
  return undefined;
}

/**
 * The resources of a machine pod of `type`: limits the type's CPU and memory, requests those divided by
 * `overcommit` (rounded up to a millicore and a mebibyte); a message when the type has no positive CPU or memory.
 */
export function machineResources(
  type: MachineType,
  overcommit: MachineOvercommit = DEFAULT_MACHINE_OVERCOMMIT,
): V1ResourceRequirements | string {
  const cores = quantityValue(type.cpu);
  const bytes = quantityValue(type.memory);
  if (cores === undefined || !(cores > 0)) return `machine type ${type.name} has no CPU (cpu: ${String(type.cpu)})`;
  if (bytes === undefined || !(bytes > 0)) {
    return `machine type ${type.name} has no memory (memory: ${String(type.memory)})`;
  }
  const millicores = Math.ceil(cores * 1000);
  const mebibytes = Math.ceil(bytes / MEBIBYTE);
  return {
    requests: {
      cpu: cpuQuantity(Math.ceil(millicores / overcommit.cpu)),
      memory: memoryQuantity(Math.ceil(mebibytes / overcommit.memory)),
    },
    limits: { cpu: cpuQuantity(millicores), memory: memoryQuantity(mebibytes) },
  };
}

/** Millicores as the API server writes them back (`1`, `100m`): applied again, they are no change. */
function cpuQuantity(millicores: number): string {
  return millicores % 1000 === 0 ? String(millicores / 1000) : `${millicores}m`;
}

/** Mebibytes in the largest binary unit that keeps them whole (`8Gi`, `1536Mi`), as the API server writes them. */
function memoryQuantity(mebibytes: number): string {
  let value = mebibytes;
  for (const unit of ['Mi', 'Gi', 'Ti', 'Pi']) {
    if (value % 1024 !== 0 || unit === 'Pi') return `${value}${unit}`;
    value /= 1024;
  }
  return `${value}Pi`;
}
