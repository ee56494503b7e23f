/**
 * `gardener-ipv6 up`'s options (up.ts), their defaults and their check: what the run is planned with before anything
 * starts.
 */
import type { MachineLimits } from '../extensions/provider-local/admission.js';
import { netnsUnsupportedReason } from '../system/netns.js';
import { missingUpPrerequisites } from '../localenv/prerequisites.js';
import { DEFAULT_SEED_NODES } from '../app/seed-nodes.js';
import { localSeed, parseSeedsOption, type LocalSeed, type LocalSeedKind } from '../app/local-seeds.js';
import type { FeatureGates } from '../featuregate/featuregate.js';

export interface UpOptions {
  /** @default IPv6SingleStack and DualStack on: `up` is for trying IPv6. */
  gates?: FeatureGates;
  /** Write the admin kubeconfig here (default: in the control plane's temporary folder). */
  kubeconfigOut?: string;
  /** Run in a fresh IPv6-only network namespace (needs root), as the integration tests do. */
  ipv6Only?: boolean;
  /**
   * Machines at all: the seed's Nodes, on which the shoots' control planes and machine pods run (root). Without
   * them the shoots are objects only. @default true
   */
  machines?: boolean;
  /**
   * Nodes of the seed cluster, which the garden's API server doubles as (root; not with `ipv6Only`); 0: the shoots
   * are objects only. @default DEFAULT_SEED_NODES when machines run, else 0
   */
  seedNodes?: number;
  /** The webhook's machine limits. @default those of provider-local/admission.ts */
  machineLimits?: MachineLimits;
  /**
   * One seed cluster per entry, the garden's own first (`ipv6`); each further one with its own API server, Nodes and
   * gardenlet. @default ['ipv6']
   */
  seeds?: readonly LocalSeedKind[];
}

export interface UpIO {
  out: (s: string) => void;
  err: (s: string) => void;
}

/**
 * How long `up` stops gracefully, after a signal or when a part of it died: then whatever still runs is killed.
 * Everything it started is thrown away, so there is nothing to wait for beyond that.
 */
export const UP_STOP_TIMEOUT_MS = 3_000;
/** Signals this close to the first are the same Ctrl-C delivered twice (terminal and npm), not a second one. */
export const REPEATED_SIGNAL_WINDOW_MS = 1_000;
/** Of that, the webhook and the controllers: reconciles in flight, unregistering the webhooks. */
export const UP_RUNTIME_SHUTDOWN_MS = 1_000;

/** Seed nodes run where machines do: as root, with machines, and with the API server in this namespace. */
function defaultSeedNodes(opts: UpOptions): number {
  return (opts.machines ?? true) && !opts.ipv6Only && netnsUnsupportedReason() === undefined ? DEFAULT_SEED_NODES : 0;
}

/** The options checked, or what is wrong with them. */
export type UpPlan =
  | { readonly error: string }
  | {
      readonly error?: undefined;
      readonly seeds: readonly LocalSeed[];
      readonly seedNodeCount: number;
      /** Workloads need Nodes to run on: without seed Nodes the shoots are objects only. */
      readonly workloads: boolean;
    };

export function planUp(opts: UpOptions, io: UpIO): UpPlan {
  const missing = missingUpPrerequisites({
    ipv6Only: opts.ipv6Only ?? false,
    machines: opts.machines ?? true,
    warn: (s) => io.err(s),
  });
  if (missing !== undefined) return { error: missing };
  if (opts.ipv6Only) {
    const reason = netnsUnsupportedReason();
    if (reason !== undefined) {
      return { error: `error: --ipv6-only runs the control plane in a network namespace, but ${reason}\n` };
    }
  }
  let seeds: LocalSeed[];
  try {
    seeds = parseSeedsOption((opts.seeds ?? ['ipv6']).join(',')).map(localSeed);
  } catch (e) {
    return { error: `error: ${(e as Error).message}\n` };
  }
  const seedNodeCount = opts.seedNodes ?? defaultSeedNodes(opts);
  if (seedNodeCount > 0) {
    const reason = opts.ipv6Only
      ? 'the seed nodes join an API server in this namespace, not in the --ipv6-only one'
      : netnsUnsupportedReason();
    if (reason !== undefined) return { error: `error: --seed-nodes ${seedNodeCount}: ${reason}\n` };
  }
  return { seeds, seedNodeCount, workloads: seedNodeCount > 0 };
}
