/**
 * A gardenlet's heartbeat, as Gardener's: it renews a Lease named after its Seed in the garden's namespace
 * {@link SEED_LEASE_NAMESPACE} and keeps the Seed's {@link CONDITION_GARDENLET_READY} `True`; the garden's seed
 * lifecycle controller turns that condition `Unknown` when the Lease was not renewed for {@link SEED_MONITOR_PERIOD_MS},
 * and the conditions of the Seed's Shoots `Unknown` once that lasted {@link SHOOT_MONITOR_PERIOD_MS}.
 */

/** Gardener's `gardener-system-seed-lease`. */
export const SEED_LEASE_NAMESPACE = 'gardener-system-seed-lease';
/** The Seed condition a gardenlet keeps `True` while it runs. */
export const CONDITION_GARDENLET_READY = 'GardenletReady';
/** How often a gardenlet renews its Seed's Lease. */
export const SEED_LEASE_RESYNC_MS = 10_000;
/**
 * How long a Lease stays valid without a renewal (its `leaseDurationSeconds`), and how long the lifecycle controller
 * waits before it calls a gardenlet gone: Gardener's `seed.monitorPeriod`, 40 s.
 */
export const SEED_MONITOR_PERIOD_MS = 40_000;
/** How long a Seed's GardenletReady stays `Unknown` before its Shoots' conditions do: Gardener's 5 × 40 s. */
export const SHOOT_MONITOR_PERIOD_MS = 200_000;
/** How often the lifecycle controller looks at each Seed: Gardener's `seed.syncPeriod`, 10 s. */
export const SEED_LIFECYCLE_SYNC_PERIOD_MS = 10_000;

/** The Shoot conditions and constraints the lifecycle controller turns `Unknown` (those a shoot has). */
export const SHOOT_CONDITIONS_OF_A_GARDENLET = [
  'APIServerAvailable',
  'ControlPlaneHealthy',
  'ObservabilityComponentsHealthy',
  'EveryNodeReady',
  'SystemComponentsHealthy',
] as const;
export const SHOOT_CONSTRAINTS_OF_A_GARDENLET = ['HibernationPossible', 'MaintenancePreconditionsSatisfied'] as const;
