/**
 * The shoot's reconcile flow, as Gardener's `botanist` declares it: each component's deploy and wait a task, with
 * the dependencies that really order them, so everything else runs in parallel. What needs no load balancer address
 * starts at once (by the time it is written the provider has usually set the address); the DNS records and the
 * control plane wait for it; the machines come when the control plane answers. Hibernation, as Gardener's: the
 * machines stop (the provider reads it from the Cluster), then the control plane scales to zero with its data kept;
 * the namespace, the Services, the DNS records and the extensions stay. A shoot migrating to dual-stack gets the
 * migration's last steps after its machines (dual-stack-migration.ts).
 */
import type { V1Service } from '@kubernetes/client-node';
import type { Seed } from '../../apis/core/v1beta1/seed.js';
import type { NetworkingStatus, Shoot } from '../../apis/core/v1beta1/shoot.js';
import { shootNetworkingStatus } from '../../apis/core/v1beta1/networks.js';
import type { ResourceClient } from '../../runtime/client.js';
import type { Clock } from '../../runtime/clock.js';
import { Flow, type TaskHandle } from '../flow.js';
import type { ComponentContext } from '../component.js';
import type { DNSProviderConfig } from './components/dns-records.js';
import { ShootControlPlane, type ControlPlaneRuntime } from './components/controlplane/control-plane.js';
import { ShootCluster } from './components/cluster.js';
import { ShootWorker, type MachineSecrets } from './components/worker.js';
import { MachineBootstrap } from './components/machine-bootstrap.js';
import { ShootCoreDNS } from './components/coredns.js';
import { ShootSecrets, type ShootSecretValues } from './components/secrets.js';
import { APIServerDNSRecords, releaseDNSSecret } from './components/dns-records.js';
import { APIServerService } from './components/apiserver-service.js';
import { EgressNetworkPolicies, shootNetworkPolicyValues } from './components/network-policies.js';
import { NetworkExtension } from './components/network.js';
import { SeedNamespace } from './components/namespace.js';
import { WorkerOperatingSystemConfig } from './components/operating-system-config.js';
import type { HibernationPlan } from './hibernation.js';
import { addDualStackMigrationTasks } from './dual-stack-migration.js';

export interface ReconcileFlowValues {
  /** The seed's client. */
  readonly client: ResourceClient;
  /** The garden's client (the same cluster as the seed's when the gardenlet runs in the garden). */
  readonly garden: ResourceClient;
  readonly clock: Clock;
  readonly shoot: Shoot;
  readonly seed: Seed;
  /** The shoot's CloudProfile as read, for its Cluster; undefined when there is none of its name. */
  readonly cloudProfile: unknown;
  readonly dns: DNSProviderConfig;
  /** The Service of the shoot's API server, from the cache. */
  readonly service: (name: string, namespace: string) => Promise<V1Service | undefined>;
  /** Wait for the Network and the DNS records to report success. */
  readonly waitForExtensions: boolean;
  /** Where the control plane runs; undefined: objects only (no control plane, no machines). */
  readonly runtime: ControlPlaneRuntime | undefined;
  readonly plan: HibernationPlan;
  /** Publishes the shoot's networks in its status (the network extension reads them before the Network is ready). */
  readonly publishNetworks: (networking: NetworkingStatus, ctx: ComponentContext) => Promise<void>;
}

export interface ReconcileFlow {
  readonly flow: Flow;
  /** The task whose output is the shoot's networks, for the final status. */
  readonly networks: TaskHandle<NetworkingStatus>;
}

export function reconcileFlow(v: ReconcileFlowValues): ReconcileFlow {
  const { client, garden, shoot, seed } = v;
  const flow = new Flow('shoot reconcile');
  const controlPlaneUp = v.runtime !== undefined && v.plan.controlPlane === 'deploy';
  const service = new APIServerService(client, shoot, v.service);
  const network = new NetworkExtension(client, shoot);

  const namespace = flow.task({
    id: 'deploy-namespace',
    name: 'deploying the seed namespace',
    run: async (x) => {
      // Deleted under the shoot: its DNS records go with it, and they need their secret until then.
      await new SeedNamespace(client, garden, shoot, (ns, y) => releaseDNSSecret(client, ns, y)).deploy(x);
      await new ShootCluster(client, shoot, seed, v.cloudProfile).deploy(x);
    },
  });
  // The control plane and the machines read the shoot's secrets from here; they go with the seed namespace.
  const secrets = controlPlaneUp
    ? flow.task({
        id: 'deploy-secrets',
        name: "deploying the shoot's secrets",
        dependencies: [namespace],
        run: (x) => new ShootSecrets(client, shoot).deploy(x),
      })
    : undefined;
  const apiServerService = flow.task({
    id: 'deploy-kube-apiserver-service',
    name: 'deploying the kube-apiserver service',
    dependencies: [namespace],
    run: (x) => service.deploy(x),
  });
  const networks = flow.task({
    id: 'compute-networks',
    name: 'computing the shoot networks',
    dependencies: [namespace],
    run: async (x) => {
      const networking = shootNetworkingStatus(shoot, seed);
      await v.publishNetworks(networking, x);
      // The extensions read the shoot from its Cluster (the garden may be another cluster): with its networks now.
      const published = { ...shoot, status: { ...shoot.status, networking } };
      await new ShootCluster(client, published, seed, v.cloudProfile).deploy(x);
      return networking;
    },
  });
  const deployNetwork = flow.task({
    id: 'deploy-network',
    name: 'deploying the Network',
    dependencies: [networks],
    run: (x) => network.deploy(x),
  });
  const operatingSystemConfig = flow.task({
    id: 'deploy-operating-system-config',
    name: 'deploying the OperatingSystemConfig',
    dependencies: [namespace],
    run: (x) => new WorkerOperatingSystemConfig(client, shoot).deploy(x),
  });
  flow.task({
    id: 'deploy-network-policies',
    name: 'deploying the NetworkPolicies',
    dependencies: [networks],
    run: (x, out) => new EgressNetworkPolicies(client, shootNetworkPolicyValues(shoot, seed, out(networks))).deploy(x),
  });
  const loadBalancer = flow.task({
    id: 'wait-kube-apiserver-load-balancer',
    name: 'waiting for the kube-apiserver load balancer',
    dependencies: [apiServerService],
    run: (x) => service.waitReady(v.clock, x),
  });
  const dnsRecords = flow.task({
    id: 'deploy-dns-records',
    name: 'deploying the DNS records',
    dependencies: [loadBalancer],
    run: async (x, out) => {
      const records = new APIServerDNSRecords(client, shoot, v.dns, out(loadBalancer));
      await records.deploy(x);
      return records;
    },
  });
  const ready: TaskHandle<unknown>[] = [];
  if (controlPlaneUp) {
    const controlPlane = flow.task({
      id: 'deploy-control-plane',
      name: 'deploying the control plane',
      dependencies: [loadBalancer, networks, secrets!],
      run: async (x, out) => {
        const cp = new ShootControlPlane(client, garden, shoot, v.runtime!, {
          networking: out(networks),
          service: out(loadBalancer),
          domain: v.dns.domain,
          secrets: out(secrets!),
        });
        await cp.deploy(x);
        return cp;
      },
    });
    ready.push(
      flow.task({
        id: 'wait-control-plane',
        name: 'waiting for the control plane',
        dependencies: [controlPlane],
        run: (x, out) => out(controlPlane).wait(x),
      }),
    );
  }
  if (v.waitForExtensions) {
    ready.push(
      flow.task({
        id: 'wait-network',
        name: 'waiting for the Network',
        dependencies: [deployNetwork],
        run: (x) => network.wait(x),
      }),
      flow.task({
        id: 'wait-dns-records',
        name: 'waiting for the DNS records',
        dependencies: [dnsRecords],
        run: (x, out) => out(dnsRecords).wait(x),
      }),
    );
  }
  if (v.plan.machines === 'hibernate' || v.plan.controlPlane === 'hibernate') {
    addHibernationTasks(flow, v, networks, ready);
  }
  if (v.plan.machines === 'deploy') {
    addMachineTasks(flow, v, { networks, secrets: secrets!, operatingSystemConfig, ready });
  }
  return { flow, networks };
}

/** What the machines boot with of the shoot's secrets. */
export function machineSecrets(secrets: ShootSecretValues): MachineSecrets {
  return { caPEM: secrets.ca.certPEM, bootstrapToken: secrets.bootstrapToken };
}

/** Hibernating: the machines first, while their API server still answers, then the control plane. */
function addHibernationTasks(
  flow: Flow,
  v: ReconcileFlowValues,
  networks: TaskHandle<NetworkingStatus>,
  ready: readonly TaskHandle<unknown>[],
): void {
  const { client, garden, shoot } = v;
  const worker = (networking: NetworkingStatus) => new ShootWorker(client, shoot, networking);
  const stopped =
    v.plan.machines === 'hibernate'
      ? flow.task({
          id: 'wait-machines-stopped',
          name: 'waiting for the machines to stop',
          dependencies: [
            flow.task({
              id: 'stop-machines',
              name: 'asking the provider to stop the machines',
              dependencies: [networks, ...ready],
              run: (x, out) => worker(out(networks)).stopMachines(x),
            }),
          ],
          run: (x, out) => worker(out(networks)).waitHibernated(x),
        })
      : undefined;
  if (v.runtime && v.plan.controlPlane === 'hibernate') {
    flow.task({
      id: 'hibernate-control-plane',
      name: 'hibernating the control plane',
      dependencies: stopped ? [stopped] : ready,
      run: (x) => new ShootControlPlane(client, garden, shoot, v.runtime!).hibernate(x),
    });
  }
}

/**
 * The machines, once the control plane and the extensions are ready: the machine bootstrap, then the Worker, CoreDNS
 * beside them, each waited for; then a dual-stack migration's last steps, if the shoot migrates.
 */
function addMachineTasks(
  flow: Flow,
  v: ReconcileFlowValues,
  tasks: {
    readonly networks: TaskHandle<NetworkingStatus>;
    readonly secrets: TaskHandle<ShootSecretValues>;
    /** The machines' user data holds the OperatingSystemConfig's files. */
    readonly operatingSystemConfig: TaskHandle<unknown>;
    readonly ready: readonly TaskHandle<unknown>[];
  },
): void {
  const { client, shoot } = v;
  const { networks, secrets, ready } = tasks;
  // In the shoot, through its API server: what a machine's kubelet joins with.
  const bootstrap = flow.task({
    id: 'deploy-machine-bootstrap',
    name: 'deploying the machine bootstrap',
    dependencies: [secrets, ...ready],
    run: (x, out) => new MachineBootstrap(client, shoot, out(secrets).bootstrapToken).deploy(x),
  });
  const deployWorker = flow.task({
    id: 'deploy-worker',
    name: 'deploying the Worker',
    dependencies: [networks, secrets, tasks.operatingSystemConfig, bootstrap],
    run: (x, out) => new ShootWorker(client, shoot, out(networks), { secrets: machineSecrets(out(secrets)) }).deploy(x),
  });
  const coreDNS = flow.task({
    id: 'deploy-coredns',
    name: 'deploying CoreDNS',
    dependencies: [networks, ...ready],
    run: (x, out) => new ShootCoreDNS(client, shoot, out(networks)).deploy(x),
  });
  const workerReady = flow.task({
    id: 'wait-worker',
    name: 'waiting for the Worker',
    dependencies: [deployWorker],
    run: (x, out) => new ShootWorker(client, shoot, out(networks)).wait(x),
  });
  const coreDNSReady = flow.task({
    id: 'wait-coredns',
    name: 'waiting for CoreDNS',
    dependencies: [coreDNS, workerReady],
    run: (x, out) => new ShootCoreDNS(client, shoot, out(networks)).wait(x),
  });
  // A dual-stack migration's last steps, once the machines are replaced (dual-stack-migration.ts).
  addDualStackMigrationTasks(flow, v, { networks, secrets, after: coreDNSReady });
}
