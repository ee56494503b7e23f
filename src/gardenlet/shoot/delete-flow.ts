/**
 * The shoot's delete flow: the machines stop first, while their API server still answers their kubelets; then every
 * seed object goes in parallel, each waited for on its own; the seed namespace and the Cluster last.
 */
import type { Shoot } from '../../apis/core/v1beta1/shoot.js';
import { seedNamespaceName } from '../../apis/core/v1beta1/names.js';
import type { ResourceClient } from '../../runtime/client.js';
import { Flow, type TaskHandle } from '../flow.js';
import type { DeployWaiter } from '../component.js';
import type { DNSProviderConfig } from './components/dns-records.js';
import { ShootControlPlane, type ControlPlaneRuntime } from './components/controlplane/control-plane.js';
import { ShootCluster } from './components/cluster.js';
import { ShootWorker } from './components/worker.js';
import { APIServerDNSRecords } from './components/dns-records.js';
import { APIServerService } from './components/apiserver-service.js';
import { destroyNetworkPolicies } from './components/network-policies.js';
import { NetworkExtension } from './components/network.js';
import { SeedNamespace } from './components/namespace.js';
import { WorkerOperatingSystemConfig } from './components/operating-system-config.js';

export interface DeleteFlowValues {
  /** The seed's client. */
  readonly client: ResourceClient;
  /** The garden's client. */
  readonly garden: ResourceClient;
  readonly shoot: Shoot;
  readonly dns: DNSProviderConfig;
  /** Where the control plane ran; undefined: objects only (no control plane, no Worker). */
  readonly runtime: ControlPlaneRuntime | undefined;
}

export function deleteFlow(v: DeleteFlowValues): Flow {
  const { client, garden, shoot } = v;
  const namespace = seedNamespaceName(shoot);
  const flow = new Flow('shoot delete');
  const worker = v.runtime
    ? flow.task({
        id: 'delete-worker',
        name: 'deleting the Worker',
        run: async (x) => {
          const w = new ShootWorker(client, shoot, {});
          await w.destroy(x);
          await w.waitCleanup(x);
        },
      })
    : undefined;
  const components: (readonly [string, string, DeployWaiter])[] = [
    ['dns-records', 'the DNS records', new APIServerDNSRecords(client, shoot, v.dns, undefined)],
    ['network', 'the Network', new NetworkExtension(client, shoot)],
    ['operating-system-config', 'the OperatingSystemConfig', new WorkerOperatingSystemConfig(client, shoot)],
    ['kube-apiserver-service', 'the kube-apiserver service', new APIServerService(client, shoot)],
    [
      'network-policies',
      'the NetworkPolicies',
      { deploy: async () => {}, destroy: (x) => destroyNetworkPolicies(client, namespace, x) },
    ],
    ...(v.runtime
      ? [['control-plane', 'the control plane', new ShootControlPlane(client, garden, shoot, v.runtime)] as const]
      : []),
  ];
  const gone: TaskHandle<unknown>[] = components.map(([id, name, component]) => {
    const deleted = flow.task({
      id: `delete-${id}`,
      name: `deleting ${name}`,
      dependencies: worker ? [worker] : [],
      run: (x) => component.destroy(x),
    });
    return flow.task({
      id: `wait-${id}-deleted`,
      name: `waiting for the deletion of ${name}`,
      dependencies: [deleted],
      run: async (x) => component.waitCleanup?.(x),
    });
  });
  flow.task({
    id: 'delete-namespace',
    name: 'deleting the seed namespace',
    dependencies: gone,
    run: async (x) => {
      const seedNamespace = new SeedNamespace(client, garden, shoot);
      await seedNamespace.destroy(x);
      await seedNamespace.waitCleanup(x);
      const cluster = new ShootCluster(client, shoot, undefined);
      await cluster.destroy(x);
      await cluster.waitCleanup(x);
    },
  });
  return flow;
}
