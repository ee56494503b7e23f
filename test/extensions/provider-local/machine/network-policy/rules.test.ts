/**
 * The enforcer's rules with real packets: a "machine" network namespace with a bridge of three local pods (their own
 * network namespaces) and a second bridge of two pods of another machine, the rules of renderNetworkPolicyRules
 * loaded into the machine's namespace as the enforcer loads them, agnhost's netexec serving TCP and UDP in every pod
 * and agnhost's connect trying. Per family (IPv6 and IPv4), each policy is checked by the connections it must let
 * through and the ones it must refuse, same-machine (through the bridge's netfilter hooks) and across machines.
 * Needs root, `ip`, `nft` and the agnhost binary (hack/ensure-binaries.sh); skipped without them.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cacheBinDir } from '../../../../../src/localenv/binaries.js';
import { which } from '../../../../../src/system/process.js';
import { DEBIAN_STATIC_BUSYBOX } from '../../../../../src/extensions/provider-local/machine/images.js';
import { runNft } from '../../../../../src/extensions/provider-local/machine/nft.js';
import { AntiSpoofing } from '../../../../../src/extensions/provider-local/machine/network-policy/anti-spoofing.js';
import {
  NETWORK_POLICY_TABLE,
  renderNetworkPolicyRules,
  type NamespaceInfo,
  type NetworkPolicyInfo,
  type PodInfo,
} from '../../../../../src/extensions/provider-local/machine/network-policy/rules.js';
import { waitFor } from '../../../../support/wait.js';

const AGNHOST = join(cacheBinDir(), 'agnhost');
const skip =
  process.getuid?.() !== 0 || which('nft') === undefined || which('ip') === undefined || !existsSync(AGNHOST);
// The echo requests to all nodes of a link come from busybox's ping (the test image's, hack/ensure-binaries.sh).
const noPing = !existsSync(DEBIAN_STATIC_BUSYBOX);

const ID = `gv6np${process.pid % 100_000}`;
const NODE = `${ID}-node`;
const HTTP = 8080;
const UDP = 8081;

/** The pods: name, namespace, labels, which machine, host number on its bridge. */
const PODS = [
  { name: 'a', namespace: 'default', labels: { app: 'a' }, node: 'n1', bridge: 1, host: 10 },
  { name: 'b', namespace: 'default', labels: { app: 'b' }, node: 'n1', bridge: 1, host: 11 },
  { name: 'c', namespace: 'other', labels: { app: 'c' }, node: 'n1', bridge: 1, host: 12 },
  { name: 'r1', namespace: 'other', labels: { app: 'r' }, node: 'n2', bridge: 2, host: 2 },
  { name: 'r2', namespace: 'remote', labels: { app: 'r' }, node: 'n2', bridge: 2, host: 3 },
] as const;
type PodName = (typeof PODS)[number]['name'];
const NAMESPACES: NamespaceInfo[] = [
  { metadata: { name: 'default', labels: { 'kubernetes.io/metadata.name': 'default' } } },
  { metadata: { name: 'other', labels: { 'kubernetes.io/metadata.name': 'other', team: 'x' } } },
  { metadata: { name: 'remote', labels: { 'kubernetes.io/metadata.name': 'remote' } } },
];

const v6 = (bridge: number, host: number) => `fd00:${bridge}::${host.toString(16)}`;
const v4 = (bridge: number, host: number) => `10.${bridge}.0.${host}`;
const address = (family: 'IPv6' | 'IPv4', pod: PodName) => {
  const p = PODS.find((x) => x.name === pod)!;
  return family === 'IPv6' ? v6(p.bridge, p.host) : v4(p.bridge, p.host);
};
const netnsOf = (pod: PodName) => `${ID}-${pod}`;

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

const podObjects: PodInfo[] = PODS.map((p) => ({
  metadata: { name: p.name, namespace: p.namespace, labels: { ...p.labels } },
  spec: {
    nodeName: p.node,
    containers: [
      {
        ports: [
          { name: 'http', containerPort: HTTP },
          { name: 'echo', containerPort: UDP, protocol: 'UDP' },
        ],
      },
    ],
  },
  status: { phase: 'Running', podIPs: [{ ip: v6(p.bridge, p.host) }, { ip: v4(p.bridge, p.host) }] },
}));

/** The machine's server, on its own port: what pods reach of the machine itself. */
const MACHINE_HTTP = 8090;

async function enforce(policies: NetworkPolicyInfo[]): Promise<void> {
  const script = renderNetworkPolicyRules({
    nodeName: 'n1',
    pods: podObjects,
    namespaces: NAMESPACES,
    policies,
    podBridge: 'br1',
  });
  await runNft(script, ['-f', '-'], NODE);
}

/** The link-local address of a network namespace's device, once duplicate address detection has passed. */
function linkLocal(ns: string, device: string): string | undefined {
  const out = execFileSync('ip', ['-n', ns, '-6', '-o', 'addr', 'show', 'dev', device, 'scope', 'link'], {
    encoding: 'utf8',
  });
  if (out.includes('tentative')) return undefined;
  return /inet6 (fe80::[0-9a-f:]+)\//.exec(out)?.[1];
}

/** Whether a TCP connection from `ns` to `[address%device]:port` is answered. */
function connectsTo(ns: string, address: string, device: string, port: number): boolean {
  const target = `[${address}%${device}]:${port}`;
  const result = spawnSync('ip', ['netns', 'exec', ns, AGNHOST, 'connect', target, '--timeout=2s'], {
    encoding: 'utf8',
  });
  return result.status === 0;
}

/** The link-local addresses answering an echo request to all nodes of `ns`'s eth0 link. */
function allNodesAnswers(ns: string): string[] {
  const ping = [DEBIAN_STATIC_BUSYBOX, 'ping', '-6', '-c', '3', '-w', '3', '-I', 'eth0', 'ff02::1'];
  const result = spawnSync('ip', ['netns', 'exec', ns, ...ping], { encoding: 'utf8' });
  return [...new Set([...result.stdout.matchAll(/from (fe80::[0-9a-f:]+[0-9a-f]):/g)].map((m) => m[1]!))].sort();
}

/** Whether `from` (a pod, or the machine itself) connects to `to`'s server: TCP by default, or UDP. */
function connects(family: 'IPv6' | 'IPv4', from: PodName | 'machine', to: PodName, protocol: 'tcp' | 'udp' = 'tcp') {
  const target = address(family, to);
  const host = family === 'IPv6' ? `[${target}]` : target;
  const port = protocol === 'tcp' ? HTTP : UDP;
  const ns = from === 'machine' ? NODE : netnsOf(from);
  const result = spawnSync(
    'ip',
    ['netns', 'exec', ns, AGNHOST, 'connect', `${host}:${port}`, `--protocol=${protocol}`, '--timeout=2s'],
    { encoding: 'utf8' },
  );
  return result.status === 0;
}

const servers: ChildProcess[] = [];

describe.skipIf(skip)('network policy rules with real packets', () => {
  beforeAll(async () => {
    ip('netns', 'add', NODE);
    ip('-n', NODE, 'link', 'set', 'lo', 'up');
    for (const key of ['net.ipv6.conf.all.forwarding=1', 'net.ipv4.ip_forward=1']) {
      execFileSync('ip', ['netns', 'exec', NODE, 'sysctl', '-qw', key]);
    }
    for (const bridge of [1, 2]) {
      ip('-n', NODE, 'link', 'add', `br${bridge}`, 'type', 'bridge');
      ip('-n', NODE, 'addr', 'add', `${v6(bridge, 1)}/64`, 'dev', `br${bridge}`, 'nodad');
      ip('-n', NODE, 'addr', 'add', `${v4(bridge, 1)}/24`, 'dev', `br${bridge}`);
      ip('-n', NODE, 'link', 'set', `br${bridge}`, 'up');
    }
    for (const p of PODS) {
      const ns = netnsOf(p.name);
      ip('netns', 'add', ns);
      ip('-n', ns, 'link', 'set', 'lo', 'up');
      ip('-n', NODE, 'link', 'add', `v${p.name}`, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns);
      ip('-n', NODE, 'link', 'set', `v${p.name}`, 'master', `br${p.bridge}`, 'up');
      ip('-n', ns, 'addr', 'add', `${v6(p.bridge, p.host)}/64`, 'dev', 'eth0', 'nodad');
      ip('-n', ns, 'addr', 'add', `${v4(p.bridge, p.host)}/24`, 'dev', 'eth0');
      ip('-n', ns, 'link', 'set', 'eth0', 'up');
      ip('-n', ns, '-6', 'route', 'add', 'default', 'via', v6(p.bridge, 1));
      ip('-n', ns, '-4', 'route', 'add', 'default', 'via', v4(p.bridge, 1));
      const server = spawn(
        'ip',
        ['netns', 'exec', ns, AGNHOST, 'netexec', `--http-port=${HTTP}`, `--udp-port=${UDP}`],
        { stdio: 'ignore' },
      );
      servers.push(server);
    }
    servers.push(
      spawn('ip', ['netns', 'exec', NODE, AGNHOST, 'netexec', `--http-port=${MACHINE_HTTP}`, '--udp-port=0'], {
        stdio: 'ignore',
      }),
    );
    for (const p of PODS) {
      await waitFor(() => connects('IPv6', 'machine', p.name) && connects('IPv4', 'machine', p.name), {
        timeoutMs: 20_000,
        message: `agnhost netexec in ${p.name}`,
      });
    }
  }, 60_000);

  afterAll(() => {
    for (const s of servers) s.kill('SIGKILL');
    for (const ns of [NODE, ...PODS.map((p) => netnsOf(p.name))]) spawnSync('ip', ['netns', 'del', ns]);
  });

  describe.each(['IPv6', 'IPv4'] as const)('%s', (family) => {
    const all = family === 'IPv6' ? '::/0' : '0.0.0.0/0';
    const r2Only = family === 'IPv6' ? `${address('IPv6', 'r2')}/128` : `${address('IPv4', 'r2')}/32`;
    const ok = (from: PodName | 'machine', to: PodName, protocol: 'tcp' | 'udp' = 'tcp') =>
      expect(connects(family, from, to, protocol), `${from} -> ${to} (${protocol}) allowed`).toBe(true);
    const refused = (from: PodName | 'machine', to: PodName, protocol: 'tcp' | 'udp' = 'tcp') =>
      expect(connects(family, from, to, protocol), `${from} -> ${to} (${protocol}) refused`).toBe(false);
    const denyIngress: NetworkPolicyInfo = {
      metadata: { name: 'deny-ingress', namespace: 'default' },
      spec: { podSelector: {}, policyTypes: ['Ingress'] },
    };
    const allowA = (from: NonNullable<NetworkPolicyInfo['spec']>['ingress']): NetworkPolicyInfo => ({
      metadata: { name: 'allow-a', namespace: 'default' },
      spec: { podSelector: { matchLabels: { app: 'a' } }, policyTypes: ['Ingress'], ingress: from },
    });

    it('lets everything through without policies', async () => {
      await enforce([]);
      ok('b', 'a');
      ok('c', 'a');
      ok('r1', 'a');
      ok('a', 'r2', 'udp');
    });

    it('refuses every peer with a default-deny ingress policy, but not the machine itself', async () => {
      await enforce([denyIngress]);
      refused('b', 'a');
      refused('c', 'a');
      refused('r1', 'a');
      refused('a', 'b', 'udp');
      ok('machine', 'a');
      // Egress is not restricted, and replies of allowed connections come back.
      ok('a', 'c');
      ok('a', 'r1', 'udp');
    });

    it('allows exactly the pods of a pod selector, in the policy namespace', async () => {
      await enforce([denyIngress, allowA([{ from: [{ podSelector: { matchLabels: { app: 'b' } } }] }])]);
      ok('b', 'a');
      refused('c', 'a');
      refused('r1', 'a');
      refused('c', 'b');
    });

    it('allows exactly the pods of a namespace selector, and of both selectors together', async () => {
      await enforce([denyIngress, allowA([{ from: [{ namespaceSelector: { matchLabels: { team: 'x' } } }] }])]);
      ok('c', 'a');
      ok('r1', 'a');
      refused('b', 'a');
      refused('r2', 'a');
      await enforce([
        denyIngress,
        allowA([
          { from: [{ namespaceSelector: { matchLabels: { team: 'x' } }, podSelector: { matchLabels: { app: 'r' } } }] },
        ]),
      ]);
      ok('r1', 'a');
      refused('c', 'a');
      refused('r2', 'a');
    });

    it(`allows an ipBlock of ${all} minus an except`, async () => {
      await enforce([denyIngress, allowA([{ from: [{ ipBlock: { cidr: all, except: [r2Only] } }] }])]);
      ok('r1', 'a');
      ok('b', 'a');
      refused('r2', 'a');
      refused('r1', 'b');
    });

    it('allows by port: numbered, named and ranges, per protocol', async () => {
      await enforce([denyIngress, allowA([{ ports: [{ port: HTTP }] }])]);
      ok('b', 'a');
      refused('b', 'a', 'udp');
      await enforce([denyIngress, allowA([{ ports: [{ port: 'echo', protocol: 'UDP' }] }])]);
      ok('r1', 'a', 'udp');
      refused('r1', 'a');
      await enforce([denyIngress, allowA([{ ports: [{ port: HTTP - 80, endPort: HTTP + 10 }] }])]);
      ok('c', 'a');
      await enforce([denyIngress, allowA([{ ports: [{ port: HTTP + 1, endPort: HTTP + 100 }] }])]);
      refused('c', 'a');
    });

    it('restricts egress to what it allows, with neighbour discovery intact', async () => {
      const egress: NetworkPolicyInfo = {
        metadata: { name: 'egress-dns-only', namespace: 'default' },
        spec: {
          podSelector: { matchLabels: { app: 'a' } },
          policyTypes: ['Egress'],
          egress: [
            {
              to: [{ namespaceSelector: { matchLabels: { team: 'x' } }, podSelector: { matchLabels: { app: 'c' } } }],
              ports: [{ port: UDP, protocol: 'UDP' }],
            },
          ],
        },
      };
      await enforce([egress]);
      // Forget every neighbour: what follows resolves them under the policy.
      for (const p of PODS) ip('-n', netnsOf(p.name), 'neigh', 'flush', 'all');
      ip('-n', NODE, 'neigh', 'flush', 'all');
      ok('a', 'c', 'udp');
      refused('a', 'c');
      refused('a', 'b');
      refused('a', 'r1', 'udp');
      // Ingress of a is not restricted by an egress policy; b's replies are.
      ok('b', 'a');
      ok('machine', 'a');
    });

    it('replaces the table whole: no policy left behind after the last one is gone', async () => {
      await enforce([denyIngress]);
      refused('b', 'a');
      await enforce([]);
      ok('b', 'a');
      const tables = execFileSync('ip', ['netns', 'exec', NODE, 'nft', 'list', 'tables'], { encoding: 'utf8' });
      expect(tables.match(new RegExp(NETWORK_POLICY_TABLE, 'g'))).toHaveLength(1);
    });

    it("fails closed with the Node's pod ranges: an address no known pod holds neither sends nor receives", async () => {
      // n1's pod ranges are bridge 1's; c is not known (the enforcer has not seen it yet).
      const nodePodCIDRs = ['fd00:1::/64', '10.1.0.0/24'];
      const withoutC = podObjects.filter((p) => p.metadata.name !== 'c');
      const load = (pods: PodInfo[], announced?: Map<string, string[]>) =>
        runNft(
          renderNetworkPolicyRules({
            nodeName: 'n1',
            pods,
            namespaces: NAMESPACES,
            policies: [],
            nodePodCIDRs,
            ...(announced ? { announced } : {}),
          }),
          ['-f', '-'],
          NODE,
        );
      await load(withoutC);
      refused('c', 'a');
      refused('c', 'r1');
      refused('a', 'c');
      refused('r1', 'c');
      ok('a', 'b');
      ok('r1', 'a');
      // The machine itself (the bridge's address) is not a pod and reaches every pod.
      ok('machine', 'c');
      // Announced by the CNI hook while its status has no address yet: known.
      const cWithoutStatus = { ...podObjects.find((p) => p.metadata.name === 'c')!, status: { phase: 'Pending' } };
      await load([...withoutC, cWithoutStatus], new Map([['other/c', [address(family, 'c')]]]));
      ok('c', 'a');
      ok('r1', 'c');
      await enforce([]);
      ok('c', 'a');
    });

    it("holds a pod's port to its own addresses and MAC: no answering for another pod, nor sending as it", async () => {
      await enforce([]);
      const spoofing = new AntiSpoofing(NODE);
      const [b, r1] = [netnsOf('b'), netnsOf('r1')];
      const stolen = address(family, 'c');
      const macOf = (ns: string) =>
        (
          JSON.parse(execFileSync('ip', ['-n', ns, '-j', 'link', 'show', 'eth0'], { encoding: 'utf8' })) as {
            address: string;
          }[]
        )[0]!.address;
      const bMAC = macOf(b);
      const forgetNeighbours = () => {
        for (const ns of [NODE, b, r1]) ip('-n', ns, 'neigh', 'flush', 'all');
      };
      // c is away (its veth off the bridge) and b holds its address: b answers neighbour discovery (ARP) for it, and replies as it.
      const stolenPrefix = `${stolen}/${family === 'IPv6' ? 128 : 32}`;
      const steal = (how: 'add' | 'del') =>
        ip('-n', b, 'addr', how, stolenPrefix, 'dev', 'eth0', ...(how === 'add' && family === 'IPv6' ? ['nodad'] : []));
      ip('-n', NODE, 'link', 'set', 'vc', 'nomaster');
      steal('add');
      let stealing = true;
      try {
        forgetNeighbours();
        expect(connects(family, 'r1', 'c'), "r1 -> c's address, answered by b, port free").toBe(true);

        await spoofing.add({ hostInterface: 'vb', mac: bMAC, ips: [address('IPv6', 'b'), address('IPv4', 'b')] });
        forgetNeighbours();
        expect(connects(family, 'r1', 'c'), "r1 -> c's address, b's answers for it dropped").toBe(false);
        // The machine already sends c's traffic to b: b's replies with c's source are dropped.
        ip('-n', NODE, 'neigh', 'replace', stolen, 'lladdr', bMAC, 'dev', 'br1', 'nud', 'permanent');
        expect(connects(family, 'r1', 'c'), "r1 -> c's address at b's MAC").toBe(false);
        ip('-n', NODE, 'neigh', 'del', stolen, 'dev', 'br1');
        steal('del');
        stealing = false;
        // b's own traffic passes, with neighbour discovery.
        forgetNeighbours();
        ok('b', 'r1');
        ok('r1', 'b');
        // With another MAC address nothing of b passes.
        ip('-n', b, 'link', 'set', 'eth0', 'address', '02:00:00:00:0b:0b');
        forgetNeighbours();
        refused('b', 'r1');
      } finally {
        ip('-n', b, 'link', 'set', 'eth0', 'address', bMAC);
        if (stealing) steal('del');
        ip('-n', NODE, 'link', 'set', 'vc', 'master', 'br1');
        await spoofing.remove('vb');
      }
      // The port's rules gone, the table stays (its dispatch with no ports).
      expect(await spoofing.collect(() => false)).toEqual([]);
      forgetNeighbours();
      await waitFor(() => connects(family, 'b', 'c'), { timeoutMs: 10_000, message: 'c back' });
    });
  });

  it.skipIf(noPing)(
    'passes no link-local or multicast packet between pods, nor from them to the machine, but neighbour discovery',
    async () => {
      const addresses = await waitFor(
        () => {
          const found = { a: linkLocal(netnsOf('a'), 'eth0'), b: linkLocal(netnsOf('b'), 'eth0') };
          const machine = linkLocal(NODE, 'br1');
          return found.a && found.b && machine ? { ...found, machine } : undefined;
        },
        { timeoutMs: 10_000, message: 'link-local addresses past duplicate address detection' },
      );
      const [a, b, machine] = [addresses.a!, netnsOf('b'), addresses.machine];
      // Without the table, the link carries all of it: what follows is the rules' doing.
      await runNft(
        `table inet ${NETWORK_POLICY_TABLE}\ndelete table inet ${NETWORK_POLICY_TABLE}\n`,
        ['-f', '-'],
        NODE,
      );
      expect(connectsTo(b, a, 'eth0', HTTP), 'b -> a link-local, no rules').toBe(true);
      expect(connectsTo(b, machine, 'eth0', MACHINE_HTTP), 'b -> machine link-local, no rules').toBe(true);
      expect(allNodesAnswers(b)).toEqual(expect.arrayContaining([a, machine]));

      for (const policies of [[], [{ metadata: { name: 'deny', namespace: 'default' }, spec: { podSelector: {} } }]]) {
        await enforce(policies);
        const what = `${policies.length} policies`;
        expect(connectsTo(b, a, 'eth0', HTTP), `b -> a link-local, ${what}`).toBe(false);
        expect(connectsTo(b, machine, 'eth0', MACHINE_HTTP), `b -> machine link-local, ${what}`).toBe(false);
        const answers = allNodesAnswers(b);
        expect(answers, what).not.toContain(a);
        expect(answers, what).not.toContain(machine);
        // Neighbour discovery still resolves the pods' addresses, by link-local sources and multicast solicitations.
        ip('-n', b, 'neigh', 'flush', 'all');
        ip('-n', NODE, 'neigh', 'flush', 'all');
        expect(connects('IPv6', 'b', 'c'), `b -> c, ${what}`).toBe(true);
        expect(connects('IPv6', 'machine', 'b'), `machine -> b, ${what}`).toBe(true);
      }
    },
  );
});

describe('renderNetworkPolicyRules', () => {
  const pod = (name: string, extra: { spec?: PodInfo['spec']; status?: PodInfo['status'] } = {}): PodInfo => ({
    metadata: { name, namespace: 'default', labels: { app: name } },
    spec: { nodeName: 'n1', containers: [{ ports: [{ name: 'http', containerPort: 8080 }] }], ...extra.spec },
    status: { phase: 'Running', podIPs: [{ ip: `fd00:1::${name.length}${name.charCodeAt(0) % 10}` }], ...extra.status },
  });
  const render = (pods: PodInfo[], policies: NetworkPolicyInfo[]) =>
    renderNetworkPolicyRules({ nodeName: 'n1', pods, namespaces: NAMESPACES, policies });
  const chainOf = (script: string, name: string) => {
    const start = script.indexOf(`chain ${name} {`);
    return start < 0 ? undefined : script.slice(start, script.indexOf('\n  }', start));
  };
  const deny: NetworkPolicyInfo = { metadata: { name: 'deny', namespace: 'default' }, spec: { podSelector: {} } };

  it('selects only running pods of this node with addresses of their own', () => {
    const script = render(
      [
        pod('a'),
        pod('host', { spec: { nodeName: 'n1', hostNetwork: true } }),
        pod('done', { status: { phase: 'Succeeded', podIPs: [{ ip: 'fd00:1::99' }] } }),
        pod('pending', { status: { phase: 'Pending', podIPs: [] } }),
        pod('elsewhere', { spec: { nodeName: 'n2' } }),
      ],
      [deny],
    );
    expect(script.match(/chain pod-\d+-ingress/g)).toEqual(['chain pod-0-ingress']);
    expect(chainOf(script, 'pod-0-ingress')).toContain('# default/a: default/deny');
  });

  it('defaults policyTypes as the API server does: Egress only with egress rules', () => {
    const withEgress: NetworkPolicyInfo = {
      metadata: { name: 'e', namespace: 'default' },
      spec: { podSelector: {}, egress: [{ ports: [{ port: 53, protocol: 'UDP' }] }] },
    };
    expect(render([pod('a')], [deny])).not.toContain('chain pod-0-egress');
    const script = render([pod('a')], [withEgress]);
    expect(chainOf(script, 'pod-0-egress')).toContain('meta l4proto udp th dport 53 accept');
    expect(chainOf(script, 'pod-0-ingress')).not.toContain('accept');
  });

  it('matches nothing for an except that holds the whole block or a named port the pod lacks', () => {
    const policy = (from: NetworkPolicyInfo['spec']): NetworkPolicyInfo => ({
      metadata: { name: 'p', namespace: 'default' },
      spec: from,
    });
    const covered = render(
      [pod('a')],
      [policy({ podSelector: {}, ingress: [{ from: [{ ipBlock: { cidr: 'fd00::/16', except: ['fd00::/8'] } }] }] })],
    );
    expect(chainOf(covered, 'pod-0-ingress')).not.toContain('accept');
    const unnamed = render([pod('a')], [policy({ podSelector: {}, ingress: [{ ports: [{ port: 'metrics' }] }] })]);
    expect(chainOf(unnamed, 'pod-0-ingress')).not.toContain('accept');
    const named = render([pod('a')], [policy({ podSelector: {}, ingress: [{ ports: [{ port: 'http' }] }] })]);
    expect(chainOf(named, 'pod-0-ingress')).toContain('meta l4proto tcp th dport 8080 accept');
  });

  it('keeps only the outermost of nested excepts, and the same script for the same objects in any order', () => {
    const policies: NetworkPolicyInfo[] = [
      deny,
      {
        metadata: { name: 'blocks', namespace: 'default' },
        spec: {
          podSelector: {},
          ingress: [{ from: [{ ipBlock: { cidr: '::/0', except: ['fd00:9:1::/48', 'fd00:9::/32', 'fd00:9::/32'] } }] }],
        },
      },
    ];
    const script = render([pod('a'), pod('bb')], policies);
    expect(script).toContain('ip6 saddr ::/0 ip6 saddr != fd00:9::/32 accept');
    expect(render([pod('bb'), pod('a')], [...policies].reverse())).toBe(script);
  });
});
