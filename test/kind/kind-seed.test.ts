/**
 * The kind IPv6 seed, end to end and for real: `hack/local/up.sh ipv6` builds every image without a registry
 * (hack/kind/build-images.sh), creates a kind cluster of its own name, installs the chart and creates the example
 * Seed and IPv6 Shoot; the shoot's control plane and machines then run as pods of the kind cluster, its API server
 * answers at its AAAA address from this host, its Nodes are Ready with addresses of its nodes range and its pods talk
 * over IPv6; the seed's NetworkPolicies are in force on its Node, and root in a machine sends as no other pod of the
 * seed there (the Node's CNI chain asks the chart's enforcer for each pod's port on the bridge); deleting it leaves
 * nothing of it on the seed. A dual-stack kind cluster then joins that garden as a second seed
 * (`hack/local/seed-up.sh dual --garden ipv6`): its gardenlet reaches the garden with credentials of its own, which
 * the garden refuses for another seed's objects; an IPv4 shoot created in the garden without a seed lands on it, is
 * migrated to dual-stack by a patch of its families and answers at both addresses; a stopped gardenlet turns its Seed `GardenletReady` Unknown and a started one heals
 * it. `hack/local/down.sh` leaves no cluster, route or Docker network behind.
 *
 * Docker's networks and the cluster's API server live in the host's network namespace: when `npm test` runs vitest
 * in an IPv6-only namespace of its own, every command here runs in the host's through nsenter (hack/test-in-netns.mjs
 * says where: GARDENER_IPV6_HOST_NETNS and GARDENER_IPV6_HOST_MNTNS). A Docker engine this file had to start is
 * stopped at its end. Needs root,
 * Docker (an engine, or Debian's docker.io to start one) and debootstrap; skipped without them, saying why.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYAML, stringify as stringifyYAML } from 'yaml';
import { NETNS_ENV } from '../../src/system/netns.js';
import { projectRoot } from '../../src/system/project.js';
import { which } from '../../src/system/process.js';
import { containsCIDR, mustParseCIDR } from '../../src/net/cidr.js';
import { IMAGES } from '../../src/imagevector/images.js';
import { SEED_POD_PIDS_LIMIT } from '../../src/apis/provider-local/v1alpha1/kubelet.js';
import { TO_KUBE_APISERVER_LABEL } from '../../src/gardenlet/shoot/components/controlplane/names.js';
import { DUAL_STACK_NODES_MIGRATION_READY } from '../../src/apis/core/v1beta1/dual-stack-migration.js';
import { tcpConnectScript } from '../support/seed-pod.js';
import { waitFor } from '../support/wait.js';

const ROOT = projectRoot();
/** The e2e clusters' names: never a developer's gardener-local-<family>. */
const clusterName = (family: string) => `gardener-ipv6-e2e-${family}`;
const CLUSTER = clusterName('ipv6');
const SHOOT_NAMESPACE = 'shoot--local--local';

let work: string;
let env: NodeJS.ProcessEnv = process.env;
let kubeconfig: string;

/**
 * Runs a command in the host's network and mount namespaces (where Docker's networks and the cgroup hierarchies
 * dockerd needs are), with the test's environment.
 */
function onHost(command: string, args: string[], input?: string): SpawnSyncReturns<string> {
  const net = process.env[NETNS_ENV] ? process.env.GARDENER_IPV6_HOST_NETNS : undefined;
  const mnt = process.env[NETNS_ENV] ? process.env.GARDENER_IPV6_HOST_MNTNS : undefined;
  const enter = [...(net ? [`--net=${net}`] : []), ...(mnt ? [`--mount=${mnt}`] : [])];
  const argv = enter.length > 0 ? ['nsenter', ...enter, '--', command, ...args] : [command, ...args];
  return spawnSync(argv[0]!, argv.slice(1), {
    cwd: ROOT,
    env,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    ...(input !== undefined ? { input } : {}),
  });
}

function skipReason(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (debootstrap, routes to the load balancers)';
  if (which('docker') === undefined) return 'needs Docker (apt-get install docker.io)';
  if (which('debootstrap') === undefined) return 'needs debootstrap (apt-get install debootstrap)';
  if (which('nsenter') === undefined) return 'needs nsenter (util-linux)';
  // The host's, not the test namespace's: /proc/sys/net is the reading process's network namespace.
  const forwarding = onHost('cat', ['/proc/sys/net/ipv6/conf/all/forwarding']).stdout?.trim() || 'unknown';
  if (forwarding !== '1') return `needs IPv6 forwarding (net.ipv6.conf.all.forwarding is ${forwarding})`;
  return undefined;
}
const reason = skipReason();
if (reason !== undefined) console.warn(`[kind-seed] skipped: ${reason}`);
/** Whether an engine answered before this file: if not, hack/local/up.sh starts one, and this file stops it. */
const engineWasRunning = reason === undefined && onHost('docker', ['info']).status === 0;
afterAll(() => {
  if (reason === undefined && !engineWasRunning) {
    onHost('bash', [join(ROOT, 'hack', 'local', 'docker', 'engine.sh'), '--stop']);
  }
}, 60_000);

function ok(result: SpawnSyncReturns<string>, what: string): string {
  if (result.status !== 0) {
    throw new Error(`${what}: exit ${result.status}\n${(result.stderr ?? '').slice(-16000)}`);
  }
  return result.stdout;
}

const kubectl = (...args: string[]) =>
  ok(onHost(join(ROOT, '.cache', 'bin', 'kubectl'), args), `kubectl ${args.join(' ')}`);
const json = <T>(...args: string[]) => JSON.parse(kubectl(...args, '-o', 'json')) as T;

interface Item {
  metadata: { name: string };
  status?: {
    phase?: string;
    conditions?: { type: string; status: string }[];
    addresses?: { type: string; address: string }[];
    podIP?: string;
  };
}
const ready = (item: Item) => item.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/** `hack/local/up.sh FAMILY` for the e2e cluster of the family, in a folder of its own. */
function upSeed(family: string): void {
  work = mkdtempSync(join(tmpdir(), 'gardener-ipv6-kind-'));
  env = {
    ...process.env,
    GARDENER_IPV6_KIND_CLUSTER: clusterName(family),
    GARDENER_IPV6_KIND_DIR: work,
    KUBECONFIG: join(work, `${clusterName(family)}.kubeconfig`),
  };
  kubeconfig = env.KUBECONFIG!;
  ok(onHost('bash', [join(ROOT, 'hack', 'local', 'up.sh'), family]), `hack/local/up.sh ${family}`);
}

/** Whatever failed, nothing stays: the cluster, its routes, kind's network when unused, the folder. */
function downSeed(family: string): void {
  if (work === undefined) return;
  onHost('bash', [join(ROOT, 'hack', 'local', 'down.sh'), family]);
  rmSync(work, { recursive: true, force: true });
}

/** The state of the last operation of a shoot of garden-local in the garden. */
function shootState(shoot: string): string {
  return kubectl(
    '--kubeconfig',
    kubeconfig,
    '-n',
    'garden-local',
    'get',
    'shoot',
    shoot,
    '-o',
    'jsonpath={.status.lastOperation.state}',
  );
}

/**
 * `gardener-ipv6 kubeconfig` for a shoot of garden-local from the garden, with `--pin-address` unless `pin` is false,
 * written to `file` when given.
 */
function shootKubeconfigOf(shoot: string, file?: string, pin = true): string {
  const config = ok(
    onHost(process.execPath, [
      join(ROOT, 'bin', 'gardener-ipv6.js'),
      'kubeconfig',
      '--kubeconfig',
      kubeconfig,
      '--shoot',
      `garden-local/${shoot}`,
      ...(pin ? ['--pin-address'] : []),
    ]),
    'gardener-ipv6 kubeconfig',
  );
  if (file !== undefined) writeFileSync(file, config);
  return config;
}

describe.skipIf(reason !== undefined)('a kind IPv6 seed with the chart', () => {
  let shootKubeconfig: string;
  const shoot = (...args: string[]) => kubectl('--kubeconfig', shootKubeconfig, ...args);

  beforeAll(() => {
    upSeed('ipv6');
    shootKubeconfig = join(work, 'shoot.kubeconfig');
  }, 30 * 60_000);

  it('has a Ready kind node with an IPv6 InternalIP of the Docker network kind', () => {
    const nodes = json<{ items: Item[] }>('--kubeconfig', kubeconfig, 'get', 'nodes').items;
    expect(nodes).toHaveLength(1);
    expect(ready(nodes[0]!)).toBe(true);
    const internal = nodes[0]!.status!.addresses!.filter((a) => a.type === 'InternalIP').map((a) => a.address);
    expect(internal).toHaveLength(1);
    expect(containsCIDR(mustParseCIDR('fd00:10::/64'), mustParseCIDR(`${internal[0]}/128`))).toBe(true);
    // Every pod, a machine pod with its whole shoot included, has the seed's share of the host's PIDs.
    const configz = JSON.parse(
      kubectl('--kubeconfig', kubeconfig, 'get', '--raw', `/api/v1/nodes/${nodes[0]!.metadata.name}/proxy/configz`),
    ) as { kubeletconfig: { podPidsLimit?: number } };
    expect(configz.kubeletconfig.podPidsLimit).toBe(SEED_POD_PIDS_LIMIT);
  });

  it("runs the chart's pods", () => {
    const pods = json<{ items: Item[] }>('--kubeconfig', kubeconfig, '-n', 'gardener-ipv6', 'get', 'pods').items;
    const names = pods.map((p) => p.metadata.name.replace(/-[a-z0-9]+-[a-z0-9]+$/, ''));
    for (const component of ['admission', 'gardenlet', 'network-calico', 'dns-local', 'dns-server', 'scheduler']) {
      expect(names).toContain(`gardener-ipv6-${component}`);
    }
    expect(pods.filter((p) => !ready(p)).map((p) => p.metadata.name)).toEqual([]);
  });

  it("runs the shoot's control plane and its two machines as pods of the seed namespace", () => {
    expect(shootState('local')).toBe('Succeeded');
    const pods = json<{ items: Item[] }>('--kubeconfig', kubeconfig, '-n', SHOOT_NAMESPACE, 'get', 'pods').items;
    const running = pods.filter((p) => p.status?.phase === 'Running').map((p) => p.metadata.name);
    for (const name of [/^etcd-main-0$/, /^kube-apiserver-/, /^kube-controller-manager-/, /^kube-scheduler-/]) {
      expect(
        running.some((n) => name.test(n)),
        String(name),
      ).toBe(true);
    }
    expect(running.filter((n) => n.startsWith('machine-')).sort()).toEqual(['machine-local-0', 'machine-local-1']);
  });

  it('answers /readyz at the AAAA address of its DNS record, from this host', async () => {
    const records = json<{ items: { spec: { name: string; recordType: string; values: string[] } }[] }>(
      '--kubeconfig',
      kubeconfig,
      '-n',
      SHOOT_NAMESPACE,
      'get',
      'dnsrecords',
    ).items;
    const external = records.find((r) => r.spec.name === 'api.local.local.external.local.gardener.cloud');
    expect(external?.spec.recordType).toBe('AAAA');
    const address = external!.spec.values[0]!;
    expect(containsCIDR(mustParseCIDR('fd00:ff::/64'), mustParseCIDR(`${address}/128`))).toBe(true);
    expect(shootKubeconfigOf('local', shootKubeconfig)).toContain(`server: https://[${address}]`);
    // The Node's kube-proxy serves the address once it has seen it in the Service's status, which the shoot's
    // success does not wait for: until then the host's packets get "no route to host".
    let last = '';
    await waitFor(
      () => {
        const r = onHost(join(ROOT, '.cache', 'bin', 'kubectl'), [
          '--kubeconfig',
          shootKubeconfig,
          'get',
          '--raw',
          '/readyz',
        ]);
        last = `${r.stdout}${r.stderr}`.trim();
        return r.status === 0 && r.stdout === 'ok';
      },
      { timeoutMs: 60_000, intervalMs: 1_000, message: `/readyz at [${address}]` },
    ).catch((e: Error) => {
      throw new Error(`${e.message}; last: ${last}`);
    });
  });

  it("has two Ready Nodes with addresses of the shoot's nodes range", async () => {
    const nodes = await waitFor(
      () => {
        const items = json<{ items: Item[] }>('--kubeconfig', shootKubeconfig, 'get', 'nodes').items;
        return items.length === 2 && items.every(ready) && items;
      },
      { timeoutMs: 120_000, intervalMs: 2_000, message: 'two Ready Nodes' },
    );
    for (const node of nodes) {
      const internal = node.status!.addresses!.find((a) => a.type === 'InternalIP')!.address;
      expect(containsCIDR(mustParseCIDR('fd00:10:1:100::/56'), mustParseCIDR(`${internal}/128`)), internal).toBe(true);
    }
  }, 150_000);

  it('moves IPv6 packets between pods of its two machines, and its API server reaches them', async () => {
    for (const i of [0, 1]) {
      shoot(
        'run',
        `web${i}`,
        '--image=registry.k8s.io/e2e-test-images/agnhost:2.66.1',
        '--image-pull-policy=Never',
        `--overrides={"spec":{"nodeName":"machine-local-${i}"}}`,
        '--',
        'netexec',
        '--http-port=8080',
      );
    }
    shoot('wait', '--for=condition=Ready', 'pod/web0', 'pod/web1', '--timeout=120s');
    const ip = shoot('get', 'pod', 'web1', '-o', 'jsonpath={.status.podIP}');
    expect(mustParseCIDR(`${ip}/128`).family).toBe('IPv6');
    // Through kubelet exec (the API server into the machine), then pod to pod across the machines.
    expect(shoot('exec', 'web0', '--', '/agnhost', 'connect', '--timeout=5s', `[${ip}]:8080`)).toBe('');
    // The API server into the shoot's pod network (pods/proxy).
    expect(shoot('get', '--raw', '/api/v1/namespaces/default/pods/web1:8080/proxy/hostname')).toBe('web1');
  }, 180_000);

  it('enforces a NetworkPolicy in its machine pods, and has its system components from ManagedResources', async () => {
    const ip = shoot('get', 'pod', 'web1', '-o', 'jsonpath={.status.podIP}');
    const connects = () => {
      const r = onHost(join(ROOT, '.cache', 'bin', 'kubectl'), [
        '--kubeconfig',
        shootKubeconfig,
        'exec',
        'web0',
        '--',
        '/agnhost',
        'connect',
        '--timeout=3s',
        `[${ip}]:8080`,
      ]);
      return r.status === 0;
    };
    const policy = JSON.stringify({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'deny-web1', namespace: 'default' },
      spec: { podSelector: { matchLabels: { run: 'web1' } }, policyTypes: ['Ingress'] },
    });
    ok(
      onHost(join(ROOT, '.cache', 'bin', 'kubectl'), ['--kubeconfig', shootKubeconfig, 'apply', '-f', '-'], policy),
      'apply',
    );
    await waitFor(() => !connects(), { timeoutMs: 30_000, intervalMs: 500, message: 'web0 refused by web1' });
    shoot('delete', 'networkpolicy', 'deny-web1');
    await waitFor(connects, { timeoutMs: 30_000, intervalMs: 500, message: 'web0 reaching web1 again' });

    const managed = await waitFor(
      () => {
        const items = json<{
          items: (Item & { status?: { conditions?: { type: string; status: string }[] } })[];
        }>('--kubeconfig', kubeconfig, '-n', SHOOT_NAMESPACE, 'get', 'managedresources').items;
        const applied = items.filter((m) =>
          m.status?.conditions?.some((c) => c.type === 'ResourcesApplied' && c.status === 'True'),
        );
        return applied.length === 2 && applied.map((m) => m.metadata.name).sort();
      },
      { timeoutMs: 60_000, intervalMs: 2_000, message: 'two ManagedResources applied' },
    );
    expect(managed).toEqual(['extension-networking-calico', 'shoot-core-coredns']);
    expect(shoot('get', 'networkpolicy', '-n', 'kube-system', 'gardener.cloud--allow-dns', '-o', 'name')).toContain(
      'allow-dns',
    );
  }, 180_000);

  it("enforces the seed's NetworkPolicies on its Nodes: only a pod labelled for it reaches kube-apiserver", async () => {
    const sets = json<{ items: (Item & { status?: { numberReady?: number; desiredNumberScheduled?: number } })[] }>(
      '--kubeconfig',
      kubeconfig,
      'get',
      'daemonsets',
      '-A',
      '-l',
      'app.kubernetes.io/component=network-policy-enforcer',
    ).items;
    expect(sets.map((d) => [d.status?.numberReady, d.status?.desiredNumberScheduled])).toEqual([[1, 1]]);
    const apiServer = json<{ items: Item[] }>(
      '--kubeconfig',
      kubeconfig,
      '-n',
      SHOOT_NAMESPACE,
      'get',
      'pods',
      '-l',
      'role=apiserver',
    ).items[0]!.status!.podIP!;
    const target = `${apiServer} 443`;
    // A pod of the shoot's namespace, under its deny-all: refused; labelled as Gardener labels kube-apiserver's
    // clients: connected.
    const probe = async (name: string, labels: Record<string, string>, outcome: 'connected' | 'refused') => {
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: SHOOT_NAMESPACE, labels },
        spec: {
          restartPolicy: 'Never',
          automountServiceAccountToken: false,
          terminationGracePeriodSeconds: 0,
          containers: [
            {
              name: 'probe',
              image: IMAGES.machine,
              command: [process.execPath, '-e', tcpConnectScript([target], outcome)],
            },
          ],
        },
      };
      ok(
        onHost(
          join(ROOT, '.cache', 'bin', 'kubectl'),
          ['--kubeconfig', kubeconfig, 'apply', '-f', '-'],
          JSON.stringify(pod),
        ),
        'apply',
      );
      try {
        return await waitFor(
          () => {
            const phase = json<Item>('--kubeconfig', kubeconfig, '-n', SHOOT_NAMESPACE, 'get', 'pod', name).status
              ?.phase;
            return (
              (phase === 'Succeeded' || phase === 'Failed') &&
              kubectl('--kubeconfig', kubeconfig, '-n', SHOOT_NAMESPACE, 'logs', name).trim()
            );
          },
          { timeoutMs: 60_000, intervalMs: 1_000, message: `the probe ${name} to finish` },
        );
      } finally {
        kubectl('--kubeconfig', kubeconfig, '-n', SHOOT_NAMESPACE, 'delete', 'pod', name, '--wait=false');
      }
    };
    expect(await probe('probe-unlabelled', {}, 'refused')).toMatch(new RegExp(`^${target} refused`));
    expect(await probe('probe-labelled', { [TO_KUBE_APISERVER_LABEL]: 'allowed' }, 'connected')).toBe(
      `${target} connected`,
    );
  }, 180_000);

  it("holds each machine to its own addresses on the seed's bridge: root in one sends as no other pod", async () => {
    const seed = (...args: string[]) => kubectl('--kubeconfig', kubeconfig, '-n', SHOOT_NAMESPACE, ...args);
    const podIP = (selector: string) =>
      json<{ items: Item[] }>('--kubeconfig', kubeconfig, '-n', SHOOT_NAMESPACE, 'get', 'pods', '-l', selector)
        .items[0]!.status!.podIP!;
    const own = seed('get', 'pod', 'machine-local-0', '-o', 'jsonpath={.status.podIP}');
    const target = seed('get', 'pod', 'machine-local-1', '-o', 'jsonpath={.status.podIP}');
    const apiServer = podIP('role=apiserver');
    // Root in the machine's container: the machine's network namespace, as a privileged hostNetwork shoot pod has it.
    const execInMachine = (machine: string, ...argv: string[]) =>
      onHost(join(ROOT, '.cache', 'bin', 'kubectl'), [
        '--kubeconfig',
        kubeconfig,
        '-n',
        SHOOT_NAMESPACE,
        'exec',
        machine,
        '--',
        ...argv,
      ]);
    const inMachine = (machine: string, script: string) =>
      ok(execInMachine(machine, 'sh', '-c', script), `${machine}: ${script}`);
    // Echo requests to the other machine counted where they arrive, ahead of every other rule there.
    inMachine(
      'machine-local-1',
      [
        'nft add table inet spoof-probe',
        "nft add chain inet spoof-probe arrivals '{ type filter hook input priority -300; policy accept; }'",
        ...[own, apiServer].map(
          (source) =>
            `nft add rule inet spoof-probe arrivals ip6 saddr ${source} ip6 daddr ${target} icmpv6 type echo-request counter`,
        ),
      ].join(' && '),
    );
    const counted = (source: string) =>
      Number(
        new RegExp(`ip6 saddr ${source} .*counter packets (\\d+)`).exec(
          inMachine('machine-local-1', 'nft list chain inet spoof-probe arrivals'),
        )?.[1] ?? NaN,
      );
    const ping = (from: string) => `busybox ping -c 3 -w 4 -I ${from} ${target} >/dev/null 2>&1; echo done`;
    const acceptDAD = '/proc/sys/net/ipv6/conf/eth0/accept_dad';
    try {
      inMachine('machine-local-0', ping(own));
      expect(counted(own)).toBeGreaterThan(0);
      // As the shoot's kube-apiserver: none arrives (the kind Node's bridge holds the machine's port to its address).
      inMachine(
        'machine-local-0',
        [
          `dad=$(cat ${acceptDAD})`,
          `echo 0 > ${acceptDAD}`,
          `ip addr add ${apiServer}/128 dev eth0`,
          `ip -6 addr show dev eth0 | grep -q '${apiServer}/128'`,
          ping(apiServer),
          `ip addr del ${apiServer}/128 dev eth0`,
          `echo $dad > ${acceptDAD}`,
        ].join(' && '),
      );
      expect(counted(apiServer)).toBe(0);
      // Its own still do.
      const before = counted(own);
      inMachine('machine-local-0', ping(own));
      expect(counted(own)).toBeGreaterThan(before);
    } finally {
      // Whatever failed: neither the borrowed address nor the counter stays.
      execInMachine('machine-local-0', 'sh', '-c', `ip addr del ${apiServer}/128 dev eth0`);
      execInMachine('machine-local-1', 'nft', 'delete', 'table', 'inet', 'spoof-probe');
    }
  }, 120_000);

  it('deletes the shoot: its seed namespace goes, with the machines and the control plane', async () => {
    const k = (...args: string[]) => kubectl('--kubeconfig', kubeconfig, ...args);
    k('-n', 'garden-local', 'annotate', 'shoot', 'local', 'confirmation.gardener.cloud/deletion=true', '--overwrite');
    k('-n', 'garden-local', 'delete', 'shoot', 'local', '--wait=false');
    await waitFor(
      () => {
        const namespaces = json<{ items: Item[] }>('--kubeconfig', kubeconfig, 'get', 'namespaces').items;
        const shoots = json<{ items: Item[] }>('--kubeconfig', kubeconfig, '-n', 'garden-local', 'get', 'shoots').items;
        return !namespaces.some((n) => n.metadata.name === SHOOT_NAMESPACE) && shoots.length === 0;
      },
      { timeoutMs: 150_000, intervalMs: 2_000, message: `the shoot and ${SHOOT_NAMESPACE} gone` },
    );
  }, 180_000);
});

/** The second seed's kind cluster (`hack/local/seed-up.sh dual --garden ipv6`), in the garden's folder. */
const SEED_CLUSTER = clusterName('dual');
const seedEnv = (): NodeJS.ProcessEnv => ({
  ...env,
  GARDENER_IPV6_KIND_CLUSTER: SEED_CLUSTER,
  GARDENER_IPV6_GARDEN_KIND_CLUSTER: CLUSTER,
  KUBECONFIG: join(work, `${SEED_CLUSTER}.kubeconfig`),
});
afterAll(() => {
  if (work !== undefined) {
    const saved = env;
    env = seedEnv();
    onHost('bash', [join(ROOT, 'hack', 'local', 'down.sh'), 'dual']);
    env = saved;
  }
  downSeed('ipv6');
}, 10 * 60_000);

describe.skipIf(reason !== undefined)('a kind dual-stack cluster as a second seed of that garden', () => {
  type DNSRecordItem = { spec: { name: string; recordType: string; values: string[] } };
  type Conditioned = Item & { spec?: { seedName?: string } };
  const SEED = 'local-dual';
  const SHOOT = 'local-dual';
  const namespace = `shoot--local--${SHOOT}`;
  let seedKubeconfig: string;
  const seed = (...args: string[]) => kubectl('--kubeconfig', seedKubeconfig, ...args);
  const garden = (...args: string[]) => kubectl('--kubeconfig', kubeconfig, ...args);
  const gardenletReady = () =>
    json<Conditioned>('--kubeconfig', kubeconfig, 'get', 'seed', SEED).status?.conditions?.find(
      (c) => c.type === 'GardenletReady',
    )?.status;

  beforeAll(() => {
    const saved = env;
    env = seedEnv();
    try {
      ok(onHost('bash', [join(ROOT, 'hack', 'local', 'seed-up.sh'), 'dual', '--garden', 'ipv6']), 'seed-up.sh');
    } finally {
      env = saved;
    }
    seedKubeconfig = join(work, `${SEED_CLUSTER}.kubeconfig`);
  }, 30 * 60_000);

  it("runs the seed's components only, its gardenlet GardenletReady in the garden", () => {
    const pods = json<{ items: Item[] }>('--kubeconfig', seedKubeconfig, '-n', 'gardener-ipv6', 'get', 'pods').items;
    const names = pods.map((p) => p.metadata.name.replace(/-[a-z0-9]+-[a-z0-9]+$/, ''));
    for (const component of ['gardenlet', 'network-calico', 'dns-local', 'dns-server']) {
      expect(names).toContain(`gardener-ipv6-${component}`);
    }
    expect(names.filter((n) => /admission|scheduler/.test(n))).toEqual([]);
    expect(pods.filter((p) => !ready(p)).map((p) => p.metadata.name)).toEqual([]);
    expect(gardenletReady()).toBe('True');
    // The garden's own gardenlet now keeps to its own Seed.
    expect(garden('-n', 'gardener-ipv6', 'get', 'deployment', 'gardener-ipv6-gardenlet', '-o', 'json')).toContain(
      '--seed-name=local-ipv6',
    );
  });

  it("refuses the gardenlet's garden credentials for another seed's objects (403)", () => {
    const credentials = join(work, 'seed-garden.kubeconfig');
    writeFileSync(
      credentials,
      Buffer.from(
        seed(
          '-n',
          'gardener-ipv6',
          'get',
          'secret',
          'gardener-ipv6-garden-kubeconfig',
          '-o',
          'jsonpath={.data.kubeconfig}',
        ),
        'base64',
      ),
    );
    const asSeed = (...args: string[]) =>
      onHost(join(ROOT, '.cache', 'bin', 'kubectl'), ['--kubeconfig', credentials, ...args]);
    expect(ok(asSeed('auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'), 'whoami')).toBe(
      `gardener.cloud:system:seed:${SEED}`,
    );
    // -v=6 logs each response's HTTP status: the API server answers 403 for what the webhook denies.
    const other = asSeed('-v=6', 'annotate', 'seed', 'local-ipv6', 'e2e.gardener-ipv6/touched=true');
    expect(other.status).not.toBe(0);
    expect(other.stderr).toMatch(/403 Forbidden/);
    expect(other.stderr).toContain('may write its own Seed only, not "local-ipv6"');
    const secret = asSeed(
      '-v=6',
      '-n',
      'garden-local',
      'create',
      'secret',
      'generic',
      'not-mine',
      '--from-literal=a=b',
    );
    expect(secret.status).not.toBe(0);
    expect(secret.stderr).toMatch(/403 Forbidden/);
    expect(secret.stderr).toContain('may write a Secret only as <shoot>.<purpose> of one of its Shoots');
  });

  it(
    'runs a shoot created IPv4 without a seed and migrated to dual-stack, which answers at its A and AAAA address',
    async () => {
      const manifest = readFileSync(join(ROOT, 'examples', 'shoot-dual-stack.yaml'), 'utf8');
      expect(manifest).toContain(`  seedName: ${SEED}\n`);
      // The dual-stack example as an IPv4 shoot (its calico settings of IPv6 only come with the family, as the
      // calico admission requires): only this seed has IPv4, so the scheduler puts it here.
      const object = parseYAML(manifest) as {
        spec: { seedName?: string; networking: { ipFamilies: string[]; providerConfig: { ipv6?: unknown } } };
      };
      expect(object.spec.networking.ipFamilies).toEqual(['IPv4', 'IPv6']);
      delete object.spec.seedName;
      delete object.spec.networking.providerConfig.ipv6;
      object.spec.networking.ipFamilies = ['IPv4'];
      const ipv4 = stringifyYAML(object);
      ok(
        onHost(join(ROOT, '.cache', 'bin', 'kubectl'), ['--kubeconfig', kubeconfig, 'apply', '-f', '-'], ipv4),
        'kubectl apply shoot',
      );
      await waitFor(() => shootState(SHOOT) === 'Succeeded', {
        timeoutMs: 10 * 60_000,
        intervalMs: 5_000,
        message: `shoot ${SHOOT} Succeeded`,
      });
      const gardenShoot = () =>
        json<
          Conditioned & {
            metadata: { generation: number };
            status?: {
              observedGeneration?: number;
              lastOperation?: { state?: string };
              constraints?: { type: string }[];
            };
          }
        >('--kubeconfig', kubeconfig, '-n', 'garden-local', 'get', 'shoot', SHOOT);
      const generation = gardenShoot().metadata.generation;
      // The migration, by the patch alone (docs/dual-stack-migration.md).
      garden(
        '-n',
        'garden-local',
        'patch',
        'shoot',
        SHOOT,
        '--type',
        'merge',
        '-p',
        '{"spec":{"networking":{"ipFamilies":["IPv4","IPv6"]}}}',
      );
      await waitFor(
        () => {
          const s = gardenShoot();
          return (
            s.metadata.generation > generation &&
            s.status?.observedGeneration === s.metadata.generation &&
            s.status?.lastOperation?.state === 'Succeeded' &&
            !(s.status?.constraints ?? []).some((c) => c.type === DUAL_STACK_NODES_MIGRATION_READY)
          );
        },
        { timeoutMs: 10 * 60_000, intervalMs: 5_000, message: `shoot ${SHOOT} migrated to [IPv4, IPv6]` },
      );
      expect(gardenShoot().spec?.seedName).toBe(SEED);
      // Its control plane and machine run in the seed cluster, not in the garden's.
      expect(seed('get', 'namespace', namespace, '-o', 'name')).toBe(`namespace/${namespace}\n`);
      expect(garden('get', 'namespaces', '-o', 'name')).not.toContain(namespace);
      const records = json<{ items: DNSRecordItem[] }>(
        '--kubeconfig',
        seedKubeconfig,
        '-n',
        namespace,
        'get',
        'dnsrecords',
      ).items;
      const external = records.filter((r) => r.spec.name === `api.${SHOOT}.local.external.local.gardener.cloud`);
      const byType = Object.fromEntries(external.map((r) => [r.spec.recordType, r.spec.values[0]!]));
      // The seed's own load-balancer networks (hack/local/seed-up.sh), apart from the garden's.
      expect(containsCIDR(mustParseCIDR('172.18.254.0/24'), mustParseCIDR(`${byType.A}/32`))).toBe(true);
      expect(containsCIDR(mustParseCIDR('fd00:ff:1::/64'), mustParseCIDR(`${byType.AAAA}/128`))).toBe(true);
      // The garden issues the admin kubeconfig for a shoot of any seed; its API server name resolves through the
      // seed's DNS server, so each address is pinned here with the name as the TLS server name.
      const config = shootKubeconfigOf(SHOOT, undefined, false);
      const name = `api.${SHOOT}.local.external.local.gardener.cloud`;
      expect(config).toContain(`server: https://${name}`);
      const files = [byType.A!, `[${byType.AAAA!}]`].map((host, i) => {
        const file = join(work, `shoot-dual-${i}.kubeconfig`);
        const pinned = parseYAML(config) as { clusters: { cluster: Record<string, string> }[] };
        for (const c of pinned.clusters) {
          if (c.cluster.server !== `https://${name}`) continue;
          c.cluster.server = `https://${host}`;
          c.cluster['tls-server-name'] = name;
        }
        writeFileSync(file, stringifyYAML(pinned));
        return file;
      });
      for (const file of files) {
        await waitFor(
          () => {
            const r = onHost(join(ROOT, '.cache', 'bin', 'kubectl'), ['--kubeconfig', file, 'get', '--raw', '/readyz']);
            return r.status === 0 && r.stdout === 'ok';
          },
          { timeoutMs: 60_000, intervalMs: 1_000, message: `/readyz through ${file}` },
        );
      }
      const node = await waitFor(
        () => {
          const items = json<{ items: Item[] }>('--kubeconfig', files[0]!, 'get', 'nodes').items;
          return items.length > 0 && items.every(ready) && items[0];
        },
        { timeoutMs: 120_000, intervalMs: 2_000, message: 'a Ready Node' },
      );
      const families = node
        .status!.addresses!.filter((a) => a.type === 'InternalIP')
        .map((a) => (a.address.includes(':') ? 'IPv6' : 'IPv4'));
      expect(families).toEqual(['IPv4', 'IPv6']);
    },
    15 * 60_000,
  );

  it('turns its Seed GardenletReady Unknown when its gardenlet stops, and True again when it starts', async () => {
    seed('-n', 'gardener-ipv6', 'scale', 'deployment', 'gardener-ipv6-gardenlet', '--replicas=0');
    await waitFor(() => gardenletReady() === 'Unknown', {
      timeoutMs: 120_000,
      intervalMs: 2_000,
      message: `Seed ${SEED} GardenletReady Unknown`,
    });
    // The garden's own seed is left alone.
    expect(
      json<Conditioned>('--kubeconfig', kubeconfig, 'get', 'seed', 'local-ipv6').status?.conditions?.find(
        (c) => c.type === 'GardenletReady',
      )?.status,
    ).toBe('True');
    seed('-n', 'gardener-ipv6', 'scale', 'deployment', 'gardener-ipv6-gardenlet', '--replicas=1');
    await waitFor(() => gardenletReady() === 'True', {
      timeoutMs: 180_000,
      intervalMs: 2_000,
      message: `Seed ${SEED} GardenletReady True again`,
    });
  }, 360_000);

  it('leaves no cluster, route or Docker network after down.sh', () => {
    const saved = env;
    env = seedEnv();
    try {
      ok(onHost('bash', [join(ROOT, 'hack', 'local', 'down.sh'), 'dual']), 'hack/local/down.sh dual');
    } finally {
      env = saved;
    }
    ok(onHost('bash', [join(ROOT, 'hack', 'local', 'down.sh'), 'ipv6']), 'hack/local/down.sh ipv6');
    const clusters = ok(onHost(join(ROOT, '.cache', 'bin', 'kind'), ['get', 'clusters']), 'kind get clusters');
    expect(clusters).not.toContain(CLUSTER);
    expect(clusters).not.toContain(SEED_CLUSTER);
    for (const network of ['fd00:ff::/64', 'fd00:ff:1::/64']) {
      expect(ok(onHost('ip', ['-6', 'route', 'show', network]), 'ip route')).toBe('');
    }
    expect(ok(onHost('ip', ['route', 'show', '172.18.254.0/24']), 'ip route')).toBe('');
    const networks = ok(onHost('docker', ['network', 'ls', '--format', '{{.Name}}']), 'docker network ls');
    const others = clusters.trim();
    if (others === '' || others === 'No kind clusters found.') expect(networks.split('\n')).not.toContain('kind');
  });
});
