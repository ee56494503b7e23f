/**
 * Wiring of provider-local's controllers onto a Manager, beside the gardenlet's (the chart's gardenlet process runs
 * both, as Gardener's local setup runs provider-local next to the gardenlet): the load-balancer service controller,
 * and with machine pods the Worker controller. They talk to the gardenlet only through the objects they share
 * (Services, Workers).
 */
import type { KubernetesObject, V1Service } from '@kubernetes/client-node';
import { Refs } from '../../apis/refs.js';
import type { Manager } from '../../runtime/manager.js';
import { DEFAULT_HOST_IPS, type HostIPs } from './loadbalancer/ingress.js';
import type { LoadBalancerRoutes } from './loadbalancer/routes.js';
import { isShootLoadBalancer, ServiceLoadBalancerReconciler } from './loadbalancer/service-controller.js';
import type { AddressPool } from './loadbalancer/pool.js';
import { addWorkerController } from './worker/controller.js';
import type { MachineOvercommit } from './worker/machine-resources.js';

export interface ProviderLocalOptions {
  readonly workers?: number;
  /** Load-balancer addresses from these pools, one per Service and family. Without it, every one gets `hostIPs`. */
  readonly pool?: AddressPool;
  /** @default DEFAULT_HOST_IPS */
  readonly hostIPs?: HostIPs;
  /** Routes of the load-balancer addresses to the seed's Nodes (the seed runs the control planes). */
  readonly loadBalancerRoutes?: LoadBalancerRoutes;
  /** Shoot machines as machine pods of the seed: the Worker controller runs. */
  readonly machinePods?: boolean;
  /**
   * How long the Worker controller drains a machine that goes at most, unless its pool's
   * `machineControllerManager.machineDrainTimeout` says. @default DEFAULT_DRAIN_TIMEOUT_MS (10 minutes)
   */
  readonly drainTimeoutMs?: number;
  /** Machine pods in user namespaces of their own (worker/machine-pods.ts). @default true */
  readonly machineUserNamespaces?: boolean;
  /** What the seed reserves for a machine (worker/machine-resources.ts). @default DEFAULT_MACHINE_OVERCOMMIT */
  readonly machineOvercommit?: MachineOvercommit;
}

export function addProviderLocalControllers(manager: Manager, options: ProviderLocalOptions): void {
  const { client } = manager;
  const workers = options.workers !== undefined ? { workers: options.workers } : {};
  const services = manager.informer<KubernetesObject>(Refs.service);
  manager
    .controller({
      name: 'provider-local-service',
      reconciler: new ServiceLoadBalancerReconciler({
        client,
        addresses: options.pool ? { pool: options.pool } : { hostIPs: options.hostIPs ?? DEFAULT_HOST_IPS },
        get: (name, namespace) => services.get(name, namespace) as V1Service | undefined,
        list: () => services.list() as V1Service[],
        ...(options.loadBalancerRoutes ? { routes: options.loadBalancerRoutes } : {}),
      }),
      ...workers,
    })
    .watch(services, (s) =>
      isShootLoadBalancer(s) ? [{ namespace: s.metadata?.namespace ?? '', name: s.metadata?.name ?? '' }] : [],
    );
  if (options.machinePods) {
    addWorkerController(manager, {
      ...workers,
      ...(options.drainTimeoutMs !== undefined ? { drainTimeoutMs: options.drainTimeoutMs } : {}),
      ...(options.machineUserNamespaces === false ? { machineUserNamespaces: false } : {}),
      ...(options.machineOvercommit ? { machineOvercommit: options.machineOvercommit } : {}),
    });
  }
}
