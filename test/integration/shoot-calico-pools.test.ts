/**
 * calico's pool settings in force on a shoot's machines, end to end (needs root): one dual-stack shoot with two
 * machines, its calico NetworkConfig changed in place.
 *   - overlay on: pod traffic between the machines goes through calico's `vxlan.calico` (IPv4) and `vxlan-v6.calico`
 *     (IPv6), counted on the devices of the sending machine; overlay off: the devices are gone and the podCIDRs are
 *     routed via the Nodes' InternalIPs over the node network (`vxlan.gv6`, provider-local's machine network).
 *   - natOutgoing: a pod reaching a server outside the cluster (documentation ranges, in a network namespace of this
 *     test) shows the machine's address on the way out (which the seed, as a cloud's NAT gateway does, masquerades
 *     to its Node's address) when on, the pod's own address when off (IPv6's `sourceNATEnabled`; IPv4 pools always
 *     masquerade in Gardener's calico).
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import { userDataChecksum } from '../../src/apis/provider-local/v1alpha1/machine-user-data.js';
import { OVERLAY_DEVICE } from '../../src/extensions/provider-local/machine/overlay.js';
import { CALICO_VXLAN_DEVICES } from '../../src/extensions/provider-local/machine/pod-network.js';
import { featureGates } from '../../src/featuregate/featuregate.js';
import { Refs } from '../../src/apis/refs.js';
import { parseIP, type IPFamily } from '../../src/net/cidr.js';
import { type ResourceClient } from '../../src/runtime/client.js';
import { retryOnConflict } from '../../src/runtime/retry.js';
import { machinesUnsupportedReason } from '../extensions/provider-local/machine/shoot-env.js';
import { seedDualStackMigrationNetworks } from '../fixtures/objects.js';
import { PUBLIC_SERVER_PORT, PublicServer } from '../support/public-server.js';
import { SeedEnvironment, appliedUserData, webDeployment } from '../support/seed-environment.js';
import { run, testFile } from '../support/shoot.js';
import { waitFor } from '../support/wait.js';

const unsupported = machinesUnsupportedReason();

const NAMESPACE = 'garden-e2e';
const NAME = 'mcal';
const SEED_NAMESPACE = `shoot--e2e--${NAME}`;
// Ranges of their own: other files of this namespace run environments meanwhile.
const LB_NETWORKS = { IPv6: 'fd00:ff:e5::/64', IPv4: '172.31.251.0/24' };
const SEED_CLUSTER = {
  families: ['IPv6', 'IPv4'] as IPFamily[],
  nodes: ['fd00:1f::/64', '10.34.0.0/24'],
  pods: ['fd00:1f:1::/56', '10.35.0.0/16'],
  services: ['fd00:1f:2::/112', '10.36.0.0/16'],
};
const FAMILIES: IPFamily[] = ['IPv4', 'IPv6'];
const urlHost = (ip: string) => (ip.includes(':') ? `[${ip}]` : ip);
const familyOf = (ip: string) => parseIP(ip)!.family;

/** The shoot's calico NetworkConfig. */
function networkConfig(overlay: boolean, ipv6SourceNAT: boolean): Record<string, unknown> {
  return {
    apiVersion: 'calico.networking.extensions.gardener.cloud/v1alpha1',
    kind: 'NetworkConfig',
    overlay: { enabled: overlay },
    ipv6: { sourceNATEnabled: ipv6SourceNAT },
  };
}

interface Pod {
  metadata: { name: string };
  spec: { nodeName?: string };
  status?: { podIPs?: { ip: string }[]; hostIPs?: { ip: string }[]; conditions?: { type: string; status: string }[] };
}

const env = new SeedEnvironment();
let client: ResourceClient;
let shootKubeconfig: string;

async function kubectlWith(kubeconfig: string, args: string[]): Promise<string> {
  const r = await run(env.kubectlBin, ['--kubeconfig', kubeconfig, '--request-timeout=20s', ...args], 40_000);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr.trim()}`);
  return r.stdout;
}
const shootKubectl = (args: string[]) => kubectlWith(shootKubeconfig, args);
/** A command in a machine pod (the machine's network namespace), through the seed's API server. */
const inMachine = (machine: string, command: string[]) =>
  kubectlWith(env.cp.kubeconfigPath, ['exec', '-n', SEED_NAMESPACE, machine, '-c', 'machine', '--', ...command]);

/** Packets sent through a device of a machine; undefined when the machine has no such device. */
async function txPackets(machine: string, device: string): Promise<number | undefined> {
  const out = await inMachine(machine, ['sh', '-c', `cat /sys/class/net/${device}/statistics/tx_packets || true`]);
  return out.trim() === '' ? undefined : Number(out.trim());
}

/** The device a machine sends packets for `ip` through. */
async function routeDevice(machine: string, ip: string): Promise<string> {
  const out = await inMachine(machine, ['ip', familyOf(ip) === 'IPv6' ? '-6' : '-4', 'route', 'get', ip]);
  return /\bdev (\S+)/.exec(out)?.[1] ?? out;
}

/** The pools in the worker pool's user data: what the gardenlet hands the machines. */
async function userDataPools(): Promise<string> {
  const text = await userDataText();
  return JSON.stringify((JSON.parse(text || '{}') as { podNetwork?: unknown }).podNetwork ?? null);
}

/** The pool's user data as the gardenlet wrote it in the seed. */
async function userDataText(): Promise<string> {
  const secret = await client.get<KubernetesObject & { data?: Record<string, string> }>(
    Refs.secret,
    'worker-user-data-w',
    SEED_NAMESPACE,
  );
  return Buffer.from(secret?.data?.userData ?? '', 'base64').toString();
}

/** What to say when a machine did not get somewhere: the shoot's operation, the user data, the machines' logs. */
async function diagnostics(): Promise<string> {
  const shoot = await client.get<Shoot & KubernetesObject>(Refs.shoot, NAME, NAMESPACE);
  const logs = await Promise.all(
    ['machine-w-0', 'machine-w-1'].map((m) =>
      kubectlWith(env.cp.kubeconfigPath, ['logs', '-n', SEED_NAMESPACE, m, '-c', 'machine', '--tail', '400']).then(
        (out) =>
          `${m}:\n${out
            .split('\n')
            .filter((l) => /user data|pod network|calico|node sync|error/i.test(l))
            .slice(-15)
            .join('\n')}`,
        (e: Error) => `${m}: ${e.message}`,
      ),
    ),
  );
  return [
    `shoot: ${JSON.stringify(shoot?.status?.lastOperation)}`,
    `user data: ${await userDataPools().catch((e: Error) => e.message)}`,
    ...logs,
  ].join('\n');
}

/** Changes the shoot's NetworkConfig and waits until the gardenlet wrote it into the machines' user data. */
async function setNetworkConfig(config: Record<string, unknown>, expectPools: string): Promise<void> {
  await retryOnConflict(async () => {
    const shoot = (await client.get<Shoot & KubernetesObject>(Refs.shoot, NAME, NAMESPACE))!;
    shoot.spec.networking = { ...shoot.spec.networking!, providerConfig: config };
    return client.update(Refs.shoot, shoot as KubernetesObject);
  });
  await waitFor(async () => (await userDataPools()).includes(expectPools), {
    timeoutMs: 120_000,
    intervalMs: 1000,
    message: `the user data with ${expectPools}`,
  }).catch(async (e: Error) => {
    throw new Error(`${e.message}\n${await diagnostics()}`);
  });
}

/** Waits for `check` on both machines, saying what they did when it doesn't come. */
async function onBothMachines(
  what: string,
  check: (machine: string) => Promise<boolean>,
  machines: readonly string[],
): Promise<void> {
  await waitFor(async () => (await Promise.all(machines.map(check))).every(Boolean), {
    timeoutMs: 90_000,
    intervalMs: 1000,
    message: what,
  }).catch(async (e: Error) => {
    throw new Error(`${e.message}\n${await diagnostics()}`);
  });
}

describe.skipIf(unsupported !== undefined).sequential("calico's pool settings on a dual-stack shoot's machines", () => {
  let a: Pod;
  let b: Pod;
  const fetch = (url: string) =>
    shootKubectl(['exec', '-n', 'default', a.metadata.name, '--', 'timeout', '4', 'wget', '-q', '-O', '-', url]);

  beforeAll(async () => {
    await env.start({
      tag: 'cal',
      cluster: SEED_CLUSTER,
      gates: featureGates({ IPv6SingleStack: true, DualStack: true }),
      loadBalancerNetworks: LB_NETWORKS,
      careSyncPeriodMs: 2_000,
      namespace: NAMESPACE,
      seeds: { dual: seedDualStackMigrationNetworks },
    });
    client = env.client;
  }, 300_000);

  afterAll(async () => {
    if (client) {
      await env.deleteShoot(NAMESPACE, NAME, 120_000).catch(() => {});
    }
    await env.stop();
  }, 240_000);

  it('runs with the overlay on: a tunnel device per family on every machine, pods on both machines', async () => {
    const started = Date.now();
    await client.create(Refs.shoot, {
      apiVersion: 'core.gardener.cloud/v1beta1',
      kind: 'Shoot',
      metadata: { name: NAME, namespace: NAMESPACE },
      spec: {
        seedName: 'dual',
        cloudProfile: { name: 'local' },
        region: 'local',
        provider: { type: 'local', workers: [{ name: 'w', machine: { type: 'local' }, minimum: 2, maximum: 2 }] },
        networking: {
          type: 'calico',
          ipFamilies: FAMILIES,
          nodes: '10.10.0.0/16',
          pods: '10.3.0.0/16',
          services: '10.4.0.0/16',
          providerConfig: networkConfig(true, true),
        },
      },
    } as KubernetesObject);
    await env.waitForShoot(NAMESPACE, NAME, ['EveryNodeReady'], 240_000);
    process.stderr.write(`[calico pools] shoot with 2 Ready nodes after ${Date.now() - started} ms\n`);
    shootKubeconfig = await env.writeShootKubeconfig(NAMESPACE, NAME);

    const manifest = testFile('calico-web.json', JSON.stringify(webDeployment()));
    await waitFor(() => shootKubectl(['get', 'serviceaccount', 'default']).then(() => true), {
      timeoutMs: 30_000,
      message: 'the default ServiceAccount',
    });
    await shootKubectl(['apply', '-f', manifest]);
    const pods = await waitFor(
      async () => {
        const list = JSON.parse(await shootKubectl(['get', 'pods', '-l', 'app=web', '-o', 'json'])) as { items: Pod[] };
        const ready = list.items.filter((p) =>
          p.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True'),
        );
        return ready.length === 2 ? ready : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500, message: 'two web pods Ready' },
    );
    [a, b] = pods as [Pod, Pod];
    expect(a.spec.nodeName).not.toBe(b.spec.nodeName);
    expect(a.status!.podIPs!.map((p) => familyOf(p.ip))).toEqual(FAMILIES);
    for (const machine of [a.spec.nodeName!, b.spec.nodeName!]) {
      for (const family of FAMILIES)
        expect(await txPackets(machine, CALICO_VXLAN_DEVICES[family])).toBeGreaterThanOrEqual(0);
    }
  }, 360_000);

  it('overlay on: pod traffic between the machines goes through vxlan.calico and vxlan-v6.calico', async () => {
    const machine = a.spec.nodeName!;
    for (const { ip } of b.status!.podIPs!) {
      const device = CALICO_VXLAN_DEVICES[familyOf(ip)];
      expect(await routeDevice(machine, ip)).toBe(device);
      const before = (await txPackets(machine, device))!;
      expect((await fetch(`http://${urlHost(ip)}:8080/`)).trim()).toBe(b.metadata.name);
      const after = (await txPackets(machine, device))!;
      // A TCP handshake, the request and the close at least.
      expect(after - before, `${device} packets`).toBeGreaterThanOrEqual(4);
    }
  }, 60_000);

  it('natOutgoing on: a server outside the cluster sees the machine (masqueraded by the seed to its Node)', async () => {
    const server = new PublicServer(['IPv6', 'IPv4']);
    await server.start();
    try {
      await server.recordSources();
      for (const family of FAMILIES) {
        const body = await fetch(`http://${urlHost(server.address(family))}:${PUBLIC_SERVER_PORT}/`).catch(
          (e: Error) => e.message,
        );
        const seen = await server.sources(family);
        expect(seen, `${family}: ${String(body)}`).toHaveLength(1);
        // The machine pod's seed node: where the machine's masqueraded packets leave the seed.
        const hostIPs = await machineHostIPs(a.spec.nodeName!);
        expect(hostIPs).toContain(seen[0]);
        expect(a.status!.podIPs!.map((p) => p.ip)).not.toContain(seen[0]);
      }
    } finally {
      await server.stop();
    }
  }, 60_000);

  it('overlay off and IPv6 natOutgoing off, in place: routes via the InternalIPs, the pod address goes out', async () => {
    await setNetworkConfig(networkConfig(false, false), '"mode":"Never","natOutgoing":false');
    const machine = a.spec.nodeName!;
    // Both ends: a machine still tunnelling would send its answers into a device the other one has removed.
    await onBothMachines(
      'the calico devices to go',
      async (m) =>
        (await txPackets(m, CALICO_VXLAN_DEVICES.IPv4)) === undefined &&
        (await txPackets(m, CALICO_VXLAN_DEVICES.IPv6)) === undefined,
      [a.spec.nodeName!, b.spec.nodeName!],
    );
    for (const { ip } of b.status!.podIPs!) {
      expect(await routeDevice(machine, ip)).toBe(OVERLAY_DEVICE);
      expect((await fetch(`http://${urlHost(ip)}:8080/`)).trim()).toBe(b.metadata.name);
      for (const family of FAMILIES) expect(await txPackets(machine, CALICO_VXLAN_DEVICES[family])).toBeUndefined();
    }
    const server = new PublicServer(['IPv6', 'IPv4']);
    await server.start();
    try {
      await server.recordSources();
      const podIPv6 = a.status!.podIPs!.find((p) => familyOf(p.ip) === 'IPv6')!.ip;
      // The machine's NAT table is replaced right away, the user data reaches it within the kubelet's sync.
      const seen = await waitFor(
        async () => {
          await fetch(`http://${urlHost(server.address('IPv6'))}:${PUBLIC_SERVER_PORT}/`).catch(() => undefined);
          const sources = await server.sources('IPv6');
          return sources.includes(podIPv6) ? sources : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 1000, message: `the public server to see ${podIPv6}` },
      );
      expect(seen).toContain(podIPv6);
      // IPv4 pools always masquerade.
      // The server answers with a line, not HTTP: wget complains whether or not the answer came back.
      await fetch(`http://${server.address('IPv4')}:${PUBLIC_SERVER_PORT}/`).catch(() => undefined);
      const v4 = await server.sources('IPv4');
      expect(v4).toHaveLength(1);
      expect(await machineHostIPs(machine)).toContain(v4[0]);
    } finally {
      await server.stop();
    }
  }, 240_000);

  it("overlay off: pods resolve the environment's names through CoreDNS and the machines' resolvers, the queries masqueraded unless snatToUpstreamDNS is off", async () => {
    // The shoot's API server name: in the environment's BIND9 only, which the seed's CoreDNS (the machine pods'
    // resolver, and so the machines') forwards to.
    const records = await client.list<
      KubernetesObject & { spec?: { name?: string; recordType?: string; values?: string[] } }
    >(Refs.dnsRecord, { namespace: SEED_NAMESPACE });
    const record = records.items.find((r) => r.spec?.recordType === 'AAAA')?.spec;
    const apiName = record?.name;
    expect(apiName).toMatch(/^api\./);
    const zone = apiName!.replace(/^api\./, '');
    const ipv6Address = record!.values![0]!;
    expect(familyOf(ipv6Address)).toBe('IPv6');
    let attempt = 0;
    /** busybox nslookup in pod A, through the shoot's CoreDNS: what it printed, and its exit code. */
    const lookup = (name: string) =>
      shootKubectl([
        'exec',
        '-n',
        'default',
        a.metadata.name,
        '--',
        'sh',
        '-c',
        `timeout 8 nslookup -type=AAAA ${name} 2>&1; echo "rc=$?"`,
      ]).catch((e: Error) => e.message);
    // A name never asked before (CoreDNS caches answers, negative ones too): BIND9 answers NXDOMAIN for it.
    const freshName = () => `absent-${Date.now()}-${attempt++}.${zone}.`;
    const answers = async () => {
      const api = await lookup(`${apiName}.`);
      const absent = await lookup(freshName());
      return api.includes(ipv6Address) && /NXDOMAIN/.test(absent);
    };

    // The overlay is off here (the test before): snatToUpstreamDNS defaults to on.
    expect(await userDataPools()).toContain('"snatToUpstreamDNS":true');
    await waitFor(answers, { timeoutMs: 60_000, intervalMs: 1000, message: `${apiName} resolved in pod A` }).catch(
      async (e: Error) => {
        throw new Error(`${e.message}: ${await lookup(`${apiName}.`)}\n${await diagnostics()}`);
      },
    );

    // Where the queries went and how: the machines' conntrack entries of UDP 53 to their resolver (the machine
    // pod's: the seed's cluster DNS), masqueraded when the reply goes to another address than the query came from.
    const machines = [a.spec.nodeName!, b.spec.nodeName!];
    const resolver = /^nameserver\s+(\S+)/m.exec(await inMachine(machines[0]!, ['cat', '/etc/resolv.conf']))?.[1];
    expect(resolver).toBeDefined();
    const dnsFlows = async () =>
      (
        await Promise.all(
          machines.map((m) =>
            inMachine(m, ['sh', '-c', `conntrack -L -f ipv6 -p udp --dport 53 -d ${resolver} 2>/dev/null || true`]),
          ),
        )
      )
        .join('\n')
        .split('\n')
        .flatMap((line) => {
          const m = /src=(\S+) dst=\S+ sport=\d+ dport=53 .*?src=\S+ dst=(\S+)/.exec(line);
          return m ? [{ from: m[1]!, replyTo: m[2]! }] : [];
        });
    const dnsRule = async (m: string) =>
      (await inMachine(m, ['nft', 'list', 'table', 'inet', 'gardener-ipv6-machine'])).includes(
        'th dport 53 masquerade',
      );
    expect((await Promise.all(machines.map(dnsRule))).every(Boolean)).toBe(true);
    expect((await dnsFlows()).some((f) => f.replyTo !== f.from)).toBe(true);

    // Stated off: the DNS rule goes, and the next queries leave with CoreDNS's pod address, also on the sockets its
    // forward plugin keeps open (the machines forget the flows they masqueraded). (They are still answered here: the
    // seed's kube-proxy masquerades what reaches its Services from outside its pod range.)
    await setNetworkConfig(
      { ...networkConfig(false, false), snatToUpstreamDNS: { enabled: false } },
      '"snatToUpstreamDNS":false',
    );
    await machinesApplied();
    expect((await Promise.all(machines.map(dnsRule))).some(Boolean)).toBe(false);
    await waitFor(
      async () => {
        await lookup(freshName());
        return (await dnsFlows()).some((f) => f.replyTo === f.from);
      },
      { timeoutMs: 15_000, intervalMs: 1000, message: "a query leaving with the pod's own address" },
    );

    // On again: the rule is back, and names resolve.
    await setNetworkConfig(networkConfig(false, false), '"snatToUpstreamDNS":true');
    await machinesApplied();
    expect((await Promise.all(machines.map(dnsRule))).every(Boolean)).toBe(true);
    await waitFor(answers, { timeoutMs: 60_000, intervalMs: 1000, message: `${apiName} resolved again` });
  }, 300_000);

  it('overlay on again, in place: the tunnels come back and carry the traffic', async () => {
    await setNetworkConfig(networkConfig(true, true), '"mode":"Always","natOutgoing":true');
    const machine = a.spec.nodeName!;
    const ip = b.status!.podIPs!.find((p) => familyOf(p.ip) === 'IPv6')!.ip;
    const peerIP = a.status!.podIPs!.find((p) => familyOf(p.ip) === 'IPv6')!.ip;
    await onBothMachines(
      `the pods' IPv6 routes through ${CALICO_VXLAN_DEVICES.IPv6}`,
      async (m) => (await routeDevice(m, m === machine ? ip : peerIP)) === CALICO_VXLAN_DEVICES.IPv6,
      [machine, b.spec.nodeName!],
    );
    const before = (await txPackets(machine, CALICO_VXLAN_DEVICES.IPv6))!;
    expect((await fetch(`http://[${ip}]:8080/`)).trim()).toBe(b.metadata.name);
    expect((await txPackets(machine, CALICO_VXLAN_DEVICES.IPv6))! - before).toBeGreaterThanOrEqual(4);
  }, 180_000);
});

/**
 * Waits until both of the shoot's Nodes say they applied the pool's current user data (the node agent's report): the
 * Secret's, which the gardenlet writes before it records its checksum on the Worker.
 */
async function machinesApplied(): Promise<void> {
  let last = '';
  await waitFor(
    async () => {
      const current = userDataChecksum(await userDataText());
      const { want, applied } = await appliedUserData(
        client,
        { name: NAME, namespace: SEED_NAMESPACE, pool: 'w' },
        shootKubectl,
      );
      last = `Secret ${current}, Worker ${want}, Nodes ${applied.join(', ')}`;
      return want === current && applied.length === 2 && applied.every((x) => x === current);
    },
    { timeoutMs: 90_000, intervalMs: 1000, message: 'both machines to apply the user data' },
  ).catch(async (e: Error) => {
    throw new Error(`${e.message} (${last})\n${await diagnostics()}`);
  });
}

/** The seed node addresses of a machine pod. */
async function machineHostIPs(machine: string): Promise<string[]> {
  const pod = await client.get<KubernetesObject & Pod>(Refs.pod, machine, SEED_NAMESPACE);
  const hostIPs = (pod?.status?.hostIPs ?? []).map((h) => h.ip);
  // The seed Nodes' addresses of every family (a Node's status lists them; hostIPs may hold the primary only).
  const node = await client.get<KubernetesObject & { status?: { addresses?: { type: string; address: string }[] } }>(
    Refs.node,
    (pod as unknown as Pod | undefined)?.spec.nodeName ?? '',
  );
  return [...new Set([...hostIPs, ...(node?.status?.addresses ?? []).map((x) => x.address)])];
}
