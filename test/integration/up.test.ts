/**
 * `up` as a user runs it: a process that prints the kubeconfig, a kubectl line and `ready`, serves the API, and on
 * SIGTERM/SIGINT stops its processes and removes its files (and its network namespace with --ipv6-only).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { networkInterfaces, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { projectRoot } from '../../src/system/project.js';
import { waitFor } from '../support/wait.js';
import { Resolver } from 'node:dns/promises';
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { netnsExists, netnsUnsupportedReason } from '../../src/system/netns.js';
import { alive, pidsMentioning } from '../support/processes.js';
import { listenersOutside, startUp, stopUp, waitForReady } from '../support/up.js';
import { cli } from '../support/cli.js';

async function customObject(
  kubeconfig: string,
  namespace: string,
  plural: string,
  name: string,
  group: string,
  version: string,
) {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  return (await kc
    .makeApiClient(CustomObjectsApi)
    .getNamespacedCustomObject({ group, version, namespace, plural, name })) as {
    spec: { networking: { services: string; providerConfig?: unknown } };
  };
}

async function crdNames(kubeconfig: string): Promise<string[]> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const list = await kc.makeApiClient(ApiextensionsV1Api).listCustomResourceDefinition();
  return list.items.map((crd) => crd.metadata!.name!);
}

describe('gardener-ipv6 up', () => {
  it('runs a control plane with seed Nodes and a shoot until SIGTERM, then removes its processes and files', async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'gardener-ipv6-up-test-'));
    const kubeconfig = join(tmp, 'admin.kubeconfig');
    const up = startUp(['--kubeconfig-out', kubeconfig]);
    try {
      await waitForReady(up);
      const lines = up.stdout().split('\n');
      const ready = lines.findIndex((l) => /\bready\b/.test(l));
      expect(lines.indexOf(`kubeconfig: ${kubeconfig}`)).toBeGreaterThanOrEqual(0);
      expect(lines.indexOf(`kubeconfig: ${kubeconfig}`)).toBeLessThan(ready);
      expect(lines.indexOf(`try: kubectl --kubeconfig ${kubeconfig} get crds`)).toBeLessThan(ready);
      expect(lines.findIndex((l) => l.startsWith('try: '))).toBeGreaterThanOrEqual(0);

      // The garden's API server is the seed's: it listens on the seed's node network, where its Nodes reach it.
      expect(readFileSync(kubeconfig, 'utf8')).toMatch(/server: https:\/\/\[fd00:10::1\]:\d+/);
      expect(await crdNames(kubeconfig)).toContain('shoots.core.gardener.cloud');

      const dir = /control plane files \(removed on stop\): (\S+)/.exec(up.stderr())?.[1];
      expect(dir).toBeDefined();
      // etcd and kube-apiserver name the folder; kube-controller-manager and kube-scheduler name the kubeconfig they
      // were given. The shoot's control plane and the seed's Nodes keep their state below the folder too.
      const gardenPids = [
        ...new Set([...pidsMentioning(dir!), ...pidsMentioning(`--kubeconfig=${kubeconfig}`)]),
      ].filter((pid) => !/\/(shoots|seed-nodes)\//.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8')));
      expect(gardenPids.length).toBe(4);

      // The seed's two Nodes are Ready with addresses of the example seed's ranges, and their pods talk over IPv6.
      expect(up.stdout()).toMatch(/^seed cluster \(the garden's API server https:\/\/\[fd00:10::1\]:\d+\):$/m);
      const seedNodes = up
        .stdout()
        .match(/^ {2}node seed-[01]: Ready, InternalIP fd00:10::[ab], podCIDRs fd00:10:1:[0-9a-f:]*\/64$/gm);
      expect(seedNodes).toHaveLength(2);
      expect(up.stdout()).toMatch(
        /^ {2}pod-to-pod over IPv6: a pod on seed-1 fetched http:\/\/\[fd00:10:1:[0-9a-f:]+\]:8080\/ from a pod on seed-0: "pod-check-server-/m,
      );
      const pids = [...new Set([...gardenPids, ...pidsMentioning(dir!)])];

      // The example IPv6 shoot succeeded, and BIND9 answers its API server's AAAA name with the IPv6 address.
      expect(up.stdout()).toMatch(
        /^shoot garden-local\/local: Succeeded \(ipFamilies \["IPv6"\], pods fd00:10:3::\/56/m,
      );
      const address = /AAAA api\.local\.local\.external\.local\.gardener\.cloud -> (fd00:ff::[0-9a-f:]+)$/m.exec(
        up.stdout(),
      )?.[1];
      expect(address).toBeDefined();
      const dns = /^DNS server: BIND9 at (\S+) /m.exec(up.stdout())?.[1];
      expect(dns).toBe('[fd00:ff::1]:53');
      const resolver = new Resolver();
      resolver.setServers([dns!]);
      expect(await resolver.resolve6('api.local.local.external.local.gardener.cloud')).toEqual([address]);
      // The shoot's own API server answered over IPv6, and its two machines run pods that talk over IPv6.
      expect(up.stdout()).toMatch(new RegExp(`shoot API server https://\\[${address}\\]:443/version -> v1\\.`));
      // The commands run as printed, and the shoot's kubeconfig goes to up's own folder (removed with it).
      const printed =
        /^ {2}kubeconfig: npx (gardener-ipv6 kubeconfig --kubeconfig \S+ --shoot garden-local\/local --pin-address) > (\S+)$/m.exec(
          up.stdout(),
        );
      expect(printed).not.toBeNull();
      expect(printed![2]).toBe(join(dir!, 'shoot.kubeconfig'));
      const shootKubeconfig = await cli(printed![1]!.split(' ').slice(1));
      expect(shootKubeconfig.code, shootKubeconfig.stderr).toBe(0);
      expect(up.stdout()).toContain(`  then: kubectl --kubeconfig ${printed![2]} get nodes -o wide`);
      const nodes = up
        .stdout()
        .match(/^ {2}node machine-local-[01]: Ready, InternalIP fd00:10:1:100::[ab], podCIDRs fd00:10:3:/gm);
      expect(nodes).toHaveLength(2);
      // The shoot's control plane and machines are pods of the seed (machine pods on the seed's pod network).
      for (const pod of [
        'etcd-main-0',
        'kube-apiserver-',
        'kube-controller-manager-',
        'kube-scheduler-',
        'machine-local-0',
        'machine-local-1',
      ]) {
        expect(up.stdout()).toMatch(new RegExp(`^ {4}${pod}\\S*: Running on seed-[01]$`, 'm'));
      }
      expect(up.stdout()).toMatch(
        /^ {2}pod-to-pod over IPv6: a pod on \S+ fetched http:\/\/\[fd00:10:3:[0-9a-f:]+\]:8080\/ from a pod on \S+: "pod-check-server-/m,
      );
      // The garden is the seed: a privileged pod in the project namespace would run on a seed Node.
      const kc = new KubeConfig();
      kc.loadFromFile(kubeconfig);
      const privileged = await kc
        .makeApiClient(CoreV1Api)
        .createNamespacedPod({
          namespace: 'garden-local',
          dryRun: 'All',
          body: {
            metadata: { name: 'privileged' },
            spec: { containers: [{ name: 'c', image: 'x', securityContext: { privileged: true } }] },
          },
        })
        .then(
          () => 'admitted',
          (e: { code?: number; body?: string }) =>
            `${e.code}: ${(JSON.parse(e.body ?? '{}') as { message?: string }).message}`,
        );
      expect(privileged).toMatch(/^403: .*violates PodSecurity "baseline:latest": privileged/);
      const shoot = await customObject(kubeconfig, 'garden-local', 'shoots', 'local', 'core.gardener.cloud', 'v1beta1');
      expect(shoot.spec.networking.services).toBe('fd00:10:4::/112'); // from the seed's shootDefaults (mutating webhook)
      // The example's providerConfig is networking-calico's typical IPv6 one: no overlay, no typha.
      expect(shoot.spec.networking.providerConfig).toMatchObject({
        overlay: { enabled: false },
        typha: { enabled: false },
      });

      // A healthy start logs nothing at error level (expected waits and retries are debug).
      expect(
        up
          .stderr()
          .split('\n')
          .filter((l) => l.includes('"level":"error"')),
      ).toEqual([]);
      // Nor any line that reads like a failure, also when up runs inside a network namespace (as here, under
      // `npm test`): the output of the commands it runs stays with it.
      expect([...up.stdout().split('\n'), ...up.stderr().split('\n')].filter((l) => /error/i.test(l))).toEqual([]);
      // With machines too, nothing of up's own namespace listens on a wildcard or IPv4 address.
      expect(listenersOutside(up.child.pid!, ['::1', 'fd00:10::1', dns!.slice(1, dns!.lastIndexOf(']'))])).toEqual([]);

      up.child.kill('SIGTERM');
      expect(await up.exit).toBe(0);
      expect(up.stderr()).toContain('stopped');
      expect(pids.filter(alive)).toEqual([]);
      expect(existsSync(dir!)).toBe(false);
      // No namespace of the shoot's control plane or machines is left.
      expect(execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })).not.toMatch(
        new RegExp(`^gv6-${up.child.pid}-`, 'm'),
      );
      expect(existsSync(kubeconfig)).toBe(false);
      // Nor the seed's node bridge.
      expect(execFileSync('ip', ['-o', 'link', 'show', 'type', 'bridge'], { encoding: 'utf8' })).not.toContain(
        `gv6b${up.child.pid}`,
      );
    } finally {
      await stopUp(up);
      await rm(tmp, { recursive: true, force: true });
    }
  }, 400_000);

  it('--seeds ipv6,dual-stack --no-machines: a second seed cluster with its own gardenlet, gone on SIGTERM', async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'gardener-ipv6-up-test-'));
    const kubeconfig = join(tmp, 'admin.kubeconfig');
    const up = startUp(['--seeds', 'ipv6,dual-stack', '--no-machines', '--kubeconfig-out', kubeconfig]);
    try {
      await waitForReady(up);
      expect(up.stdout()).toMatch(/^ready: .* on seeds local-ipv6, local-dual and an IPv6 shoot/m);
      const seed = /^seed cluster local-dual \(its API server (https:\/\/\S+), kubeconfig (\S+)\):$/m.exec(up.stdout());
      expect(seed, up.stdout()).not.toBeNull();
      expect(up.stdout()).toContain('  no Nodes: its shoots are objects only');
      const seedKubeconfig = seed![2]!;
      const garden = new KubeConfig();
      garden.loadFromFile(kubeconfig);
      const gardenObjects = garden.makeApiClient(CustomObjectsApi);
      const seedStatus = async (name: string) =>
        (
          (await gardenObjects.getClusterCustomObject({
            group: 'core.gardener.cloud',
            version: 'v1beta1',
            plural: 'seeds',
            name,
          })) as { status?: { conditions?: { type: string; status: string }[] } }
        ).status?.conditions?.find((c) => c.type === 'GardenletReady')?.status;
      for (const name of ['local-ipv6', 'local-dual']) {
        await waitFor(async () => (await seedStatus(name)) === 'True', {
          timeoutMs: 30_000,
          message: `seed ${name}'s GardenletReady`,
        });
      }
      // A dual-stack shoot without a seed lands on the dual-stack seed, whose own cluster gets its seed namespace.
      const shoot = parse(readFileSync(join(projectRoot(), 'examples', 'shoot-dual-stack.yaml'), 'utf8')) as {
        metadata: { name: string };
        spec: { seedName?: string };
      };
      delete shoot.spec.seedName;
      shoot.metadata.name = 'two';
      await gardenObjects.createNamespacedCustomObject({
        group: 'core.gardener.cloud',
        version: 'v1beta1',
        namespace: 'garden-local',
        plural: 'shoots',
        body: shoot,
      });
      const seedCluster = new KubeConfig();
      seedCluster.loadFromFile(seedKubeconfig);
      const seedCore = seedCluster.makeApiClient(CoreV1Api);
      await waitFor(
        () =>
          seedCore.readNamespace({ name: 'shoot--local--two' }).then(
            () => true,
            () => false,
          ),
        { timeoutMs: 60_000, message: "the shoot's seed namespace in the second seed cluster" },
      );
      const gardenCore = garden.makeApiClient(CoreV1Api);
      await expect(gardenCore.readNamespace({ name: 'shoot--local--two' })).rejects.toThrow();

      up.child.kill('SIGTERM');
      expect(await up.exit).toBe(0);
      expect(up.stderr()).toMatch(/stopped; .*seed cluster local-dual \d+ ms/);
      expect(existsSync(seedKubeconfig)).toBe(false);
      expect(existsSync(kubeconfig)).toBe(false);
      expect(pidsMentioning(dirname(seedKubeconfig)).filter(alive)).toEqual([]);
    } finally {
      await stopUp(up);
      await rm(tmp, { recursive: true, force: true });
    }
  }, 400_000);

  const reason = netnsUnsupportedReason();
  it(`--ipv6-only ${reason === undefined ? 'runs in its own IPv6-only namespace until SIGINT' : 'explains why it cannot run here'}`, async () => {
    const up = startUp(['--ipv6-only', '--no-machines']);
    try {
      if (reason !== undefined) {
        expect(await up.exit).toBe(1);
        expect(up.stderr()).toContain(reason);
        return;
      }
      await waitForReady(up);
      const netns = /ip netns exec (\S+) kubectl --kubeconfig (\S+) get crds/.exec(up.stdout());
      expect(netns).not.toBeNull();
      const [, name, kubeconfig] = netns!;
      expect(netnsExists(name!)).toBe(true);
      // The kubeconfig points at the namespace's veth address, which we reach over the IPv6-only veth pair.
      expect(readFileSync(kubeconfig!, 'utf8')).toMatch(/server: https:\/\/\[fd00:7a:[0-9a-f]+::2\]:6443/);
      expect(await crdNames(kubeconfig!)).toContain('dnsrecords.extensions.gardener.cloud');

      const hostInterface = /reachable from here over (\S+)/.exec(up.stdout())?.[1];
      // Only IPv6 on our end of the pair (the ULA and a link-local address).
      const addresses = networkInterfaces()[hostInterface!] ?? [];
      expect(addresses.some((a) => a.address.startsWith('fd00:7a:'))).toBe(true);
      expect(new Set(addresses.map((a) => a.family))).toEqual(new Set(['IPv6']));

      up.child.kill('SIGINT');
      expect(await up.exit).toBe(0);
      expect(netnsExists(name!)).toBe(false);
      expect(networkInterfaces()[hostInterface!]).toBeUndefined();
      expect(existsSync(kubeconfig!)).toBe(false);
    } finally {
      await stopUp(up);
    }
  }, 400_000);
});
