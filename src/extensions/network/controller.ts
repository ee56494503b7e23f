/**
 * Wiring of the calico Network extension: the Network informer feeding one controller, for Networks with
 * `spec.type: calico` only; and the Cluster informer (the seed's copy of each Shoot), so that a dual-stack Network is
 * reconciled again as soon as its Shoot's `status.networking.pods` gets the second family's range.
 */
import type { Shoot } from '../../apis/core/v1beta1/shoot.js';
import { nodesMigrating } from '../../apis/core/v1beta1/dual-stack-migration.js';
import type { KubernetesObject } from '@kubernetes/client-node';
import { Refs } from '../../apis/refs.js';
import { requestFor, type Controller } from '../../runtime/controller.js';
import type { Manager } from '../../runtime/manager.js';
import type { ChartDefaults } from './manifests.js';
import { MANAGED_RESOURCE_NAME } from './actuator.js';
import type { ShootNetworkingSource } from './cluster.js';
import { isCalicoNetwork, NetworkReconciler, networkRef } from './reconciler.js';
import { specOrMetadataChanged } from '../../runtime/predicates.js';
import { deepEqual } from '../../apis/meta/objects.js';

export const CONTROLLER_NAME = 'network-calico';

export interface NetworkExtensionOptions {
  readonly workers?: number;
  /** Only Networks of this namespace. @default all namespaces */
  readonly namespace?: string;
  /** Overrides of the chart defaults (images). */
  readonly chartValues?: Partial<ChartDefaults>;
  /** The images the shoots' machines have (others' workloads are withheld and reported). @default all */
  readonly availableImages?: readonly string[];
  /** Replaces reading the Network's Shoot from its Cluster (tests). */
  readonly shoots?: ShootNetworkingSource;
  /** Per-key error backoff. @default the controller's (100 ms doubling to 60 s) */
  readonly backoff?: { baseDelayMs?: number; maxDelayMs?: number };
}

/** Adds the calico Network controller to the manager (before `manager.start()`). */
export function addNetworkExtension(manager: Manager, options: NetworkExtensionOptions = {}): Controller {
  const { client, clock } = manager;
  const networks = manager.informer<KubernetesObject>(
    networkRef,
    options.namespace ? { namespace: options.namespace } : {},
  );
  // The gardenlet names a shoot's Cluster after its seed namespace, and its Network after the shoot, in that namespace.
  const networkOfCluster = (cluster: KubernetesObject) => {
    const namespace = cluster.metadata?.name;
    const name = shootInCluster(cluster)?.metadata?.name;
    const matches = !options.namespace || options.namespace === namespace;
    return matches && namespace && name ? [{ namespace, name }] : [];
  };
  return (
    manager
      .controller({
        name: CONTROLLER_NAME,
        reconciler: new NetworkReconciler({
          client,
          clock,
          ...(options.shoots ? { shoots: options.shoots } : {}),
          ...(options.chartValues ? { chartValues: options.chartValues } : {}),
          ...(options.availableImages ? { availableImages: options.availableImages } : {}),
        }),
        ...(options.workers ? { workers: options.workers } : {}),
        ...(options.backoff ? { backoff: options.backoff } : {}),
      })
      .watch(networks, (n) => (isCalicoNetwork(n) ? [requestFor(n)] : []), specOrMetadataChanged)
      // The Network's values read the Shoot's networks (node ranges, a dual-stack Network's second pod range, kube-proxy).
      .watch(manager.informer<KubernetesObject>(Refs.cluster), networkOfCluster, shootNetworksChanged)
      // The health of what the ManagedResource handed to the shoot goes into the Network's status.
      .watch(
        manager.informer<KubernetesObject>(
          Refs.managedResource,
          options.namespace ? { namespace: options.namespace } : {},
        ),
        (mr) =>
          mr.metadata?.name === MANAGED_RESOURCE_NAME
            ? networks
                .list()
                .filter((n) => n.metadata?.namespace === mr.metadata?.namespace && isCalicoNetwork(n))
                .map(requestFor)
            : [],
        statusChanged,
      )
  );
}

function statusChanged(obj: KubernetesObject, old: KubernetesObject): boolean {
  const status = (o: KubernetesObject) => (o as { status?: unknown }).status;
  return !deepEqual(status(obj), status(old));
}

function shootInCluster(cluster: KubernetesObject): KubernetesObject | undefined {
  return (cluster as { spec?: { shoot?: KubernetesObject } }).spec?.shoot;
}

/** The embedded Shoot's spec, metadata or networks changed. */
function shootNetworksChanged(obj: KubernetesObject, old: KubernetesObject): boolean {
  const shoot = shootInCluster(obj);
  const oldShoot = shootInCluster(old);
  if (shoot === undefined || oldShoot === undefined) return shoot !== oldShoot;
  const networks = (o: KubernetesObject) => (o as { status?: { networking?: unknown } }).status?.networking;
  return (
    specOrMetadataChanged(shoot, oldShoot) ||
    !deepEqual(networks(shoot), networks(oldShoot)) ||
    nodesMigrating(shoot as Shoot) !== nodesMigrating(oldShoot as Shoot)
  );
}
