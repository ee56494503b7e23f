/**
 * Wiring of the gardenlet's controllers onto a Manager: which informers feed which reconciler, and how events on
 * owned objects map back to their Shoot.
 */
import type { KubernetesObject, V1Service } from '@kubernetes/client-node';
import { CachedReader } from '../runtime/cached-reader.js';
import type { Request } from '../runtime/controller.js';
import type { ClusterAccess, Manager } from '../runtime/manager.js';
import { Labels, projectNamespace } from '../apis/core/v1beta1/names.js';
import { extensionOutcomeChanged, loadBalancerChanged, specOrMetadataChanged } from '../runtime/predicates.js';
import { conditionsOrSpecChanged } from './shoot/care/reconciler.js';
import { Refs } from '../apis/refs.js';
import { ShootCareReconciler } from './shoot/care/reconciler.js';
import { SeedReconciler, seedsOfShoot } from './seed/reconciler.js';
import { SeedLeaseReconciler } from './seed/lease.js';
import { SeedRegistrationReconciler } from './seed/registration.js';
import type { Seed } from '../apis/core/v1beta1/seed.js';
import type { DNSProviderConfig } from './shoot/components/dns-records.js';
import { ShootReconciler, type ShootReader } from './shoot/reconciler.js';
import { controlPlaneWorkloadsHealth } from './shoot/care/control-plane.js';
import { machinePodsHealth } from './shoot/care/machines.js';
import { addResourceManager } from './resourcemanager/controller.js';
import { type ManagedResource } from '../apis/resources/v1alpha1/managedresource.js';
import type { Shoot } from '../apis/core/v1beta1/shoot.js';
import type { ResourceClient } from '../runtime/client.js';
import { shootAdminClient } from './shoot/shoot-client.js';
import type { HealthCheck } from './shoot/care/health.js';
import { hibernationPossible, type WebhookConfiguration } from './shoot/care/constraints.js';

export interface GardenletOptions {
  readonly dns: DNSProviderConfig;
  /**
   * The garden (Shoots, Seeds, CloudProfiles, the seed's Lease) when it is another cluster than the manager's, which
   * is then the seed: Gardener's gardenlet in its seed cluster, reaching the garden with a kubeconfig of its own.
   * @default the manager's cluster, garden and seed at once
   */
  readonly garden?: ClusterAccess;
  /** Reconcile only this seed and the shoots on it; all when unset. */
  readonly seedName?: string;
  /**
   * The Seed to register in the garden when the gardenlet starts (seed/registration.ts), named `seedName`: Gardener's
   * `seedConfig`. Unset: the Seed is the garden's to create.
   */
  readonly seedConfig?: Seed;
  /** Let the shoot succeed only after the Network and DNSRecord extensions did. @default true */
  readonly waitForExtensions?: boolean;
  readonly workers?: number;
  /**
   * The shoots' control planes as workloads of the seed and their machines through Workers (the seed needs Nodes).
   * Without it the gardenlet writes objects only (the scale benchmark's mode, a seed without Nodes).
   */
  readonly controlPlaneWorkloads?: boolean;
  /** How often the care controller checks each shoot's control plane. @default 10 s */
  readonly careSyncPeriodMs?: number;
  /** An up-to-date shoot is reconciled again after this long, as Gardener's sync period. @default 1 h */
  readonly shootSyncPeriodMs?: number;
  /** How often the gardenlet renews its seeds' Leases (seed/lease.ts). @default 10 s */
  readonly seedLeaseResyncMs?: number;
  /**
   * Seeds as the process shares them (src/app/readers.ts): the cache and its reader that the admission webhook and
   * the scheduler read too. @default a reader of its own on the manager's Seed informer
   */
  readonly seeds?: CachedReader<KubernetesObject>;
  /** CloudProfiles as the process shares them. @default a reader of its own on the manager's CloudProfile informer */
  readonly cloudProfiles?: CachedReader<KubernetesObject>;
}

/**
 * `shoot--<project>--<shoot>` → the requests of every Shoot the name can stand for (`garden-<project>`, or `garden`
 * for project garden). One, unless names contain `--` (which validation forbids): then each reading, so the shoot
 * that owns the namespace hears of it whichever it is.
 */
export function shootRequestsForSeedNamespace(namespace: string | undefined): Request[] {
  const parts = /^shoot--(.+)$/.exec(namespace ?? '')?.[1]?.split('--') ?? [];
  const requests: Request[] = [];
  for (let i = 1; i < parts.length; i++) {
    const project = parts.slice(0, i).join('--');
    const name = parts.slice(i).join('--');
    if (project && name) requests.push({ namespace: projectNamespace(project), name });
  }
  return requests;
}

/** The Shoot an object in a seed namespace belongs to: its labels say exactly; else every reading of the namespace. */
export function shootRequestsForSeedObject(object: KubernetesObject): Request[] {
  const labels = object.metadata?.labels ?? {};
  const project = labels[Labels.project];
  const name = labels[Labels.shoot];
  if (project && name && object.metadata?.namespace?.startsWith('shoot--')) {
    return [{ namespace: projectNamespace(project), name }];
  }
  return shootRequestsForSeedNamespace(object.metadata?.namespace);
}

/** Adds the shoot, shoot care and seed controllers to the manager (provider-local's are its own: controller.ts). */
export function addGardenletControllers(manager: Manager, options: GardenletOptions): void {
  // The manager's cluster is the seed; Shoots, Seeds and CloudProfiles are the garden's.
  const { client, clock } = manager;
  const garden = options.garden ?? manager;
  const gardenClient = garden.client;
  const workers = options.workers !== undefined ? { workers: options.workers } : {};
  const seedName = options.seedName !== undefined ? { seedName: options.seedName } : {};
  const services = manager.informer<KubernetesObject>(Refs.service);
  const shoots = garden.informer<KubernetesObject>(Refs.shoot);
  const seedReader =
    options.seeds ?? new CachedReader({ informer: garden.informer(Refs.seed), client: gardenClient, ref: Refs.seed });
  const seeds = seedReader.informer;
  const cloudProfileReader =
    options.cloudProfiles ??
    new CachedReader({ informer: garden.informer(Refs.cloudProfile), client: gardenClient, ref: Refs.cloudProfile });
  // Reads of watched objects come from the informer caches, as in controller-runtime: the server only sees writes
  // (and, for a seed, a GET when it is not cached yet).
  const reader: ShootReader = {
    shoot: async (name, namespace) => shoots.get(name, namespace),
    seed: (name) => seedReader.get(name),
    cloudProfile: (name) => cloudProfileReader.get(name),
    service: async (name, namespace) => services.get(name, namespace) as V1Service | undefined,
  };
  const ownedToShoot = shootRequestsForSeedObject;

  const shootController = manager
    .controller({
      name: 'shoot',
      reconciler: new ShootReconciler({
        client,
        garden: gardenClient,
        reader,
        clock,
        dns: options.dns,
        ...seedName,
        ...(options.waitForExtensions !== undefined ? { waitForExtensions: options.waitForExtensions } : {}),
        ...(options.controlPlaneWorkloads ? { controlPlaneWorkloads: true } : {}),
        ...(options.shootSyncPeriodMs !== undefined ? { syncPeriodMs: options.shootSyncPeriodMs } : {}),
      }),
      ...workers,
    })
    .watch(shoots, undefined, specOrMetadataChanged)
    .watch(services, ownedToShoot, loadBalancerChanged);
  if (options.waitForExtensions ?? true) {
    shootController
      .watch(manager.informer(Refs.network), ownedToShoot, extensionOutcomeChanged)
      .watch(manager.informer(Refs.dnsRecord), ownedToShoot, extensionOutcomeChanged);
  }
  if (options.controlPlaneWorkloads) {
    shootController.watch(manager.informer(Refs.worker), ownedToShoot, extensionOutcomeChanged);
  }

  if (options.controlPlaneWorkloads) {
    const managedResources = manager.informer<KubernetesObject>(Refs.managedResource);
    // The shoots' system components (CoreDNS, the network extension's manifests) arrive through ManagedResources.
    addResourceManager(manager, (seedNamespace) =>
      shootRequestsForSeedNamespace(seedNamespace)
        .map((r) => shoots.get(r.name, r.namespace) as (Shoot & KubernetesObject) | undefined)
        .find((s) => s !== undefined),
    );
    manager
      .controller({
        name: 'shoot-care',
        reconciler: new ShootCareReconciler({
          client,
          garden: gardenClient,
          clock,
          controlPlaneHealth: (namespace: string) => controlPlaneWorkloadsHealth(client, namespace),
          // The ManagedResources from the resource manager's informer cache, not a list per care tick.
          workersHealth: (shoot) =>
            machinePodsHealth(client, shoot, async (namespace) =>
              managedResources
                .list()
                .filter((mr) => mr.metadata?.namespace === namespace)
                .map((mr) => mr as unknown as ManagedResource),
            ),
          hibernationPossible: (shoot) => shootHibernationPossible(client, shoot),
          shoot: async (name, namespace) => shoots.get(name, namespace),
          ...seedName,
          ...(options.careSyncPeriodMs !== undefined ? { syncPeriodMs: options.careSyncPeriodMs } : {}),
        }),
        ...workers,
      })
      .watch(shoots, undefined, conditionsOrSpecChanged);
  }

  if (options.seedConfig !== undefined) {
    // Once per start, retried with backoff: no watch, an operator's later edit stands until the next start.
    manager
      .controller({
        name: 'seed-registration',
        reconciler: new SeedRegistrationReconciler({ client: gardenClient, config: options.seedConfig }),
      })
      .enqueue({ name: options.seedConfig.metadata.name ?? '' });
  }

  // The heartbeat: each served Seed's Lease and its GardenletReady condition, renewed on a timer.
  manager
    .controller({
      name: 'seed-lease',
      reconciler: new SeedLeaseReconciler({
        client: gardenClient,
        clock,
        seed: (name) => seeds.get(name),
        ...seedName,
        ...(options.seedLeaseResyncMs !== undefined ? { resyncMs: options.seedLeaseResyncMs } : {}),
      }),
    })
    .watch(seeds, undefined, () => false);

  manager
    .controller({
      name: 'seed',
      reconciler: new SeedReconciler({ client, garden: gardenClient, clock, ...seedName }),
      ...workers,
    })
    .watch(seeds, undefined, specOrMetadataChanged)
    // A seed being deleted waits for its shoots: each change of one of them (its deletion above all) looks again.
    .watch(shoots, (shoot) =>
      seedsOfShoot(shoot)
        .filter((name) => seeds.get(name)?.metadata?.deletionTimestamp)
        .map((name) => ({ name })),
    );
}

/** The shoot's HibernationPossible constraint from its webhook configurations, read through its API server. */
async function shootHibernationPossible(seed: ResourceClient, shoot: Shoot): Promise<HealthCheck> {
  const shootClient = await shootAdminClient(seed, shoot, { signal: AbortSignal.timeout(10_000) });
  try {
    const signal = AbortSignal.timeout(10_000);
    const lists = await Promise.all(
      [Refs.validatingWebhookConfiguration, Refs.mutatingWebhookConfiguration].map(async (ref) =>
        (await shootClient.list<WebhookConfiguration & KubernetesObject>(ref, { signal })).items.map((c) => ({
          ...c,
          kind: ref.kind,
        })),
      ),
    );
    return hibernationPossible(lists.flat());
  } finally {
    shootClient.close();
  }
}
