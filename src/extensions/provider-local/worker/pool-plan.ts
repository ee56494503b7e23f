/**
 * What a Worker's pools come to, as pure functions, before provider-local's Worker actuator writes anything: the
 * problems of the Worker that only a change of it fixes, the layout of the machines in the shoot its Cluster
 * describes (node and pod ranges, each pool's machine size and first machine), and, per pool, which machines it has:
 * those it keeps, those that go (drained first), and its StatefulSet's replicas for this step, lowered only past
 * drained machines and raised at most a few past the ready ones (as machine-controller-manager's `maxSurge`).
 */
import type { V1ResourceRequirements } from '@kubernetes/client-node';
import { shootNetworkingStatus } from '../../../apis/core/v1beta1/networks.js';
import type { Seed } from '../../../apis/core/v1beta1/seed.js';
import type { Shoot } from '../../../apis/core/v1beta1/shoot.js';
import { clusterHibernationEnabled, clusterShoot, type Cluster } from '../../../apis/extensions/v1alpha1/cluster.js';
import type { Worker, WorkerPool } from '../../../apis/extensions/v1alpha1/worker.js';
import { isIPFamily } from '../../../apis/validation/ip-families.js';
import { kubeletHostProblems, type HostKernel } from '../machine/kubelet-host.js';
import { ordinalsToDrain, replicasAfterDrain } from './drain.js';
import { boundedReplicas, machineStatefulSetName, namedPools, userDataOf } from './machine-pods.js';
import { clusterMachineType, machineResources, type MachineOvercommit } from './machine-resources.js';
import { nodeCIDRsOf, nodeNetwork, poolMachineOffsets } from './node-addresses.js';

type NamedPool = WorkerPool & { name: string };

/** A machine of a pool: its pod's name, which is its Node's. */
export function machineName(pool: string, ordinal: number): string {
  return `${machineStatefulSetName(pool)}-${ordinal}`;
}

/**
 * The problems of a Worker's pools that only a change of the Worker fixes: user data without a reference, and
 * kubelet settings that need what the host's kernel lacks (the machines share it: an error of the Worker, and so of
 * the Shoot, never a kubelet that silently fails to start).
 */
export function poolSpecProblems(worker: Worker, host: HostKernel): string[] {
  const problems = namedPools(worker)
    .map(userDataOf)
    .filter((p): p is string => typeof p === 'string');
  (worker.spec.pools ?? []).forEach((pool, i) => {
    const field = `spec.pools[${i}].kubeletConfig`;
    for (const problem of kubeletHostProblems(pool.kubeletConfig, host, field)) {
      problems.push(`pool ${pool.name ?? '?'}: ${problem}`);
    }
  });
  return problems;
}

/** Where the pools' machines go in the shoot, and what they are. */
export interface MachineLayout {
  /** A hibernated shoot's pools have no machines, whatever their minimum (as Gardener's worker actuators). */
  readonly hibernated: boolean;
  /** The shoot's `spec.networking.nodes`. */
  readonly nodes: string | undefined;
  readonly nodeCIDRs: readonly string[];
  readonly podCIDRs: readonly string[];
  /** Per pool: its machines' resources, as a VM of its machine type in the shoot's CloudProfile is sized. */
  readonly resources: ReadonlyMap<string, V1ResourceRequirements>;
  /** Per pool: the index of its first machine in the node ranges. */
  readonly offsets: ReadonlyMap<string, number>;
}

/**
 * The layout of `pools`' machines in the shoot of `cluster` (which has one); `problem` when only a change of the
 * Worker or the shoot fixes it: a machine type the CloudProfile lacks or gives no size, pools that don't fit into
 * the node ranges.
 */
export function machineLayout(
  cluster: Cluster,
  pools: readonly NamedPool[],
  overcommit?: MachineOvercommit,
): MachineLayout | { readonly problem: string } {
  const shoot = clusterShoot(cluster);
  const families = (shoot?.spec?.networking?.ipFamilies ?? ['IPv4']).filter(isIPFamily);
  const nodeCIDRs = nodeCIDRsOf(families, shoot?.spec?.networking?.nodes);
  const resources = new Map<string, V1ResourceRequirements>();
  const typeProblems: string[] = [];
  for (const pool of pools) {
    const type = clusterMachineType(cluster.spec.cloudProfile, pool.machineType);
    const sized = type
      ? machineResources(type, overcommit)
      : `machine type ${pool.machineType ?? '?'} is not in the shoot's CloudProfile ${cloudProfileName(cluster)}`;
    if (typeof sized === 'string') typeProblems.push(`pool ${pool.name}: ${sized}`);
    else resources.set(pool.name, sized);
  }
  if (typeProblems.length > 0) return { problem: typeProblems.join('; ') };
  let offsets: Map<string, number>;
  try {
    offsets = poolMachineOffsets(pools, nodeNetwork(families, nodeCIDRs), families);
  } catch (e) {
    return { problem: `the shoot's node ranges: ${(e as Error).message}` };
  }
  const hibernated = clusterHibernationEnabled(cluster);
  const nodes = shoot?.spec?.networking?.nodes;
  return { hibernated, nodes, nodeCIDRs, podCIDRs: shootPodCIDRs(cluster), resources, offsets };
}

/** The machines of a pool: how many it should have, those it keeps and those that go. */
export interface PoolMachines {
  readonly pool: string;
  /** Its minimum; none while the shoot is hibernated. */
  readonly wanted: number;
  readonly kept: readonly string[];
  /** Machines past `wanted` that its StatefulSet still has: drained before they go. */
  readonly going: readonly string[];
}

/** The machines of `pool`, whose StatefulSet has `replicas` now. */
export function poolMachines(
  pool: { readonly name: string; readonly minimum?: number },
  replicas: number,
  hibernated: boolean,
): PoolMachines {
  const wanted = hibernated ? 0 : Math.max(0, pool.minimum ?? 0);
  return {
    pool: pool.name,
    wanted,
    kept: Array.from({ length: wanted }, (_, i) => machineName(pool.name, i)),
    going: ordinalsToDrain(replicas, wanted).map((i) => machineName(pool.name, i)),
  };
}

/**
 * The replicas of a pool's StatefulSet for this step: down only past the highest machines that are drained
 * (`drained` by machine name; a machine it doesn't name may go), up at most `atOnce` past the ready ones.
 */
export function poolReplicas(
  machines: PoolMachines,
  current: { readonly replicas: number; readonly ready: number },
  drained: ReadonlyMap<string, boolean>,
  atOnce: number,
): number {
  if (machines.wanted >= current.replicas) return boundedReplicas(machines.wanted, current, atOnce);
  return replicasAfterDrain(
    current.replicas,
    machines.wanted,
    (i) => drained.get(machineName(machines.pool, i)) ?? true,
  );
}

/** `status.machineDeployments` of a Worker: a StatefulSet per pool, with the pool's bounds. */
export function machineDeployments(worker: Worker): { name: string; minimum: number; maximum: number }[] {
  return namedPools(worker).map((p) => ({
    name: machineStatefulSetName(p.name),
    minimum: p.minimum ?? 0,
    maximum: p.maximum ?? p.minimum ?? 0,
  }));
}

/** The name of the CloudProfile a Cluster carries, for messages. */
function cloudProfileName(cluster: Cluster): string {
  const name = (cluster.spec.cloudProfile as { metadata?: { name?: unknown } } | undefined)?.metadata?.name;
  return typeof name === 'string' && name !== '' ? name : '(none in the Cluster)';
}

/** The shoot's pod ranges of every family, as the Cluster's shoot and seed give them; none when they can't tell. */
function shootPodCIDRs(cluster: Cluster): string[] {
  const shoot = clusterShoot(cluster) as Shoot | undefined;
  const seed = cluster.spec.seed as Seed | undefined;
  if (shoot?.spec === undefined || seed?.spec === undefined) return [];
  try {
    return shootNetworkingStatus(shoot, seed).pods ?? [];
  } catch {
    return [];
  }
}
