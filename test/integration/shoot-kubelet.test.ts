/**
 * The kubelet as the Shoot says, end to end: an IPv6 shoot with `spec.kubernetes.kubelet` on a seed with two Nodes
 * (the garden's API server doubling as the seed's), two machines. Every machine's kubelet runs with the Shoot's
 * settings (its `/configz` through the API server's node proxy), a container without a seccomp profile runs with
 * RuntimeDefault (and one that asks for Unconfined without), and a changed kubelet setting in the Shoot reaches
 * the running machines in place: the same Nodes and machine pods, the kubelet restarted with the new value, the
 * pods on it still the same.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGE } from '../../src/extensions/provider-local/machine/images.js';
import { featureGates } from '../../src/featuregate/featuregate.js';
import { Refs } from '../../src/apis/refs.js';
import type { IPFamily } from '../../src/net/cidr.js';
import type { ResourceClient } from '../../src/runtime/client.js';
import { machinesUnsupportedReason } from '../extensions/provider-local/machine/shoot-env.js';
import { seedIPv6Networks } from '../fixtures/objects.js';
import { SeedEnvironment } from '../support/seed-environment.js';
import { run, testFile } from '../support/shoot.js';
import { waitFor } from '../support/wait.js';

const unsupported = machinesUnsupportedReason();

const PROJECT = 'kubelet';
const NAMESPACE = `garden-${PROJECT}`;
const SHOOT = 'k6';
const SEED_NAMESPACE = `shoot--${PROJECT}--${SHOOT}`;
const LB_NETWORKS = { IPv6: 'fd00:ff:e5::/64', IPv4: '172.31.251.0/24' };
const SEED_CLUSTER = {
  families: ['IPv6'] as IPFamily[],
  nodes: ['fd00:1f::/64'],
  pods: ['fd00:1f:1::/56'],
  services: ['fd00:1f:2::/112'],
};

const env = new SeedEnvironment();
let client: ResourceClient;
let kubeconfig: string;

async function kubectl(args: string[]): Promise<string> {
  const r = await run(env.kubectlBin, ['--kubeconfig', kubeconfig, '--request-timeout=20s', ...args], 40_000);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr.trim()}`);
  return r.stdout;
}

/** The shoot's Nodes: name, uid, the pods they say they can run. */
async function shootNodes(): Promise<{ name: string; uid: string; pods: string }[]> {
  const list = JSON.parse(await kubectl(['get', 'nodes', '-o', 'json'])) as {
    items: { metadata: { name: string; uid: string }; status: { capacity: { pods: string } } }[];
  };
  return list.items
    .map((n) => ({ name: n.metadata.name, uid: n.metadata.uid, pods: n.status.capacity.pods }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The configuration a Node's kubelet runs with, through the API server's node proxy. */
async function configz(node: string): Promise<Record<string, unknown>> {
  const body = JSON.parse(await kubectl(['get', '--raw', `/api/v1/nodes/${node}/proxy/configz`])) as {
    kubeletconfig: Record<string, unknown>;
  };
  return body.kubeletconfig;
}

/** The machine pods in the seed: name, uid and restarts of their container. */
async function machinePods(): Promise<{ name: string; uid: string; restarts: number }[]> {
  const list = await client.list<KubernetesObject & { status?: { containerStatuses?: { restartCount: number }[] } }>(
    Refs.pod,
    { namespace: SEED_NAMESPACE, labelSelector: 'app=machine' },
  );
  return list.items
    .map((p) => ({
      name: p.metadata?.name ?? '',
      uid: p.metadata?.uid ?? '',
      restarts: p.status?.containerStatuses?.[0]?.restartCount ?? -1,
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

describe.skipIf(unsupported !== undefined).sequential("a shoot's kubelet settings on its machines (needs root)", () => {
  beforeAll(async () => {
    await env.start({
      tag: 'kubelet',
      cluster: SEED_CLUSTER,
      gates: featureGates({ IPv6SingleStack: true }),
      loadBalancerNetworks: LB_NETWORKS,
      careSyncPeriodMs: 2_000,
      namespace: NAMESPACE,
      seeds: { ipv6: seedIPv6Networks },
    });
    client = env.client;
  }, 180_000);

  afterAll(async () => {
    await env.stop();
  }, 120_000);

  it("runs every machine's kubelet with the Shoot's settings, and the defaults where it says nothing", async () => {
    const started = Date.now();
    await client.create(Refs.shoot, {
      apiVersion: 'core.gardener.cloud/v1beta1',
      kind: 'Shoot',
      metadata: { name: SHOOT, namespace: NAMESPACE },
      spec: {
        seedName: 'ipv6',
        cloudProfile: { name: 'local' },
        region: 'local',
        provider: { type: 'local', workers: [{ name: 'w', machine: { type: 'local' }, minimum: 2, maximum: 2 }] },
        networking: { type: 'calico', ipFamilies: ['IPv6'], nodes: 'fd00:10:1:100::/64' },
        // Gardener's IPv6 example has protectKernelDefaults: the seed Nodes' kubelets (protectKernelDefaults false) set
        // the host's kernel parameters it checks when they start.
        kubernetes: {
          kubelet: { seccompDefault: true, streamingConnectionIdleTimeout: '5m', protectKernelDefaults: true },
        },
      },
    } as KubernetesObject);
    await env.waitForShoot(NAMESPACE, SHOOT, ['EveryNodeReady'], 180_000);
    process.stderr.write(`[e2e kubelet] shoot with 2 Ready nodes after ${Date.now() - started} ms\n`);
    kubeconfig = await env.writeShootKubeconfig(NAMESPACE, SHOOT);

    const all = await shootNodes();
    expect(all).toHaveLength(2);
    for (const node of all) {
      expect(await configz(node.name), node.name).toMatchObject({
        seccompDefault: true,
        streamingConnectionIdleTimeout: '5m0s',
        protectKernelDefaults: true,
        // Unset in the Shoot: the machines' defaults.
        maxPods: 110,
        evictionHard: { 'memory.available': '50Mi', 'nodefs.available': '1%', 'imagefs.available': '1%' },
        // The machine's own.
        cgroupRoot: '/',
        address: '::',
      });
      expect(node.pods).toBe('110');
    }
  }, 240_000);

  it('runs a container without a seccomp profile with RuntimeDefault', async () => {
    const container = (name: string, seccomp?: string) => ({
      name,
      image: TEST_IMAGE,
      command: ['sh', '-c', 'exec sleep 3600'],
      ...(seccomp ? { securityContext: { seccompProfile: { type: seccomp } } } : {}),
    });
    const manifest = testFile(
      'seccomp.json',
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'seccomp', namespace: 'default' },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [container('default'), container('unconfined', 'Unconfined')],
        },
      }),
    );
    await waitFor(() => kubectl(['get', 'serviceaccount', 'default']).then(() => true), {
      timeoutMs: 30_000,
      message: 'the default ServiceAccount',
    });
    await kubectl(['apply', '-f', manifest]);
    await kubectl(['wait', '--for=condition=Ready', 'pod/seccomp', '--timeout=60s']);
    const seccompOf = async (c: string) =>
      /^Seccomp:\s*(\d)$/m.exec(await kubectl(['exec', 'seccomp', '-c', c, '--', 'cat', '/proc/1/status']))?.[1];
    // 2: a filter (the runtime's default profile); 0: none, which is what Unconfined asks for.
    expect(await seccompOf('default')).toBe('2');
    expect(await seccompOf('unconfined')).toBe('0');
  }, 90_000);

  it('changes a kubelet setting on the running machines in place: same Nodes, kubelet restarted', async () => {
    const nodesBefore = await shootNodes();
    const machinesBefore = await machinePods();
    expect(machinesBefore).toHaveLength(2);
    const podBefore = JSON.parse(await kubectl(['get', 'pod', 'seccomp', '-o', 'json'])) as {
      metadata: { uid: string };
    };
    const started = Date.now();
    await client.mergePatch(Refs.shoot, SHOOT, NAMESPACE, {
      spec: {
        kubernetes: {
          kubelet: {
            seccompDefault: true,
            streamingConnectionIdleTimeout: '5m',
            protectKernelDefaults: true,
            maxPods: 64,
          },
        },
      },
    });
    await waitFor(
      async () => {
        for (const node of nodesBefore) if ((await configz(node.name)).maxPods !== 64) return false;
        return true;
      },
      { timeoutMs: 120_000, intervalMs: 1_000, message: 'maxPods 64 in every kubelet' },
    );
    process.stderr.write(`[e2e kubelet] new kubelet configuration on both machines after ${Date.now() - started} ms\n`);
    // The Nodes report what the restarted kubelets run with.
    const nodesAfter = await waitFor(
      async () => {
        const now = await shootNodes();
        return now.every((n) => n.pods === '64') ? now : undefined;
      },
      { timeoutMs: 30_000, message: 'Nodes with capacity for 64 pods' },
    );
    expect(nodesAfter.map((n) => [n.name, n.uid])).toEqual(nodesBefore.map((n) => [n.name, n.uid]));
    expect(await machinePods()).toEqual(machinesBefore);
    for (const node of nodesAfter) expect(await configz(node.name)).toMatchObject({ seccompDefault: true });
    // The pod on a machine whose kubelet restarted is the same pod, still running.
    const podAfter = JSON.parse(await kubectl(['get', 'pod', 'seccomp', '-o', 'json'])) as {
      metadata: { uid: string };
      status: { phase: string };
    };
    expect(podAfter.metadata.uid).toBe(podBefore.metadata.uid);
    expect(podAfter.status.phase).toBe('Running');
  }, 180_000);
});
