/**
 * The seeds `up --seeds` knows, one seed cluster each: the examples' Seeds `local-ipv6`, `local-dual` and
 * `local-dual6`. The first listed is the garden's own cluster (as in Gardener's local setup, where the garden's
 * runtime cluster is also the first seed), each further one a seed cluster of its own, with its own API server, Nodes
 * and gardenlet. What a seed's Nodes are made of beyond its Seed's `spec.networks` is chosen here: a Seed has one
 * range per field, of its primary family, so a dual-stack seed's ranges of its second family are the environment's,
 * as a dual-stack kind cluster's configuration holds them.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Seed } from '../apis/core/v1beta1/seed.js';
import {
  DEFAULT_LOAD_BALANCER_NETWORKS,
  type LoadBalancerNetworks,
} from '../extensions/provider-local/loadbalancer/pool.js';
import { example, type ExampleShootRanges } from './local-environment.js';
import { seedNetworks, type SeedNetworks } from './seed-nodes.js';

export const LOCAL_SEED_KINDS = ['ipv6', 'dual-stack', 'dual-stack-ipv6'] as const;
export type LocalSeedKind = (typeof LOCAL_SEED_KINDS)[number];

export interface LocalSeed {
  readonly kind: LocalSeedKind;
  /** The Seed as `up` applies it to the garden. */
  readonly seed: Seed & KubernetesObject;
  /** What its Nodes are made of, every family of the Seed's. */
  readonly networks: SeedNetworks;
  /** Its provider-local load balancers' networks (a bridge of their own, routed to its Nodes). */
  readonly loadBalancerNetworks: LoadBalancerNetworks;
  /** Tells its bridges apart from the other seeds' (a few characters: interface names are short). */
  readonly tag: string;
  /** Its Nodes are `<prefix>-0`, `<prefix>-1`, ... */
  readonly nodeNamePrefix: string;
  /**
   * The example Shoot `up` creates on it when it is the garden's own seed (its `seedName` set to this seed's): the
   * IPv6 one, or on the dual-stack seed the IPv4 one, to migrate to dual-stack; on the dual-stack seed of IPv6 first
   * the IPv6 one, to migrate to [IPv6, IPv4].
   */
  readonly exampleShoot: string;
  /** Ranges the example Shoot gets beside its own: those its Seed's shootDefaults can't give. */
  readonly exampleShootNetworking?: ExampleShootRanges;
}

interface LocalSeedPlan {
  readonly example: string;
  /** Replaces the example's node range: its own would collide with what the host runs (kind's Docker network). */
  readonly nodes?: string;
  /** Ranges of the Seed's other family, per field. */
  readonly secondary?: { readonly nodes: string; readonly pods: string; readonly services: string };
  readonly loadBalancerNetworks: LoadBalancerNetworks;
  readonly tag: string;
  readonly nodeNamePrefix: string;
  readonly exampleShoot: string;
  readonly exampleShootNetworking?: ExampleShootRanges;
}

const PLANS: Record<LocalSeedKind, LocalSeedPlan> = {
  ipv6: {
    example: 'seed-ipv6.yaml',
    loadBalancerNetworks: DEFAULT_LOAD_BALANCER_NETWORKS,
    tag: 'seed',
    nodeNamePrefix: 'seed',
    exampleShoot: 'shoot-ipv6.yaml',
  },
  'dual-stack': {
    example: 'seed-dual-stack.yaml',
    // The example's 172.18.0.0/16 is kind's Docker network: a bridge of it here would take that network's routes.
    nodes: '10.18.0.0/24',
    secondary: { nodes: 'fd00:11::/64', pods: 'fd00:11:1::/56', services: 'fd00:11:2::/112' },
    loadBalancerNetworks: { IPv6: 'fd00:ff:1::/64', IPv4: '10.19.0.0/24' },
    tag: 'sd2',
    nodeNamePrefix: 'dual',
    exampleShoot: 'shoot-ipv4.yaml',
  },
  'dual-stack-ipv6': {
    example: 'seed-dual-stack-ipv6.yaml',
    secondary: { nodes: '10.16.0.0/24', pods: '10.14.0.0/16', services: '10.15.0.0/16' },
    loadBalancerNetworks: { IPv6: 'fd00:ff:2::/64', IPv4: '10.17.0.0/24' },
    tag: 'sd6',
    nodeNamePrefix: 'dual6',
    exampleShoot: 'shoot-ipv6.yaml',
    // The Seed's shootDefaults are IPv4 (the migration's second family): the IPv6 shoot's own ranges are set.
    exampleShootNetworking: { pods: 'fd00:12:3::/56', services: 'fd00:12:4::/112' },
  },
};

/**
 * `--seeds ipv6,dual-stack`: the seeds of an environment, the garden's own first (any of them). Throws a message
 * naming the flag's problem.
 */
export function parseSeedsOption(list: string): LocalSeedKind[] {
  const entries = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const known = LOCAL_SEED_KINDS.join(', ');
  if (entries.length === 0) throw new Error(`--seeds: a comma-separated list of ${known}`);
  for (const entry of entries) {
    if (!(LOCAL_SEED_KINDS as readonly string[]).includes(entry)) {
      throw new Error(`--seeds: unknown seed ${JSON.stringify(entry)}: one of ${known}`);
    }
  }
  const dup = entries.find((e, i) => entries.indexOf(e) !== i);
  if (dup !== undefined) throw new Error(`--seeds: ${dup} is listed twice`);
  return entries as LocalSeedKind[];
}

export function localSeed(kind: LocalSeedKind): LocalSeed {
  const plan = PLANS[kind];
  const seed = example(plan.example) as Seed & KubernetesObject;
  if (plan.nodes !== undefined) seed.spec.networks = { ...seed.spec.networks, nodes: plan.nodes };
  return {
    kind,
    seed,
    networks: seedNetworks(seed, plan.secondary),
    loadBalancerNetworks: plan.loadBalancerNetworks,
    tag: plan.tag,
    nodeNamePrefix: plan.nodeNamePrefix,
    exampleShoot: plan.exampleShoot,
    ...(plan.exampleShootNetworking ? { exampleShootNetworking: plan.exampleShootNetworking } : {}),
  };
}
