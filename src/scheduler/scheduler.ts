/**
 * Wiring of the scheduler onto a Manager: unscheduled Shoots are its requests; a Seed change (a new seed, one that
 * became ready, new taints) sends every unscheduled Shoot through it again.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { Refs } from '../apis/refs.js';
import { requestFor, type Request } from '../runtime/controller.js';
import { eventRecorder } from '../runtime/events.js';
import type { Manager } from '../runtime/manager.js';
import { specOrMetadataChanged } from '../runtime/predicates.js';
import { ShootSchedulerReconciler } from './reconciler.js';

export const SCHEDULER_NAME = 'gardener-ipv6-scheduler';

export interface SchedulerOptions {
  /** @default 1: one decision at a time, so two shoots don't both count a seed as the emptiest. */
  readonly workers?: number;
  /** Only the Shoots of this namespace (and their usage of the seeds); all namespaces when unset. */
  readonly namespace?: string;
}

const unscheduled = (shoot: KubernetesObject) =>
  !(shoot as { spec?: { seedName?: string } }).spec?.seedName && !shoot.metadata?.deletionTimestamp;

export function addSchedulerController(manager: Manager, options: SchedulerOptions = {}): void {
  const shoots = manager.informer<KubernetesObject>(
    Refs.shoot,
    options.namespace !== undefined ? { namespace: options.namespace } : {},
  );
  const seeds = manager.informer<KubernetesObject>(Refs.seed);
  const unscheduledShoots = (): Request[] => shoots.list().filter(unscheduled).map(requestFor);
  manager
    .controller({
      name: 'scheduler',
      workers: options.workers ?? 1,
      reconciler: new ShootSchedulerReconciler({
        client: manager.client,
        clock: manager.clock,
        recorder: eventRecorder({ client: manager.client, component: SCHEDULER_NAME, logger: manager.logger }),
        reader: {
          shoot: async (name, namespace) => shoots.get(name, namespace),
          seeds: async () => seeds.list(),
          shoots: async () => shoots.list(),
        },
      }),
    })
    .watch(shoots, (s) => (unscheduled(s) ? [requestFor(s)] : []), specOrMetadataChanged)
    .watch(seeds, unscheduledShoots, (seed, old) => {
      // Readiness lives in the status: a seed's last operation or conditions changing matters here.
      const state = (o: KubernetesObject) => JSON.stringify((o as { status?: unknown }).status ?? null);
      return specOrMetadataChanged(seed, old) || state(seed) !== state(old);
    });
}
