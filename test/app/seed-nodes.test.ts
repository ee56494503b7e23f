/**
 * The seed's Nodes: the ranges they are made from (pure), and as root a garden control plane with nodes and two
 * seed Nodes joined to it: Ready with InternalIPs from the seed's node range and podCIDRs from its pod range, the
 * `kubernetes` Service pointing at the routable API server address, CoreDNS available, pod-to-pod across the Nodes
 * and through a ClusterIP Service; destroy leaves no namespace, cgroup, veth or bridge.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubernetesObject } from '@kubernetes/client-node';
import { EXAMPLE_SEED, example, machinesOptions } from '../../src/app/local-environment.js';
import { seedNetworks, SeedNodeNetwork, SeedNodes, seedSummary } from '../../src/app/seed-nodes.js';
import type { Seed } from '../../src/apis/core/v1beta1/seed.js';
import { machineID, machineLeftovers } from '../../src/extensions/provider-local/machine/janitor.js';
import { TEST_IMAGE } from '../../src/extensions/provider-local/machine/images.js';
import { NO_REGISTRY_HOST } from '../../src/extensions/provider-local/machine/config.js';
import { startControlPlane, type ControlPlane } from '../../src/localenv/control-plane.js';
import { nodeControllerArgs } from '../../src/localenv/kube-controller-manager.js';
import { contains, parseCIDR, parseIP } from '../../src/net/cidr.js';
import { ResourceClient } from '../../src/runtime/client.js';
import { Refs } from '../../src/apis/refs.js';
import { linkExists } from '../../src/system/network.js';
import { machinesUnsupportedReason } from '../extensions/provider-local/machine/shoot-env.js';
import { waitFor } from '../support/wait.js';

const seed = (networks: Record<string, unknown>) => ({ spec: { networks } }) as unknown as Seed;

describe('seedNetworks', () => {
  it('takes one range per family from an IPv6 seed', () => {
    expect(
      seedNetworks(
        seed({ ipFamilies: ['IPv6'], nodes: 'fd00:10::/64', pods: 'fd00:10:1::/56', services: 'fd00:10:2::/112' }),
      ),
    ).toEqual({ families: ['IPv6'], nodes: ['fd00:10::/64'], pods: ['fd00:10:1::/56'], services: ['fd00:10:2::/112'] });
  });

  it('orders the ranges of a dual-stack seed by its families', () => {
    const n = seedNetworks(
      seed({
        ipFamilies: ['IPv6', 'IPv4'],
        nodes: '172.18.0.0/16,fd00:10::/64',
        pods: '10.1.0.0/16, fd00:10:1::/56',
        services: 'fd00:10:2::/112,10.2.0.0/16',
      }),
    );
    expect(n.nodes).toEqual(['fd00:10::/64', '172.18.0.0/16']);
    expect(n.pods).toEqual(['fd00:10:1::/56', '10.1.0.0/16']);
    expect(n.services).toEqual(['fd00:10:2::/112', '10.2.0.0/16']);
  });

  it('names the field that lacks a family', () => {
    expect(() =>
      seedNetworks(seed({ ipFamilies: ['IPv6'], nodes: '10.0.0.0/16', pods: 'fd00::/56', services: 'fd01::/112' })),
    ).toThrow('the seed has no IPv6 range in spec.networks.nodes');
  });

  it('reads the example seed `up` makes its seed of', () => {
    expect(seedNetworks(example(EXAMPLE_SEED) as Seed)).toEqual({
      families: ['IPv6'],
      nodes: ['fd00:10::/64'],
      pods: ['fd00:10:1::/56'],
      services: ['fd00:10:2::/112'],
    });
  });
});

describe('nodeControllerArgs', () => {
  const base = { serviceCIDRs: ['fd00:10:2::/112'], caCert: 'ca.crt', caKey: 'ca.key', serviceAccountKey: 'sa.key' };
  it('gives a single-stack range one mask flag', () => {
    const args = nodeControllerArgs({ ...base, clusterCIDRs: ['fd00:10:1::/56'] });
    expect(args).toContain('--cluster-cidr=fd00:10:1::/56');
    expect(args).toContain('--node-cidr-mask-size=64');
    expect(args.filter((a) => a.startsWith('--node-cidr-mask-size'))).toHaveLength(1);
  });
  it('gives dual-stack ranges a mask flag per family', () => {
    const args = nodeControllerArgs({ ...base, clusterCIDRs: ['fd00:10:1::/56', '10.1.0.0/16'] });
    expect(args).toEqual(expect.arrayContaining(['--node-cidr-mask-size-ipv6=64', '--node-cidr-mask-size-ipv4=24']));
    expect(args).not.toContain('--node-cidr-mask-size=64');
  });
});

describe('startControlPlane with nodes', () => {
  it('refuses an IPv6-only namespace of its own', async () => {
    await expect(
      startControlPlane({ ipv6Only: true, nodes: { listenAddress: 'fd00:10::1', podCIDRs: ['fd00:10:1::/56'] } }),
    ).rejects.toThrow('a control plane with nodes runs in this namespace');
  });
});

const unsupported = machinesUnsupportedReason();

interface PodObject extends KubernetesObject {
  spec?: { nodeName?: string };
  status?: { phase?: string; podIPs?: { ip: string }[] };
}

const ENDPOINT_SLICES = {
  group: 'discovery.k8s.io',
  version: 'v1',
  plural: 'endpointslices',
  kind: 'EndpointSlice',
  namespaced: true,
} as const;

describe.runIf(unsupported === undefined).sequential('a seed with two Nodes (root)', () => {
  // Ranges of their own: other tests of this namespace run `up` with the example seed's ranges meanwhile.
  const networks = seedNetworks(
    seed({ ipFamilies: ['IPv6'], nodes: 'fd00:1e::/64', pods: 'fd00:1e:1::/56', services: 'fd00:1e:2::/112' }),
  );
  const network = new SeedNodeNetwork(networks, `s${randomBytes(2).toString('hex')}`);
  let cp: ControlPlane;
  let client: ResourceClient;
  let nodes: SeedNodes;

  beforeAll(async () => {
    network.deploy();
    cp = await startControlPlane({ crds: false, ...network.controlPlaneOptions() });
    client = new ResourceClient(cp.kubeConfig());
    nodes = SeedNodes.forCluster(cp, { count: 2, network, machines: await machinesOptions(), client });
  }, 180_000);

  afterAll(async () => {
    await nodes?.destroy();
    client?.close();
    await cp?.stop();
    network.destroy();
  }, 60_000);

  it('the API server listens on the node network and publishes that address for in-cluster clients', async () => {
    expect(cp.server).toMatch(/^https:\/\/\[fd00:1e::1\]:\d+$/);
    const slices = await waitFor(
      async () => {
        const list = await client.list<KubernetesObject & { endpoints?: { addresses: string[] }[] }>(ENDPOINT_SLICES, {
          namespace: 'default',
        });
        const kubernetes = list.items.find((s) => s.metadata?.labels?.['kubernetes.io/service-name'] === 'kubernetes');
        return kubernetes?.endpoints?.length ? kubernetes : undefined;
      },
      { timeoutMs: 30_000, message: 'the kubernetes EndpointSlice' },
    );
    expect(slices.endpoints!.flatMap((e) => e.addresses)).toEqual(['fd00:1e::1']);
  });

  it('both Nodes get Ready with InternalIPs from the node range and podCIDRs from the pod range', async () => {
    await nodes.deploy();
    await nodes.wait(150_000);
    const summary = (await nodes.summary()).sort((a, b) => a.name.localeCompare(b.name));
    expect(summary.map((n) => [n.name, n.ready, n.internalIPs])).toEqual([
      ['seed-0', true, ['fd00:1e::a']],
      ['seed-1', true, ['fd00:1e::b']],
    ]);
    const pods = parseCIDR(networks.pods[0]!)!;
    for (const n of summary) {
      expect(n.podCIDRs).toHaveLength(1);
      expect(parseCIDR(n.podCIDRs[0]!)!.prefix).toBe(64);
      expect(contains(pods, parseIP(n.podCIDRs[0]!.split('/')[0]!)!)).toBe(true);
    }
    expect(new Set(summary.map((n) => n.podCIDRs[0])).size).toBe(2);
  }, 200_000);

  it('pods on the two Nodes reach each other over IPv6 (what `up` prints)', async () => {
    const lines = await seedSummary(nodes, client, cp);
    expect(lines.join('\n')).toMatch(
      /pod-to-pod over IPv6: a pod on seed-1 fetched http:\/\/\[fd00:1e:1:[0-9a-f:]+\]:8080\/ from a pod on seed-0: "pod-check-server-/,
    );
  }, 90_000);

  it('a pod reaches a Service by its ClusterIP and the API server through the kubernetes Service', async () => {
    const ns = 'default';
    const name = `web-${randomBytes(2).toString('hex')}`;
    await client.create(Refs.pod, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: ns, labels: { app: name } },
      spec: {
        nodeName: 'seed-0',
        terminationGracePeriodSeconds: 0,
        containers: [
          {
            name: 'main',
            image: TEST_IMAGE,
            command: ['sh', '-c', 'echo seed-web > /www/index.html && exec httpd -f -p 8080 -h /www'],
          },
        ],
      },
    } as KubernetesObject);
    const service = await client.create<KubernetesObject & { spec?: { clusterIP?: string } }>(Refs.service, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: ns },
      spec: { selector: { app: name }, ports: [{ port: 80, targetPort: 8080 }], ipFamilies: ['IPv6'] },
    } as KubernetesObject);
    const clusterIP = service.spec!.clusterIP!;
    expect(contains(parseCIDR(networks.services[0]!)!, parseIP(clusterIP)!)).toBe(true);
    const client2 = `probe-${randomBytes(2).toString('hex')}`;
    // The kubernetes Service answers TLS on 443: busybox's nc proves the connection (wget has no TLS here).
    const script =
      `for i in 1 2 3 4 5 6 7 8 9 10; do timeout 3 wget -q -O - http://[${clusterIP}]/ && break; sleep 1; done; ` +
      `echo | timeout 3 nc fd00:1e:2::1 443 && echo kubernetes-service-ok`;
    await client.create(Refs.pod, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: client2, namespace: ns },
      spec: {
        nodeName: 'seed-1',
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: 0,
        containers: [{ name: 'main', image: TEST_IMAGE, command: ['sh', '-c', script] }],
      },
    } as KubernetesObject);
    try {
      await waitFor(
        async () => {
          const p = await client.get<PodObject>(Refs.pod, client2, ns);
          if (p?.status?.phase === 'Failed') throw new Error('the probe pod failed');
          return p?.status?.phase === 'Succeeded';
        },
        { timeoutMs: 60_000, intervalMs: 250, message: 'the probe pod to finish' },
      );
      const { adminGet } = await import('../../src/localenv/kube-apiserver.js');
      const log = await adminGet(cp.server, cp.certs, `/api/v1/namespaces/${ns}/pods/${client2}/log`, 10_000);
      expect(log.body).toContain('seed-web');
      expect(log.body).toContain('kubernetes-service-ok');
    } finally {
      await Promise.allSettled([
        client.delete(Refs.pod, name, ns),
        client.delete(Refs.pod, client2, ns),
        client.delete(Refs.service, name, ns),
      ]);
    }
  }, 90_000);

  it('a pod resolves the kubernetes Service, kubernetes.default through the search list; outside names NXDOMAIN', async () => {
    const name = `dns-${randomBytes(2).toString('hex')}`;
    await client.create(Refs.pod, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default' },
      spec: {
        nodeName: 'seed-1',
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: 0,
        containers: [
          {
            name: 'main',
            image: TEST_IMAGE,
            // busybox's nslookup asks for the name as given; its libc resolver (ping) goes through the search list.
            command: [
              'sh',
              '-c',
              'nslookup kubernetes.default.svc.cluster.local; ping -c 1 -W 1 kubernetes.default 2>&1 | head -1; ' +
                'nslookup outside.example.; true',
            ],
          },
        ],
      },
    } as KubernetesObject);
    try {
      await waitFor(
        async () => (await client.get<PodObject>(Refs.pod, name, 'default'))?.status?.phase === 'Succeeded',
        {
          timeoutMs: 60_000,
          intervalMs: 250,
          message: 'the DNS pod to finish',
        },
      );
      const { adminGet } = await import('../../src/localenv/kube-apiserver.js');
      const log = (await adminGet(cp.server, cp.certs, `/api/v1/namespaces/default/pods/${name}/log`, 10_000)).body;
      // The kubernetes Service's ClusterIP, the first address of the service range.
      expect(log).toMatch(/Name:\s+kubernetes\.default\.svc\.cluster\.local\s+Address: fd00:1e:2::1/);
      expect(log).toContain('PING kubernetes.default (fd00:1e:2::1)');
      expect(log).toContain("can't find outside.example.: NXDOMAIN");
      expect(log).not.toContain('SERVFAIL');
    } finally {
      await client.delete(Refs.pod, name, 'default');
    }
  }, 90_000);

  it('a pod of an image no machine has fails to pull with a message that says no registry is reachable', async () => {
    const name = `no-image-${randomBytes(2).toString('hex')}`;
    await client.create(Refs.pod, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default' },
      spec: {
        nodeName: 'seed-0',
        terminationGracePeriodSeconds: 0,
        containers: [{ name: 'main', image: 'docker.io/library/nginx:1.27' }],
      },
    } as KubernetesObject);
    try {
      const message = await waitFor(
        async () => {
          const pod = await client.get<
            PodObject & {
              status?: { containerStatuses?: { state?: { waiting?: { reason?: string; message?: string } } }[] };
            }
          >(Refs.pod, name, 'default');
          const waiting = pod?.status?.containerStatuses?.[0]?.state?.waiting;
          return waiting?.reason === 'ErrImagePull' || waiting?.reason === 'ImagePullBackOff'
            ? waiting.message
            : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 250, message: 'the pull to fail' },
      );
      expect(message).toContain(NO_REGISTRY_HOST);
    } finally {
      await client.delete(Refs.pod, name, 'default');
    }
  }, 90_000);

  it('destroy leaves no machine namespace, cgroup or veth, and the bridge goes with the network', async () => {
    const ids = nodes.names().map((n) => machineID(n));
    await nodes.destroy();
    for (const id of ids) expect(machineLeftovers(id)).toEqual([]);
    expect(linkExists(network.bridge)).toBe(true);
    network.destroy();
    expect(linkExists(network.bridge)).toBe(false);
  }, 60_000);
});
