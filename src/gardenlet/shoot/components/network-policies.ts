/**
 * The NetworkPolicies of a seed namespace (a shoot's control plane, or `garden` for the seed itself), per IP family
 * of the seed: egress to networks that pods opt in to with the label `networking.gardener.cloud/<target>: allowed`,
 * and, in a shoot's namespace, Gardener's `deny-all`, so a control-plane pod reaches only what its labels allow.
 */
import { clusterDNSAddress } from '../../../apis/core/v1beta1/networks.js';
import type { V1NetworkPolicy, V1NetworkPolicyPeer } from '@kubernetes/client-node';
import { allowedTo, networkPolicyObject, POLICY_LABEL_PREFIX } from '../../../apis/core/v1beta1/network-policy.js';
import type { Seed } from '../../../apis/core/v1beta1/seed.js';
import type { NetworkingStatus } from '../../../apis/core/v1beta1/shoot.js';
import { isIPFamily } from '../../../apis/validation/ip-families.js';
import {
  containsCIDR,
  formatCIDR,
  formatIP,
  mustParseCIDR,
  parseCIDR,
  type CIDR,
  type IPFamily,
} from '../../../net/cidr.js';

import type { Shoot } from '../../../apis/core/v1beta1/shoot.js';
import type { ResourceClient } from '../../../runtime/client.js';
import { applyAll, deleteAll } from '../../apply.js';
import type { ComponentContext, DeployWaiter } from '../../component.js';
import { seedNamespaceName, shootLabels } from '../../../apis/core/v1beta1/names.js';
import { Refs } from '../../../apis/refs.js';

export { allowedTo };
/** Ranges that are not the public internet, per family. */
export const PRIVATE_RANGES: Readonly<Record<IPFamily, readonly string[]>> = {
  IPv4: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10'],
  IPv6: ['fe80::/10', 'fc00::/7'],
};
const ALL_ADDRESSES: Readonly<Record<IPFamily, string>> = { IPv4: '0.0.0.0/0', IPv6: '::/0' };
/** node-local-dns listens on these link-local/ULA addresses on every node. */
export const NODE_LOCAL_DNS: Readonly<Record<IPFamily, string>> = {
  IPv4: '169.254.20.10/32',
  IPv6: 'fd30:1319:f1e:230b::1/128',
};
const DNS_PORTS = [53, 8053];

export const NetworkPolicyName = {
  denyAll: 'deny-all',
  publicNetworks: 'allow-to-public-networks',
  privateNetworks: 'allow-to-private-networks',
  blockedCIDRs: 'allow-to-blocked-cidrs',
  dns: 'allow-to-dns',
} as const;

export interface NetworkPolicyValues {
  readonly namespace: string;
  readonly seed: Seed;
  /** The shoot's networks (status.networking), for a shoot namespace; absent for the seed's own `garden` namespace. */
  readonly shootNetworks?: NetworkingStatus;
  readonly labels?: Record<string, string>;
}

export function seedFamilies(seed: Seed): IPFamily[] {
  const families = (seed.spec.networks?.ipFamilies ?? []).filter(isIPFamily);
  return families.length > 0 ? families : ['IPv4'];
}

function parsedList(values: readonly (string | undefined)[]): CIDR[] {
  return values.flatMap((v) => {
    const cidr = v === undefined ? undefined : parseCIDR(v);
    return cidr ? [cidr] : [];
  });
}

function seedNetworks(seed: Seed): CIDR[] {
  const n = seed.spec.networks ?? {};
  return parsedList([n.pods, n.services, n.nodes]);
}

function shootNetworkCIDRs(networks: NetworkingStatus | undefined): CIDR[] {
  return parsedList([...(networks?.pods ?? []), ...(networks?.services ?? []), ...(networks?.nodes ?? [])]);
}

function uniqueCanonical(cidrs: readonly CIDR[]): string[] {
  return [...new Set(cidrs.map(formatCIDR))];
}

/** `except` entries must lie strictly inside the block. */
function strictlyInside(block: CIDR, cidrs: readonly CIDR[]): CIDR[] {
  return cidrs.filter((c) => c.prefix > block.prefix && containsCIDR(block, c));
}

function policy(
  values: NetworkPolicyValues,
  name: string,
  target: string,
  egress: V1NetworkPolicyPeer[][],
  ports?: boolean,
): V1NetworkPolicy {
  const description = `Allows egress to ${target.replace(/^to-/, '').replace(/-/g, ' ')}.`;
  return networkPolicyObject({ name, ...values }, description, {
    podSelector: { matchLabels: { [`${POLICY_LABEL_PREFIX}/${target}`]: 'allowed' } },
    policyTypes: ['Egress'],
    egress: egress.map((to) => ({
      to,
      ...(ports ? { ports: DNS_PORTS.flatMap((port) => ['UDP', 'TCP'].map((protocol) => ({ protocol, port }))) } : {}),
    })),
  });
}

/** Egress to the internet of each seed family: everything but private ranges, blocked CIDRs and the seed's networks. */
export function publicNetworksPolicy(values: NetworkPolicyValues): V1NetworkPolicy {
  const families = seedFamilies(values.seed);
  const singleStack = families.length === 1;
  const blocked = parsedList(values.seed.spec.networks?.blockCIDRs ?? []);
  const peers = families.map((family): V1NetworkPolicyPeer => {
    const except = [
      ...PRIVATE_RANGES[family].map(mustParseCIDR),
      ...blocked.filter((c) => c.family === family),
      ...(singleStack ? seedNetworks(values.seed).filter((c) => c.family === family) : []),
    ].filter((c) => c.prefix > 0);
    return { ipBlock: { cidr: ALL_ADDRESSES[family], except: uniqueCanonical(except) } };
  });
  return policy(values, NetworkPolicyName.publicNetworks, 'to-public-networks', [peers]);
}

/** Egress to private ranges of each seed family, except the seed's and the shoot's own networks inside them. */
export function privateNetworksPolicy(values: NetworkPolicyValues): V1NetworkPolicy {
  const own = [...seedNetworks(values.seed), ...shootNetworkCIDRs(values.shootNetworks)];
  const peers = seedFamilies(values.seed).flatMap((family) =>
    PRIVATE_RANGES[family].map((range): V1NetworkPolicyPeer => {
      const block = mustParseCIDR(range);
      const except = uniqueCanonical(strictlyInside(block, own));
      return { ipBlock: { cidr: range, ...(except.length > 0 ? { except } : {}) } };
    }),
  );
  return policy(values, NetworkPolicyName.privateNetworks, 'to-private-networks', [peers]);
}

/** Egress to the seed's blocked CIDRs, for the few components that need them; none when there are none. */
export function blockedCIDRsPolicy(values: NetworkPolicyValues): V1NetworkPolicy | undefined {
  const blocked = uniqueCanonical(parsedList(values.seed.spec.networks?.blockCIDRs ?? []));
  if (blocked.length === 0) return undefined;
  return policy(values, NetworkPolicyName.blockedCIDRs, 'to-blocked-cidrs', [
    blocked.map((cidr) => ({ ipBlock: { cidr } })),
  ]);
}

/** DNS (UDP/TCP 53 and 8053) to the cluster DNS service and node-local DNS of each seed family. */
export function dnsPolicy(values: NetworkPolicyValues): V1NetworkPolicy {
  const families = seedFamilies(values.seed);
  const services = parsedList([values.seed.spec.networks?.services]);
  const peers: V1NetworkPolicyPeer[] = [];
  for (const family of families) {
    for (const range of services.filter((s) => s.family === family)) {
      const ip = formatIP(clusterDNSAddress(range));
      peers.push({ ipBlock: { cidr: `${ip}/${family === 'IPv4' ? 32 : 128}` } });
    }
    peers.push({ ipBlock: { cidr: NODE_LOCAL_DNS[family] } });
  }
  // Policies see a Service's traffic after its address is translated: the cluster DNS pods are the peer that counts.
  peers.push({
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
    podSelector: { matchExpressions: [{ key: 'k8s-app', operator: 'In', values: ['kube-dns'] }] },
  });
  return policy(values, NetworkPolicyName.dns, 'to-dns', [peers], true);
}

/** Gardener's `deny-all` of a shoot's namespace: no ingress and no egress for any pod but what other policies allow. */
export function denyAllPolicy(values: NetworkPolicyValues): V1NetworkPolicy {
  return networkPolicyObject(
    { name: NetworkPolicyName.denyAll, ...values },
    'Disables all ingress and egress traffic into/from this namespace, except what other policies allow.',
    { podSelector: {}, policyTypes: ['Ingress', 'Egress'] },
  );
}

export function desiredNetworkPolicies(values: NetworkPolicyValues): V1NetworkPolicy[] {
  return [
    // The seed's own `garden` namespace runs what the operator deploys there: only a shoot's namespace denies all.
    values.shootNetworks !== undefined ? denyAllPolicy(values) : undefined,
    publicNetworksPolicy(values),
    privateNetworksPolicy(values),
    blockedCIDRsPolicy(values),
    dnsPolicy(values),
  ].filter((p): p is V1NetworkPolicy => p !== undefined);
}

/** Policies this component manages that must not exist for these values. */
export function staleNetworkPolicyNames(values: NetworkPolicyValues): string[] {
  const wanted = new Set(desiredNetworkPolicies(values).map((p) => p.metadata?.name));
  return Object.values(NetworkPolicyName).filter((name) => !wanted.has(name));
}

/** The egress NetworkPolicies of a namespace (a shoot's, or `garden` for the seed). */
export class EgressNetworkPolicies implements DeployWaiter {
  constructor(
    private readonly client: ResourceClient,
    private readonly values: NetworkPolicyValues,
  ) {}
  async deploy(ctx: ComponentContext) {
    await applyAll(this.client, Refs.networkPolicy, desiredNetworkPolicies(this.values), ctx);
    await deleteAll(this.client, Refs.networkPolicy, staleNetworkPolicyNames(this.values), this.values.namespace, ctx);
  }
  destroy(ctx: ComponentContext) {
    return destroyNetworkPolicies(this.client, this.values.namespace, ctx);
  }
}

/** Deletes the policies this component manages, by name: no seed needed. */
export function destroyNetworkPolicies(
  client: ResourceClient,
  namespace: string,
  ctx: ComponentContext,
): Promise<void> {
  return deleteAll(client, Refs.networkPolicy, Object.values(NetworkPolicyName), namespace, ctx);
}

export function shootNetworkPolicyValues(shoot: Shoot, seed: Seed, networking: NetworkingStatus): NetworkPolicyValues {
  return { namespace: seedNamespaceName(shoot), seed, shootNetworks: networking, labels: shootLabels(shoot) };
}
