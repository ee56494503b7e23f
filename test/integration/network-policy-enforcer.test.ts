/**
 * The machines' NetworkPolicy enforcer against a real API server: it lists and watches Pods, Namespaces and
 * NetworkPolicies and keeps its nftables table in a network namespace in step with them: a policy, a label, a pod's
 * address or a deleted policy show in the kernel's rules within a deadline; a table removed by hand comes back;
 * `destroy()` leaves the last ruleset in force and `removeRules` removes it. The packets those rules pass or refuse
 * are the subject of test/extensions/provider-local/machine/network-policy/rules.test.ts.
 * `gardener-ipv6 network-policy-enforcer` (the chart's DaemonSet on a seed's Nodes) does the same in the network
 * namespace it runs in and says so in its ready file; stopped (SIGTERM) and started again, as in a rollout, its rules
 * stay in force throughout; `--remove-rules` removes them. Needs root, `ip` and `nft`.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, NetworkingV1Api, type V1NetworkPolicy } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { NetworkPolicyEnforcer } from '../../src/extensions/provider-local/machine/network-policy/enforcer.js';
import { NETWORK_POLICY_TABLE } from '../../src/extensions/provider-local/machine/network-policy/rules.js';
import { ANTI_SPOOFING_TABLE } from '../../src/extensions/provider-local/machine/network-policy/anti-spoofing.js';
import { projectRoot } from '../../src/system/project.js';
import { which } from '../../src/system/process.js';
import { tempFile } from '../support/cli.js';
import { runCNIPlugin } from '../support/cni-plugin.js';
import { kubeConfig, newTestNamespace } from '../support/kube.js';
import { waitFor } from '../support/wait.js';

const skip = process.getuid?.() !== 0 || which('nft') === undefined;
const NETNS = `gv6enf${process.pid % 100_000}`;
const NODE = `enforcer-${process.pid}`;

/** The table in the named network namespace, or in ours (null). */
function table(netns: string | null = NETNS): string {
  const nft = [which('nft') ?? 'nft', 'list', 'table', 'inet', NETWORK_POLICY_TABLE];
  const r = netns
    ? spawnSync('ip', ['netns', 'exec', netns, ...nft], { encoding: 'utf8' })
    : spawnSync(nft[0]!, nft.slice(1), { encoding: 'utf8' });
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

  it('keeps its table in step with pods, namespaces and policies, heals it and leaves it when stopped', async () => {
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

    const last = table();
    await enforcer.destroy();
    expect(table()).toBe(last);
    expect(await NetworkPolicyEnforcer.removeRules(NETNS)).toBe(true);
    expect(table()).toBe('');
    expect(await NetworkPolicyEnforcer.removeRules(NETNS)).toBe(false);
  }, 60_000);
});

// In this process's network namespace, as the DaemonSet runs in its Node's: where the API server is reached (the test
// runner's own namespace under npm test, so the table never touches the host's).
describe.skipIf(skip || table(null) !== '')('gardener-ipv6 network-policy-enforcer', () => {
  it("keeps the Node's table in force while it runs, across a restart, until --remove-rules", async () => {
    const namespace = await newTestNamespace('enforcer-cli');
    const core = kubeConfig().makeApiClient(CoreV1Api);
    const networking = kubeConfig().makeApiClient(NetworkingV1Api);
    const node = `${NODE}-cli`;
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'default' } } });
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: 'server', labels: { app: 'server' } },
        spec: { nodeName: node, containers: [{ name: 'c', image: 'example.invalid/test' }] },
      },
    });
    const pod = await core.readNamespacedPod({ name: 'server', namespace });
    pod.status = { phase: 'Running', podIP: 'fd00:2::5', podIPs: [{ ip: 'fd00:2::5' }] };
    await core.replaceNamespacedPodStatus({ name: 'server', namespace, body: pod });

    const kubeconfig = tempFile('kubeconfig', kubeConfig().exportConfig());
    const ready = join(kubeconfig, '..', 'ready');
    const cli = (...args: string[]) => [
      join(projectRoot(), 'bin', 'gardener-ipv6.js'),
      'network-policy-enforcer',
      ...args,
    ];
    const start = () => {
      const child = spawn(
        process.execPath,
        cli('--node-name', node, '--kubeconfig', kubeconfig, '--ready-file', ready),
        {
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      const output = { stderr: '' };
      child.stderr.on('data', (d: Buffer) => (output.stderr += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      const isReady = () =>
        waitFor(() => existsSync(ready), { timeoutMs: 20_000, message: 'the ready file' }).catch((e: Error) => {
          throw new Error(`${e.message}; stderr: ${output.stderr}`);
        });
      return { child, output, exited, isReady };
    };
    const isolated = () => table(null).includes('fd00:2::5 : jump pod-0-ingress');

    const first = start();
    try {
      await first.isReady();
      expect(table(null), first.output.stderr).toContain(`table inet ${NETWORK_POLICY_TABLE}`);
      expect(table(null)).not.toContain('fd00:2::5');
      await networking.createNamespacedNetworkPolicy({
        namespace,
        body: { metadata: { name: 'deny-ingress' }, spec: { podSelector: {}, policyTypes: ['Ingress'] } },
      });
      await waitFor(isolated, { message: 'the server in the ingress map' });
    } finally {
      first.child.kill('SIGTERM');
    }
    expect(await first.exited, first.output.stderr).toBe(0);
    expect(existsSync(ready)).toBe(false);
    expect(first.output.stderr).toContain('first ruleset in force');
    // Stopped: the server stays isolated, and while the next one starts and takes over (a rollout) it never is not.
    expect(isolated()).toBe(true);
    const second = start();
    let checks = 0;
    try {
      while (!existsSync(ready)) {
        expect(isolated(), `check ${checks} during the restart`).toBe(true);
        checks++;
        if (checks > 400) await second.isReady();
      }
      await second.isReady();
      expect(isolated(), second.output.stderr).toBe(true);
    } finally {
      second.child.kill('SIGTERM');
    }
    expect(await second.exited, second.output.stderr).toBe(0);
    expect(checks).toBeGreaterThan(0);
    expect(isolated()).toBe(true);

    const remove = () => spawnSync(process.execPath, cli('--remove-rules'), { encoding: 'utf8' });
    const removed = remove();
    expect([removed.status, removed.stdout]).toEqual([0, 'network policy rules removed\n']);
    expect(table(null)).toBe('');
    expect(remove().stdout).toBe('no network policy rules here\n');
  }, 90_000);

  it("answers the Node's CNI plugin only with the pod's rules in force and its port held, until --remove-rules", async () => {
    const namespace = await newTestNamespace('enforcer-hook');
    const core = kubeConfig().makeApiClient(CoreV1Api);
    const node = `${NODE}-hook`;
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'default' } } });
    // Its status has no address yet, as when the CNI plugin runs: the plugin's announcement is what counts.
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: 'hooked' },
        spec: { nodeName: node, containers: [{ name: 'c', image: 'example.invalid/test' }] },
      },
    });
    await core.createNode({ body: { metadata: { name: node }, spec: { podCIDRs: ['fd00:3::/64'] } } });
    onTestFinished(() => core.deleteNode({ name: node }).then(() => undefined));

    const kubeconfig = tempFile('kubeconfig', kubeConfig().exportConfig());
    const dir = join(kubeconfig, '..');
    const socket = join(dir, 'hook', 'hook.sock');
    const cli = join(projectRoot(), 'bin', 'gardener-ipv6.js');
    const plugin = join(dir, 'gardener-ipv6-network-policy');
    const printed = spawnSync(
      process.execPath,
      [cli, 'network-policy-enforcer', '--print-cni-plugin', process.execPath],
      {
        encoding: 'utf8',
      },
    );
    expect(printed.status, printed.stderr).toBe(0);
    writeFileSync(plugin, printed.stdout, { mode: 0o755 });
    const prevResult = {
      cniVersion: '1.0.0',
      interfaces: [
        { name: 'br-hook', mac: '02:00:00:00:0a:01' },
        { name: 'vethhook0', mac: '02:00:00:00:0a:02' },
        { name: 'eth0', mac: '02:00:00:00:0a:03', sandbox: '/var/run/netns/hooked' },
      ],
      ips: [{ address: 'fd00:3::7/64', interface: 2 }],
    };
    // What the container runtime hands the chained plugin after the bridge plugin.
    const callPlugin = (command: 'ADD' | 'DEL') =>
      runCNIPlugin(
        plugin,
        command,
        {
          cniVersion: '1.0.0',
          name: 'test',
          type: 'gardener-ipv6-network-policy',
          socket,
          timeoutSeconds: 20,
          prevResult,
        },
        { args: `K8S_POD_NAMESPACE=${namespace};K8S_POD_NAME=hooked`, containerID: 'hooked' },
      );
    const ports = () => {
      const r = spawnSync(which('nft') ?? 'nft', ['list', 'table', 'bridge', ANTI_SPOOFING_TABLE], {
        encoding: 'utf8',
      });
      return r.status === 0 ? r.stdout : '';
    };

    // Not running: the plugin fails the pod's sandbox (fail-closed).
    const refused = await callPlugin('ADD');
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout).msg).toContain('the NetworkPolicy enforcer is not reachable');

    const ready = join(dir, 'ready');
    const child = spawn(
      process.execPath,
      [cli, 'network-policy-enforcer', '--node-name', node, '--kubeconfig', kubeconfig, '--ready-file', ready].concat([
        '--cni-hook-socket',
        socket,
        '--anti-spoofing',
        '--pod-bridge',
        'br-hook',
      ]),
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await waitFor(() => existsSync(socket), { timeoutMs: 20_000, message: 'the hook socket' });
      const added = await callPlugin('ADD');
      expect([added.code, JSON.parse(added.stdout)], stderr).toEqual([0, prevResult]);
      // Answered only once its port is held to its address (and the ruleset with its address written).
      expect(ports()).toContain('"vethhook0" : jump port-vethhook0');
      expect(ports()).toContain('ether saddr != 02:00:00:00:0a:03 drop');
      expect(ports()).toMatch(/ip6 saddr != \{[^}]*fd00:3::7/);
      // The Node's pod range fails closed once the enforcer has read it from the Node (until then nothing of it
      // does), with the pod's address among the known; the pods' link-local packets to the Node stop at their bridge.
      await waitFor(() => table(null).includes('ip6 saddr fd00:3::/64 ip6 saddr != @known-pods-v6 drop'), {
        message: "the Node's pod range in the rules",
      });
      expect(table(null)).toMatch(/set known-pods-v6 \{[^}]*elements = \{[^}]*fd00:3::7/);
      expect(table(null)).toContain('iifname "br-hook" ip6 saddr fe80::/10 drop');

      const deleted = await callPlugin('DEL');
      expect(deleted.code).toBe(0);
      await waitFor(() => !ports().includes('vethhook0'), { message: 'the port released after DEL' });
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited, stderr).toBe(0);
    expect(existsSync(socket)).toBe(false);
    const removed = spawnSync(process.execPath, [cli, 'network-policy-enforcer', '--remove-rules'], {
      encoding: 'utf8',
    });
    expect([removed.status, removed.stdout]).toEqual([0, 'network policy rules removed\n']);
    expect([table(null), ports()]).toEqual(['', '']);
  }, 90_000);

  it('refuses --anti-spoofing without the hook, and a relative node path for the plugin', () => {
    const run = (...args: string[]) =>
      spawnSync(
        process.execPath,
        [join(projectRoot(), 'bin', 'gardener-ipv6.js'), 'network-policy-enforcer', ...args],
        {
          encoding: 'utf8',
        },
      );
    const spoofing = run('--node-name', 'n', '--anti-spoofing');
    expect([spoofing.status, spoofing.stderr]).toEqual([
      2,
      "error: --anti-spoofing needs --cni-hook-socket (the hook tells each pod's port on the bridge)\n",
    ]);
    const relative = run('--print-cni-plugin', 'node');
    expect([relative.status, relative.stderr]).toEqual([
      2,
      'error: --print-cni-plugin needs the absolute path of node on the Nodes\n',
    ]);
  });
});
