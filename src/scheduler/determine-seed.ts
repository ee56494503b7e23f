/**
 * The scheduler's choice of a seed for a shoot, as pure functions over the seeds and shoots (Gardener's
 * `pkg/scheduler/controller/shoot/reconciler.go`). The filters run in Gardener's order; each one that leaves no seed
 * ends the decision with Gardener's message, followed by every seed it dropped and why.
 */
import { applySeedShootDefaults } from '../apis/core/v1beta1/defaults.js';
import { hasWorkers, shootIPFamilies } from '../apis/core/v1beta1/helpers.js';
import type { Seed, SeedTaint } from '../apis/core/v1beta1/seed.js';
import type { Shoot, Toleration } from '../apis/core/v1beta1/shoot.js';
import { validateShoot, validateShootAgainstSeed } from '../apis/core/v1beta1/validation/shoot.js';
import { errorString } from '../apis/field/index.js';
import { formatLabelSelector, labelSelectorMatches } from '../apis/meta/label-selector.js';
import { featureGates } from '../featuregate/featuregate.js';
import { shootNetworkingStatus, ShootNetworksError } from '../apis/core/v1beta1/networks.js';
import { CONDITION_GARDENLET_READY } from '../apis/core/v1beta1/seed-lease.js';

/**
 * A seed's condition the gardenlet keeps True while it runs the seed (Gardener's `GardenletReady`, seed/lease.ts);
 * the seed lifecycle controller turns it Unknown when the gardenlet stops.
 */
export const SEED_GARDENLET_READY = CONDITION_GARDENLET_READY;

/** Gates don't decide scheduling: the shoot's families were admitted already. */
const ALL_GATES = featureGates({ IPv6SingleStack: true, DualStack: true });

export type SchedulingDecision = { readonly seed: Seed } | { readonly error: string };

/** Why a seed can't be used at all, or undefined when it can: being deleted, hidden, or not ready. */
export function unusableReason(seed: Seed): string | undefined {
  if (seed.metadata.deletionTimestamp) return 'seed is being deleted';
  if (seed.spec.settings?.scheduling?.visible === false) return 'seed is not visible for scheduling';
  const op = seed.status?.lastOperation;
  if (!op) return 'seed is not ready (it was never reconciled)';
  const gardenletReady = seed.status?.conditions?.find((c) => c.type === SEED_GARDENLET_READY);
  if (gardenletReady && gardenletReady.status !== 'True') {
    return `seed is not ready (condition ${SEED_GARDENLET_READY} is ${gardenletReady.status})`;
  }
  if (!gardenletReady && op.state !== 'Succeeded') {
    return `seed is not ready (last operation ${op.type} ${op.state}: ${op.description})`;
  }
  return undefined;
}

/**
 * Gardener's `TaintsAreTolerated`: every taint needs a toleration of its key, one without a value (any value) or one
 * with the taint's value.
 */
export function taintsAreTolerated(
  taints: readonly SeedTaint[] | undefined,
  tolerations: readonly Toleration[] | undefined,
): boolean {
  return (taints ?? []).every((taint) =>
    (tolerations ?? []).some(
      (t) => t.key === taint.key && (t.value === undefined || (taint.value !== undefined && t.value === taint.value)),
    ),
  );
}

export function seedIPFamilies(seed: Seed): string[] {
  const families = seed.spec.networks?.ipFamilies ?? [];
  return families.length > 0 ? [...families] : ['IPv4'];
}

/**
 * Why the shoot's networks don't fit the seed (empty when they do): the shoot after the seed's `shootDefaults` of
 * its primary family filled missing pods and services, checked against the seed's networks as the webhook checks a
 * scheduled shoot (and against itself), and, for a dual-stack shoot, a `shootDefaults` range of each further family.
 */
export function networkErrors(shoot: Shoot, seed: Seed): string[] {
  const defaulted = applySeedShootDefaults(shoot, seed);
  // The shoot was admitted already: only what the seed's defaults break counts (the webhook would refuse the binding).
  const before = new Set(validateShoot(shoot, ALL_GATES).map(errorString));
  const introduced = validateShoot(defaulted, ALL_GATES).filter((e) => !before.has(errorString(e)));
  const messages = [...introduced, ...validateShootAgainstSeed(defaulted, seed)]
    .filter((e) => e.field !== 'spec.seedName')
    .map((e) =>
      // "pods is required" after defaulting means the seed has no default of the family.
      e.type === 'FieldValueRequired'
        ? `${e.field}: not set, and the seed has no ${shootIPFamilies(shoot)[0]} range in spec.networks.shootDefaults`
        : errorString(e),
    );
  if (messages.length === 0 && hasWorkers(shoot)) {
    try {
      shootNetworkingStatus(defaulted, seed);
    } catch (e) {
      if (!(e instanceof ShootNetworksError)) throw e;
      messages.push(e.message);
    }
  }
  return messages;
}

/** Shoots per seed name, counting a shoot on its `spec.seedName` and, while it moves, on its `status.seedName`. */
export function seedUsage(shoots: readonly Shoot[]): Map<string, number> {
  const usage = new Map<string, number>();
  const add = (name: string | undefined) => {
    if (name) usage.set(name, (usage.get(name) ?? 0) + 1);
  };
  for (const shoot of shoots) {
    add(shoot.spec.seedName);
    if (shoot.status?.seedName !== shoot.spec.seedName) add(shoot.status?.seedName);
  }
  return usage;
}

interface Filter {
  /** Why `seed` is dropped, or undefined to keep it. */
  reason(seed: Seed): string | undefined;
  /** Gardener's message when no seed is left, given how many seeds the filter saw. */
  none(count: number): string;
}

function shootFilters(shoot: Shoot): Filter[] {
  const selector = shoot.spec.seedSelector;
  const providerType = shoot.spec.provider?.type ?? '';
  const providerTypes = selector?.providerTypes ?? [];
  const families = shootIPFamilies(shoot);
  return [
    {
      reason: unusableReason,
      none: (n) => `none of the ${n} seeds is valid for scheduling (not deleting, visible and ready)`,
    },
    {
      reason: (seed) =>
        !selector || labelSelectorMatches(selector, seed.metadata.labels)
          ? undefined
          : `labels ${JSON.stringify(seed.metadata.labels ?? {})} don't match`,
      none: (n) =>
        `none out of the ${n} seeds has the matching labels required by seed selector of 'Shoot' ` +
        `(selector: '${formatLabelSelector(selector ?? {})}')`,
    },
    {
      // Gardener: the seed's provider must be the shoot's, unless the seed selector names provider types (or `*`).
      reason: (seed) => {
        const seedType = seed.spec.provider?.type ?? '';
        const matches =
          providerTypes.length === 0
            ? seedType === providerType
            : providerTypes.some((p) => p === '*' || p === seedType);
        return matches ? undefined : `provider type is ${JSON.stringify(seedType)}`;
      },
      none: (n) => `none out of the ${n} seeds has a matching provider for ${JSON.stringify(providerType)}`,
    },
    {
      reason: (seed) => {
        const seedFamilies = seedIPFamilies(seed);
        return families.every((f) => seedFamilies.includes(f))
          ? undefined
          : `seed has IP families [${seedFamilies.join(' ')}]`;
      },
      none: (n) => `none out of the ${n} seeds supports the IP families [${families.join(' ')}] of the shoot`,
    },
    {
      reason: (seed) => {
        const errors = networkErrors(shoot, seed);
        if (errors.length > 0) return `invalid networks: [${errors.join('; ')}]`;
        if (!taintsAreTolerated(seed.spec.taints, shoot.spec.tolerations)) {
          return "shoot does not tolerate the seed's taints";
        }
        return undefined;
      },
      none: (n) => `0/${n} seed cluster candidate(s) are eligible for scheduling`,
    },
  ];
}

/** `{a => reason, b => reason}`, in seed name order, as Gardener's errorMapToString. */
function reasonsToString(reasons: ReadonlyMap<string, string>): string {
  const names = [...reasons.keys()].sort();
  return `{${names.map((name) => `${name} => ${reasons.get(name)}`).join(', ')}}`;
}

const byName = (a: Seed, b: Seed) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1);

/**
 * The seed for `shoot` (expected defaulted, without `spec.seedName`) among `seeds` (defaulted), or why there is none.
 * After the filters: seeds in the shoot's region are preferred (any seed when none is), then the one with the fewest
 * shoots (`shoots`: every shoot, for the usage), then the first by name.
 */
export function determineSeed(shoot: Shoot, seeds: readonly Seed[], shoots: readonly Shoot[]): SchedulingDecision {
  let remaining = [...seeds].sort(byName);
  if (remaining.length === 0) return { error: 'no seed is registered' };
  for (const filter of shootFilters(shoot)) {
    const reasons = new Map<string, string>();
    const kept = remaining.filter((seed) => {
      const reason = filter.reason(seed);
      if (reason !== undefined) reasons.set(seed.metadata.name ?? '', reason);
      return reason === undefined;
    });
    if (kept.length === 0) return { error: `${filter.none(remaining.length)}: ${reasonsToString(reasons)}` };
    remaining = kept;
  }

  const sameRegion = remaining.filter((seed) => seed.spec.provider?.region === shoot.spec.region);
  const candidates = sameRegion.length > 0 ? sameRegion : remaining;
  const usage = seedUsage(shoots);
  let best = candidates[0]!;
  for (const seed of candidates) {
    if ((usage.get(seed.metadata.name ?? '') ?? 0) < (usage.get(best.metadata.name ?? '') ?? 0)) best = seed;
  }
  return { seed: best };
}
