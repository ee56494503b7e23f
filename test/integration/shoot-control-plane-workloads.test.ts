/**
 * Shoot control planes as workloads of the seed, end to end: a garden whose API server doubles as the seed with two
 * Nodes, the gardenlet in workload mode, an IPv6 shoot. Its etcd, kube-apiserver, kube-controller-manager and
 * kube-scheduler run as pods in the seed namespace; its API server answers at the AAAA address BIND9 gives for its
 * name, from this namespace (routed to a seed Node, where kube-proxy forwards the load-balancer address); killed
 * pods heal, and neither that nor a gardenlet restart loses the shoot's data; deletion removes the namespace and
 * the route.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Resolver } from 'node:dns/promises';
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalServices } from '../../src/app/local-environment.js';
import { seedNetworks } from '../../src/app/seed-nodes.js';
import type { Seed } from '../../src/apis/core/v1beta1/seed.js';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import { featureGates } from '../../src/featuregate/featuregate.js';
import { Refs } from '../../src/apis/refs.js';
import type { ControlPlane } from '../../src/localenv/control-plane.js';
import { ip } from '../../src/system/netns.js';
import type { ResourceClient } from '../../src/runtime/client.js';
import { machinesUnsupportedReason } from '../extensions/provider-local/machine/shoot-env.js';
import { cli } from '../support/cli.js';
import { healthyShoot, run, runWithNameserver, testFile } from '../support/shoot.js';
import { SeedEnvironment } from '../support/seed-environment.js';
import { waitFor } from '../support/wait.js';
import { seedPodScript, tcpConnectScript } from '../support/seed-pod.js';
import { TO_ETCD_LABEL } from '../../src/gardenlet/shoot/components/controlplane/names.js';
import { shootAdminAccess, shootAdminClient } from '../../src/gardenlet/shoot/shoot-client.js';
import { shootGet } from '../../src/gardenlet/shoot/shoot-get.js';
import { podToPodCheck } from '../../src/extensions/provider-local/worker/pod-check.js';
import { MACHINE_POD_BIN_DIR } from '../../src/extensions/provider-local/machine/pod-image.js';
import { issueCertificate } from '../../src/pki/certificates.js';
import { OVERLAY_UNDERLAY_ANNOTATION } from '../../src/extensions/provider-local/machine/overlay.js';

const unsupported = machinesUnsupportedReason();
const NAMESPACE = 'garden-cpw';
const SEED = 'seed-cpw';
// Ranges of their own: other files of this namespace run environments with the examples' ranges meanwhile.
const SEED_NETWORKS = {
  ipFamilies: ['IPv6'],
  nodes: 'fd00:1d::/64',
  pods: 'fd00:1d:1::/56',
  services: 'fd00:1d:2::/112',
  shootDefaults: { pods: 'fd00:1d:3::/56', services: 'fd00:1d:4::/112' },
};
const LB_NETWORKS = { IPv6: 'fd00:ff:e3::/64', IPv4: '172.31.253.0/24' };
const DNS_SERVER = 'fd00:ff:e3::1';
const SHOOT = 'cpw';
const SEED_NAMESPACE = `shoot--cpw--${SHOOT}`;

interface PodObject extends KubernetesObject {
  spec?: { nodeName?: string };
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
}

describe.skipIf(unsupported !== undefined).sequential('shoot control planes as seed workloads (needs root)', () => {
  const env = new SeedEnvironment();
  let cp: ControlPlane;
  let services: LocalServices;
  let client: ResourceClient;
  let kubectl: string;

  beforeAll(async () => {
    await env.start({
      tag: 'cpw',
      cluster: seedNetworks({ spec: { networks: SEED_NETWORKS } } as unknown as Seed),
      gates: featureGates({ IPv6SingleStack: true, DualStack: true }),
      loadBalancerNetworks: LB_NETWORKS,
      namespace: NAMESPACE,
      seeds: { [SEED]: SEED_NETWORKS },
    });
    ({ cp, client, kubectlBin: kubectl } = env);
    services = env.services!;
  }, 300_000);

  afterAll(() => env.stop(), 120_000);

  // The care controller judges the workloads: their readiness and /readyz at the load-balancer address.
  const succeeded = (timeoutMs = 180_000) => healthyShoot(client, NAMESPACE, SHOOT, timeoutMs);

  /** kubectl with the kubeconfig `gardener-ipv6 kubeconfig` prints, names resolved by the environment's BIND9. */
  async function shootKubectl(args: string[]) {
    const printed = await cli(['kubeconfig', '--kubeconfig', cp.kubeconfigPath, '--shoot', `${NAMESPACE}/${SHOOT}`]);
    expect(printed.code, printed.stderr).toBe(0);
    const kubeconfig = testFile('kubeconfig', printed.stdout);
    return runWithNameserver(DNS_SERVER, kubectl, ['--kubeconfig', kubeconfig, '--request-timeout=10s', ...args]);
  }

  const controlPlanePods = async () =>
    (await client.list<PodObject>(Refs.pod, { namespace: SEED_NAMESPACE })).items.filter(
      (p) => p.metadata?.deletionTimestamp === undefined,
    );

  const running = (pods: PodObject[], prefix: string) =>
    pods.some(
      (p) =>
        p.metadata?.name?.startsWith(prefix) &&
        p.status?.phase === 'Running' &&
        p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    );

  it('the shoot succeeds with etcd, kube-apiserver, kube-controller-manager and kube-scheduler as pods on the seed', async () => {
    await client.create(Refs.shoot, {
      apiVersion: 'core.gardener.cloud/v1beta1',
      kind: 'Shoot',
      metadata: { name: SHOOT, namespace: NAMESPACE },
      spec: {
        seedName: SEED,
        cloudProfile: { name: 'local' },
        region: 'local',
        provider: { type: 'local', workers: [{ name: 'w', machine: { type: 'local' }, minimum: 2, maximum: 2 }] },
        networking: { type: 'calico', ipFamilies: ['IPv6'], nodes: 'fd00:1d:1:100::/56' },
      },
    } as KubernetesObject);
    await succeeded();
    const pods = await controlPlanePods();
    for (const prefix of [
      'etcd-main-0',
      'kube-apiserver-',
      'kube-controller-manager-',
      'kube-scheduler-',
      'machine-w-0',
      'machine-w-1',
    ]) {
      expect(running(pods, prefix), `${prefix} running and ready`).toBe(true);
    }
    expect(new Set(pods.map((p) => p.spec?.nodeName))).not.toContain(undefined);
    // The controllers were deployed once kube-apiserver was ready: they never restarted.
    const restarts = pods
      .filter((p) => /^kube-(controller-manager|scheduler)-/.test(p.metadata?.name ?? ''))
      .map(
        (p) =>
          (p as { status?: { containerStatuses?: { restartCount: number }[] } }).status?.containerStatuses?.[0]
            ?.restartCount,
      );
    expect(restarts).toEqual([0, 0]);
    const pdbs = (await client.list(Refs.podDisruptionBudget, { namespace: SEED_NAMESPACE })).items.map(
      (p) => p.metadata?.name,
    );
    expect(pdbs.sort()).toEqual(['etcd-main', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler']);
  }, 240_000);

  it('etcd answers only pods labelled for it, and only with a client certificate of its own CA', async () => {
    // Under the namespace's deny-all a pod of the seed reaches etcd's client port only with Gardener's label.
    const dns = { 'networking.gardener.cloud/to-dns': 'allowed' };
    const connect = tcpConnectScript([`etcd-main-client.${SEED_NAMESPACE}.svc 2379`], 'refused');
    expect(await seedPod('etcd-unlabelled', connect, dns)).toMatch(/ 2379 refused [A-Z]+\n$/);
    // Labelled, it connects (once its address is in etcd's rules), then with TLS but no client certificate asks for
    // /version: it gets etcd's server certificate, never an answer.
    const script = [
      "const tls = require('node:tls');",
      'const deadline = Date.now() + 15000;',
      'const attempt = () => {',
      `  const socket = tls.connect({ host: 'etcd-main-client.${SEED_NAMESPACE}.svc', port: 2379, rejectUnauthorized: false });`,
      '  let connected = false;',
      "  socket.on('secureConnect', () => { connected = true; console.log('server ' + socket.getPeerCertificate().subject.CN);",
      "    socket.write('GET /version HTTP/1.1\\r\\nHost: etcd\\r\\n\\r\\n'); });",
      "  socket.on('data', (d) => console.log('answered ' + String(d).split('\\r\\n')[0]));",
      "  socket.on('error', (e) => {",
      "    if (!connected && e.code === 'ECONNREFUSED' && Date.now() < deadline) return setTimeout(attempt, 250);",
      "    console.log('refused ' + (e.code || e.message));",
      '  });',
      "  socket.setTimeout(10000, () => { console.log('timeout'); socket.destroy(); });",
      '};',
      'attempt();',
    ].join('\n');
    const log = await seedPod('etcd-probe', script, { ...dns, [TO_ETCD_LABEL]: 'allowed' });
    expect(log).toContain('server etcd-main');
    expect(log).toMatch(/^refused /m);
    expect(log).not.toContain('answered');
  }, 120_000);

  it('its API server answers at the AAAA address of its name, from here, with the shoot CA', async () => {
    const resolver = new Resolver({ timeout: 1000, tries: 2 });
    resolver.setServers([services.bind.server]);
    const [address] = await resolver.resolve6(`api.${SHOOT}.cpw.external.local.gardener.cloud`);
    expect(address).toMatch(/^fd00:ff:e3::/);
    // The load-balancer address is routed to a seed Node, where kube-proxy forwards it to the pod.
    expect(ip(['-6', 'route', 'show', `${address}/128`])).toMatch(/via fd00:1d::[ab] /);
    const readyz = await shootKubectl(['get', '--raw', '/readyz']);
    expect(readyz.stdout.trim(), readyz.stderr).toBe('ok');
    const leases = await shootKubectl(['-n', 'kube-system', 'get', 'leases', '-o', 'name']);
    expect(leases.stdout).toContain('lease.coordination.k8s.io/kube-scheduler');
    // Anonymous requests read the health endpoints only (as Gardener's API servers): /version wants a client.
    const ca = (await client.get<KubernetesObject & { data?: Record<string, string> }>(
      Refs.secret,
      'ca',
      SEED_NAMESPACE,
    ))!;
    const caPEM = Buffer.from(ca.data?.['ca.crt'] ?? '', 'base64').toString();
    const anonymous = (path: string) => shootGet(`https://[${address}]:443`, caPEM, undefined, path, 5_000);
    expect((await anonymous('/readyz')).status).toBe(200);
    expect((await anonymous('/livez')).status).toBe(200);
    expect((await anonymous('/version')).status).toBe(401);
    expect((await anonymous('/api/v1/namespaces')).status).toBe(401);
  }, 60_000);

  /** The shoot through the gardenlet's own access: a client and raw GETs (pod logs). */
  async function withShoot<T>(
    use: (shoot: ResourceClient, get: (path: string) => Promise<string>) => Promise<T>,
  ): Promise<T> {
    const shoot = (await client.get<Shoot & KubernetesObject>(Refs.shoot, SHOOT, NAMESPACE))!;
    const ctx = { signal: AbortSignal.timeout(120_000) };
    const access = await shootAdminAccess(client, shoot, ctx);
    const shootClient = await shootAdminClient(client, shoot, ctx);
    try {
      return await use(shootClient, async (path) => {
        const res = await shootGet(access.server, access.caPEM, access.credentials, path, 10_000);
        if (res.status !== 200) throw new Error(`GET ${path}: HTTP ${res.status}`);
        return res.body;
      });
    } finally {
      shootClient.close();
    }
  }

  interface NodeObject extends KubernetesObject {
    spec?: { podCIDRs?: string[] };
    status?: { addresses?: { type: string; address: string }[]; conditions?: { type: string; status: string }[] };
  }
  const nodeReady = (n: NodeObject) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

  it("the machine pods are the shoot's Nodes: Ready, addressed from the shoot's node range, pods talk across them", async () => {
    const machinePods = (await controlPlanePods()).filter((p) => p.metadata?.name?.startsWith('machine-w-'));
    // Spread over the seed's Nodes.
    expect(new Set(machinePods.map((p) => p.spec?.nodeName)).size).toBe(2);
    const podIP = (name: string) =>
      (machinePods.find((p) => p.metadata?.name === name) as { status?: { podIP?: string } }).status?.podIP;
    await withShoot(async (shoot, get) => {
      const nodes = (await shoot.list<NodeObject>(Refs.node, {})).items;
      expect(nodes.map((n) => n.metadata?.name).sort()).toEqual(['machine-w-0', 'machine-w-1']);
      for (const node of nodes) {
        const name = node.metadata!.name!;
        expect(nodeReady(node), `${name} Ready`).toBe(true);
        const internal = node.status?.addresses?.filter((a) => a.type === 'InternalIP').map((a) => a.address);
        // From the shoot's nodes fd00:1d:1:100::/56, 10 + the pod's ordinal in: not the pod's own address, which
        // the overlay runs over and the Node publishes for the other machines.
        expect(internal).toEqual([name.endsWith('-0') ? 'fd00:1d:1:100::a' : 'fd00:1d:1:100::b']);
        expect(podIP(name)).toMatch(/^fd00:1d:1:(?!100:)/);
        expect(node.metadata?.annotations?.[OVERLAY_UNDERLAY_ANNOTATION]).toBe(podIP(name));
        expect(node.spec?.podCIDRs?.[0]).toMatch(/^fd00:1d:3:/);
      }
      // Server and client on different machines, so on different seed Nodes: the overlay carries the packets; the
      // client's log comes from its kubelet at the Node's address, through the overlay too.
      const result = await podToPodCheck(shoot, get, 'IPv6', 90_000);
      expect(result.server.node).not.toBe(result.client.node);
      expect(result.server.ip).toMatch(/^fd00:1d:3:/);
      expect(result.answer).toMatch(/^pod-check-server-/);
    });
    // The care controller judges the machines through the shoot's API server.
    await waitFor(
      async () => {
        const s = await client.get<Shoot & KubernetesObject>(Refs.shoot, SHOOT, NAMESPACE);
        const conditions = s?.status?.conditions ?? [];
        const nodes = conditions.find((c) => c.type === 'EveryNodeReady');
        const system = conditions.find((c) => c.type === 'SystemComponentsHealthy');
        return nodes?.status === 'True' && system?.status === 'True' ? [nodes.message, system.message] : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500, message: 'EveryNodeReady and SystemComponentsHealthy' },
    ).then((messages) =>
      expect(messages).toEqual(['All 2 Nodes are Ready.', 'CoreDNS is available; the ManagedResources are healthy.']),
    );
  }, 180_000);

  /** Runs a node script in a pod of the seed namespace (the machine image has node) and returns its output. */
  const seedPod = (name: string, script: string, labels?: Record<string, string>) =>
    seedPodScript(
      client,
      { bin: kubectl, kubeconfig: cp.kubeconfigPath },
      { namespace: SEED_NAMESPACE, name, script, ...(labels ? { labels } : {}) },
    );

  it("a Node's certificate gets nothing from another Node's kubelet: the kubelet asks the API server", async () => {
    // What a shoot admin holding one machine could present: a certificate of the shoot's CA for that machine's Node.
    const ca = (await client.get<KubernetesObject & { data?: Record<string, string> }>(
      Refs.secret,
      'ca',
      SEED_NAMESPACE,
    ))!;
    const unb64 = (v: string | undefined) => Buffer.from(v ?? '', 'base64').toString();
    const node0 = await issueCertificate(
      { certPEM: unb64(ca.data?.['ca.crt']), keyPEM: unb64(ca.data?.['ca.key']) },
      {
        commonName: 'system:node:machine-w-0',
        organizations: ['system:nodes'],
        usages: ['client'],
        notAfter: new Date(Date.now() + 600_000),
      },
    );
    const target = (await controlPlanePods()).find((p) => p.metadata?.name === 'machine-w-1') as
      (PodObject & { status?: { podIP?: string } }) | undefined;
    expect(target?.status?.podIP).toBeDefined();
    const script = [
      "const https = require('node:https');",
      'const paths = ["/pods", "/runningpods/", "/logs/"];',
      'let left = paths.length;',
      'for (const path of paths) {',
      '  https.get({ host: process.env.TARGET, port: 10250, path, cert: process.env.CERT, key: process.env.KEY,',
      '      rejectUnauthorized: false, timeout: 10000 }, (res) => {',
      "    console.log(path + ' ' + res.statusCode); res.resume(); if (--left === 0) process.exit(0);",
      "  }).on('error', (e) => { console.log(path + ' error ' + e.message); if (--left === 0) process.exit(0); });",
      '}',
    ].join('\n');
    // From machine-w-0 itself, where that shoot admin is (the seed's policies let machines reach each other).
    const env = { TARGET: target!.status!.podIP!, CERT: node0.certPEM, KEY: node0.keyPEM };
    const probe = await run(kubectl, [
      ...['--kubeconfig', cp.kubeconfigPath, '-n', SEED_NAMESPACE, 'exec', 'machine-w-0', '-c', 'machine', '--'],
      ...[process.execPath, '-e', `Object.assign(process.env, ${JSON.stringify(env)});\n${script}`],
    ]);
    expect(probe.code, probe.stderr).toBe(0);
    const out = probe.stdout;
    // Authenticated (a certificate of the CA) but not authorized: 403 for each, never 200.
    expect(out.trim().split('\n').sort()).toEqual(['/logs/ 403', '/pods 403', '/runningpods/ 403']);
  }, 90_000);

  it('kube-apiserver reaches shoot pods: pods/proxy and services/proxy answer over IPv6', async () => {
    await withShoot(async (shoot, get) => {
      await shoot.create(Refs.pod, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'proxy-target', namespace: 'default', labels: { app: 'proxy-target' } },
        spec: {
          nodeName: 'machine-w-1',
          terminationGracePeriodSeconds: 0,
          containers: [
            {
              name: 'main',
              image: 'local.gardener.cloud/test/busybox:1',
              command: ['sh', '-c', 'mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 8080 -h /www'],
            },
          ],
        },
      } as KubernetesObject);
      await shoot.create(Refs.service, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'proxy-target', namespace: 'default' },
        spec: { selector: { app: 'proxy-target' }, ports: [{ port: 8080, targetPort: 8080 }] },
      } as KubernetesObject);
      for (const path of [
        '/api/v1/namespaces/default/pods/proxy-target:8080/proxy/',
        '/api/v1/namespaces/default/services/proxy-target:8080/proxy/',
      ]) {
        const body = await waitFor(() => get(path), { timeoutMs: 60_000, intervalMs: 1_000, message: `GET ${path}` });
        expect(body.trim()).toBe('proxy-target');
      }
      await shoot.delete(Refs.service, 'proxy-target', 'default');
      await shoot.delete(Refs.pod, 'proxy-target', 'default');
    });
  }, 120_000);

  it("a shoot pod's hostPath / is its machine's filesystem, not the seed Node's or the host's", async () => {
    await withShoot(async (shoot, get) => {
      await shoot.create(Refs.pod, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'host-root', namespace: 'default' },
        spec: {
          restartPolicy: 'Never',
          nodeName: 'machine-w-0',
          containers: [
            {
              name: 'main',
              image: 'local.gardener.cloud/test/busybox:1',
              command: [
                'sh',
                '-c',
                `ls /host${MACHINE_POD_BIN_DIR}/kubelet; ls /host${cp.dir} && echo HOST-VISIBLE; ls /host/var/lib/gardener-ipv6/etcd && echo SEED-VISIBLE; echo done`,
              ],
              volumeMounts: [{ name: 'root', mountPath: '/host' }],
            },
          ],
          volumes: [{ name: 'root', hostPath: { path: '/' } }],
        },
      } as KubernetesObject);
      const log = await waitFor(
        async () => {
          const pod = await shoot.get<PodObject>(Refs.pod, 'host-root', 'default');
          return pod?.status?.phase === 'Succeeded' ? get('/api/v1/namespaces/default/pods/host-root/log') : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 500, message: 'the hostPath pod to finish' },
      );
      // The machine's own files (the machine image's) are there; the host's and the seed Node's are not.
      expect(log).toContain(`/host${MACHINE_POD_BIN_DIR}/kubelet`);
      expect(log).not.toContain('HOST-VISIBLE');
      expect(log).not.toContain('SEED-VISIBLE');
      expect(log).toContain('done');
      await shoot.delete(Refs.pod, 'host-root', 'default');
    });
  }, 120_000);

  it('a machine pod deleted by hand comes back as the same Node', async () => {
    const before = (await controlPlanePods()).find((p) => p.metadata?.name === 'machine-w-1');
    await client.delete(Refs.pod, 'machine-w-1', SEED_NAMESPACE);
    await waitFor(
      async () => {
        const pod = (await controlPlanePods()).find((p) => p.metadata?.name === 'machine-w-1');
        return pod !== undefined && pod.metadata?.uid !== before?.metadata?.uid && running([pod], 'machine-w-1');
      },
      { timeoutMs: 120_000, intervalMs: 1_000, message: 'machine-w-1 back and ready' },
    );
    await withShoot(async (shoot) => {
      const node = await shoot.get<NodeObject>(Refs.node, 'machine-w-1');
      expect(node && nodeReady(node)).toBe(true);
    });
  }, 180_000);

  it('scaling the pool 2 → 1 removes the last machine pod and its Node', async () => {
    await client.mergePatch(Refs.shoot, SHOOT, NAMESPACE, {
      spec: {
        provider: { type: 'local', workers: [{ name: 'w', machine: { type: 'local' }, minimum: 1, maximum: 1 }] },
      },
    });
    await waitFor(
      async () => {
        const pods = (await controlPlanePods()).map((p) => p.metadata?.name);
        if (pods.includes('machine-w-1') || !pods.includes('machine-w-0')) return undefined;
        return withShoot(async (shoot) => {
          const nodes = (await shoot.list<NodeObject>(Refs.node, {})).items;
          return nodes.length === 1 && nodes[0]!.metadata?.name === 'machine-w-0' && nodeReady(nodes[0]!);
        });
      },
      { timeoutMs: 120_000, intervalMs: 1_000, message: 'one machine pod and one Ready Node left' },
    );
    const worker = await client.get<KubernetesObject & { status?: { machineDeployments?: unknown } }>(
      Refs.worker,
      SHOOT,
      SEED_NAMESPACE,
    );
    expect(worker?.status?.machineDeployments).toEqual([{ name: 'machine-w', minimum: 1, maximum: 1 }]);
  }, 180_000);

  it('a pool at minimum 0 has no machine and no Node, and the shoot still succeeds', async () => {
    await client.mergePatch(Refs.shoot, SHOOT, NAMESPACE, {
      spec: {
        provider: { type: 'local', workers: [{ name: 'w', machine: { type: 'local' }, minimum: 0, maximum: 1 }] },
      },
    });
    await waitFor(
      async () => {
        const s = await client.get<Shoot & KubernetesObject>(Refs.shoot, SHOOT, NAMESPACE);
        if (s?.status?.observedGeneration !== s?.metadata.generation) return undefined;
        if (s?.status?.lastOperation?.state !== 'Succeeded') return undefined;
        if ((await controlPlanePods()).some((p) => p.metadata?.name?.startsWith('machine-'))) return undefined;
        return withShoot(async (shoot) => (await shoot.list<NodeObject>(Refs.node, {})).items.length === 0);
      },
      { timeoutMs: 120_000, intervalMs: 1_000, message: 'Succeeded with no machine pod and no Node' },
    );
  }, 180_000);

  it('a shoot created with every pool at minimum 0 succeeds with its control plane and no machine', async () => {
    const name = 'zero';
    const namespace = `shoot--cpw--${name}`;
    await client.create(Refs.shoot, {
      apiVersion: 'core.gardener.cloud/v1beta1',
      kind: 'Shoot',
      metadata: { name, namespace: NAMESPACE },
      spec: {
        seedName: SEED,
        cloudProfile: { name: 'local' },
        region: 'local',
        provider: { type: 'local', workers: [{ name: 'w', machine: { type: 'local' }, minimum: 0, maximum: 2 }] },
        networking: { type: 'calico', ipFamilies: ['IPv6'], nodes: 'fd00:1d:1:200::/56' },
      },
    } as KubernetesObject);
    try {
      await healthyShoot(client, NAMESPACE, name, 240_000);
      const pods = (await client.list<PodObject>(Refs.pod, { namespace })).items;
      expect(running(pods, 'kube-apiserver-')).toBe(true);
      expect(pods.filter((p) => p.metadata?.name?.startsWith('machine-'))).toEqual([]);
    } finally {
      await client.delete(Refs.shoot, name, NAMESPACE);
      await waitFor(async () => (await client.get(Refs.namespace, namespace)) === undefined, {
        timeoutMs: 120_000,
        intervalMs: 1_000,
        message: `the seed namespace ${namespace} to be gone`,
      });
    }
  }, 400_000);

  it('killed kube-apiserver and etcd pods come back with the shoot data; so does a gardenlet restart', async () => {
    const created = await shootKubectl(['create', 'configmap', 'keep-me', '--from-literal=k=v']);
    expect(created.code, created.stderr).toBe(0);
    const statefulSet = await client.get<KubernetesObject & { spec?: { template?: unknown } }>(
      Refs.statefulSet,
      'etcd-main',
      SEED_NAMESPACE,
    );
    expect(JSON.stringify(statefulSet?.spec?.template)).toMatch(
      /"kubernetes.io\/hostname","operator":"In","values":\["seed-[01]"\]/,
    );
    for (const pod of await controlPlanePods()) {
      if (pod.metadata?.name === 'etcd-main-0' || pod.metadata?.name?.startsWith('kube-apiserver-')) {
        await client.delete(Refs.pod, pod.metadata.name, SEED_NAMESPACE);
      }
    }
    await waitFor(
      async () => {
        const got = await shootKubectl(['get', 'configmap', 'keep-me', '-o', 'jsonpath={.data.k}']);
        return got.code === 0 && got.stdout === 'v';
      },
      { timeoutMs: 90_000, intervalMs: 1_000, message: 'the ConfigMap through a new API server and etcd' },
    );
    await services.restartGardenlet();
    await client.mergePatch(Refs.shoot, SHOOT, NAMESPACE, {
      metadata: { annotations: { 'gardener.cloud/operation': 'reconcile' } },
    });
    await waitFor(
      async () => {
        const s = await client.get<Shoot & KubernetesObject>(Refs.shoot, SHOOT, NAMESPACE);
        return s?.metadata.annotations?.['gardener.cloud/operation'] === undefined &&
          s?.status?.lastOperation?.state === 'Succeeded'
          ? s
          : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 250, message: 'the reconcile after the gardenlet restart' },
    );
    const got = await shootKubectl(['get', 'configmap', 'keep-me', '-o', 'jsonpath={.data.k}']);
    expect(got.stdout).toBe('v');
  }, 300_000);

  it("deleting the shoot removes its seed namespace, etcd's data on the Node and the route of its address", async () => {
    const service = await client.get<KubernetesObject & { status?: { loadBalancer?: { ingress?: { ip: string }[] } } }>(
      Refs.service,
      'kube-apiserver',
      SEED_NAMESPACE,
    );
    const address = service!.status!.loadBalancer!.ingress![0]!.ip;
    // etcd's data on its Node: the seed Node's /var is its state folder's.
    const etcdData = (node: string) =>
      join(cp.dir, 'seed-nodes', node, 'var', 'lib', 'gardener-ipv6', 'etcd', SEED_NAMESPACE);
    expect(['seed-0', 'seed-1'].filter((n) => existsSync(etcdData(n)))).toHaveLength(1);
    await client.delete(Refs.shoot, SHOOT, NAMESPACE);
    await waitFor(async () => (await client.get(Refs.namespace, SEED_NAMESPACE)) === undefined, {
      timeoutMs: 120_000,
      intervalMs: 500,
      message: 'the seed namespace to go',
    });
    // The deletion finished: the Shoot is gone, not stuck on a step that ran again after its namespace went.
    await waitFor(async () => (await client.get(Refs.shoot, SHOOT, NAMESPACE)) === undefined, {
      timeoutMs: 60_000,
      intervalMs: 500,
      message: 'the Shoot to be gone',
    });
    await waitFor(() => ip(['-6', 'route', 'show', `${address}/128`]).trim() === '', {
      timeoutMs: 30_000,
      message: 'the route of the load-balancer address to go',
    });
    expect(['seed-0', 'seed-1'].filter((n) => existsSync(etcdData(n)))).toEqual([]);
  }, 180_000);
});
