/**
 * How fast a NetworkPolicy change is in force on a machine: a real API server, two pods on a machine, the machine's
 * NetworkPolicy enforcer writing into a network namespace of its own, and 50 changes (a policy selecting one of the
 * pods created, then deleted, in turn). Per change: from the API write to the enforcer's nftables transaction being
 * committed, against the baseline measured in the same run, the moment an informer of the same process sees the
 * change (the API server's own propagation). Besides, the process CPU time per change of the run with the enforcer
 * against the run with only the baseline informer.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  NETWORK_POLICY,
  NetworkPolicyEnforcer,
  POD,
} from '../src/extensions/provider-local/machine/network-policy/enforcer.js';
import { startControlPlane } from '../src/localenv/control-plane.js';
import { ResourceClient } from '../src/runtime/client.js';
import { Refs } from '../src/apis/refs.js';
import { Informer } from '../src/runtime/informer.js';
import { silentLogger } from '../src/runtime/log.js';

const CHANGES = 50;
const NODE = 'bench-node';

export interface NetworkPolicyBenchResult {
  readonly changes: number;
  readonly enforcedP50Ms: number;
  readonly enforcedP99Ms: number;
  readonly watchedP50Ms: number;
  readonly watchedP99Ms: number;
  readonly cpuMsPerChange: number;
  readonly baselineCpuMsPerChange: number;
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
};

async function waitUntil(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

const pem = (file: string) => readFileSync(file, 'utf8');

/** CPU time of this process and its waited-for children (the enforcer's `nft` runs), in ms. */
function cpuMs(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  // After the command: state is field 3; utime, stime, cutime, cstime are fields 14 to 17 (clock ticks, 100/s).
  const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
  return ticks * 10;
}

export async function runNetworkPolicyBench(): Promise<NetworkPolicyBenchResult> {
  const cp = await startControlPlane({ log: () => {} });
  const netns = `gv6npbench${process.pid % 100_000}`;
  execFileSync('ip', ['netns', 'add', netns]);
  const client = new ResourceClient(cp.kubeConfig());
  try {
    const namespace = 'bench';
    await client.create(Refs.namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    await client.create(
      { ...Refs.configMap, plural: 'serviceaccounts', kind: 'ServiceAccount' },
      {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'default', namespace },
      },
    );
    for (const [name, ip] of [
      ['a', 'fd00:1::a'],
      ['b', 'fd00:1::b'],
    ] as const) {
      await client.create(POD, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace, labels: { app: name } },
        spec: { nodeName: NODE, containers: [{ name: 'c', image: 'example.invalid/c' }] },
      } as KubernetesObject);
      await client.mergePatch(
        POD,
        name,
        namespace,
        { status: { phase: 'Running', podIPs: [{ ip }], podIP: ip } },
        {
          subresource: 'status',
        },
      );
    }

    const watcher = new Informer<KubernetesObject>({ client, ref: NETWORK_POLICY, namespace, logger: silentLogger() });
    const seen = new Map<string, number>();
    watcher.onAdd((o) => seen.set(`add ${o.metadata!.name}`, performance.now()));
    watcher.onDelete((o) => seen.set(`delete ${o.metadata!.name}`, performance.now()));
    await watcher.start();

    const change = async (i: number, onDone: () => boolean) => {
      const name = `p${Math.floor(i / 2)}`;
      const started = performance.now();
      if (i % 2 === 0) {
        await client.create(NETWORK_POLICY, {
          apiVersion: 'networking.k8s.io/v1',
          kind: 'NetworkPolicy',
          metadata: { name, namespace },
          spec: { podSelector: { matchLabels: { app: 'a' } }, policyTypes: ['Ingress'] },
        } as KubernetesObject);
      } else {
        await client.delete(NETWORK_POLICY, name, namespace);
      }
      const key = `${i % 2 === 0 ? 'add' : 'delete'} ${name}`;
      await waitUntil(() => seen.has(key) && onDone(), key);
      return { watched: seen.get(key)! - started, done: performance.now() - started };
    };

    // Baseline: the same changes seen by an informer only.
    let cpu = cpuMs();
    for (let i = 0; i < CHANGES; i++) await change(i, () => true);
    const baselineCpu = cpuMs() - cpu;

    const enforcer = new NetworkPolicyEnforcer({
      nodeName: NODE,
      apiServer: { url: cp.server, caPEM: pem(cp.certs.caCert) },
      credentials: { certPEM: pem(cp.certs.adminCert), keyPEM: pem(cp.certs.adminKey) },
      netns,
      log: () => {},
      debounceMs: 0,
    });
    await enforcer.deploy();
    await enforcer.wait();
    const enforced: number[] = [];
    const watched: number[] = [];
    cpu = cpuMs();
    for (let i = CHANGES; i < 2 * CHANGES; i++) {
      const before = enforcer.status.applied;
      const r = await change(i, () => enforcer.status.applied > before);
      enforced.push(r.done);
      watched.push(r.watched);
    }
    const enforcerCpu = cpuMs() - cpu;
    await enforcer.destroy();
    watcher.stop();
    return {
      changes: CHANGES,
      enforcedP50Ms: quantile(enforced, 0.5),
      enforcedP99Ms: quantile(enforced, 0.99),
      watchedP50Ms: quantile(watched, 0.5),
      watchedP99Ms: quantile(watched, 0.99),
      cpuMsPerChange: enforcerCpu / CHANGES,
      baselineCpuMsPerChange: baselineCpu / CHANGES,
    };
  } finally {
    client.close();
    spawnSync('ip', ['netns', 'del', netns]);
    await cp.stop();
  }
}
