/**
 * What the NetworkPolicy enforcer costs a Node, next to what kube-proxy costs the same Node: both run as the
 * machines run them (the enforcer as `gardener-ipv6 network-policy-enforcer`, kube-proxy with the machines'
 * KubeProxyConfiguration in nftables mode) in one network namespace against a real API server. Each gets 50 changes
 * of its own kind, applied one after the other and each waited for in the kernel: a NetworkPolicy selecting a pod of
 * the Node created, then deleted (the enforcer); a Service with an EndpointSlice to that pod created, then deleted
 * (kube-proxy). Per process: the CPU time of the process and its waited-for children (the enforcer's `nft` runs)
 * during its own changes and during the other's, its resident memory after the changes and its peak; per change, the
 * time from the API write to the rules being listed by `nft`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { parse, stringify } from 'yaml';
import { kubeProxyConfig } from '../src/extensions/provider-local/machine/config.js';
import { NETWORK_POLICY, POD } from '../src/extensions/provider-local/machine/network-policy/enforcer.js';
import { ensureBinaries } from '../src/localenv/binaries.js';
import { startControlPlane } from '../src/localenv/control-plane.js';
import { startProcess, which, type ManagedProcess } from '../src/system/process.js';
import { ResourceClient } from '../src/runtime/client.js';
import { Refs } from '../src/apis/refs.js';

const CHANGES = 50;
const NODE = 'bench-node';
const NAMESPACE = 'bench';
const POD_IP = 'fd00:1::a';
const SERVICE_CIDR = 'fd00:10:2::/112';
const CLI = join(import.meta.dirname, '..', 'bin', 'gardener-ipv6.js');

export interface ProcessFootprint {
  /** CPU time (ms) per change of its own kind, its `nft` children included. */
  readonly cpuMsPerOwnChange: number;
  /** CPU time (ms) per change of the other process's kind (what it pays for changes that aren't its business). */
  readonly cpuMsPerOtherChange: number;
  readonly rssMiB: number;
  readonly peakRssMiB: number;
  readonly inForceP50Ms: number;
  readonly inForceP99Ms: number;
}

export interface NetworkPolicyFootprintResult {
  readonly changes: number;
  readonly enforcer: ProcessFootprint;
  readonly kubeProxy: ProcessFootprint;
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
};

/** CPU time (ms) of a process and its waited-for children: utime, stime, cutime, cstime (clock ticks, 100/s). */
function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0) * 10;
}

/** VmRSS and VmHWM (the peak) of a process, in MiB. */
function memoryOf(pid: number): { rssMiB: number; peakRssMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMiB: kib('VmRSS') / 1024, peakRssMiB: kib('VmHWM') / 1024 };
}

/** Polls `check` (a listing of the namespace's nftables) until it holds, failing with `what` after the deadline. */
async function waitUntil(check: () => boolean, what: string, process: ManagedProcess, timeoutMs = 20_000) {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (process.exit() !== undefined)
      throw new Error(`${process.name} ended while waiting for ${what}:\n${process.tail()}`);
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${process.tail()}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

export async function runNetworkPolicyFootprintBench(): Promise<NetworkPolicyFootprintResult> {
  if (!existsSync(join(import.meta.dirname, '..', 'dist', 'cli', 'main.js')))
    throw new Error('the enforcer runs as the CLI: `npm run build` first');
  const binaries = await ensureBinaries({ names: ['kube-proxy'] });
  // A namespace of its own: kube-proxy and the enforcer write their tables there, next to the API server they use.
  const cp = await startControlPlane({ ipv6Only: true, serviceCIDR: SERVICE_CIDR, log: () => {} });
  const netns = cp.netns!;
  const dir = mkdtempSync(join(process.env.GARDENER_IPV6_TMPDIR || tmpdir(), 'gardener-ipv6-bench-np-'));
  const client = new ResourceClient(cp.kubeConfig());
  const started: ManagedProcess[] = [];
  const nft = () =>
    execFileSync(which('ip') ?? 'ip', ['netns', 'exec', netns, which('nft') ?? 'nft', 'list', 'ruleset'], {
      encoding: 'utf8',
    });
  try {
    await client.create(Refs.namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    await client.create(
      { ...Refs.configMap, plural: 'serviceaccounts', kind: 'ServiceAccount' },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace: NAMESPACE } },
    );
    await client.create(Refs.node, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: NODE },
      spec: { podCIDR: 'fd00:1::/64', podCIDRs: ['fd00:1::/64'] },
    } as KubernetesObject);
    await client.create(POD, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'a', namespace: NAMESPACE, labels: { app: 'a' } },
      spec: {
        nodeName: NODE,
        containers: [{ name: 'c', image: 'example.invalid/c', ports: [{ containerPort: 8080 }] }],
      },
    } as KubernetesObject);
    await client.mergePatch(
      POD,
      'a',
      NAMESPACE,
      { status: { phase: 'Running', podIPs: [{ ip: POD_IP }], podIP: POD_IP } },
      { subresource: 'status' },
    );

    const kubeProxyConfigFile = join(dir, 'kube-proxy.yaml');
    const config = parse(
      kubeProxyConfig({ nodeName: NODE, clusterCIDRs: ['fd00:1::/64'], primaryNodeIP: cp.veth!.nsAddress }),
    ) as { clientConnection: { kubeconfig: string }; healthzBindAddress: string; metricsBindAddress: string };
    config.clientConnection.kubeconfig = cp.kubeconfigPath;
    writeFileSync(kubeProxyConfigFile, stringify(config));
    const kubeProxy = startProcess({
      name: 'kube-proxy',
      command: binaries['kube-proxy'],
      args: ['--config', kubeProxyConfigFile],
      logFile: join(dir, 'kube-proxy.log'),
      netns,
    });
    started.push(kubeProxy);
    const enforcer = startProcess({
      name: 'network-policy-enforcer',
      command: process.execPath,
      args: [
        CLI,
        'network-policy-enforcer',
        '--kubeconfig',
        cp.kubeconfigPath,
        '--node-name',
        NODE,
        '--ready-file',
        join(dir, 'enforcer-ready'),
      ],
      logFile: join(dir, 'enforcer.log'),
      netns,
    });
    started.push(enforcer);
    await waitUntil(() => existsSync(join(dir, 'enforcer-ready')), 'the enforcer to be ready', enforcer, 60_000);
    await waitUntil(() => /table ip6 kube-proxy/.test(nft()), 'kube-proxy to write its table', kubeProxy, 60_000);

    const policyChange = async (i: number, expectPolicy: string[]) => {
      const name = `p${Math.floor(i / 2)}`;
      const start = performance.now();
      if (i % 2 === 0)
        await client.create(NETWORK_POLICY, {
          apiVersion: 'networking.k8s.io/v1',
          kind: 'NetworkPolicy',
          metadata: { name, namespace: NAMESPACE },
          spec: { podSelector: { matchLabels: { app: 'a' } }, policyTypes: ['Ingress'] },
        } as KubernetesObject);
      else await client.delete(NETWORK_POLICY, name, NAMESPACE);
      // The table with a policy selecting the pod and without one, as listed the first time each was seen.
      const want = expectPolicy[i % 2];
      if (want === undefined) {
        const before = nft();
        await waitUntil(() => nft() !== before, `${name} in force`, enforcer);
        expectPolicy[i % 2] = nft();
      } else await waitUntil(() => nft() === want, `${name} in force`, enforcer);
      return performance.now() - start;
    };
    const SERVICE = Refs.service;
    const SLICE = Refs.endpointSlice;
    const serviceChange = async (i: number) => {
      const name = `s${Math.floor(i / 2)}`;
      const start = performance.now();
      if (i % 2 === 0) {
        const service = (await client.create(SERVICE, {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name, namespace: NAMESPACE },
          spec: { ipFamilies: ['IPv6'], ports: [{ port: 80, targetPort: 8080 }] },
        } as KubernetesObject)) as KubernetesObject & { spec: { clusterIP: string } };
        await client.create(SLICE, {
          apiVersion: 'discovery.k8s.io/v1',
          kind: 'EndpointSlice',
          metadata: { name, namespace: NAMESPACE, labels: { 'kubernetes.io/service-name': name } },
          addressType: 'IPv6',
          endpoints: [{ addresses: [POD_IP], conditions: { ready: true }, nodeName: NODE }],
          ports: [{ port: 8080, protocol: 'TCP' }],
        } as KubernetesObject);
        const ip = service.spec.clusterIP;
        await waitUntil(() => nft().includes(`${ip} . tcp . 80 `), `${name} in force`, kubeProxy);
        lastServiceIP = ip;
      } else {
        await client.delete(SLICE, name, NAMESPACE);
        await client.delete(SERVICE, name, NAMESPACE);
        const ip = lastServiceIP;
        await waitUntil(() => !nft().includes(`${ip} . tcp . 80 `), `${name} gone`, kubeProxy);
      }
      return performance.now() - start;
    };
    let lastServiceIP = '';

    const cpu = () => ({ enforcer: cpuMsOf(enforcer.pid), kubeProxy: cpuMsOf(kubeProxy.pid) });
    const policyTimes: number[] = [];
    const listings: string[] = [];
    const beforePolicies = cpu();
    for (let i = 0; i < CHANGES; i++) policyTimes.push(await policyChange(i, listings));
    const afterPolicies = cpu();
    const serviceTimes: number[] = [];
    for (let i = 0; i < CHANGES; i++) serviceTimes.push(await serviceChange(i));
    const afterServices = cpu();
    const footprint = (
      pid: number,
      key: 'enforcer' | 'kubeProxy',
      own: 'policies' | 'services',
      times: number[],
    ): ProcessFootprint => {
      const policies = (afterPolicies[key] - beforePolicies[key]) / CHANGES;
      const services = (afterServices[key] - afterPolicies[key]) / CHANGES;
      return {
        cpuMsPerOwnChange: own === 'policies' ? policies : services,
        cpuMsPerOtherChange: own === 'policies' ? services : policies,
        ...memoryOf(pid),
        inForceP50Ms: quantile(times, 0.5),
        inForceP99Ms: quantile(times, 0.99),
      };
    };
    return {
      changes: CHANGES,
      enforcer: footprint(enforcer.pid, 'enforcer', 'policies', policyTimes),
      kubeProxy: footprint(kubeProxy.pid, 'kubeProxy', 'services', serviceTimes),
    };
  } finally {
    for (const p of started.reverse()) await p.stop(5_000);
    client.close();
    await cp.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
