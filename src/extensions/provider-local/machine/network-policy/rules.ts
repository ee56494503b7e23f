/**
 * Kubernetes NetworkPolicies (`networking.k8s.io/v1`) as one nftables table of a machine: what the enforcer
 * (enforcer.ts) writes into the machine's network namespace whenever pods, namespaces or policies change.
 *
 * The table, for the pods of this node that some policy selects:
 *   - base chain `egress` on the forward hook (traffic a local pod sends to other pods, machines, the world) and
 *     `egress-to-node` on the input hook (to the machine itself): a verdict map from the pod's address to its
 *     chain `pod-N-egress`, which accepts what one of its policies' egress rules allows and rejects the rest;
 *   - base chain `ingress` on the forward hook (traffic to a local pod, from other machines and, through the
 *     bridge netfilter hooks, from pods of the same machine) with `pod-N-ingress` chains alike.
 * Egress and ingress are separate base chains: an accept ends only its own chain, so traffic between two local
 * pods passes both the sender's egress and the receiver's ingress. Replies of allowed connections
 * (`ct state established,related`) and ICMPv6 neighbour discovery pass always; traffic from the machine itself to
 * its pods (the kubelet's probes) is not filtered, as Kubernetes requires. A pod no policy selects for a direction
 * is not in that direction's map: all of its traffic passes.
 *
 * Link-local and multicast traffic never passes between pods, whatever the policies say: the maps know pods by
 * their routable addresses, and a pod chooses its own link-local address. Forwarded packets from or to `fe80::/10`,
 * to `ff00::/8`, and IPv4's `169.254.0.0/16`, multicast and broadcast are dropped (neighbour discovery excepted), as
 * on calico, where each pod is alone on its link; so are such packets from the pods' bridge to the machine itself.
 *
 * Fail-closed, given the Node's pod ranges: traffic from or to an address of those ranges that no known pod of this
 * Node holds (nor the Node itself, on the bridge and tunnels: the first address of each range) is dropped. A new
 * pod's addresses are known before its containers start: the CNI hook (cni-hook.ts) announces them from the sandbox's
 * network setup and waits until a ruleset with them is in force, as calico's CNI plugin waits for its endpoint.
 *
 * Semantics as the API defines them: the peers of a rule are alternatives (pod selector in the policy's namespace,
 * namespace selector, both together, or an ipBlock with its `except`s), as are its ports; a rule without peers
 * allows every peer, one without ports every port; `endPort` makes a range; named ports are looked up in the
 * containers of the pod that receives the traffic (the selected pod for ingress, the peer pod for egress) and
 * match nothing where it has no such port. Pods without addresses, host-network pods and finished pods are neither
 * selected nor peers.
 *
 * Kept as one file (over 400 lines): one pure translation of the semantics above into one table, whose selection, ports
 * and rendering depend on each other; the enforcer and the CNI hook are files of their own.
 */
import type { IPFamily } from '../../../../net/cidr.js';
import {
  containsCIDR,
  formatCIDR,
  formatIP,
  nthAddress,
  overlaps,
  parseCIDR,
  parseIP,
  type CIDR,
} from '../../../../net/cidr.js';
import { labelSelectorMatches, type LabelSelector } from '../../../../apis/meta/label-selector.js';

/** The table the enforcer owns in each machine's network namespace. */
export const NETWORK_POLICY_TABLE = 'gardener-ipv6-network-policy';

export interface ContainerPort {
  name?: string;
  containerPort: number;
  protocol?: string;
}

export interface PodInfo {
  metadata: { name?: string; namespace?: string; labels?: Record<string, string> };
  spec?: {
    nodeName?: string;
    hostNetwork?: boolean;
    containers?: { ports?: ContainerPort[] }[];
    initContainers?: { ports?: ContainerPort[]; restartPolicy?: string }[];
  };
  status?: { phase?: string; podIP?: string; podIPs?: { ip: string }[] };
}

export interface NamespaceInfo {
  metadata: { name?: string; labels?: Record<string, string> };
}

export interface NetworkPolicyPort {
  protocol?: string;
  port?: number | string;
  endPort?: number;
}

export interface NetworkPolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
}

export interface NetworkPolicyInfo {
  metadata: { name?: string; namespace?: string };
  spec?: {
    podSelector?: LabelSelector;
    policyTypes?: string[];
    ingress?: { from?: NetworkPolicyPeer[]; ports?: NetworkPolicyPort[] }[];
    egress?: { to?: NetworkPolicyPeer[]; ports?: NetworkPolicyPort[] }[];
  };
}

export interface RulesInput {
  /** This machine's Node name: its pods are the ones policies are enforced for. */
  nodeName: string;
  pods: readonly PodInfo[];
  namespaces: readonly NamespaceInfo[];
  policies: readonly NetworkPolicyInfo[];
  /**
   * Addresses the CNI hook announced for pods of this Node (`namespace/name` → addresses), used while the pod's
   * status has none yet.
   */
  announced?: ReadonlyMap<string, readonly string[]>;
  /** The Node's pod ranges: traffic of their addresses that no known pod holds is dropped (fail-closed). */
  nodePodCIDRs?: readonly string[];
  /** The bridge of the Node's pods: their link-local and multicast packets to the Node are dropped there. */
  podBridge?: string;
}

/** The pods with the announced addresses of this Node's pods whose status has none yet. */
export function withAnnouncedAddresses(input: RulesInput): PodInfo[] {
  const announced = input.announced;
  if (announced === undefined || announced.size === 0) return [...input.pods];
  return input.pods.map((pod) => {
    const ips = announced.get(podKey(pod));
    if (ips === undefined || pod.spec?.nodeName !== input.nodeName || podAddresses(pod).length > 0) return pod;
    return { ...pod, status: { ...pod.status, podIPs: ips.map((ip) => ({ ip })) } };
  });
}

type Direction = 'ingress' | 'egress';
const PROTOCOLS = ['TCP', 'UDP', 'SCTP'] as const;
type Protocol = (typeof PROTOCOLS)[number];

/** An address match of one family: addresses and prefixes, minus others. */
interface AddressMatch {
  family: IPFamily;
  include: string[];
  exclude: string[];
}

/** One line of a pod chain: addresses (of the peer; undefined: any) and ports (of the pod that receives). */
interface Match {
  address: AddressMatch | undefined;
  protocol: Protocol | undefined;
  /** `80`, `8000-8080`; empty: every port of the protocol. */
  ports: string[];
}

/** The pod's addresses in canonical form (RFC 5952 for IPv6), at most one per family. */
export function podAddresses(pod: PodInfo): { family: IPFamily; address: string }[] {
  const texts = pod.status?.podIPs?.map((p) => p.ip) ?? (pod.status?.podIP ? [pod.status.podIP] : []);
  const out: { family: IPFamily; address: string }[] = [];
  for (const text of texts) {
    const ip = parseIP(text);
    if (ip === undefined || out.some((a) => a.family === ip.family)) continue;
    out.push({ family: ip.family, address: formatIP(ip) });
  }
  return out;
}

/** Whether a pod takes part in policies: it runs, has addresses of its own and is not on the host's network. */
export function isPolicyPod(pod: PodInfo): boolean {
  const phase = pod.status?.phase;
  return pod.spec?.hostNetwork !== true && phase !== 'Succeeded' && phase !== 'Failed' && podAddresses(pod).length > 0;
}

/** The policy's types, as the API server defaults them: Ingress always, Egress when it has egress rules. */
export function policyTypes(policy: NetworkPolicyInfo): Direction[] {
  const types = policy.spec?.policyTypes;
  if (types !== undefined && types.length > 0) {
    return (['ingress', 'egress'] as const).filter((d) => types.some((t) => t.toLowerCase() === d));
  }
  return (policy.spec?.egress?.length ?? 0) > 0 ? ['ingress', 'egress'] : ['ingress'];
}

function protocolOf(text: string | undefined): Protocol | undefined {
  const p = text ?? 'TCP';
  return (PROTOCOLS as readonly string[]).includes(p) ? (p as Protocol) : undefined;
}

const isNamed = (p: NetworkPolicyPort) => typeof p.port === 'string' && !/^\d+$/.test(p.port);

/** The container port of a pod with this name and protocol (sidecar init containers count). */
function namedPort(pod: PodInfo, name: string, protocol: Protocol): number | undefined {
  const containers = [
    ...(pod.spec?.containers ?? []),
    ...(pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always'),
  ];
  for (const c of containers) {
    for (const p of c.ports ?? []) {
      if (p.name === name && protocolOf(p.protocol) === protocol) return p.containerPort;
    }
  }
  return undefined;
}

/** Prefixes without those inside another of the list (overlapping prefixes are nested): nft refuses overlaps. */
function outermost(cidrs: readonly CIDR[]): string[] {
  const kept = cidrs.filter((c, i) => !cidrs.some((o, j) => containsCIDR(o, c) && (!containsCIDR(c, o) || j < i)));
  return kept.map(formatCIDR).sort();
}

interface Peer {
  /** Address matches; undefined: any address (a rule without `from`/`to`). */
  addresses: AddressMatch[] | undefined;
  /** The peer pods: what named ports of egress rules resolve against (every pod for "any"). */
  pods: readonly PodInfo[];
}

function podAddressMatches(pods: readonly PodInfo[]): AddressMatch[] {
  const byFamily = new Map<IPFamily, Set<string>>();
  for (const pod of pods) {
    for (const { family, address } of podAddresses(pod)) {
      byFamily.set(family, (byFamily.get(family) ?? new Set()).add(address));
    }
  }
  return [...byFamily].map(([family, set]) => ({ family, include: [...set].sort(), exclude: [] }));
}

class Selection {
  private readonly namespaceLabels = new Map<string, Record<string, string>>();
  readonly pods: PodInfo[];

  constructor(input: RulesInput) {
    for (const ns of input.namespaces) {
      if (ns.metadata.name !== undefined) this.namespaceLabels.set(ns.metadata.name, ns.metadata.labels ?? {});
    }
    this.pods = input.pods.filter(isPolicyPod);
  }

  /** Pods of `namespace` matching `podSelector`; in every namespace matching `namespaceSelector` when given. */
  podsOf(namespace: string, podSelector: LabelSelector | undefined, namespaceSelector?: LabelSelector): PodInfo[] {
    return this.pods.filter((pod) => {
      const ns = pod.metadata.namespace ?? '';
      if (namespaceSelector !== undefined) {
        const labels = this.namespaceLabels.get(ns);
        if (labels === undefined || !labelSelectorMatches(namespaceSelector, labels)) return false;
      } else if (ns !== namespace) {
        return false;
      }
      return labelSelectorMatches(podSelector ?? {}, pod.metadata.labels);
    });
  }

  peers(policyNamespace: string, peers: NetworkPolicyPeer[] | undefined): Peer[] {
    if (peers === undefined || peers.length === 0) return [{ addresses: undefined, pods: this.pods }];
    return peers.map((peer): Peer => {
      if (peer.ipBlock !== undefined) {
        const cidr = parseCIDR(peer.ipBlock.cidr);
        if (cidr === undefined) return { addresses: [], pods: [] };
        const excepts = (peer.ipBlock.except ?? [])
          .map((e) => parseCIDR(e))
          .filter((e): e is CIDR => e !== undefined && e.family === cidr.family && overlaps(e, cidr));
        // An except that holds the whole block leaves nothing.
        if (excepts.some((e) => containsCIDR(e, cidr))) return { addresses: [], pods: [] };
        return {
          addresses: [{ family: cidr.family, include: [formatCIDR(cidr)], exclude: outermost(excepts) }],
          pods: [],
        };
      }
      if (peer.podSelector === undefined && peer.namespaceSelector === undefined) return { addresses: [], pods: [] };
      const pods = this.podsOf(policyNamespace, peer.podSelector, peer.namespaceSelector);
      return { addresses: podAddressMatches(pods), pods };
    });
  }
}

/** Port specs by protocol, named ports resolved in `receiver`; an empty list: every port of the protocol. */
function resolvePorts(ports: readonly NetworkPolicyPort[], receiver: PodInfo | undefined): Map<Protocol, string[]> {
  const out = new Map<Protocol, Set<string> | 'all'>();
  for (const p of ports) {
    const protocol = protocolOf(p.protocol);
    if (protocol === undefined) continue;
    if (p.port === undefined) {
      out.set(protocol, 'all');
      continue;
    }
    let port: number | undefined;
    if (typeof p.port === 'number') port = p.port;
    else if (!isNamed(p)) port = Number(p.port);
    else if (receiver !== undefined) port = namedPort(receiver, p.port, protocol);
    if (port === undefined || port < 1 || port > 65535) continue;
    const end = p.endPort !== undefined && !isNamed(p) && p.endPort > port ? Math.min(p.endPort, 65535) : undefined;
    const current = out.get(protocol) ?? new Set<string>();
    if (current !== 'all') out.set(protocol, current.add(end !== undefined ? `${port}-${end}` : String(port)));
  }
  return new Map([...out].map(([protocol, set]) => [protocol, set === 'all' ? [] : [...set].sort()]));
}

/** The lines of one policy rule for one local pod: peers × protocols. */
function ruleMatches(direction: Direction, pod: PodInfo, peers: Peer[], ports: NetworkPolicyPort[] | undefined) {
  const podFamilies = new Set(podAddresses(pod).map((a) => a.family));
  const out: Match[] = [];
  const emit = (address: AddressMatch | undefined, byProtocol: Map<Protocol, string[]> | undefined) => {
    if (address !== undefined && (!podFamilies.has(address.family) || address.include.length === 0)) return;
    if (byProtocol === undefined) out.push({ address, protocol: undefined, ports: [] });
    else for (const [protocol, list] of byProtocol) out.push({ address, protocol, ports: list });
  };
  const forPeers = (byProtocol: Map<Protocol, string[]> | undefined) => {
    for (const peer of peers) {
      if (peer.addresses === undefined) emit(undefined, byProtocol);
      else for (const address of peer.addresses) emit(address, byProtocol);
    }
  };
  if (ports === undefined || ports.length === 0) {
    forPeers(undefined);
    return out;
  }
  const numbered = ports.filter((p) => !isNamed(p));
  const named = ports.filter(isNamed);
  if (numbered.length > 0) forPeers(resolvePorts(numbered, undefined));
  if (named.length > 0 && direction === 'ingress') forPeers(resolvePorts(named, pod));
  if (named.length > 0 && direction === 'egress') {
    // The destination pod's ports: one match per destination pod (none for ipBlocks).
    for (const peer of peers) {
      for (const destination of peer.pods) {
        const byProtocol = resolvePorts(named, destination);
        if (byProtocol.size === 0) continue;
        for (const address of podAddressMatches([destination])) emit(address, byProtocol);
      }
    }
  }
  return out;
}

const list = (items: readonly string[]) => (items.length === 1 ? items[0]! : `{ ${items.join(', ')} }`);

function matchText(direction: Direction, m: Match): string {
  const parts: string[] = [];
  if (m.address !== undefined) {
    const f = m.address.family === 'IPv6' ? 'ip6' : 'ip';
    const field = direction === 'ingress' ? 'saddr' : 'daddr';
    parts.push(`${f} ${field} ${list(m.address.include)}`);
    if (m.address.exclude.length > 0) parts.push(`${f} ${field} != ${list(m.address.exclude)}`);
  }
  if (m.protocol !== undefined) {
    parts.push(`meta l4proto ${m.protocol.toLowerCase()}`);
    if (m.ports.length > 0) parts.push(`th dport ${list(m.ports)}`);
  }
  parts.push('accept');
  return parts.join(' ');
}

interface PodChain {
  name: string;
  direction: Direction;
  addresses: { family: IPFamily; address: string }[];
  comment: string;
  lines: string[];
}

/** The nft script that replaces the table with what the policies say for the pods of `nodeName`. */
export function renderNetworkPolicyRules(input: RulesInput): string {
  const selection = new Selection({ ...input, pods: withAnnouncedAddresses(input) });
  const local = selection.pods
    .filter((pod) => pod.spec?.nodeName === input.nodeName)
    .sort((a, b) => podKey(a).localeCompare(podKey(b)));
  const policies = [...input.policies].sort((a, b) => policyKey(a).localeCompare(policyKey(b)));
  const chains: PodChain[] = [];
  local.forEach((pod, index) => {
    for (const direction of ['ingress', 'egress'] as const) {
      const applying = policies.filter(
        (p) =>
          p.metadata.namespace === pod.metadata.namespace &&
          policyTypes(p).includes(direction) &&
          labelSelectorMatches(p.spec?.podSelector ?? {}, pod.metadata.labels),
      );
      if (applying.length === 0) continue;
      const lines: string[] = [];
      for (const policy of applying) {
        const rules = (direction === 'ingress' ? policy.spec?.ingress : policy.spec?.egress) ?? [];
        rules.forEach((rule, i) => {
          const peerSpecs =
            direction === 'ingress'
              ? (rule as { from?: NetworkPolicyPeer[] }).from
              : (rule as { to?: NetworkPolicyPeer[] }).to;
          const peers = selection.peers(policy.metadata.namespace ?? '', peerSpecs);
          const matches = ruleMatches(direction, pod, peers, rule.ports);
          if (matches.length === 0) return;
          lines.push(`# ${policyKey(policy)} ${direction}[${i}]`);
          for (const m of matches) lines.push(matchText(direction, m));
        });
      }
      chains.push({
        name: `pod-${index}-${direction}`,
        direction,
        addresses: podAddresses(pod),
        comment: `${podKey(pod)}: ${applying.map(policyKey).join(', ')}`,
        lines,
      });
    }
  });
  return tableScript(chains, failClosed(input.nodePodCIDRs ?? [], local), input.podBridge);
}

/** What fail-closed needs: the Node's pod ranges, and the addresses in them that may send and receive. */
interface FailClosed {
  cidrs: { family: IPFamily; cidr: string }[];
  known: { family: IPFamily; address: string }[];
}

function failClosed(nodePodCIDRs: readonly string[], local: readonly PodInfo[]): FailClosed {
  const cidrs = nodePodCIDRs.flatMap((text) => {
    const cidr = parseCIDR(text);
    return cidr === undefined ? [] : [{ family: cidr.family, cidr: formatCIDR(cidr) }];
  });
  // Without the Node's ranges nothing fails closed, and the sets stay empty.
  if (cidrs.length === 0) return { cidrs, known: [] };
  const known = [
    ...cidrs.map(({ family, cidr }) => ({ family, address: formatIP(nthAddress(parseCIDR(cidr)!, 1)!) })),
    ...local.flatMap(podAddresses),
  ];
  return { cidrs, known };
}

const podKey = (pod: PodInfo) => `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
const policyKey = (p: NetworkPolicyInfo) => `${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''}`;

/** ICMPv6 neighbour discovery and router messages: never subject to policies. */
const ND_TYPES =
  'icmpv6 type { nd-router-solicit, nd-router-advert, nd-neighbor-solicit, nd-neighbor-advert, nd-redirect } accept';

/** Addresses of one link: link-local, multicast and broadcast, which never pass between pods. */
const LINK_SCOPE = [
  'ip6 saddr fe80::/10 drop',
  'ip6 daddr { fe80::/10, ff00::/8 } drop',
  'ip saddr 169.254.0.0/16 drop',
  'ip daddr { 169.254.0.0/16, 224.0.0.0/4, 255.255.255.255 } drop',
];

function tableScript(chains: PodChain[], closed: FailClosed, podBridge: string | undefined): string {
  const map = (direction: Direction, family: IPFamily) => {
    const type = family === 'IPv6' ? 'ipv6_addr' : 'ipv4_addr';
    const elements = chains
      .filter((c) => c.direction === direction)
      .flatMap((c) => c.addresses.filter((a) => a.family === family).map((a) => `${a.address} : jump ${c.name}`));
    return [
      `  map ${direction}-pods-${family === 'IPv6' ? 'v6' : 'v4'} {`,
      `    type ${type} : verdict`,
      ...(elements.length > 0 ? [`    elements = { ${elements.join(', ')} }`] : []),
      '  }',
    ];
  };
  const knownSet = (family: IPFamily) => {
    const elements = [...new Set(closed.known.filter((a) => a.family === family).map((a) => a.address))];
    return [
      `  set known-pods-${family === 'IPv6' ? 'v6' : 'v4'} {`,
      `    type ${family === 'IPv6' ? 'ipv6_addr' : 'ipv4_addr'}`,
      ...(elements.length > 0 ? [`    elements = { ${elements.join(', ')} }`] : []),
      '  }',
    ];
  };
  const base = (name: string, hook: string, priority: string, direction: Direction, linkScope: string[] = []) => {
    const field = direction === 'ingress' ? 'daddr' : 'saddr';
    return [
      `  chain ${name} {`,
      `    type filter hook ${hook} priority ${priority}; policy accept;`,
      `    ${ND_TYPES}`,
      ...linkScope.map((line) => `    ${line}`),
      '    ct state established,related accept',
      ...closed.cidrs.map(({ family, cidr }) => {
        const ip = family === 'IPv6' ? 'ip6' : 'ip';
        return `    ${ip} ${field} ${cidr} ${ip} ${field} != @known-pods-${family === 'IPv6' ? 'v6' : 'v4'} drop`;
      }),
      `    ip6 ${field} vmap @${direction}-pods-v6`,
      `    ip ${field} vmap @${direction}-pods-v4`,
      '  }',
    ];
  };
  const podChains = chains.flatMap((c) => [
    `  chain ${c.name} {`,
    `    # ${c.comment.replace(/[\n\r]/g, ' ')}`,
    ...c.lines.map((l) => `    ${l}`),
    '    meta l4proto tcp reject with tcp reset',
    '    reject with icmpx admin-prohibited',
    '  }',
  ]);
  return [
    `table inet ${NETWORK_POLICY_TABLE}`,
    `delete table inet ${NETWORK_POLICY_TABLE}`,
    `table inet ${NETWORK_POLICY_TABLE} {`,
    ...knownSet('IPv6'),
    ...knownSet('IPv4'),
    ...map('ingress', 'IPv6'),
    ...map('ingress', 'IPv4'),
    ...map('egress', 'IPv6'),
    ...map('egress', 'IPv4'),
    ...podChains,
    // Every forwarded packet passes the egress chain first: its link-scope drops hold for both directions.
    ...base('egress', 'forward', 'filter - 10', 'egress', LINK_SCOPE),
    ...base(
      'egress-to-node',
      'input',
      'filter - 10',
      'egress',
      podBridge === undefined ? [] : LINK_SCOPE.map((line) => `iifname ${JSON.stringify(podBridge)} ${line}`),
    ),
    ...base('ingress', 'forward', 'filter - 5', 'ingress'),
    '}',
    '',
  ].join('\n');
}
