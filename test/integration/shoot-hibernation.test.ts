/**
 * Hibernation end to end, per IP family (IPv6, dual-stack): a shoot with a machine on a seed with two Nodes (the
 * garden's API server doubling as the seed's), the whole stack running. With `spec.hibernation.enabled: true` the
 * machine goes (its pod, its StatefulSet at zero, its Node), the control plane is scaled to zero (no pod left in
 * the seed namespace, the API server refuses connections at its address), `status.hibernated` is true, the health
 * conditions say `ConditionNotChecked`, and the API name's DNS records are unchanged. Woken up, it is the same
 * cluster: a ConfigMap created before hibernation is there, the Node is Ready again and pod A reaches pod B.
 * Reports the time to hibernate and to wake up.
 */
import { Resolver } from 'node:dns/promises';
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import { featureGates } from '../../src/featuregate/featuregate.js';
import { Refs } from '../../src/apis/refs.js';
import { CA_SECRET_NAME } from '../../src/apis/core/v1beta1/names.js';
import { shootGet } from '../../src/gardenlet/shoot/shoot-get.js';
import { API_SERVER_PORT } from '../../src/gardenlet/shoot/components/controlplane/args.js';
import { parseIP, type IPFamily } from '../../src/net/cidr.js';
import type { ResourceClient } from '../../src/runtime/client.js';
import { machinesUnsupportedReason } from '../extensions/provider-local/machine/shoot-env.js';
import { seedDualStackMigrationNetworks, seedIPv6Networks } from '../fixtures/objects.js';
import { SeedEnvironment, webDeployment } from '../support/seed-environment.js';
import { run, testFile } from '../support/shoot.js';
import { waitFor } from '../support/wait.js';

const unsupported = machinesUnsupportedReason();

const PROJECT = 'hib';
const NAMESPACE = `garden-${PROJECT}`;
// Ranges of their own: other files run environments meanwhile.
const LB_NETWORKS = { IPv6: 'fd00:ff:e6::/64', IPv4: '172.31.250.0/24' };
const SEED_CLUSTER = {
  families: ['IPv6', 'IPv4'] as IPFamily[],
  nodes: ['fd00:1c::/64', '10.36.0.0/24'],
  pods: ['fd00:1c:1::/56', '10.37.0.0/16'],
  services: ['fd00:1c:2::/112', '10.38.0.0/16'],
};
const CONDITIONS = ['APIServerAvailable', 'ControlPlaneHealthy', 'EveryNodeReady', 'SystemComponentsHealthy'];

const CASES = [
  {
    label: 'IPv6',
    name: 'h6',
    seed: 'ipv6',
    networking: { ipFamilies: ['IPv6'], nodes: 'fd00:10:1:100::/64' },
  },
  {
    label: 'dual-stack',
    name: 'hds',
    seed: 'dual',
    networking: { ipFamilies: ['IPv4', 'IPv6'], nodes: '10.10.0.0/16', pods: '10.3.0.0/16', services: '10.4.0.0/16' },
  },
] as const;

type ShootObject = Shoot & KubernetesObject;
interface Pod {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { nodeName?: string };
  status?: { podIPs?: { ip: string }[]; conditions?: { type: string; status: string }[] };
}

const env = new SeedEnvironment();
let client: ResourceClient;
const urlHost = (ip: string) => (ip.includes(':') ? `[${ip}]` : ip);

describe.skipIf(unsupported !== undefined).sequential('hibernation, end to end (needs root)', () => {
  beforeAll(async () => {
    await env.start({
      tag: 'hib',
      cluster: SEED_CLUSTER,
      gates: featureGates({ IPv6SingleStack: true, DualStack: true }),
      loadBalancerNetworks: LB_NETWORKS,
      careSyncPeriodMs: 2_000,
      namespace: NAMESPACE,
      seeds: { ipv6: seedIPv6Networks, dual: seedDualStackMigrationNetworks },
    });
    client = env.client;
  }, 300_000);

  afterAll(async () => {
    await env.stop();
  }, 120_000);

  for (const c of CASES) {
    describe.sequential(`an ${c.label} shoot with a machine`, () => {
      const seedNamespace = `shoot--${PROJECT}--${c.name}`;
      const apiName = `api.${c.name}.${PROJECT}.external.local.gardener.cloud`;
      let kubeconfig: string;
      let addresses: string[] = [];
      let records: Record<string, string[] | string> = {};
      const kubectl = async (args: string[], timeout = '20s') => {
        const r = await run(
          env.kubectlBin,
          ['--kubeconfig', kubeconfig, `--request-timeout=${timeout}`, ...args],
          40_000,
        );
        if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr.trim()}`);
        return r.stdout;
      };
      const shoot = async () => (await client.get<ShootObject>(Refs.shoot, c.name, NAMESPACE))!;
      const seedPods = async (selector?: string) =>
        (await client.list(Refs.pod, { namespace: seedNamespace, ...(selector ? { labelSelector: selector } : {}) }))
          .items;
      /** The API name's address records per family, as BIND9 of the environment answers. */
      const dnsRecords = async () => {
        const resolver = new Resolver({ timeout: 1000, tries: 2 });
        resolver.setServers([env.services!.bind.server]);
        const out: Record<string, string[] | string> = {};
        for (const family of ['IPv6', 'IPv4'] as const) {
          try {
            out[family] = (
              family === 'IPv6' ? await resolver.resolve6(apiName) : await resolver.resolve4(apiName)
            ).sort();
          } catch (e) {
            out[family] = (e as NodeJS.ErrnoException).code ?? String(e);
          }
        }
        return out;
      };
      /** /readyz at each load-balancer address: the status, or the error of the connection. */
      const readyz = async () => {
        const ca = await client.get<KubernetesObject & { data?: Record<string, string> }>(
          Refs.secret,
          CA_SECRET_NAME,
          seedNamespace,
        );
        const caPEM = Buffer.from(ca?.data?.['ca.crt'] ?? '', 'base64').toString('utf8');
        return Promise.all(
          addresses.map((a) =>
            shootGet(`https://${urlHost(a)}:${API_SERVER_PORT}`, caPEM, undefined, '/readyz', 2_000).then(
              (r) => `HTTP ${r.status}`,
              (e: Error) => e.message,
            ),
          ),
        );
      };
      const waitForOperation = (hibernated: boolean, timeoutMs: number) => {
        let last = '';
        return waitFor(
          async () => {
            const s = await shoot();
            last = `${s.status?.lastOperation?.state}: ${s.status?.lastOperation?.description}`;
            return (
              s.status?.observedGeneration === s.metadata.generation &&
              s.status?.lastOperation?.state === 'Succeeded' &&
              (s.status?.hibernated ?? false) === hibernated
            );
          },
          { timeoutMs, intervalMs: 500, message: `shoot ${c.name} ${hibernated ? 'hibernated' : 'awake'}` },
        ).catch((e: Error) => {
          throw new Error(`${e.message}; last: ${last}`);
        });
      };

      it('runs with its machine Ready, and keeps a ConfigMap', async () => {
        await client.create(Refs.shoot, {
          apiVersion: 'core.gardener.cloud/v1beta1',
          kind: 'Shoot',
          metadata: { name: c.name, namespace: NAMESPACE },
          spec: {
            seedName: c.seed,
            cloudProfile: { name: 'local' },
            region: 'local',
            provider: { type: 'local', workers: [{ name: 'w', machine: { type: 'local' }, minimum: 1, maximum: 1 }] },
            networking: { type: 'calico', ...c.networking },
          },
        } as KubernetesObject);
        await env.waitForShoot(NAMESPACE, c.name, CONDITIONS, 240_000);
        kubeconfig = await env.writeShootKubeconfig(NAMESPACE, c.name);
        const service = await client.get<
          KubernetesObject & { status?: { loadBalancer?: { ingress?: { ip?: string }[] } } }
        >(Refs.service, 'kube-apiserver', seedNamespace);
        addresses = (service?.status?.loadBalancer?.ingress ?? []).flatMap((i) => (i.ip ? [i.ip] : []));
        expect(addresses.length).toBeGreaterThan(0);
        records = await dnsRecords();
        // An address record per load-balancer address; the family the shoot lacks has none (ENODATA).
        expect(
          Object.values(records)
            .filter((r) => Array.isArray(r))
            .flat()
            .sort(),
        ).toEqual([...addresses].sort());
        expect(await readyz()).toEqual(addresses.map(() => 'HTTP 200'));
        const cm = testFile(
          `${c.name}-cm.json`,
          JSON.stringify({
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'before-hibernation', namespace: 'default' },
            data: { written: 'before hibernation' },
          }),
        );
        await kubectl(['apply', '-f', cm]);
      }, 300_000);

      it('refuses to hibernate while a webhook in the shoot would keep it from waking up (HibernationPossible)', async () => {
        // Failure policy Fail on pod creation: with its backend gone (as after hibernation), no pod could start.
        // Its object selector matches nothing, so nothing of this test is refused by it meanwhile.
        const webhook = testFile(
          `${c.name}-webhook.json`,
          JSON.stringify({
            apiVersion: 'admissionregistration.k8s.io/v1',
            kind: 'ValidatingWebhookConfiguration',
            metadata: { name: 'block-pods' },
            webhooks: [
              {
                name: 'pods.block.example.com',
                clientConfig: { url: 'https://[::1]:1/validate' },
                rules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations: ['CREATE'] }],
                failurePolicy: 'Fail',
                objectSelector: { matchLabels: { 'example.com/never': 'matches' } },
                sideEffects: 'None',
                admissionReviewVersions: ['v1'],
              },
            ],
          }),
        );
        await kubectl(['apply', '-f', webhook]);
        const constraint = async () =>
          (await shoot()).status?.constraints?.find((x) => x.type === 'HibernationPossible');
        await waitFor(async () => (await constraint())?.status === 'False', {
          timeoutMs: 60_000,
          intervalMs: 500,
          message: 'HibernationPossible False',
        });
        expect((await constraint())?.message).toContain('ValidatingWebhookConfiguration "block-pods"');
        const refused = await client
          .mergePatch(Refs.shoot, c.name, NAMESPACE, { spec: { hibernation: { enabled: true } } })
          .then(
            () => undefined,
            (e: Error) => e.message,
          );
        expect(refused).toContain("'HibernationPossible' constraint is 'False'");
        expect((await shoot()).spec.hibernation?.enabled ?? false).toBe(false);

        await kubectl(['delete', 'validatingwebhookconfiguration', 'block-pods']);
        await waitFor(async () => (await constraint())?.status === 'True', {
          timeoutMs: 60_000,
          intervalMs: 500,
          message: 'HibernationPossible True',
        });
      }, 180_000);

      it('hibernates: no machine, no control plane pod, the API server refuses connections, records unchanged', async () => {
        const started = Date.now();
        await client.mergePatch(Refs.shoot, c.name, NAMESPACE, { spec: { hibernation: { enabled: true } } });
        await waitForOperation(true, 180_000);
        process.stderr.write(`[e2e hibernation ${c.label}] hibernated after ${Date.now() - started} ms\n`);

        // Not a pod left in the seed namespace: neither the machine nor etcd, kube-apiserver and the controllers.
        expect((await seedPods()).map((p) => p.metadata?.name)).toEqual([]);
        for (const [ref, name] of [
          [Refs.statefulSet, 'etcd-main'],
          [Refs.deployment, 'kube-apiserver'],
          [Refs.deployment, 'kube-controller-manager'],
          [Refs.deployment, 'kube-scheduler'],
          [Refs.statefulSet, 'machine-w'],
        ] as const) {
          const w = await client.get<KubernetesObject & { spec?: { replicas?: number } }>(ref, name, seedNamespace);
          expect(w?.spec?.replicas, name).toBe(0);
        }
        // The API server is gone from its address: connections fail, they are not answered.
        for (const answer of await readyz()) expect(answer).not.toMatch(/^HTTP/);
        await expect(kubectl(['get', 'configmaps'], '5s')).rejects.toThrow(
          /refused|unreachable|timeout|deadline exceeded|EOF/i,
        );
        expect(await dnsRecords()).toEqual(records);

        // The care controller doesn't judge a hibernated shoot.
        await waitFor(
          async () => {
            const s = await shoot();
            return CONDITIONS.every((t) =>
              s.status?.conditions?.some(
                (x) => x.type === t && x.status === 'True' && x.reason === 'ConditionNotChecked',
              ),
            );
          },
          { timeoutMs: 30_000, intervalMs: 500, message: 'conditions ConditionNotChecked' },
        );
        const s = await shoot();
        expect(s.status?.conditions?.find((x) => x.type === 'EveryNodeReady')?.message).toBe(
          'Shoot cluster has been hibernated.',
        );
      }, 240_000);

      it('wakes up as the same cluster: the ConfigMap is there, the Node Ready, pod A reaches pod B', async () => {
        const started = Date.now();
        await client.mergePatch(Refs.shoot, c.name, NAMESPACE, { spec: { hibernation: { enabled: false } } });
        await waitForOperation(false, 300_000);
        process.stderr.write(`[e2e hibernation ${c.label}] awake after ${Date.now() - started} ms\n`);
        await waitFor(
          async () => {
            const s = await shoot();
            return CONDITIONS.every((t) =>
              s.status?.conditions?.some(
                (x) => x.type === t && x.status === 'True' && x.reason !== 'ConditionNotChecked',
              ),
            );
          },
          { timeoutMs: 60_000, intervalMs: 500, message: 'conditions checked and True' },
        );
        expect(await readyz()).toEqual(addresses.map(() => 'HTTP 200'));
        expect(await dnsRecords()).toEqual(records);

        const cm = JSON.parse(await kubectl(['get', 'configmap', 'before-hibernation', '-o', 'json'])) as {
          data: Record<string, string>;
        };
        expect(cm.data).toEqual({ written: 'before hibernation' });
        const nodes = JSON.parse(await kubectl(['get', 'nodes', '-o', 'json'])) as {
          items: { metadata: { name: string }; status: { conditions: { type: string; status: string }[] } }[];
        };
        expect(nodes.items.map((n) => n.metadata.name)).toEqual(['machine-w-0']);
        expect(nodes.items[0]!.status.conditions.find((x) => x.type === 'Ready')?.status).toBe('True');
        expect((await seedPods('app=machine')).map((p) => p.metadata?.name)).toEqual(['machine-w-0']);

        // Two pods on the machine: one reaches the other by each of its IPs.
        await kubectl(['apply', '-f', testFile(`${c.name}-web.json`, JSON.stringify(webDeployment()))]);
        const pods = await waitFor(
          async () => {
            const list = JSON.parse(await kubectl(['get', 'pods', '-l', 'app=web', '-o', 'json'])) as { items: Pod[] };
            const ready = list.items.filter((p) =>
              p.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True'),
            );
            return ready.length === 2 ? ready : undefined;
          },
          { timeoutMs: 120_000, intervalMs: 500, message: 'two web pods Ready' },
        );
        const [a, b] = pods as [Pod, Pod];
        expect(b.status!.podIPs!.map((p) => parseIP(p.ip)!.family).sort()).toEqual([...c.networking.ipFamilies].sort());
        for (const { ip } of b.status!.podIPs!) {
          const body = await kubectl([
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
          ]);
          expect(body.trim()).toBe(b.metadata.name);
        }
      }, 420_000);
    });
  }
});
