/**
 * The machines' NetworkPolicy enforcer against a real API server: it lists and watches Pods, Namespaces and
 * NetworkPolicies and keeps its nftables table in a network namespace in step with them: a policy, a label, a pod's
 * address or a deleted policy show in the kernel's rules within a deadline; a table removed by hand comes back;
 * `destroy()` removes it. The packets those rules pass or refuse are the subject of
 * test/extensions/provider-local/machine/network-policy/rules.test.ts. Needs root, `ip` and `nft`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { CoreV1Api, NetworkingV1Api, type V1NetworkPolicy } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetworkPolicyEnforcer } from '../../src/extensions/provider-local/machine/network-policy/enforcer.js';
import { NETWORK_POLICY_TABLE } from '../../src/extensions/provider-local/machine/network-policy/rules.js';
import { which } from '../../src/localenv/process.js';
import { kubeConfig, newTestNamespace } from '../support/kube.js';
import { waitFor } from '../support/wait.js';

const skip = process.getuid?.() !== 0 || which('nft') === undefined;
const NETNS = `gv6enf${process.pid % 100_000}`;
const NODE = `enforcer-${process.pid}`;

function table(): string {
  const r = spawnSync('ip', ['netns', 'exec', NETNS, 'nft', 'list', 'table', 'inet', NETWORK_POLICY_TABLE], {
    encoding: 'utf8',
  });
  return r.status === 0 ? r.stdout : '';
}

/** The admin's client certificate and the server of the shared control plane's kubeconfig. */
function access() {
  const kc = kubeConfig();
  const cluster = kc.getCurrentCluster()!;
  const user = kc.getCurrentUser()!;
  const pem = (data: string | undefined, file: string | undefined) =>
    data !== undefined ? Buffer.from(data, 'base64').toString() : readFileSync(file!, 'utf8');
  return {
    apiServer: { url: cluster.server, caPEM: pem(cluster.caData, cluster.caFile) },
    credentials: { certPEM: pem(user.certData, user.certFile), keyPEM: pem(user.keyData, user.keyFile) },
  };
}

describe.skipIf(skip)('the NetworkPolicy enforcer of a machine', () => {
  let enforcer: NetworkPolicyEnforcer;
  const lines: string[] = [];

  beforeAll(() => {
    execFileSync('ip', ['netns', 'add', NETNS]);
  });

  afterAll(async () => {
    await enforcer?.destroy();
    spawnSync('ip', ['netns', 'del', NETNS]);
  });

  it('keeps its table in step with pods, namespaces and policies, heals it and removes it', async () => {
    const namespace = await newTestNamespace('enforcer');
    const core = kubeConfig().makeApiClient(CoreV1Api);
    const networking = kubeConfig().makeApiClient(NetworkingV1Api);
    const createPod = async (name: string, ip: string, labels: Record<string, string>) => {
      await core.createNamespacedPod({
        namespace,
        body: {
          metadata: { name, labels },
          spec: { nodeName: NODE, containers: [{ name: 'c', image: 'example.invalid/test' }] },
        },
      });
      const pod = await core.readNamespacedPod({ name, namespace });
      pod.status = { phase: 'Running', podIP: ip, podIPs: [{ ip }] };
      await core.replaceNamespacedPodStatus({ name, namespace, body: pod });
    };
    // No controller manager here makes the default ServiceAccount the pods need.
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'default' } } });
    await createPod('a', 'fd00:1::a', { app: 'a' });
    await createPod('b', 'fd00:1::b', { app: 'b' });

    enforcer = new NetworkPolicyEnforcer({
      nodeName: NODE,
      ...access(),
      netns: NETNS,
      log: (line) => lines.push(line),
      resyncMs: 200,
    });
    await enforcer.deploy();
    await enforcer.wait();
    // No policy: no pod in the maps.
    expect(table()).not.toContain('fd00:1::a');

    const policy: V1NetworkPolicy = {
      metadata: { name: 'allow-from-b' },
      spec: {
        podSelector: { matchLabels: { app: 'a' } },
        policyTypes: ['Ingress'],
        ingress: [{ _from: [{ podSelector: { matchLabels: { role: 'client' } } }] }],
      },
    };
    await networking.createNamespacedNetworkPolicy({ namespace, body: policy });
    await waitFor(() => table().includes('fd00:1::a : jump pod-0-ingress'), {
      message: 'pod a in the ingress map',
    });
    // Nobody has role=client yet: the chain allows nothing.
    expect(table()).not.toMatch(/ip6 saddr fd00:1::b .*accept/);

    await core.patchNamespacedPod({
      name: 'b',
      namespace,
      body: [{ op: 'add', path: '/metadata/labels/role', value: 'client' }],
    });
    await waitFor(() => /ip6 saddr fd00:1::b accept/.test(table()), { message: 'b allowed after its label' });

    // Removed by hand: written again at the next check.
    execFileSync('ip', ['netns', 'exec', NETNS, 'nft', 'delete', 'table', 'inet', NETWORK_POLICY_TABLE]);
    await waitFor(() => table().includes('fd00:1::a : jump pod-0-ingress'), {
      timeoutMs: 5_000,
      message: 'the table written again',
    });
    expect(lines.some((l) => l.includes('is gone'))).toBe(true);

    await networking.deleteNamespacedNetworkPolicy({ name: 'allow-from-b', namespace });
    await waitFor(() => !table().includes('pod-0-ingress') && table() !== '', { message: 'the policy gone' });
    expect(enforcer.status.lastError).toBeUndefined();
    expect(enforcer.status.applied).toBeGreaterThanOrEqual(4);

    await enforcer.destroy();
    expect(table()).toBe('');
  }, 60_000);
});
