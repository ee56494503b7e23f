/**
 * A running shoot's migration to dual-stack (`spec.networking.ipFamilies` [IPv4] → [IPv4, IPv6]), in the steps
 * Gardener takes, within the shoot's reconcile (its last operation stays Processing until the last step):
 *
 * 1. The reconcile that finds the shoot's Network running fewer families than its spec adds the constraint
 *    `DualStackNodesMigrationReady` (Progressing) to the Shoot's status (`startDualStackMigration`). With it the
 *    network keeps the primary family (the calico extension, the machines' pod network settings) and so does
 *    CoreDNS's Service (apis/core/v1beta1/dual-stack-migration.ts).
 * 2. The flow goes on as always: the second family's ranges in `status.networking`, kube-apiserver with both service
 *    ranges and kube-controller-manager with both pod ranges, the API server's Service and DNS records of both
 *    families, and the machines' user data of both families. provider-local replaces the machines one at a time,
 *    each with a new Node (a Node's pod ranges can't change), which kube-controller-manager gives a range per family.
 * 3. Once every Node has pod ranges of both families, the constraint is True (NodesMigrated) and the network switches:
 *    the Network runs both families, the machines' pod network settings follow in place.
 * 4. The constraint goes, and CoreDNS's Service gets its second ClusterIP (its pods replaced, each with an address of
 *    each family).
 *
 * A shoot without running machines (hibernated, without workers, or objects only) has no Node to migrate: its network
 * switches at once.
 */
import type { KubernetesObject, V1Node } from '@kubernetes/client-node';
import {
  DUAL_STACK_NODES_MIGRATION_READY,
  nodesMigrationCondition,
  nodesMigrationConstraint,
} from '../../apis/core/v1beta1/dual-stack-migration.js';
import { shootIPFamilies } from '../../apis/core/v1beta1/helpers.js';
import { seedNamespaceName } from '../../apis/core/v1beta1/names.js';
import type { Seed } from '../../apis/core/v1beta1/seed.js';
import type { NetworkingStatus, Shoot } from '../../apis/core/v1beta1/shoot.js';
import type { Condition } from '../../apis/meta/schemas.js';
import { Refs } from '../../apis/refs.js';
import type { ResourceClient } from '../../runtime/client.js';
import type { Clock } from '../../runtime/clock.js';
import { retryOnConflict } from '../../runtime/retry.js';
import { NotReadyError, type ComponentContext } from '../component.js';
import type { Flow } from '../flow.js';
import { type TaskHandle } from '../flow.js';
import { ShootCluster } from './components/cluster.js';
import { ShootCoreDNS } from './components/coredns.js';
import { NetworkExtension } from './components/network.js';
import type { ShootSecretValues } from './components/secrets.js';
import { ShootWorker } from './components/worker.js';
import { shootAdminClient } from './shoot-client.js';

/** The shoot with its constraints replaced by `constraints`. */
function withConstraints(shoot: Shoot, constraints: Condition[]): Shoot {
  return { ...shoot, status: { ...shoot.status, constraints } };
}

/**
 * Writes the shoot's DualStackNodesMigrationReady constraint (`undefined`: removes it) into its status, keeping the
 * others (the care controller writes HibernationPossible beside it); returns the shoot with its new constraints.
 */
export async function writeNodesMigrationConstraint(
  garden: ResourceClient,
  shoot: Shoot,
  constraint: Condition | undefined,
  signal: AbortSignal,
): Promise<Shoot> {
  const name = shoot.metadata.name ?? '';
  const namespace = shoot.metadata.namespace;
  return retryOnConflict(async () => {
    const current = (await garden.get<Shoot & KubernetesObject>(Refs.shoot, name, namespace, { signal })) ?? shoot;
    const others = (current.status?.constraints ?? []).filter((c) => c.type !== DUAL_STACK_NODES_MIGRATION_READY);
    const constraints = constraint ? [...others, constraint] : others;
    // With its resourceVersion: a conflict (the care controller wrote meanwhile) reads again.
    await garden.mergePatch(
      Refs.shoot,
      name,
      namespace,
      { metadata: { resourceVersion: current.metadata.resourceVersion }, status: { constraints } },
      { subresource: 'status', signal },
    );
    return withConstraints(shoot, constraints);
  });
}

/**
 * Step 1: the constraint, when the shoot's Network runs fewer families than the shoot has and the shoot has machines
 * running; the shoot as the flow should see it.
 */
export async function startDualStackMigration(
  client: ResourceClient,
  garden: ResourceClient,
  shoot: Shoot,
  machinesRun: boolean,
  clock: Clock,
  signal: AbortSignal,
): Promise<Shoot> {
  if (!machinesRun || nodesMigrationConstraint(shoot) !== undefined) return shoot;
  const network = await client.get<KubernetesObject & { status?: { ipFamilies?: string[] } }>(
    Refs.network,
    shoot.metadata.name ?? '',
    seedNamespaceName(shoot),
    { signal },
  );
  const running = network?.status?.ipFamilies;
  if (running === undefined || running.length === 0 || running.length >= shootIPFamilies(shoot).length) return shoot;
  return writeNodesMigrationConstraint(garden, shoot, nodesMigrationCondition([], 2, clock.now()), signal);
}

export interface MigrationTaskValues {
  readonly client: ResourceClient;
  readonly garden: ResourceClient;
  readonly clock: Clock;
  readonly shoot: Shoot;
  readonly seed: Seed;
  readonly cloudProfile: unknown;
}

/**
 * Steps 3 and 4 (above) as tasks of the reconcile flow, after the Worker is ready (its machines replaced), when the
 * shoot migrates.
 */
export function addDualStackMigrationTasks(
  flow: Flow,
  v: MigrationTaskValues,
  tasks: {
    readonly networks: TaskHandle<NetworkingStatus>;
    readonly secrets: TaskHandle<ShootSecretValues>;
    /** What the migration's steps come after: the machines and CoreDNS ready. */
    readonly after: TaskHandle<unknown>;
  },
): void {
  const { networks, secrets } = tasks;
  if (nodesMigrationConstraint(v.shoot) === undefined) return;
  const families = shootIPFamilies(v.shoot).length;
  const shootWith = (constraints: Condition[], networking: NetworkingStatus): Shoot => ({
    ...v.shoot,
    status: { ...v.shoot.status, constraints, networking },
  });
  const nodesMigrated = flow.task({
    id: 'wait-dual-stack-nodes',
    name: 'waiting for every Node to have pod ranges of both IP families',
    dependencies: [tasks.after],
    run: async (x) => {
      const nodes = await listShootNodes(v.client, v.shoot, x);
      const previous = nodesMigrationConstraint(v.shoot);
      const constraint = nodesMigrationCondition(nodes, families, v.clock.now(), previous);
      // Written when it says something new, not at each look.
      const same = previous?.status === constraint.status && previous.message === constraint.message;
      const shoot = same ? v.shoot : await writeNodesMigrationConstraint(v.garden, v.shoot, constraint, x.signal);
      if (constraint.status !== 'True') throw new NotReadyError(constraint.message);
      return shoot.status?.constraints ?? [];
    },
  });
  const networkDeployed = flow.task({
    id: 'deploy-dual-stack-network',
    name: 'switching the network to both IP families',
    dependencies: [nodesMigrated, networks],
    run: async (x, out) => {
      const shoot = shootWith(out(nodesMigrated), out(networks));
      await new ShootCluster(v.client, shoot, v.seed, v.cloudProfile).deploy(x);
      await new NetworkExtension(v.client, shoot).deploy(x);
      return shoot;
    },
  });
  const networkSwitched = flow.task({
    id: 'wait-dual-stack-network',
    name: 'waiting for the network of both IP families',
    dependencies: [networkDeployed],
    run: (x, out) => new NetworkExtension(v.client, out(networkDeployed)).wait(x),
  });
  // The machines' pod network settings follow in place (their user data), as calico-node follows its pools.
  const podNetworkDeployed = flow.task({
    id: 'deploy-dual-stack-pod-network',
    name: "switching the machines' pod network to both IP families",
    dependencies: [networkSwitched, secrets],
    run: (x, out) =>
      new ShootWorker(v.client, out(networkDeployed), out(networks), {
        secrets: { caPEM: out(secrets).ca.certPEM, bootstrapToken: out(secrets).bootstrapToken },
      }).deploy(x),
  });
  const podNetworkSwitched = flow.task({
    id: 'wait-dual-stack-pod-network',
    name: "waiting for the machines' pod network of both IP families",
    dependencies: [podNetworkDeployed],
    run: (x, out) => new ShootWorker(v.client, out(networkDeployed), out(networks)).wait(x),
  });
  const finished = flow.task({
    id: 'finish-dual-stack-migration',
    name: "giving CoreDNS's Service both IP families",
    dependencies: [podNetworkSwitched],
    run: async (x, out) => {
      const shoot = await writeNodesMigrationConstraint(v.garden, v.shoot, undefined, x.signal);
      const done = shootWith(shoot.status?.constraints ?? [], out(networks));
      await new ShootCluster(v.client, done, v.seed, v.cloudProfile).deploy(x);
      await new ShootCoreDNS(v.client, done, out(networks)).deploy(x);
      return done;
    },
  });
  flow.task({
    id: 'wait-dual-stack-coredns',
    name: 'waiting for CoreDNS of both IP families',
    dependencies: [finished],
    run: (x, out) => new ShootCoreDNS(v.client, out(finished), out(networks)).wait(x),
  });
}

async function listShootNodes(client: ResourceClient, shoot: Shoot, x: ComponentContext): Promise<V1Node[]> {
  const shootClient = await shootAdminClient(client, shoot, x);
  try {
    return (await shootClient.list<V1Node & KubernetesObject>(Refs.node, { signal: x.signal })).items;
  } finally {
    shootClient.close();
  }
}
