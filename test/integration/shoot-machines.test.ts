/**
 * The e2e presubmit per IP family, as Gardener's: a Shoot with two machines through the whole stack (webhook,
 * gardenlet, the control plane as pods of the seed, provider-local's machine pods from the Worker, BIND9) on a
 * dual-stack seed with two Nodes (the garden's API server doubling as the seed's), then what a user checks: its API
 * name's address records per family, its `kubernetes` Service of its primary family, both Nodes Ready with InternalIPs from the shoot's nodes and podCIDRs of the node mask inside its pods;
 * a Deployment spread over both machines with pod IPs of the shoot's families; pod A reaching pod B across machines
 * by IP, through a ClusterIP Service and by its DNS name through CoreDNS, kube-apiserver reaching them through
 * `pods/proxy` and `services/proxy`, and calling a validating webhook that agnhost serves in the shoot. The regression it exists for: forwarding
 * turned off through the Shoot's worker `sysctls` breaks cross-machine pod traffic, turned on again it works. A
 * machine that can't start (a kernel parameter's value the kernel refuses) is named with its cause in the Shoot's
 * status. Scaling the pool 2 → 1 drains the machine that goes first: its Node cordoned before its pods are evicted,
 * a PDB keeping one replica Ready throughout, no pod left `Running` on the Node once it is gone.
 * Deleting the shoot leaves nothing of it on the seed (namespace, Cluster) nor on the host (the route of its
 * load-balancer address).
 */
import { Resolver } from 'node:dns/promises';
import { KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import { TEST_IMAGE } from '../../src/extensions/provider-local/machine/images.js';
import { IMAGES } from '../../src/imagevector/images.js';
import { createCA, issueCertificate } from '../../src/pki/certificates.js';
import { featureGates } from '../../src/featuregate/featuregate.js';
import { Refs } from '../../src/apis/refs.js';
import { ip } from '../../src/system/netns.js';
import { contains, parseCIDR, parseIP, type IPFamily } from '../../src/net/cidr.js';
import { ResourceClient } from '../../src/runtime/client.js';
import { retryOnConflict } from '../../src/runtime/retry.js';
import { machinesUnsupportedReason } from '../extensions/provider-local/machine/shoot-env.js';
import { seedDualStackMigrationNetworks, seedIPv4Networks, seedIPv6Networks } from '../fixtures/objects.js';
import { SeedEnvironment, appliedUserData, webDeployment } from '../support/seed-environment.js';
import { run, testFile } from '../support/shoot.js';
import { waitFor } from '../support/wait.js';
import { PublicServer } from '../support/public-server.js';
import { seedPodScript, tcpConnectScript } from '../support/seed-pod.js';

const unsupported = machinesUnsupportedReason();

const NAMESPACE = 'garden-e2e';
// Ranges of their own: other files of this namespace run environments meanwhile.
const LB_NETWORKS = { IPv6: 'fd00:ff:e4::/64', IPv4: '172.31.252.0/24' };
/** The seed cluster: dual-stack, IPv6 first, so that it runs shoots of every family. */
const SEED_CLUSTER = {
  families: ['IPv6', 'IPv4'] as IPFamily[],
  nodes: ['fd00:1e::/64', '10.30.0.0/24'],
  pods: ['fd00:1e:1::/56', '10.31.0.0/16'],
  services: ['fd00:1e:2::/112', '10.32.0.0/16'],
};

interface FamilyCase {
  readonly label: string;
  readonly families: IPFamily[];
  readonly seed: string;
  readonly networking: Record<string, unknown>;
  /** Per family, in the shoot's family order. */
  readonly nodes: string[];
  readonly pods: string[];
  readonly masks: number[];
}

const CASES: FamilyCase[] = [
  {
    label: 'IPv6',
    families: ['IPv6'],
    seed: 'ipv6',
    networking: { ipFamilies: ['IPv6'], nodes: 'fd00:10:1:100::/64' },
    nodes: ['fd00:10:1:100::/64'],
    pods: ['fd00:10:3::/56'],
    masks: [64],
  },
  {
    label: 'dual-stack',
    families: ['IPv4', 'IPv6'],
    seed: 'dual',
    networking: { ipFamilies: ['IPv4', 'IPv6'], nodes: '10.10.0.0/16', pods: '10.3.0.0/16', services: '10.4.0.0/16' },
    // The IPv6 node range of a dual-stack shoot is provider-local's default (its spec has one node range).
    nodes: ['10.10.0.0/16', 'fd00:fe::/64'],
    pods: ['10.3.0.0/16', 'fd00:10:3::/56'],
    masks: [24, 64],
  },
  {
    label: 'IPv4',
    families: ['IPv4'],
    seed: 'ipv4',
    networking: { nodes: '10.20.0.0/16', pods: '10.21.0.0/16', services: '10.22.0.0/16' },
    nodes: ['10.20.0.0/16'],
    pods: ['10.21.0.0/16'],
    masks: [24],
  },
];

const SEEDS = { ipv6: seedIPv6Networks, dual: seedDualStackMigrationNetworks, ipv4: seedIPv4Networks };
const inCIDR = (cidr: string, ip: string) => contains(parseCIDR(cidr)!, parseIP(ip)!);
const urlHost = (ip: string) => (ip.includes(':') ? `[${ip}]` : ip);
const hostRoute = (ip: string) => `${ip}/${ip.includes(':') ? 128 : 32}`;

/** The load-balancer addresses of the shoot's kube-apiserver Service in its seed namespace. */
async function loadBalancerAddresses(seedNamespace: string): Promise<string[]> {
  const service = await client.get<KubernetesObject & { status?: { loadBalancer?: { ingress?: { ip?: string }[] } } }>(
    Refs.service,
    'kube-apiserver',
    seedNamespace,
  );
  return (service?.status?.loadBalancer?.ingress ?? []).flatMap((i) => (i.ip ? [i.ip] : []));
}

/** The addresses BIND9 of the environment answers for `name`, or the error code (`ENODATA`). */
async function query(family: IPFamily, name: string): Promise<string[] | string> {
  const resolver = new Resolver({ timeout: 1000, tries: 2 });
  resolver.setServers([env.services!.bind.server]);
  try {
    return (family === 'IPv6' ? await resolver.resolve6(name) : await resolver.resolve4(name)).sort();
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? String(e);
  }
}

const env = new SeedEnvironment();
let client: ResourceClient;

interface Pod {
  metadata: { name: string };
  spec: { nodeName?: string };
  status?: { podIPs?: { ip: string }[]; conditions?: { type: string; status: string }[] };
}

interface ShootPod {
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; deletionTimestamp?: string };
  spec: { nodeName?: string };
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
}

interface ShootNode {
  metadata: { name: string };
  spec?: { unschedulable?: boolean };
}

interface WorkerStatus {
  lastOperation?: { state?: string; description?: string };
}

/** Each shoot's deletion, requested by its last test and waited for by the file's last. */
const deletions: { label: string; outcome: Promise<Error | undefined> }[] = [];

describe.skipIf(unsupported !== undefined).sequential('shoots with machines, end to end (needs root)', () => {
  beforeAll(async () => {
    await env.start({
      tag: 'e2e',
      cluster: SEED_CLUSTER,
      gates: featureGates({ IPv6SingleStack: true, DualStack: true }),
      loadBalancerNetworks: LB_NETWORKS,
      careSyncPeriodMs: 2_000,
      namespace: NAMESPACE,
      seeds: SEEDS,
    });
    client = env.client;
  }, 300_000);

  afterAll(async () => {
    await env.stop();
  }, 120_000);

  for (const c of CASES) {
    describe.sequential(`an ${c.label} shoot with two machines`, () => {
      const name = c.label === 'IPv6' ? 'm6' : c.label === 'IPv4' ? 'm4' : 'mds';
      const seedNamespace = `shoot--e2e--${name}`;
      let kubeconfig: string;
      let pods: Pod[] = [];
      const kubectl = async (args: string[]) => {
        const r = await run(env.kubectlBin, ['--kubeconfig', kubeconfig, '--request-timeout=20s', ...args], 40_000);
        if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr.trim()}`);
        return r.stdout;
      };
      const exec = (pod: string, command: string[]) => kubectl(['exec', '-n', 'default', pod, '--', ...command]);
      const fetch = (pod: string, url: string) => exec(pod, ['timeout', '4', 'wget', '-q', '-O', '-', url]);
      /** What the machines and the pods have for forwarding, routes and neighbours: for a failure's message. */
      const forwardingDiagnostics = async (shootPods: Pod[]) => {
        const seedKubectl = (args: string[]) =>
          run(env.kubectlBin, ['--kubeconfig', env.cp.kubeconfigPath, ...args], 40_000).then(
            (r) => r.stdout + r.stderr,
          );
        const machines = (await client.list(Refs.pod, { namespace: seedNamespace })).items
          .map((p) => p.metadata?.name ?? '')
          .filter((n) => n.startsWith('machine-'));
        const show =
          'sysctl -a 2>/dev/null | grep -E "conf.(all|eth0|cni0).forwarding"; ip route; ip -6 route; ip neigh; ip -6 neigh';
        const parts: string[] = [];
        for (const m of machines) {
          parts.push(
            `machine pod ${m}:\n${await seedKubectl(['exec', '-n', seedNamespace, m, '--', 'sh', '-c', show])}`,
          );
          parts.push(`its log:\n${await seedKubectl(['logs', '-n', seedNamespace, m, '--tail=30'])}`);
        }
        for (const p of shootPods)
          parts.push(
            `shoot pod ${p.metadata.name}:\n${await exec(p.metadata.name, ['sh', '-c', 'ip route; ip -6 route; ip neigh; ip -6 neigh']).catch((x: Error) => x.message)}`,
          );
        return parts.join('\n');
      };

      it('reaches Succeeded with both Nodes Ready, InternalIPs from its nodes and podCIDRs inside its pods', async () => {
        const started = Date.now();
        await client.create(Refs.shoot, {
          apiVersion: 'core.gardener.cloud/v1beta1',
          kind: 'Shoot',
          metadata: { name, namespace: NAMESPACE },
          spec: {
            seedName: c.seed,
            cloudProfile: { name: 'local' },
            region: 'local',
            provider: {
              type: 'local',
              workers: [{ name: 'w', machine: { type: 'local' }, minimum: 2, maximum: 2 }],
            },
            networking: { type: 'calico', ...c.networking },
          },
        } as KubernetesObject);
        await env.waitForShoot(
          NAMESPACE,
          name,
          ['APIServerAvailable', 'ControlPlaneHealthy', 'EveryNodeReady', 'SystemComponentsHealthy'],
          240_000,
        );
        process.stderr.write(`[e2e ${c.label}] shoot with 2 Ready nodes after ${Date.now() - started} ms\n`);
        // In the environment's folder: the later tests of the block use it.
        kubeconfig = await env.writeShootKubeconfig(NAMESPACE, name);

        // Its API name has an address record per family, the load-balancer address of that family, and none other.
        const ingress = await loadBalancerAddresses(seedNamespace);
        const apiName = `api.${name}.e2e.external.local.gardener.cloud`;
        for (const family of ['IPv6', 'IPv4'] as const) {
          const expected = ingress.filter((a) => parseIP(a)!.family === family);
          expect(expected.length, `${family} load-balancer address`).toBe(c.families.includes(family) ? 1 : 0);
          expect(await query(family, apiName)).toEqual(expected.length > 0 ? expected : 'ENODATA');
        }
        // The shoot's `kubernetes` Service: single-stack of the primary family (as kube-apiserver makes it), from the
        // primary service range.
        const shoot = (await client.get<Shoot & KubernetesObject>(Refs.shoot, name, NAMESPACE))!;
        const kubernetes = JSON.parse(
          await kubectl(['get', 'service', 'kubernetes', '-n', 'default', '-o', 'json']),
        ) as { spec: { clusterIPs: string[]; ipFamilies: string[] } };
        expect(kubernetes.spec.ipFamilies).toEqual([c.families[0]]);
        kubernetes.spec.clusterIPs.forEach((clusterIP, i) =>
          expect(inCIDR(shoot.status!.networking!.services![i]!, clusterIP), clusterIP).toBe(true),
        );

        const nodes = JSON.parse(await kubectl(['get', 'nodes', '-o', 'json'])) as {
          items: {
            metadata: { name: string };
            spec: { podCIDRs: string[] };
            status: { addresses: { type: string; address: string }[] };
          }[];
        };
        expect(nodes.items).toHaveLength(2);
        for (const node of nodes.items) {
          const internal = node.status.addresses.filter((a) => a.type === 'InternalIP').map((a) => a.address);
          expect(internal.map((ip) => parseIP(ip)!.family)).toEqual(c.families);
          internal.forEach((ip, i) => expect(inCIDR(c.nodes[i]!, ip)).toBe(true));
          expect(node.spec.podCIDRs).toHaveLength(c.families.length);
          node.spec.podCIDRs.forEach((cidr, i) => {
            expect(parseCIDR(cidr)!.prefix).toBe(c.masks[i]);
            expect(inCIDR(c.pods[i]!, cidr.split('/')[0]!)).toBe(true);
          });
        }
      }, 300_000);

      it('runs a Deployment over both machines, and pod A reaches pod B by IP, through a Service and by DNS', async () => {
        const manifest = testFile(
          'web.json',
          JSON.stringify({
            apiVersion: 'v1',
            kind: 'List',
            items: [webDeployment()],
          }),
        );
        await waitFor(() => kubectl(['get', 'serviceaccount', 'default']).then(() => true), {
          timeoutMs: 30_000,
          message: 'the default ServiceAccount',
        });
        await kubectl(['apply', '-f', manifest]);
        pods = await waitFor(
          async () => {
            const list = JSON.parse(await kubectl(['get', 'pods', '-l', 'app=web', '-o', 'json'])) as { items: Pod[] };
            const ready = list.items.filter((p) =>
              p.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True'),
            );
            return ready.length === 2 ? ready : undefined;
          },
          { timeoutMs: 120_000, intervalMs: 500, message: 'two web pods Ready' },
        );
        expect(new Set(pods.map((p) => p.spec.nodeName)).size).toBe(2);
        for (const pod of pods) {
          expect(pod.status!.podIPs!.map((p) => parseIP(p.ip)!.family)).toEqual(c.families);
        }
        const [a, b] = pods as [Pod, Pod];

        // By IP, every family.
        for (const { ip } of b.status!.podIPs!) {
          expect((await fetch(a.metadata.name, `http://${urlHost(ip)}:8080/`)).trim()).toBe(b.metadata.name);
        }
        // Through a ClusterIP Service in front of pod B only, on the shoot's families.
        await kubectl(['label', 'pod', b.metadata.name, 'role=b']);
        const service = testFile(
          'svc.json',
          JSON.stringify({
            apiVersion: 'v1',
            kind: 'Service',
            metadata: { name: 'web-b', namespace: 'default' },
            spec: {
              selector: { role: 'b' },
              ipFamilies: c.families,
              ipFamilyPolicy: c.families.length > 1 ? 'RequireDualStack' : 'SingleStack',
              ports: [{ port: 80, targetPort: 8080 }],
            },
          }),
        );
        await kubectl(['apply', '-f', service]);
        const clusterIPs = JSON.parse(
          await kubectl(['get', 'service', 'web-b', '-o', 'jsonpath={.spec.clusterIPs}']),
        ) as string[];
        expect(clusterIPs.map((ip) => parseIP(ip)!.family)).toEqual(c.families);
        for (const ip of clusterIPs) {
          const body = await waitFor(() => fetch(a.metadata.name, `http://${urlHost(ip)}/`), {
            timeoutMs: 30_000,
            intervalMs: 500,
            message: `an answer through the Service at ${ip}`,
          });
          expect(body.trim()).toBe(b.metadata.name);
        }
        // kube-apiserver reaches them too (through its vpn-seed into the overlay): pods/proxy and services/proxy.
        for (const path of [
          `/api/v1/namespaces/default/pods/${b.metadata.name}:8080/proxy/`,
          '/api/v1/namespaces/default/services/web-b:80/proxy/',
        ]) {
          const proxied = await waitFor(() => kubectl(['get', '--raw', path]), {
            timeoutMs: 30_000,
            intervalMs: 500,
            message: `GET ${path}`,
          });
          expect(proxied.trim()).toBe(b.metadata.name);
        }
        // By name, through CoreDNS at the cluster DNS address.
        const dnsName = 'web-b.default.svc.cluster.local';
        const body = await waitFor(() => fetch(a.metadata.name, `http://${dnsName}/`), {
          timeoutMs: 60_000,
          intervalMs: 500,
          message: `${dnsName} through CoreDNS`,
        });
        expect(body.trim()).toBe(b.metadata.name);

        // calico's defaults on the machines (no providerConfig): an IPv4-only shoot tunnels its pods in vxlan.calico
        // (its pool's IP-in-IP, which this kernel lacks); with IPv6 in the families both are routed directly. A
        // family the shoot doesn't have is neither routed nor masqueraded.
        const inMachine = async (command: string) => {
          const r = await run(env.kubectlBin, [
            '--kubeconfig',
            env.cp.kubeconfigPath,
            'exec',
            '-n',
            seedNamespace,
            a.spec.nodeName!,
            '-c',
            'machine',
            '--',
            'sh',
            '-c',
            command,
          ]);
          if (r.code !== 0) throw new Error(`${command}: ${r.stderr}`);
          return r.stdout;
        };
        const devices = await inMachine('ls /sys/class/net');
        expect(devices.includes('vxlan.calico')).toBe(c.label === 'IPv4');
        expect(devices.includes('vxlan-v6.calico')).toBe(false);
        if (!c.families.includes('IPv4')) {
          expect(await inMachine('ip -4 route show table main')).not.toMatch(/vxlan/);
          expect(await inMachine('nft list table inet gardener-ipv6-machine')).not.toMatch(/\bip saddr/);
        }
      }, 300_000);

      it('hands its system components to the shoot through ManagedResources, saying what calico lacks', async () => {
        type WithConditions = KubernetesObject & {
          status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
        };
        const statusOf = (o: WithConditions | undefined, type: string) =>
          o?.status?.conditions?.find((x) => x.type === type);
        for (const mr of ['shoot-core-coredns', 'extension-networking-calico']) {
          await waitFor(
            async () => {
              const o = await client.get<WithConditions>(Refs.managedResource, mr, seedNamespace);
              return statusOf(o, 'ResourcesApplied')?.status === 'True' &&
                statusOf(o, 'ResourcesHealthy')?.status === 'True'
                ? true
                : undefined;
            },
            { timeoutMs: 60_000, intervalMs: 500, message: `ManagedResource ${mr} applied and healthy` },
          );
        }
        // What the calico ManagedResource holds is in the shoot; its DaemonSet, whose image doesn't exist here, isn't.
        // The IPv6 pool is rendered (an IPv4 one only with an overlay statement: calico-node makes it from its env).
        expect(await kubectl(['get', 'crd', 'ippools.crd.projectcalico.org', '-o', 'name'])).toContain('ippools');
        if (c.families.includes('IPv6')) {
          expect(await kubectl(['get', 'ippools.crd.projectcalico.org', '-o', 'name'])).toContain(
            'default-ipv6-ippool',
          );
        }
        expect(await kubectl(['get', 'configmap', '-n', 'kube-system', 'calico-config', '-o', 'name'])).toContain(
          'calico-config',
        );
        await expect(kubectl(['get', 'daemonset', '-n', 'kube-system', 'calico-node'])).rejects.toThrow(/NotFound/);
        const allowDNS = JSON.parse(
          await kubectl(['get', 'networkpolicy', '-n', 'kube-system', 'gardener.cloud--allow-dns', '-o', 'json']),
        ) as KubernetesObject;
        expect(allowDNS.metadata?.annotations?.['resources.gardener.cloud/origin']).toBe(
          `shoot:${seedNamespace}/shoot-core-coredns`,
        );
        const network = await client.get<WithConditions>(Refs.network, name, seedNamespace);
        const health = statusOf(network, 'SystemComponentsHealthy');
        expect(health?.status).toBe('False');
        expect(health?.reason).toBe('ComponentsNotDeployed');
        expect(health?.message).toContain('DaemonSet kube-system/calico-node');
      }, 120_000);

      // IPv6 with the IPv6 seed, IPv4 with the dual-stack one (both are Seed objects of the same dual-stack cluster).
      it.runIf(c.label !== 'IPv4')(
        "governs its seed namespace with the seed's policies: only a pod labelled for it reaches a public server",
        async () => {
          const server = new PublicServer(c.label === 'IPv6' ? ['IPv6'] : ['IPv4']);
          await server.start();
          try {
            const kubectl = { bin: env.kubectlBin, kubeconfig: env.cp.kubeconfigPath };
            const allowed = await seedPodScript(client, kubectl, {
              namespace: seedNamespace,
              name: 'to-public-allowed',
              script: tcpConnectScript(server.targets(), 'connected'),
              labels: { 'networking.gardener.cloud/to-public-networks': 'allowed' },
            });
            const denied = await seedPodScript(client, kubectl, {
              namespace: seedNamespace,
              name: 'to-public-denied',
              script: tcpConnectScript(server.targets(), 'refused'),
            });
            const lines = (log: string) => log.trim().split('\n').sort();
            expect(lines(allowed)).toEqual(
              server
                .targets()
                .map((t) => `${t} connected`)
                .sort(),
            );
            // deny-all: the same pod without the label gets nowhere once its isolation is in force.
            expect(lines(denied)).toEqual(
              server
                .targets()
                .sort()
                .map((t) => expect.stringMatching(`^${t} refused [A-Z]+$`)),
            );
          } finally {
            await server.stop();
          }
        },
        120_000,
      );

      it('enforces NetworkPolicies between pods on different machines, for every family', async () => {
        const [a, b] = pods as [Pod, Pod];
        // A client in a namespace of its own, labelled for the namespace selector.
        const client = testFile(
          'np-client.json',
          JSON.stringify({
            apiVersion: 'v1',
            kind: 'List',
            items: [
              { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'np', labels: { team: 'x' } } },
              {
                apiVersion: 'v1',
                kind: 'Pod',
                metadata: { name: 'client', namespace: 'np' },
                spec: {
                  nodeName: a.spec.nodeName,
                  terminationGracePeriodSeconds: 1,
                  containers: [{ name: 'client', image: TEST_IMAGE, command: ['sleep', '3600'] }],
                },
              },
            ],
          }),
        );
        await kubectl(['apply', '-f', client]);
        await kubectl(['wait', '-n', 'np', '--for=condition=Ready', 'pod/client', '--timeout=90s']);
        const client_ = JSON.parse(await kubectl(['get', 'pod', '-n', 'np', 'client', '-o', 'json'])) as Pod;
        const fromNp = (url: string) =>
          kubectl(['exec', '-n', 'np', 'client', '--', 'timeout', '4', 'wget', '-q', '-O', '-', url]);
        const urls = b.status!.podIPs!.map(({ ip }) => `http://${urlHost(ip)}:8080/`);
        const reaches = async (from: 'a' | 'client') => {
          const answers = await Promise.all(
            urls.map((url) =>
              (from === 'a' ? fetch(a.metadata.name, url) : fromNp(url)).then(
                (body) => body.trim() === b.metadata.name,
                () => false,
              ),
            ),
          );
          // Every family alike: one answer per family or none.
          return answers.every(Boolean) ? true : answers.some(Boolean) ? 'some families' : false;
        };
        const expectReach = async (from: 'a' | 'client', want: boolean, what: string) =>
          expect(
            await waitFor(async () => ((await reaches(from)) === want ? true : undefined), {
              timeoutMs: 20_000,
              intervalMs: 250,
              message: `${from} ${want ? 'reaching' : 'refused by'} pod B: ${what}`,
            }),
          ).toBe(true);
        const policy = (name: string, spec: Record<string, unknown>) =>
          testFile(
            `np-${name}.json`,
            JSON.stringify({
              apiVersion: 'networking.k8s.io/v1',
              kind: 'NetworkPolicy',
              metadata: { name, namespace: 'default' },
              spec,
            }),
          );
        const selectB = { matchLabels: { role: 'b' } };

        await expectReach('a', true, 'no policy');
        await expectReach('client', true, 'no policy');
        await kubectl(['apply', '-f', policy('deny', { podSelector: {}, policyTypes: ['Ingress'] })]);
        await expectReach('a', false, 'default deny');
        await expectReach('client', false, 'default deny');

        // By pod label: a only.
        await kubectl(['label', 'pod', a.metadata.name, 'role=a']);
        const byPod = policy('allow-a', {
          podSelector: selectB,
          ingress: [{ from: [{ podSelector: { matchLabels: { role: 'a' } } }], ports: [{ port: 8080 }] }],
        });
        await kubectl(['apply', '-f', byPod]);
        await expectReach('a', true, 'allowed by pod label');
        await expectReach('client', false, 'not of the pod selector');
        await kubectl(['delete', '-f', byPod]);

        // By namespace label: the client only.
        const byNamespace = policy('allow-np', {
          podSelector: selectB,
          ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: 'x' } } }] }],
        });
        await kubectl(['apply', '-f', byNamespace]);
        await expectReach('client', true, 'allowed by namespace label');
        await expectReach('a', false, 'not of the namespace selector');
        await kubectl(['delete', '-f', byNamespace]);

        // By ipBlock of the whole address space of each family, minus the client's address: a only.
        const blocks = c.families.map((family) => {
          const own = client_.status!.podIPs!.map((p) => p.ip).find((ip) => parseIP(ip)!.family === family)!;
          return family === 'IPv6'
            ? { ipBlock: { cidr: '::/0', except: [`${own}/128`] } }
            : { ipBlock: { cidr: '0.0.0.0/0', except: [`${own}/32`] } };
        });
        const byBlock = policy('allow-blocks', { podSelector: selectB, ingress: [{ from: blocks }] });
        await kubectl(['apply', '-f', byBlock]);
        await expectReach('a', true, 'inside the ipBlock');
        await expectReach('client', false, "the ipBlock's except");
        await kubectl(['delete', '-f', byBlock]);
        await kubectl(['delete', '-f', policy('deny', {})]);
        await expectReach('a', true, 'the policies deleted');
        await expectReach('client', true, 'the policies deleted');

        // Egress: only DNS to CoreDNS. Names resolve, pod B is refused.
        const dnsOnly = policy('egress-dns', {
          podSelector: { matchLabels: { role: 'a' } },
          policyTypes: ['Egress'],
          egress: [
            {
              to: [
                {
                  namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
                  podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
                },
              ],
              ports: [
                { port: 53, protocol: 'UDP' },
                { port: 53, protocol: 'TCP' },
              ],
            },
          ],
        });
        await kubectl(['apply', '-f', dnsOnly]);
        await expectReach('a', false, 'egress to DNS only');
        const resolved = await exec(a.metadata.name, ['nslookup', 'web-b.default.svc.cluster.local']);
        const serviceIPs = JSON.parse(
          await kubectl(['get', 'service', 'web-b', '-o', 'jsonpath={.spec.clusterIPs}']),
        ) as string[];
        for (const ip of serviceIPs) expect(resolved).toContain(ip);
        await expectReach('client', true, 'an egress policy of another pod');
        await kubectl(['delete', '-f', dnsOnly]);
        await expectReach('a', true, 'the egress policy deleted');
        await kubectl(['label', 'pod', a.metadata.name, 'role-']);
        await kubectl(['delete', 'namespace', 'np', '--wait=false']);
      }, 300_000);

      it("holds a new pod's first packets to its NetworkPolicies (the CNI hook), for every family", async () => {
        const [, b] = pods as [Pod, Pod];
        // Every egress of `early` denied before it exists; it tries pod B from its first instant on, on each machine.
        const urls = b.status!.podIPs!.map(({ ip }) => `http://${urlHost(ip)}:8080/`);
        const attempts = urls.map((url) => `timeout 1 wget -q -O /dev/null ${url} && echo "LEAK ${url}"`).join('; ');
        const objects = {
          apiVersion: 'v1',
          kind: 'List',
          items: [
            {
              apiVersion: 'networking.k8s.io/v1',
              kind: 'NetworkPolicy',
              metadata: { name: 'early-deny', namespace: 'default' },
              spec: { podSelector: { matchLabels: { role: 'early' } }, policyTypes: ['Egress'] },
            },
            ...['0', '1'].map((i) => ({
              apiVersion: 'v1',
              kind: 'Pod',
              metadata: { name: `early-${i}`, namespace: 'default', labels: { role: 'early' } },
              spec: {
                nodeName: `machine-w-${i}`,
                terminationGracePeriodSeconds: 1,
                restartPolicy: 'Never',
                containers: [
                  {
                    name: 'early',
                    image: TEST_IMAGE,
                    command: ['sh', '-c', `for i in 1 2 3 4 5 6; do ${attempts}; done; echo finished`],
                  },
                ],
              },
            })),
          ],
        };
        await kubectl(['apply', '-f', testFile('early.json', JSON.stringify(objects))]);
        const logs = await waitFor(
          async () => {
            const out = await Promise.all(['0', '1'].map((i) => kubectl(['logs', `early-${i}`]).catch(() => '')));
            return out.every((o) => o.includes('finished')) ? out : undefined;
          },
          { timeoutMs: 120_000, intervalMs: 1_000, message: 'both early pods to finish their attempts' },
        );
        expect(logs.join('\n')).not.toMatch(/LEAK/);
        await kubectl(['delete', 'pod', 'early-0', 'early-1', '--wait=false']);
        await kubectl(['delete', 'networkpolicy', 'early-deny']);
      }, 180_000);

      it.skipIf(!c.families.includes('IPv6'))(
        'drops link-local packets to a pod that a policy isolates, from a pod on the same machine',
        async () => {
          const [a] = pods as [Pod, Pod];
          const target = {
            apiVersion: 'v1',
            kind: 'List',
            items: [
              {
                apiVersion: 'networking.k8s.io/v1',
                kind: 'NetworkPolicy',
                metadata: { name: 'isolate-ll', namespace: 'default' },
                spec: { podSelector: { matchLabels: { role: 'll' } }, policyTypes: ['Ingress'] },
              },
              {
                apiVersion: 'v1',
                kind: 'Pod',
                metadata: { name: 'll-target', namespace: 'default', labels: { role: 'll' } },
                spec: {
                  nodeName: a.spec.nodeName,
                  terminationGracePeriodSeconds: 1,
                  containers: [
                    {
                      name: 'web',
                      image: TEST_IMAGE,
                      command: ['sh', '-c', 'hostname > /www/index.html && exec httpd -f -p 8080 -h /www'],
                    },
                  ],
                },
              },
            ],
          };
          await kubectl(['apply', '-f', testFile('ll-target.json', JSON.stringify(target))]);
          try {
            await kubectl(['wait', '--for=condition=Ready', 'pod/ll-target', '--timeout=90s']);
            const linkLocal = await waitFor(
              async () => {
                const out = await exec('ll-target', ['ip', '-6', '-o', 'addr', 'show', 'dev', 'eth0', 'scope', 'link']);
                return out.includes('tentative') ? undefined : /inet6 (fe80::[0-9a-f:]+)\//.exec(out)?.[1];
              },
              { timeoutMs: 10_000, message: "ll-target's link-local address" },
            );
            const global = JSON.parse(
              await kubectl(['get', 'pod', 'll-target', '-o', 'jsonpath={.status.podIPs}']),
            ) as { ip: string }[];
            // The policy holds on its routable addresses, and on its link-local one: connection refused or timeout.
            for (const url of [
              ...global.map(({ ip }) => `http://${urlHost(ip)}:8080/`),
              `http://[${linkLocal}%eth0]:8080/`,
            ]) {
              await expect(fetch(a.metadata.name, url), url).rejects.toThrow(
                /command terminated with exit code (1|143)/,
              );
            }
            // Without the policy the routable addresses answer: the refusals above were the policy's.
            await kubectl(['delete', 'networkpolicy', 'isolate-ll']);
            for (const { ip } of global) {
              await waitFor(
                () => fetch(a.metadata.name, `http://${urlHost(ip)}:8080/`).then((body) => body.trim() === 'll-target'),
                { timeoutMs: 20_000, intervalMs: 500, message: `ll-target at ${ip} without the policy` },
              );
            }
          } finally {
            await kubectl(['delete', '--ignore-not-found', '-f', testFile('ll-target.json', JSON.stringify(target))]);
          }
        },
        180_000,
      );

      it('calls a validating webhook served by a pod in the shoot (agnhost), through its Service', async () => {
        // A serving certificate for the Service's name, of a CA of its own (the webhook's caBundle).
        const validity = { notAfter: new Date(Date.now() + 3_600_000) };
        const ca = await createCA('webhook-e2e', validity);
        const serving = await issueCertificate(ca, {
          ...validity,
          commonName: 'webhook.default.svc',
          usages: ['server'],
          dnsNames: ['webhook.default.svc', 'webhook.default.svc.cluster.local'],
        });
        const b64 = (text: string) => Buffer.from(text).toString('base64');
        const objects = {
          apiVersion: 'v1',
          kind: 'List',
          items: [
            {
              apiVersion: 'v1',
              kind: 'Secret',
              metadata: { name: 'webhook-tls', namespace: 'default' },
              type: 'kubernetes.io/tls',
              data: { 'tls.crt': b64(serving.certPEM), 'tls.key': b64(serving.keyPEM) },
            },
            {
              apiVersion: 'apps/v1',
              kind: 'Deployment',
              metadata: { name: 'webhook', namespace: 'default' },
              spec: {
                replicas: 1,
                selector: { matchLabels: { app: 'webhook' } },
                template: {
                  metadata: { labels: { app: 'webhook' } },
                  spec: {
                    terminationGracePeriodSeconds: 1,
                    containers: [
                      {
                        name: 'webhook',
                        image: IMAGES.agnhost,
                        args: [
                          'webhook',
                          '--tls-cert-file=/tls/tls.crt',
                          '--tls-private-key-file=/tls/tls.key',
                          '--port=8443',
                        ],
                        readinessProbe: { httpGet: { path: '/readyz', port: 8443, scheme: 'HTTPS' }, periodSeconds: 1 },
                        volumeMounts: [{ name: 'tls', mountPath: '/tls', readOnly: true }],
                      },
                    ],
                    volumes: [{ name: 'tls', secret: { secretName: 'webhook-tls' } }],
                  },
                },
              },
            },
            {
              apiVersion: 'v1',
              kind: 'Service',
              metadata: { name: 'webhook', namespace: 'default' },
              spec: {
                selector: { app: 'webhook' },
                ipFamilies: c.families,
                ipFamilyPolicy: c.families.length > 1 ? 'RequireDualStack' : 'SingleStack',
                ports: [{ port: 443, targetPort: 8443 }],
              },
            },
            {
              apiVersion: 'admissionregistration.k8s.io/v1',
              kind: 'ValidatingWebhookConfiguration',
              metadata: { name: 'deny-configmaps' },
              webhooks: [
                {
                  name: 'deny-configmaps.e2e.gardener-ipv6.local',
                  clientConfig: {
                    service: { namespace: 'default', name: 'webhook', path: '/configmaps', port: 443 },
                    caBundle: b64(ca.certPEM),
                  },
                  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
                  // Only the test's ConfigMaps: the rest of the shoot never depends on this pod.
                  objectSelector: { matchLabels: { 'webhook-e2e': 'true' } },
                  failurePolicy: 'Fail',
                  sideEffects: 'None',
                  admissionReviewVersions: ['v1'],
                  timeoutSeconds: 5,
                },
              ],
            },
          ],
        };
        await kubectl(['apply', '-f', testFile('webhook.json', JSON.stringify(objects))]);
        await kubectl(['rollout', 'status', 'deployment/webhook', '--timeout=90s']);
        const configMap = (name: string, value: string) =>
          testFile(
            `${name}.json`,
            JSON.stringify({
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name, namespace: 'default', labels: { 'webhook-e2e': 'true' } },
              data: { 'webhook-e2e-test': value },
            }),
          );
        // The webhook's registration takes a moment to be seen by the API server, and its Service's rules a moment
        // to reach every machine's kube-proxy: wait for the denial (a failure to call it is not one).
        let last = '';
        const denied = await waitFor(
          () =>
            kubectl(['create', '-f', configMap('disallowed', 'webhook-disallow')]).then(
              async () => {
                last = 'created';
                await kubectl(['delete', 'configmap', 'disallowed', '--ignore-not-found']);
                return undefined;
              },
              (e: Error) => {
                last = e.message;
                return /denied the request/.test(e.message) ? e : undefined;
              },
            ),
          { timeoutMs: 60_000, intervalMs: 1_000, message: 'the webhook to deny the ConfigMap' },
        ).catch((e: Error) => {
          throw new Error(`${e.message}; last: ${last}`);
        });
        expect(denied.message).toMatch(/denied the request: the configmap contains unwanted key and value/);
        // Anything else it allows: its answer, not a failure to reach it, decided.
        await kubectl(['create', '-f', configMap('allowed', 'anything')]);
        await kubectl(['delete', 'validatingwebhookconfiguration', 'deny-configmaps']);
      }, 180_000);

      it('breaks cross-machine pod traffic when the worker sysctls turn forwarding off, and heals when on', async () => {
        const key = c.families[0] === 'IPv6' ? 'net.ipv6.conf.all.forwarding' : 'net.ipv4.conf.all.forwarding';
        const [a, b] = pods as [Pod, Pod];
        const podB = `http://${urlHost(b.status!.podIPs![0]!.ip)}:8080/`;
        // The shoot's reconcile of the change succeeds only once every machine applied it (its Node says so).
        const setSysctls = async (value: string) => {
          const updated = await retryOnConflict(async () => {
            const shoot = (await client.get<Shoot & KubernetesObject>(Refs.shoot, name, NAMESPACE))!;
            (shoot.spec.provider!.workers![0] as { sysctls?: Record<string, string> }).sysctls = { [key]: value };
            return client.update(Refs.shoot, shoot as KubernetesObject);
          });
          let last = '';
          await waitFor(
            async () => {
              const s = await client.get<Shoot & KubernetesObject>(Refs.shoot, name, NAMESPACE);
              last = `${s?.status?.lastOperation?.state}: ${s?.status?.lastOperation?.description}`;
              return (
                (s?.status?.observedGeneration ?? 0) >= (updated.metadata?.generation ?? 1) &&
                s?.status?.lastOperation?.state === 'Succeeded'
              );
            },
            { timeoutMs: 150_000, intervalMs: 500, message: `the shoot reconciled with ${key}=${value}` },
          ).catch((e: Error) => {
            throw new Error(`${e.message}; last: ${last}`);
          });
          const { want, applied } = await appliedUserData(
            client,
            { name, namespace: seedNamespace, pool: 'w' },
            kubectl,
          );
          expect(want).toMatch(/^[0-9a-f]{64}$/);
          expect(applied).toEqual([want, want]);
        };
        await setSysctls('0');
        const error = await fetch(a.metadata.name, podB).then(
          () => undefined,
          (e: Error) => e,
        );
        expect(error?.message).toMatch(/timeout|wget|exit|terminated|command/i);
        await setSysctls('1');
        // Applied on both machines: the next connection goes through (about 0.2 s here). The deadline is for a loaded
        // machine, where one attempt (an exec into the pod and a wget with 4 s to answer) can take several seconds.
        const healing = Date.now();
        const body = await waitFor(() => fetch(a.metadata.name, podB), {
          timeoutMs: 60_000,
          intervalMs: 500,
          message: 'cross-machine traffic to work again with forwarding on',
        }).catch(async (e: Error) => {
          throw new Error(`${e.message}\n${await forwardingDiagnostics([a, b])}`);
        });
        process.stderr.write(`[e2e ${c.label}] traffic with forwarding on again after ${Date.now() - healing} ms\n`);
        expect(body.trim()).toBe(b.metadata.name);
      }, 420_000);

      // Scaling is the same for every family: once is enough.
      if (c.label === 'IPv6')
        it('drains a machine before scaling its pool 2 → 1: a PDB keeps one replica Ready throughout', async () => {
          const kc = new KubeConfig();
          kc.loadFromFile(kubeconfig);
          const shootClient = new ResourceClient(kc, { requestTimeoutMs: 10_000 });
          try {
            // One replica per machine (spread by hostname, the cordoned Node no longer counting), a PDB that keeps one.
            const labels = { app: 'guarded' };
            await shootClient.create(Refs.deployment, webDeployment('guarded', { honorNodeTaints: true }));
            await shootClient.create(Refs.podDisruptionBudget, {
              apiVersion: 'policy/v1',
              kind: 'PodDisruptionBudget',
              metadata: { name: 'guarded', namespace: 'default' },
              spec: { minAvailable: 1, selector: { matchLabels: labels } },
            } as KubernetesObject);
            const isReady = (p: ShootPod) =>
              !p.metadata.deletionTimestamp &&
              (p.status?.conditions ?? []).some((x) => x.type === 'Ready' && x.status === 'True');
            const guarded = async () =>
              (await shootClient.list<ShootPod & KubernetesObject>(Refs.pod, { namespace: 'default' })).items.filter(
                (p) => p.metadata.labels?.app === 'guarded',
              );
            const before = await waitFor(
              async () => {
                const ready = (await guarded()).filter(isReady);
                return ready.length === 2 && new Set(ready.map((p) => p.spec.nodeName)).size === 2 ? ready : undefined;
              },
              { timeoutMs: 120_000, intervalMs: 500, message: 'two guarded pods Ready, one per machine' },
            );
            const going = 'machine-w-1';
            const evictedPod = before.find((p) => p.spec.nodeName === going)!.metadata.name;
            // The PDB's status has to count both before the drain may rely on it.
            await waitFor(
              async () =>
                (
                  await shootClient.get<KubernetesObject & { status?: { currentHealthy?: number } }>(
                    Refs.podDisruptionBudget,
                    'guarded',
                    'default',
                  )
                )?.status?.currentHealthy === 2,
              { timeoutMs: 30_000, intervalMs: 250, message: 'the PDB to count two healthy pods' },
            );

            await retryOnConflict(async () => {
              const shoot = (await client.get<Shoot & KubernetesObject>(Refs.shoot, name, NAMESPACE))!;
              Object.assign(shoot.spec.provider!.workers![0]!, { minimum: 1, maximum: 1 });
              return client.update(Refs.shoot, shoot as KubernetesObject);
            });
            let observations = 0;
            let minReady = 2;
            let cordonedAt: number | undefined;
            let evictedAt: number | undefined;
            let cordonedWhenEvicted: boolean | undefined;
            let draining: string | undefined;
            const orphans = new Set<string>();
            const started = Date.now();
            await waitFor(
              async () => {
                // Nodes before pods: a pod listed after its Node was seen gone really outlived it.
                const nodes = (await shootClient.list<ShootNode & KubernetesObject>(Refs.node)).items;
                const pods = (await shootClient.list<ShootPod & KubernetesObject>(Refs.pod)).items;
                const worker = await client.get<KubernetesObject & { status?: WorkerStatus }>(
                  Refs.worker,
                  name,
                  seedNamespace,
                );
                observations++;
                const names = new Set(nodes.map((n) => n.metadata.name));
                for (const p of pods) {
                  if (p.status?.phase === 'Running' && p.spec.nodeName && !names.has(p.spec.nodeName)) {
                    orphans.add(`${p.metadata.namespace}/${p.metadata.name} on ${p.spec.nodeName}`);
                  }
                }
                const ready = pods.filter((p) => p.metadata.labels?.app === 'guarded' && isReady(p));
                minReady = Math.min(minReady, ready.length);
                const node = nodes.find((n) => n.metadata.name === going);
                if (node?.spec?.unschedulable && cordonedAt === undefined) cordonedAt = observations;
                const old = pods.find((p) => p.metadata.name === evictedPod);
                if (evictedAt === undefined && (!old || old.metadata.deletionTimestamp)) {
                  evictedAt = observations;
                  cordonedWhenEvicted = cordonedAt !== undefined;
                }
                const description = worker?.status?.lastOperation?.description ?? '';
                if (/^draining machine machine-w-1 \(\d+ pods? left\)/.test(description)) draining = description;
                const machinePods = (await client.list(Refs.pod, { namespace: seedNamespace })).items
                  .map((p) => p.metadata?.name ?? '')
                  .filter((n) => n.startsWith('machine-'));
                return (
                  node === undefined &&
                  machinePods.length === 1 &&
                  ready.length === 2 &&
                  ready.every((p) => p.spec.nodeName === 'machine-w-0')
                );
              },
              {
                timeoutMs: 180_000,
                intervalMs: 250,
                message: 'machine-w-1 drained and gone, both guarded pods Ready on machine-w-0',
              },
            );
            process.stderr.write(
              `[e2e ${c.label}] drained and scaled down after ${Date.now() - started} ms, ${observations} observations\n`,
            );
            expect(minReady).toBeGreaterThanOrEqual(1);
            expect(cordonedAt).toBeDefined();
            expect(evictedAt).toBeDefined();
            expect(cordonedWhenEvicted).toBe(true);
            expect(draining).toBeDefined();
            expect([...orphans]).toEqual([]);
            const left = (await shootClient.list<ShootNode & KubernetesObject>(Refs.node)).items;
            expect(left.map((n) => n.metadata.name)).toEqual(['machine-w-0']);
            const machinePods = (await client.list(Refs.pod, { namespace: seedNamespace })).items
              .map((p) => p.metadata?.name ?? '')
              .filter((n) => n.startsWith('machine-'));
            expect(machinePods).toEqual(['machine-w-0']);
          } finally {
            shootClient.close();
          }
        }, 300_000);

      // A machine that can't start is the same for every family: once is enough.
      if (c.label === 'IPv6')
        it("names a machine that can't start and why in the shoot's status, and succeeds again without it", async () => {
          type Status = NonNullable<Shoot['status']>;
          const update = (change: (workers: Record<string, unknown>[]) => void) =>
            retryOnConflict(async () => {
              const shoot = (await client.get<Shoot & KubernetesObject>(Refs.shoot, name, NAMESPACE))!;
              change(shoot.spec.provider!.workers! as Record<string, unknown>[]);
              return client.update(Refs.shoot, shoot as KubernetesObject);
            });
          let last: Status | undefined;
          const shootStatus = async () => {
            last = (await client.get<Shoot & KubernetesObject>(Refs.shoot, name, NAMESPACE))?.status;
            return last;
          };
          const lastSeen = () => `last: ${JSON.stringify({ op: last?.lastOperation, errors: last?.lastErrors })}`;
          // A kernel parameter's value the kernel refuses (the lower port above the upper): the agent fails to
          // start the machine with the kernel's words, and its pod's termination message carries them up.
          await update((workers) =>
            workers.push({
              name: 'bad',
              machine: { type: 'local' },
              minimum: 1,
              maximum: 1,
              sysctls: { 'net.ipv4.ip_local_port_range': '60000 1024' },
            }),
          );
          const failed = await waitFor(
            async () => {
              // Between two attempts: each retry begins as Processing, the last attempt's errors kept until then.
              const s = await shootStatus();
              const named = s?.lastErrors?.some((e) => e.description.includes('machine machine-bad-0:'));
              return named && s?.lastOperation?.state === 'Error' ? s : undefined;
            },
            { timeoutMs: 180_000, intervalMs: 1_000, message: 'the shoot to name the machine that cannot start' },
          ).catch((e: Error) => {
            throw new Error(`${e.message}; ${lastSeen()}`);
          });
          process.stderr.write(`[e2e ${c.label}] the shoot's last error: ${failed.lastErrors?.[0]?.description}\n`);
          expect(failed.lastOperation?.state).toBe('Error');
          expect(failed.lastErrors).toHaveLength(1);
          expect(failed.lastErrors![0]).toMatchObject({
            taskID: 'waiting for the Worker',
            codes: ['ERR_CONFIGURATION_PROBLEM'],
          });
          expect(failed.lastErrors![0]!.description).toMatch(
            /machine machine-bad-0: setting kernel parameters.*net\.ipv4\.ip_local_port_range.*Invalid argument/,
          );
          expect(failed.lastOperation?.description).toBe(failed.lastErrors![0]!.description);
          // The care controller's EveryNodeReady says which machine has no Node, and why.
          const nodesCondition = await waitFor(
            async () =>
              (await shootStatus())?.conditions?.find(
                (cd) => cd.type === 'EveryNodeReady' && (cd.message ?? '').includes('machine machine-bad-0:'),
              ),
            { timeoutMs: 60_000, intervalMs: 1_000, message: 'EveryNodeReady to name the machine' },
          ).catch((e: Error) => {
            throw new Error(`${e.message}; conditions: ${JSON.stringify(last?.conditions)}`);
          });
          expect(nodesCondition).toMatchObject({ status: 'False', reason: 'MissingNodes' });
          process.stderr.write(`[e2e ${c.label}] EveryNodeReady: ${nodesCondition.message}\n`);
          expect(nodesCondition.message ?? '').toMatch(/^1 of 2 machines have a Node \(Worker: Error: pool bad: /);

          const updated = await update((workers) =>
            workers.splice(
              workers.findIndex((w) => w.name === 'bad'),
              1,
            ),
          );
          await waitFor(
            async () => {
              const s = await shootStatus();
              return (
                (s?.observedGeneration ?? 0) >= (updated.metadata?.generation ?? 1) &&
                s?.lastOperation?.state === 'Succeeded'
              );
            },
            { timeoutMs: 180_000, intervalMs: 1_000, message: 'the shoot to succeed without the pool' },
          ).catch((e: Error) => {
            throw new Error(`${e.message}; ${lastSeen()}`);
          });
          expect(last?.lastErrors).toBeUndefined();
        }, 420_000);

      it('is deleted (what it leaves is checked at the end, while the next shoot starts)', async () => {
        const addresses = await loadBalancerAddresses(seedNamespace);
        expect(addresses.length).toBeGreaterThan(0);
        await client.delete(Refs.shoot, name, NAMESPACE);
        const gone = async () => {
          await waitFor(async () => !(await client.get(Refs.shoot, name, NAMESPACE)), {
            timeoutMs: 180_000,
            message: `shoot ${name} deleted`,
          });
          expect(await client.get(Refs.namespace, seedNamespace)).toBeUndefined();
          expect(await client.get(Refs.cluster, seedNamespace)).toBeUndefined();
          for (const address of addresses) {
            const family = address.includes(':') ? '-6' : '-4';
            await waitFor(() => ip([family, 'route', 'show', hostRoute(address)]).trim() === '', {
              timeoutMs: 30_000,
              message: `the route of ${address} to go`,
            });
          }
        };
        // Settled into a value, so that a failure waits for the last test rather than escaping unhandled.
        deletions.push({
          label: c.label,
          outcome: gone().then(
            () => undefined,
            (e: unknown) => e as Error,
          ),
        });
      });
    });
  }

  it('leaves nothing of any deleted shoot on the seed or the host: namespace, Cluster, load-balancer routes', async () => {
    expect(deletions.map((d) => d.label)).toEqual(CASES.map((c) => c.label));
    for (const { label, outcome } of deletions) {
      const error = await outcome;
      if (error) throw new Error(`the ${label} shoot: ${error.message}`);
    }
  }, 240_000);
});
