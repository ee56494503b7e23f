/**
 * Shoot control planes end to end, as a user meets them: the environment of `up` (own garden control plane, BIND9,
 * webhook, gardenlet with provider-local's processes), a shoot per IP family, then kubectl with the admin
 * kubeconfig against the shoot's API server by its DNS name, the address the DNS server answers, the addresses the
 * API server listens on, its `kubernetes` Service, its conditions, a killed API server healing, and a gardenlet
 * restart that keeps the shoot's data. Deleting a shoot leaves no process, namespace or data behind.
 */
import { existsSync } from 'node:fs';
import { Resolver } from 'node:dns/promises';
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalServices, type LocalServices } from '../../src/app/local-environment.js';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import { featureGates } from '../../src/featuregate/featuregate.js';
import { Refs } from '../../src/gardenlet/resources.js';
import { ensureBinaries } from '../../src/localenv/binaries.js';
import { startControlPlane, type ControlPlane } from '../../src/localenv/control-plane.js';
import { netnsExists, netnsPids, netnsUnsupportedReason } from '../../src/localenv/netns.js';
import { parseCIDR, parseIP, contains } from '../../src/net/cidr.js';
import { ResourceClient } from '../../src/runtime/client.js';
import { silentLogger } from '../../src/runtime/log.js';
import { seedDualStackMigrationNetworks, seedIPv4Networks, seedIPv6Networks } from '../fixtures/objects.js';
import { cli } from '../support/cli.js';
import { createProjectAndSeeds, healthyShoot, run, runWithNameserver, testFile } from '../support/shoot.js';
import { waitFor } from '../support/wait.js';

const unsupported = netnsUnsupportedReason();
const NAMESPACE = 'garden-e2e';
const LB_NETWORKS = { IPv6: 'fd00:ff:e2::/64', IPv4: '172.31.254.0/24' };
const DNS_SERVER = 'fd00:ff:e2::1';
const SEEDS = { ipv6: seedIPv6Networks, dual: seedDualStackMigrationNetworks, ipv4: seedIPv4Networks };

let cp: ControlPlane;
let services: LocalServices;
let client: ResourceClient;
let kubectl: string;

describe.skipIf(unsupported !== undefined)('shoot control planes (needs root)', () => {
  beforeAll(async () => {
    kubectl = (await ensureBinaries({ names: ['kubectl'] })).kubectl;
    cp = await startControlPlane();
    services = await startLocalServices(cp, featureGates({ IPv6SingleStack: true, DualStack: true }), silentLogger(), {
      controlPlanes: true,
      // The machines have an e2e of their own (shoot-machines.test.ts).
      machines: false,
      loadBalancerNetworks: LB_NETWORKS,
      tag: 'e2e',
      careSyncPeriodMs: 2_000,
      restartBackoff: { initialMs: 200, maxMs: 2_000 },
    });
    client = new ResourceClient(cp.kubeConfig());
    await createProjectAndSeeds(client, NAMESPACE, SEEDS);
  }, 180_000);

  afterAll(async () => {
    await services?.stop();
    await cp?.stop();
  });

  function shootObject(name: string, seedName: keyof typeof SEEDS, networking: Record<string, unknown>) {
    return {
      apiVersion: 'core.gardener.cloud/v1beta1',
      kind: 'Shoot',
      metadata: { name, namespace: NAMESPACE },
      spec: {
        seedName,
        cloudProfile: { name: 'local' },
        region: 'local',
        provider: { type: 'local', workers: [{ name: 'w', machine: { type: 'local' }, minimum: 1, maximum: 1 }] },
        networking: { type: 'calico', ...networking },
      },
    } as KubernetesObject;
  }

  const readyShoot = (name: string, timeoutMs = 120_000) => healthyShoot(client, NAMESPACE, name, timeoutMs);

  const external = (name: string) => `api.${name}.e2e.external.local.gardener.cloud`;

  async function loadBalancerAddresses(name: string): Promise<string[]> {
    const service = await client.get<KubernetesObject & { status?: { loadBalancer?: { ingress?: { ip: string }[] } } }>(
      Refs.service,
      'kube-apiserver',
      `shoot--e2e--${name}`,
    );
    return service?.status?.loadBalancer?.ingress?.map((i) => i.ip) ?? [];
  }

  /** kubectl with the kubeconfig `gardener-ipv6 kubeconfig` prints, names resolved by the environment's BIND9. */
  async function shootKubectl(name: string, args: string[]) {
    const printed = await cli(['kubeconfig', '--kubeconfig', cp.kubeconfigPath, '--shoot', `${NAMESPACE}/${name}`]);
    expect(printed.code, printed.stderr).toBe(0);
    const kubeconfig = testFile('kubeconfig', printed.stdout);
    return runWithNameserver(DNS_SERVER, kubectl, ['--kubeconfig', kubeconfig, '--request-timeout=10s', ...args]);
  }

  async function query(type: 'A' | 'AAAA', name: string): Promise<string[] | string> {
    const resolver = new Resolver({ timeout: 1000, tries: 2 });
    resolver.setServers([services.bind.server]);
    try {
      return (type === 'AAAA' ? await resolver.resolve6(name) : await resolver.resolve4(name)).sort();
    } catch (e) {
      return (e as NodeJS.ErrnoException).code ?? String(e);
    }
  }

  /** `ss -ltn` inside the control plane's namespace: the local addresses of listening TCP sockets. */
  async function listeners(name: string): Promise<string[]> {
    const instance = services.provider!.controlPlane(`shoot--e2e--${name}`)!;
    const ss = await run('ip', ['netns', 'exec', instance.netns, 'ss', '-ltnH']);
    return ss.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => line.trim().split(/\s+/)[3] ?? '');
  }

  it('an IPv6 shoot: its API server answers kubectl at its AAAA name, on IPv6 only, with an IPv6 kubernetes Service', async () => {
    await client.create(Refs.shoot, shootObject('v6', 'ipv6', { ipFamilies: ['IPv6'], nodes: 'fd00:10:1:100::/56' }));
    const shoot = await readyShoot('v6');
    // kube-controller-manager and kube-scheduler started once the API server was ready: no restart on the way.
    const healthy = shoot.status?.conditions?.find((c) => c.type === 'ControlPlaneHealthy');
    expect(healthy?.message).toBe('etcd, kube-apiserver, kube-controller-manager and kube-scheduler are running.');
    expect(shoot.status?.advertisedAddresses).toEqual([
      { name: 'external', url: `https://${external('v6')}` },
      { name: 'internal', url: 'https://api.v6.e2e.internal.local.gardener.cloud' },
    ]);
    const caCluster = await client.get<KubernetesObject & { data?: Record<string, string> }>(
      Refs.configMap,
      'v6.ca-cluster',
      NAMESPACE,
    );
    expect(caCluster?.data?.['ca.crt']).toMatch(/^-----BEGIN CERTIFICATE-----/);

    const [address] = await loadBalancerAddresses('v6');
    expect(contains(parseCIDR(LB_NETWORKS.IPv6)!, parseIP(address)!)).toBe(true);
    expect(await query('AAAA', external('v6'))).toEqual([address]);
    expect(await query('A', external('v6'))).toBe('ENODATA');

    const readyz = await shootKubectl('v6', ['get', '--raw', '/readyz']);
    expect(readyz, readyz.stderr).toMatchObject({ code: 0, stdout: 'ok' });
    const created = await shootKubectl('v6', ['create', 'configmap', 'kept', '--from-literal=answer=42']);
    expect(created.code, created.stderr).toBe(0);
    const read = await shootKubectl('v6', ['get', 'configmap', 'kept', '-o', 'jsonpath={.data.answer}']);
    expect(read.stdout).toBe('42');

    const kubernetes = await shootKubectl('v6', ['get', '--raw', '/api/v1/namespaces/default/services/kubernetes']);
    const svc = JSON.parse(kubernetes.stdout) as { spec: { clusterIP: string; ipFamilies: string[] } };
    expect(svc.spec.ipFamilies).toEqual(['IPv6']);
    expect(contains(parseCIDR('fd00:10:4::/112')!, parseIP(svc.spec.clusterIP)!)).toBe(true);

    // Only the API server at its load-balancer address is reachable; nothing listens on IPv4 or a wildcard.
    const sockets = await listeners('v6');
    expect(sockets).toContain(`[${address}]:443`);
    for (const socket of sockets) expect(socket).toMatch(/^\[(::1|fd00:ff:e2::[0-9a-f:]+)\]:\d+$/);
  });

  it('gives a Node a pod range of the node mask (node IPAM), while a mask kube-controller-manager refuses is rejected', async () => {
    const node = testFile(
      'node.yaml',
      JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'machine-0', labels: { test: 'ipam' } } }),
    );
    const created = await shootKubectl('v6', ['create', '-f', node]);
    expect(created.code, created.stderr).toBe(0);
    const podCIDRs = await waitFor(
      async () => {
        const r = await shootKubectl('v6', ['get', 'node', 'machine-0', '-o', 'jsonpath={.spec.podCIDRs}']);
        return r.stdout ? (JSON.parse(r.stdout) as string[]) : undefined;
      },
      { timeoutMs: 30_000, message: 'the Node to get a pod range' },
    );
    expect(podCIDRs).toHaveLength(1);
    const cidr = parseCIDR(podCIDRs[0])!;
    expect(cidr.prefix).toBe(64);
    expect(contains(parseCIDR('fd00:10:3::/56')!, cidr.network)).toBe(true);

    // /80 on a /56 pod range: 24 bits more, which kube-controller-manager refuses; the API rejects the shoot first.
    const bad = shootObject('badmask', 'ipv6', { ipFamilies: ['IPv6'], nodes: 'fd00:10:1:100::/56' });
    (bad as { spec: Record<string, unknown> }).spec.kubernetes = { kubeControllerManager: { nodeCIDRMaskSize: 80 } };
    await expect(client.create(Refs.shoot, bad)).rejects.toThrow(/at most 16 bits longer than the pods prefix/);
  });

  it('a killed kube-apiserver turns APIServerAvailable False and heals by itself', async () => {
    const instance = services.provider!.controlPlane('shoot--e2e--v6')!;
    const apiserver = instance.states().find((s) => s.name === 'kube-apiserver')!;
    process.kill(apiserver.pid!, 'SIGKILL');
    const down = await waitFor(
      async () => {
        const s = await client.get<Shoot & KubernetesObject>(Refs.shoot, 'v6', NAMESPACE);
        return s?.status?.conditions?.find((c) => c.type === 'APIServerAvailable' && c.status === 'False');
      },
      { timeoutMs: 30_000, message: 'APIServerAvailable to turn False' },
    );
    expect(down.message).toMatch(/kube-apiserver|readyz/);
    await readyShoot('v6', 60_000);
    const after = instance.states().find((s) => s.name === 'kube-apiserver')!;
    expect(after.restarts).toBeGreaterThan(0);
  });

  it('a restart of the gardenlet keeps the data in the shoot', async () => {
    const before = services.provider!.controlPlane('shoot--e2e--v6')!.states();
    await services.restartGardenlet();
    // The old processes are gone: each restart runs new ones.
    for (const state of before) {
      expect(() => process.kill(state.pid!, 0)).toThrow();
    }
    await readyShoot('v6');
    const read = await waitFor(
      async () => {
        const r = await shootKubectl('v6', ['get', 'configmap', 'kept', '-o', 'jsonpath={.data.answer}']);
        return r.code === 0 ? r : undefined;
      },
      { timeoutMs: 30_000, message: 'the shoot API server to answer after the restart' },
    );
    expect(read.stdout).toBe('42');
  });

  it('a dual-stack shoot answers at its AAAA and A names, with the primary family first', async () => {
    await client.create(
      Refs.shoot,
      shootObject('ds', 'dual', {
        ipFamilies: ['IPv4', 'IPv6'],
        nodes: '10.10.0.0/16',
        pods: '10.3.0.0/16',
        services: '10.4.0.0/16',
      }),
    );
    await readyShoot('ds');
    const addresses = await loadBalancerAddresses('ds');
    expect(addresses).toHaveLength(2);
    expect(await query('A', external('ds'))).toEqual([addresses[0]]);
    expect(await query('AAAA', external('ds'))).toEqual([addresses[1]]);
    const readyz = await shootKubectl('ds', ['get', '--raw', '/readyz']);
    expect(readyz, readyz.stderr).toMatchObject({ code: 0, stdout: 'ok' });
    const kubernetes = await shootKubectl('ds', ['get', '--raw', '/api/v1/namespaces/default/services/kubernetes']);
    const svc = JSON.parse(kubernetes.stdout) as { spec: { clusterIP: string } };
    expect(contains(parseCIDR('10.4.0.0/16')!, parseIP(svc.spec.clusterIP)!)).toBe(true);
  });

  it('an IPv4 shoot answers at its A name', async () => {
    await client.create(
      Refs.shoot,
      shootObject('v4', 'ipv4', { nodes: '10.20.0.0/16', pods: '10.21.0.0/16', services: '10.22.0.0/16' }),
    );
    await readyShoot('v4');
    const [address] = await loadBalancerAddresses('v4');
    expect(contains(parseCIDR(LB_NETWORKS.IPv4)!, parseIP(address)!)).toBe(true);
    expect(await query('A', external('v4'))).toEqual([address]);
    const readyz = await shootKubectl('v4', ['get', '--raw', '/readyz']);
    expect(readyz, readyz.stderr).toMatchObject({ code: 0, stdout: 'ok' });
  });

  it('deleting the shoots stops their processes and removes their namespaces and data', async () => {
    const names = ['v6', 'ds', 'v4'];
    const instances = names.map((n) => services.provider!.controlPlane(`shoot--e2e--${n}`)!);
    const pids = instances.flatMap((i) => i.states().map((s) => s.pid!));
    for (const name of names) await client.delete(Refs.shoot, name, NAMESPACE);
    await waitFor(
      async () => {
        for (const name of names) if (await client.get(Refs.shoot, name, NAMESPACE)) return false;
        return true;
      },
      { timeoutMs: 90_000, message: 'the shoots to be deleted' },
    );
    for (const instance of instances) {
      expect(netnsExists(instance.netns)).toBe(false);
      expect(netnsPids(instance.netns)).toEqual([]);
      expect(existsSync(instance.files.dir)).toBe(false);
    }
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
    // The addresses are free again: nothing holds them.
    const lbServices = await client.list<KubernetesObject>(Refs.service, {});
    expect(lbServices.items.filter((s) => s.metadata?.namespace?.startsWith('shoot--e2e--'))).toEqual([]);
  });
});
