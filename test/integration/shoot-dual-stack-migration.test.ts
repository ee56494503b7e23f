/**
 * A running single-stack shoot with two machines migrated to dual-stack by patching nothing but
 * `spec.networking.ipFamilies`, end to end, in both directions Gardener allows ([IPv4] → [IPv4, IPv6] and
 * [IPv6] → [IPv6, IPv4], one shoot after the other), on a dual-stack seed with two Nodes (the garden's API server
 * doubling as the seed's): a Deployment behind a ClusterIP Service (with a PodDisruptionBudget) keeps answering over
 * the primary family throughout, probed every second or so from inside the shoot; the shoot's status shows the steps
 * (the constraint DualStackNodesMigrationReady Progressing, then True, then gone; the last operation Processing until
 * the end); the machines are replaced one at a time, and every Node ends Ready with addresses and pod ranges of both
 * families. After it: new pods get an address of each family, pod-to-pod works per family across machines, a new
 * PreferDualStack Service answers on both ClusterIPs, CoreDNS answers on both, the API server answers at its A and
 * AAAA names. Reports the time from the patch to every Node migrated and to the end, and when a long-lived TCP
 * connection between two pods on different machines was lost (a pod on a machine being replaced is evicted, as in any
 * node roll).
 */
import { Resolver } from 'node:dns/promises';
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import { DUAL_STACK_NODES_MIGRATION_READY } from '../../src/apis/core/v1beta1/dual-stack-migration.js';
import { CA_SECRET_NAME } from '../../src/apis/core/v1beta1/names.js';
import { featureGates } from '../../src/featuregate/featuregate.js';
import { Refs } from '../../src/apis/refs.js';
import { shootGet } from '../../src/gardenlet/shoot/shoot-get.js';
import { API_SERVER_PORT } from '../../src/gardenlet/shoot/components/controlplane/args.js';
import { TEST_IMAGE } from '../../src/extensions/provider-local/machine/images.js';
import { contains, parseCIDR, parseIP, type IPFamily } from '../../src/net/cidr.js';
import type { ResourceClient } from '../../src/runtime/client.js';
import { machinesUnsupportedReason } from '../extensions/provider-local/machine/shoot-env.js';
import { seedDualStackIPv6MigrationNetworks, seedDualStackMigrationNetworks } from '../fixtures/objects.js';
import { SeedEnvironment, webDeployment } from '../support/seed-environment.js';
import { run, testFile } from '../support/shoot.js';
import { waitFor } from '../support/wait.js';

const unsupported = machinesUnsupportedReason();

const PROJECT = 'mig';
const NAMESPACE = `garden-${PROJECT}`;
// Ranges of their own: other files run environments meanwhile.
const LB_NETWORKS = { IPv6: 'fd00:ff:e7::/64', IPv4: '172.31.249.0/24' };
const SEED_CLUSTER = {
  families: ['IPv6', 'IPv4'] as IPFamily[],
  nodes: ['fd00:1b::/64', '10.43.0.0/24'],
  pods: ['fd00:1b:1::/56', '10.44.0.0/16'],
  services: ['fd00:1b:2::/112', '10.45.0.0/16'],
};
const CONDITIONS = ['APIServerAvailable', 'ControlPlaneHealthy', 'EveryNodeReady', 'SystemComponentsHealthy'];

/** A migration: the shoot as it starts, single-stack, and where each family's ranges come from. */
interface Migration {
  readonly name: string;
  readonly seed: string;
  readonly families: [IPFamily, IPFamily];
  readonly networking: { nodes: string; pods: string; services: string };
  /** The pod and node range of each family once migrated. */
  readonly pods: Record<IPFamily, string>;
  readonly nodes: Record<IPFamily, string>;
}

/** Each second family's pods from its Seed's shootDefaults, its nodes provider-local's default range of the family. */
const MIGRATIONS: Migration[] = [
  {
    name: 'v4',
    seed: 'dual',
    families: ['IPv4', 'IPv6'],
    networking: { nodes: '10.10.0.0/16', pods: '10.3.0.0/16', services: '10.4.0.0/16' },
    pods: { IPv4: '10.3.0.0/16', IPv6: seedDualStackMigrationNetworks.shootDefaults!.pods! },
    nodes: { IPv4: '10.10.0.0/16', IPv6: 'fd00:fe::/64' },
  },
  {
    name: 'v6',
    seed: 'dual6',
    families: ['IPv6', 'IPv4'],
    networking: { nodes: 'fd00:10:1:100::/64', pods: 'fd00:10:3::/56', services: 'fd00:10:4::/112' },
    pods: { IPv6: 'fd00:10:3::/56', IPv4: seedDualStackIPv6MigrationNetworks.shootDefaults!.pods! },
    nodes: { IPv6: 'fd00:10:1:100::/64', IPv4: '10.255.255.0/24' },
  },
];

type ShootObject = Shoot & KubernetesObject;
interface Pod {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { nodeName?: string };
  status?: {
    phase?: string;
    podIPs?: { ip: string }[];
    conditions?: { type: string; status: string }[];
    containerStatuses?: { state?: { terminated?: { message?: string } } }[];
  };
}
interface Node {
  metadata: { name: string };
  spec: { podCIDRs?: string[] };
  status: { addresses: { type: string; address: string }[]; conditions: { type: string; status: string }[] };
}

const env = new SeedEnvironment();
let client: ResourceClient;
const urlHost = (ip: string) => (ip.includes(':') ? `[${ip}]` : ip);
const familyOf = (ip: string) => parseIP(ip)!.family;
const inCIDR = (cidr: string, ip: string) => contains(parseCIDR(cidr)!, parseIP(ip)!);

/**
 * Two replicas kept available by a PodDisruptionBudget, spreading over the schedulable Nodes, each stopping gracefully:
 * an evicted pod keeps answering for a few seconds while its endpoint leaves every Node's Service rules (as any
 * workload must to lose no request in a node rollout).
 */
function keptAvailable(deployment: KubernetesObject): object[] {
  const name = deployment.metadata!.name!;
  const pod = (deployment as { spec: { template: { spec: Record<string, unknown> } } }).spec.template.spec;
  pod.terminationGracePeriodSeconds = 10;
  (pod.containers as Record<string, unknown>[])[0]!.lifecycle = { preStop: { exec: { command: ['sleep', '5'] } } };
  return [
    deployment,
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name, namespace: 'default' },
      spec: { minAvailable: 1, selector: { matchLabels: { app: name } } },
    },
  ];
}

/** A pod pinned to `node` (bare: a drain evicts it and nothing brings it back). */
function pinnedPod(name: string, node: string, script: string): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { app: name } },
    spec: {
      nodeName: node,
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'c', image: TEST_IMAGE, command: ['sh', '-c', script] }],
    },
  };
}

/** The tests of one migration, in the environment the file starts. */
function describeMigration(m: Migration): void {
  const [primary, second] = m.families;
  const NAME = m.name;
  const SEED_NAMESPACE = `shoot--${PROJECT}--${NAME}`;
  const API_NAME = `api.${NAME}.${PROJECT}.external.local.gardener.cloud`;
  let kubeconfig: string;

  const kubectl = async (args: string[], timeout = '20s') => {
    const r = await run(env.kubectlBin, ['--kubeconfig', kubeconfig, `--request-timeout=${timeout}`, ...args], 40_000);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr.trim()}`);
    return r.stdout;
  };
  const shoot = async () => (await client.get<ShootObject>(Refs.shoot, NAME, NAMESPACE))!;
  const nodes = async () => (JSON.parse(await kubectl(['get', 'nodes', '-o', 'json'])) as { items: Node[] }).items;
  const readyPods = async (selector: string) =>
    (JSON.parse(await kubectl(['get', 'pods', '-l', selector, '-o', 'json'])) as { items: Pod[] }).items.filter((p) =>
      p.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True'),
    );
  const apply = (name: string, objects: object[]) =>
    kubectl([
      'apply',
      '-f',
      testFile(`mig-${NAME}-${name}.json`, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects })),
    ]);
  /** GETs `url` from inside the shoot, in a pod of the `prober` Deployment. */
  const probe = (url: string) =>
    kubectl(['exec', 'deploy/prober', '--', 'timeout', '4', 'wget', '-q', '-O', '-', url], '15s');

  describe.sequential(`[${primary}] → [${primary}, ${second}]`, () => {
    let serviceIP: string;
    let connectionServer: string;

    it(`runs as ${primary} with two machines, a Service in front of two pods and a long-lived connection`, async () => {
      await client.create(Refs.shoot, {
        apiVersion: 'core.gardener.cloud/v1beta1',
        kind: 'Shoot',
        metadata: { name: NAME, namespace: NAMESPACE },
        spec: {
          seedName: m.seed,
          cloudProfile: { name: 'local' },
          region: 'local',
          provider: { type: 'local', workers: [{ name: 'w', machine: { type: 'local' }, minimum: 2, maximum: 2 }] },
          networking: { type: 'calico', ipFamilies: [primary], ...m.networking },
        },
      } as KubernetesObject);
      await env.waitForShoot(NAMESPACE, NAME, CONDITIONS, 300_000);
      kubeconfig = await env.writeShootKubeconfig(NAMESPACE, NAME);
      const before = await nodes();
      expect(before.map((n) => (n.spec.podCIDRs ?? []).map((c) => parseCIDR(c)!.family))).toEqual([
        [primary],
        [primary],
      ]);

      await waitFor(() => kubectl(['get', 'serviceaccount', 'default']).then(() => true), {
        timeoutMs: 30_000,
        message: 'the default ServiceAccount',
      });
      await apply('workloads', [
        ...keptAvailable(webDeployment('web', { honorNodeTaints: true })),
        ...keptAvailable(webDeployment('prober', { honorNodeTaints: true })),
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'web', namespace: 'default' },
          spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
        },
      ]);
      await waitFor(async () => (await readyPods('app in (web,prober)')).length === 4, {
        timeoutMs: 120_000,
        intervalMs: 500,
        message: 'web and prober Ready',
      });
      serviceIP = (await kubectl(['get', 'service', 'web', '-o', 'jsonpath={.spec.clusterIP}'])).trim();
      expect(familyOf(serviceIP)).toBe(primary);
      expect((await probe(`http://${urlHost(serviceIP)}/`)).trim()).toMatch(/^web-/);

      // A TCP connection from a pod on one machine to a pod on the other, open until either end goes.
      const [first, second] = before.map((n) => n.metadata.name) as [string, string];
      await apply('connection-server', [
        pinnedPod(
          'conn-server',
          first,
          // nc ends a connection at the end of its input: the server's never ends.
          'sleep 1000000 | nc -l -p 9000 | while read -r line; do echo "$line" > /tmp/last; done',
        ),
      ]);
      const server = await waitFor(async () => (await readyPods('app=conn-server'))[0], {
        timeoutMs: 60_000,
        intervalMs: 500,
        message: 'conn-server Ready',
      });
      connectionServer = server.status!.podIPs![0]!.ip;
      await apply('connection-client', [
        pinnedPod(
          'conn-client',
          second,
          `i=0; while :; do i=$((i+1)); echo $i; sleep 1; done | nc ${connectionServer} 9000`,
        ),
      ]);
      // Established: the server has read a line of it.
      await waitFor(
        async () => /^\d+$/.test((await kubectl(['exec', 'conn-server', '--', 'cat', '/tmp/last'])).trim()),
        {
          timeoutMs: 60_000,
          intervalMs: 1_000,
          message: 'the connection established',
        },
      );
    }, 480_000);

    it(`migrates to [${primary}, ${second}] by the patch alone, the Service answering over ${primary} throughout`, async () => {
      const before = await shoot();
      const started = Date.now();
      await client.mergePatch(Refs.shoot, NAME, NAMESPACE, { spec: { networking: { ipFamilies: [primary, second] } } });

      const constraintStates: string[] = [];
      const operations: string[] = [];
      let nodesMigratedAt: number | undefined;
      let connectionLostAt: number | undefined;
      let probes = 0;
      const serviceFailures: string[] = [];
      const succeededEarly: string[] = [];
      const notUp = (s: ShootObject) =>
        s.status?.observedGeneration !== s.metadata.generation ||
        s.status?.lastOperation?.state !== 'Succeeded' ||
        s.status?.constraints?.some((c) => c.type === DUAL_STACK_NODES_MIGRATION_READY);
      await waitFor(
        async () => {
          const s = await shoot();
          const constraint = s.status?.constraints?.find((c) => c.type === DUAL_STACK_NODES_MIGRATION_READY);
          const state = constraint ? `${constraint.status} (${constraint.reason})` : 'absent';
          if (constraintStates.at(-1) !== state) constraintStates.push(state);
          if (constraint?.status === 'True' && nodesMigratedAt === undefined) nodesMigratedAt = Date.now();
          const operation = `${s.status?.lastOperation?.state}: ${s.status?.lastOperation?.description}`;
          if (operations.at(-1) !== operation) operations.push(operation);
          // Before the migration is over the operation never says Succeeded for this generation.
          if (constraint !== undefined && s.status?.lastOperation?.state === 'Succeeded') {
            if (s.status?.observedGeneration === s.metadata.generation) succeededEarly.push(operation);
          }
          if (connectionLostAt === undefined) {
            const client = await kubectl(['get', 'pod', 'conn-client', '-o', 'json', '--ignore-not-found']);
            const phase = client.trim() === '' ? 'gone' : (JSON.parse(client) as Pod).status?.phase;
            if (phase !== 'Running') connectionLostAt = Date.now();
          }
          probes++;
          await probe(`http://${urlHost(serviceIP)}/`).catch((e: Error) => {
            // A prober pod stopped under the exec (evicted: 137, 143) is not the Service's failure; wget's is.
            const code = /command terminated with exit code (\d+)/.exec(e.message)?.[1];
            if (code !== undefined && code !== '137' && code !== '143') {
              serviceFailures.push(`${Math.round((Date.now() - started) / 1000)} s: ${e.message}`);
            }
          });
          return !notUp(s) && s.metadata.generation !== before.metadata.generation;
        },
        { timeoutMs: 1_200_000, intervalMs: 1_000, message: 'the migration to end' },
      ).catch((e: Error) => {
        throw new Error(
          `${e.message}; constraint: ${constraintStates.join(' → ')}; operations: ${operations.join(' | ')}`,
        );
      });
      const ended = Date.now();
      process.stderr.write(
        `[e2e dual-stack migration ${primary} → ${primary}, ${second}] every Node migrated ${nodesMigratedAt! - started} ms after the patch, ` +
          `done after ${ended - started} ms; the connection was lost after ` +
          `${connectionLostAt === undefined ? 'never' : `${connectionLostAt - started} ms`}; ${probes} probes of the ` +
          `Service, ${serviceFailures.length} failed; constraint ${constraintStates.join(' → ')}\n` +
          `operations:\n  ${operations.join('\n  ')}\n`,
      );
      expect(serviceFailures).toEqual([]);
      expect(succeededEarly).toEqual([]);
      expect(constraintStates).toContain('Progressing (NodesNotMigrated)');
      expect(constraintStates).toContain('True (NodesMigrated)');
      expect(constraintStates.at(-1)).toBe('absent');
      expect(operations.some((o) => /^Processing: .*replac|^Processing: .*Node/.test(o))).toBe(true);
    }, 1_300_000);

    it('ends with every Node Ready, of both families, and its status of both', async () => {
      const all = await nodes();
      expect(all).toHaveLength(2);
      for (const node of all) {
        expect(node.status.conditions.find((c) => c.type === 'Ready')?.status).toBe('True');
        const internal = node.status.addresses.filter((a) => a.type === 'InternalIP').map((a) => a.address);
        expect(internal.map(familyOf)).toEqual(m.families);
        internal.forEach((ip) => expect(inCIDR(m.nodes[familyOf(ip)], ip)).toBe(true));
        expect(node.spec.podCIDRs!.map((c) => parseCIDR(c)!.family)).toEqual(m.families);
        node.spec.podCIDRs!.forEach((c) => expect(inCIDR(m.pods[parseCIDR(c)!.family], c.split('/')[0]!)).toBe(true));
      }
      const s = await shoot();
      expect(s.status?.networking?.pods).toEqual([m.pods[primary], m.pods[second]]);
      expect(s.status?.networking?.services?.map((c) => parseCIDR(c)!.family)).toEqual(m.families);
      const network = await client.get<KubernetesObject & { status?: { ipFamilies?: string[] } }>(
        Refs.network,
        NAME,
        SEED_NAMESPACE,
      );
      // The calico extension reports the families in effect IPv4 first, whatever the primary.
      expect(network?.status?.ipFamilies).toEqual(['IPv4', 'IPv6']);
      const dns = JSON.parse(await kubectl(['get', 'service', '-n', 'kube-system', 'kube-dns', '-o', 'json'])) as {
        spec: { clusterIPs: string[] };
      };
      expect(dns.spec.clusterIPs.map(familyOf)).toEqual(m.families);
    }, 120_000);

    it('gives new pods both families: pod to pod per family across machines, a PreferDualStack Service, CoreDNS', async () => {
      await apply('web-new', [webDeployment('web-new')]);
      const pods = await waitFor(
        async () => {
          const ready = await readyPods('app=web-new');
          return ready.length === 2 ? ready : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 1_000, message: 'two new web pods' },
      );
      expect(new Set(pods.map((p) => p.spec.nodeName)).size).toBe(2);
      const [a, b] = pods as [Pod, Pod];
      expect(a.status!.podIPs!.map((p) => familyOf(p.ip))).toEqual(m.families);
      for (const { ip } of b.status!.podIPs!) {
        const got = await waitFor(
          () =>
            kubectl([
              'exec',
              a.metadata.name,
              '--',
              'timeout',
              '4',
              'wget',
              '-q',
              '-O',
              '-',
              `http://${urlHost(ip)}:8080/`,
            ]),
          { timeoutMs: 30_000, intervalMs: 1_000, message: `pod to pod at ${ip}` },
        );
        expect(got.trim()).toBe(b.metadata.name);
      }
      await apply('dual-service', [
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'web-dual', namespace: 'default' },
          spec: {
            selector: { app: 'web' },
            ipFamilyPolicy: 'PreferDualStack',
            ports: [{ port: 80, targetPort: 8080 }],
          },
        },
      ]);
      const clusterIPs = JSON.parse(
        await kubectl(['get', 'service', 'web-dual', '-o', 'jsonpath={.spec.clusterIPs}']),
      ) as string[];
      expect(clusterIPs.map(familyOf)).toEqual(m.families);
      for (const ip of clusterIPs) {
        const got = await waitFor(() => probe(`http://${urlHost(ip)}/`), {
          timeoutMs: 30_000,
          intervalMs: 1_000,
          message: `the PreferDualStack Service at ${ip}`,
        });
        expect(got.trim()).toMatch(/^web-/);
      }
      // By name through CoreDNS, whose Service answers on both families.
      const got = await waitFor(() => probe('http://web-dual.default.svc.cluster.local/'), {
        timeoutMs: 60_000,
        intervalMs: 1_000,
        message: 'web-dual by name',
      });
      expect(got.trim()).toMatch(/^web-/);
      const dnsIPs = JSON.parse(
        await kubectl(['get', 'service', '-n', 'kube-system', 'kube-dns', '-o', 'jsonpath={.spec.clusterIPs}']),
      ) as string[];
      for (const server of dnsIPs) {
        const answer = await kubectl([
          'exec',
          a.metadata.name,
          '--',
          'nslookup',
          'web-dual.default.svc.cluster.local',
          server,
        ]);
        expect(answer).toContain(clusterIPs[0]);
      }
    }, 300_000);

    it('answers at its API names of both families (A and AAAA)', async () => {
      const service = await client.get<
        KubernetesObject & { status?: { loadBalancer?: { ingress?: { ip?: string }[] } } }
      >(Refs.service, 'kube-apiserver', SEED_NAMESPACE);
      const addresses = (service?.status?.loadBalancer?.ingress ?? []).flatMap((i) => (i.ip ? [i.ip] : []));
      expect(addresses.map(familyOf).sort()).toEqual(['IPv4', 'IPv6']);
      const resolver = new Resolver({ timeout: 1000, tries: 2 });
      resolver.setServers([env.services!.bind.server]);
      const records = await waitFor(
        async () => {
          const [a, aaaa] = await Promise.all([
            resolver.resolve4(API_NAME).catch(() => []),
            resolver.resolve6(API_NAME).catch(() => []),
          ]);
          return a.length > 0 && aaaa.length > 0 ? [...a, ...aaaa].sort() : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 1_000, message: 'A and AAAA records' },
      );
      expect(records).toEqual([...addresses].sort());
      const ca = await client.get<KubernetesObject & { data?: Record<string, string> }>(
        Refs.secret,
        CA_SECRET_NAME,
        SEED_NAMESPACE,
      );
      const caPEM = Buffer.from(ca?.data?.['ca.crt'] ?? '', 'base64').toString('utf8');
      for (const address of addresses) {
        const r = await shootGet(`https://${urlHost(address)}:${API_SERVER_PORT}`, caPEM, undefined, '/readyz', 5_000);
        expect(r.status).toBe(200);
      }
    }, 120_000);

    it('is deleted', async () => {
      await env.deleteShoot(NAMESPACE, NAME, 240_000);
    }, 300_000);
  });
}

describe
  .skipIf(unsupported !== undefined)
  .sequential('single-stack shoots migrated to dual-stack, live (needs root)', () => {
    beforeAll(async () => {
      await env.start({
        tag: 'mig',
        cluster: SEED_CLUSTER,
        gates: featureGates({ IPv6SingleStack: true, DualStack: true }),
        loadBalancerNetworks: LB_NETWORKS,
        careSyncPeriodMs: 2_000,
        namespace: NAMESPACE,
        seeds: { dual: seedDualStackMigrationNetworks, dual6: seedDualStackIPv6MigrationNetworks },
      });
      client = env.client;
    }, 300_000);

    afterAll(async () => {
      await env.stop();
    }, 120_000);

    for (const migration of MIGRATIONS) describeMigration(migration);
  });
