/**
 * The care controller's look at a shoot's machines, as Gardener's care controller judges them: EveryNodeReady from
 * the shoot's Nodes (with what the Worker says while it is not done), SystemComponentsHealthy from CoreDNS and the seed
 * namespace's ManagedResources.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { seedNamespaceName } from '../../../apis/core/v1beta1/names.js';
import type { Shoot } from '../../../apis/core/v1beta1/shoot.js';
import type { Worker } from '../../../apis/extensions/v1alpha1/worker.js';
import { Refs } from '../../../apis/refs.js';
import type { ManagedResource } from '../../../apis/resources/v1alpha1/managedresource.js';
import type { ResourceClient } from '../../../runtime/client.js';
import type { ComponentContext } from '../../component.js';
import { coreDNSReady } from '../components/coredns.js';
import { notReadyNodes, type NodeStatus } from '../components/worker.js';
import { workerPools } from '../components/workers.js';
import { shootAdminClient } from '../shoot-client.js';
import type { HealthCheck, WorkersHealth } from './health.js';

/**
 * EveryNodeReady and SystemComponentsHealthy of a shoot whose machines are machine pods, as Gardener's care
 * controller judges them: from the shoot's Nodes (as many as the pools' minimum, all Ready) and CoreDNS, read
 * through the shoot's API server.
 */
export async function machinePodsHealth(
  client: ResourceClient,
  shoot: Shoot,
  managedResourcesOf: (seedNamespace: string) => Promise<ManagedResource[]> = async (namespace) =>
    (await client.list<ManagedResource & KubernetesObject>(Refs.managedResource, { namespace })).items,
  openShootClient: (ctx: ComponentContext) => Promise<ResourceClient> = (ctx) => shootAdminClient(client, shoot, ctx),
): Promise<WorkersHealth> {
  const want = workerPools(shoot).reduce((n, p) => n + Math.max(0, p.minimum), 0);
  let shootClient: ResourceClient | undefined;
  try {
    shootClient = await openShootClient({ signal: AbortSignal.timeout(10_000) });
    const nodes = (await shootClient.list<NodeStatus>(Refs.node, {})).items;
    const notReady = notReadyNodes(nodes);
    const nodeCheck: HealthCheck =
      nodes.length < want
        ? { ok: false, reason: 'MissingNodes', message: `${nodes.length} of ${want} machines have a Node` }
        : notReady.length > 0
          ? { ok: false, reason: 'NodeUnhealthy', message: `Nodes not Ready: ${notReady.join(', ')}` }
          : { ok: true, reason: 'EveryNodeReady', message: `All ${nodes.length} Nodes are Ready.` };
    // Only to say more: a Worker that can't be read leaves the check as it is.
    const worker = nodeCheck.ok
      ? undefined
      : await client
          .get<Worker & KubernetesObject>(Refs.worker, shoot.metadata.name ?? '', seedNamespaceName(shoot))
          .catch(() => undefined);
    const nodesHealth = withWorkerProgress(nodeCheck, worker);
    // The seed namespace's ManagedResources (CoreDNS, the network extension's objects): applied and healthy.
    const managed = await managedResourcesOf(seedNamespaceName(shoot));
    const unhealthy = managed.flatMap((mr) => {
      for (const type of ['ResourcesApplied', 'ResourcesHealthy']) {
        const c = mr.status?.conditions?.find((x) => x.type === type);
        if (c?.status !== 'True')
          return [`ManagedResource ${mr.metadata.name}: ${c?.message || `${type} not reported yet`}`];
      }
      return [];
    });
    const system: HealthCheck = !(await coreDNSReady(shootClient))
      ? { ok: false, reason: 'DeploymentUnhealthy', message: 'Deployment kube-system/coredns is not available' }
      : unhealthy.length > 0
        ? { ok: false, reason: 'ResourcesUnhealthy', message: unhealthy.join('; ') }
        : {
            ok: true,
            reason: 'SystemComponentsRunning',
            message: 'CoreDNS is available; the ManagedResources are healthy.',
          };
    return { nodes: nodesHealth, system };
  } catch (e) {
    const failed = { ok: false, reason: 'HealthCheckFailed', message: (e as Error).message };
    return { nodes: failed, system: failed };
  } finally {
    shootClient?.close();
  }
}

/**
 * EveryNodeReady's check with what the provider says of the machines while it is not done (which machine is not
 * ready and why, see provider-local's machine-problems.ts), as Gardener's care controller takes the Worker's health.
 */
export function withWorkerProgress(check: HealthCheck, worker: Pick<Worker, 'status'> | undefined): HealthCheck {
  const operation = worker?.status?.lastOperation;
  if (check.ok || !operation?.description || operation.state === 'Succeeded') return check;
  return { ...check, message: `${check.message} (Worker: ${operation.state}: ${operation.description})` };
}
