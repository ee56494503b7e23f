/**
 * Wiring of the resource manager (reconciler.ts): one controller for the ManagedResources of every seed namespace.
 * A shoot's ManagedResources go to its API server, with the gardenlet's own short-lived admin access (reused for
 * ten minutes per shoot); those of class `seed` to the seed.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Shoot } from '../../apis/core/v1beta1/shoot.js';
import { type ManagedResource } from '../../apis/resources/v1alpha1/managedresource.js';
import { Refs } from '../../apis/refs.js';
import type { ResourceClient } from '../../runtime/client.js';
import { requestFor } from '../../runtime/controller.js';
import type { Manager } from '../../runtime/manager.js';
import { specOrMetadataChanged } from '../../runtime/predicates.js';
import { shootAdminClient } from '../shoot/shoot-client.js';
import { ManagedResourceReconciler, SEED_CLASS, TARGET_GOING, TARGET_HIBERNATED, type Target } from './reconciler.js';
import { hibernationEnabled } from '../../apis/core/v1beta1/hibernation.js';

export const CONTROLLER_NAME = 'resource-manager';
/** How long a shoot client (its certificate lasts 15 minutes) is reused. */
const SHOOT_CLIENT_TTL_MS = 10 * 60_000;

export interface ResourceManagerOptions {
  readonly workers?: number;
  /** @default 30_000 */
  readonly healthSyncPeriodMs?: number;
}

/** Adds the resource manager to the manager (before `manager.start()`). */
export function addResourceManager(
  manager: Manager,
  shootOf: (seedNamespace: string) => (Shoot & KubernetesObject) | undefined,
  options: ResourceManagerOptions = {},
): void {
  const { client, clock } = manager;
  const targets = new ShootTargets(client, shootOf, () => clock.now());
  manager
    .controller({
      name: CONTROLLER_NAME,
      reconciler: new ManagedResourceReconciler({
        client,
        clock,
        target: (mr) => targets.targetOf(mr),
        ...(options.healthSyncPeriodMs !== undefined ? { healthSyncPeriodMs: options.healthSyncPeriodMs } : {}),
      }),
      ...(options.workers !== undefined ? { workers: options.workers } : {}),
    })
    .watch(manager.informer<KubernetesObject>(Refs.managedResource), (mr) => [requestFor(mr)], specOrMetadataChanged);
}

class ShootTargets {
  private readonly clients = new Map<string, { uid: string; client: ResourceClient; until: number }>();

  constructor(
    private readonly seed: ResourceClient,
    private readonly shootOf: (seedNamespace: string) => (Shoot & KubernetesObject) | undefined,
    private readonly now: () => number,
  ) {}

  async targetOf(mr: ManagedResource): Promise<Target | typeof TARGET_GOING | typeof TARGET_HIBERNATED | undefined> {
    const cls = mr.spec.class;
    if (cls === SEED_CLASS) return { client: this.seed, cluster: 'seed' };
    if (cls !== undefined && cls !== '') return undefined;
    const namespace = mr.metadata.namespace ?? '';
    const shoot = this.shootOf(namespace);
    // A shoot being deleted (or gone) takes its objects with its API server.
    if (shoot === undefined || shoot.metadata.deletionTimestamp) {
      this.clients.get(namespace)?.client.close();
      this.clients.delete(namespace);
      return TARGET_GOING;
    }
    if (hibernationEnabled(shoot)) return TARGET_HIBERNATED;
    const cached = this.clients.get(namespace);
    if (cached !== undefined && cached.uid === shoot.metadata.uid && cached.until > this.now()) {
      return { client: cached.client, cluster: 'shoot' };
    }
    cached?.client.close();
    this.clients.delete(namespace);
    const client = await shootAdminClient(this.seed, shoot, { signal: AbortSignal.timeout(30_000) });
    this.clients.set(namespace, { uid: shoot.metadata.uid ?? '', client, until: this.now() + SHOOT_CLIENT_TTL_MS });
    return { client, cluster: 'shoot' };
  }
}
