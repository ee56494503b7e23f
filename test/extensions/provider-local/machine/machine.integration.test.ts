/**
 * Two machines of a shoot against a real control plane (etcd, kube-apiserver, kube-controller-manager with node
 * IPAM, kube-scheduler): Nodes Ready with addresses from the node range and podCIDRs from the pods range, pods on
 * both machines reaching each other by IP, through a ClusterIP Service and by DNS name through CoreDNS; IPv6
 * forwarding turned off through the worker's sysctls breaks cross-machine pod traffic and turned on fixes it;
 * destroy leaves nothing.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubernetesObject } from '@kubernetes/client-node';
import { contains, parseCIDR, parseIP, type IPFamily } from '../../../../src/net/cidr.js';
import {
  cleanupOrphanedMachines,
  machineLeftovers,
} from '../../../../src/extensions/provider-local/machine/janitor.js';
import { TEST_IMAGE } from '../../../../src/extensions/provider-local/machine/images.js';
import { coreDNSReady, deployCoreDNS } from '../../../../src/gardenlet/shoot/components/coredns.js';
import type { NodeInfo } from '../../../../src/extensions/provider-local/machine/api-client.js';
import {
  CRASH_LOOP_EXITS,
  PROCESS_CRASH_LOOP_CONDITION,
} from '../../../../src/extensions/provider-local/machine/process-condition.js';
import { waitFor } from '../../../support/wait.js';
import { Machine, NETWORKS, machinesUnsupportedReason, startShootEnv, type ShootEnv } from './shoot-env.js';

const reason = machinesUnsupportedReason();
const verbose = process.env.GARDENER_IPV6_MACHINE_LOG === '1';
const log = (line: string) => {
  if (verbose) process.stderr.write(`${new Date().toISOString()} ${line}\n`);
};

const ref = {
  namespace: { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false },
  node: { group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false },
  pod: { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true },
  service: { group: '', version: 'v1', plural: 'services', kind: 'Service', namespaced: true },
  deployment: { group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', namespaced: true },
} as const;

interface Pod extends KubernetesObject {
  spec?: { nodeName?: string };
  status?: { podIPs?: { ip: string }[]; phase?: string; conditions?: { type: string; status: string }[] };
}

const inCIDR = (cidr: string, ip: string) => contains(parseCIDR(cidr)!, parseIP(ip)!);
const urlHost = (ip: string) => (ip.includes(':') ? `[${ip}]` : ip);

function variant(families: IPFamily[]) {
  const label = families.length > 1 ? 'dual-stack' : families[0]!;
  describe.runIf(reason === undefined).sequential(`machines of an ${label} shoot`, () => {
    let env: ShootEnv;
    const machines: Machine[] = [];
    const ns = 'machines-test';
    let pods: Pod[] = [];

    beforeAll(async () => {
      cleanupOrphanedMachines();
      env = await startShootEnv(families, log);
    }, 180_000);

    afterAll(async () => {
      for (const m of machines) await m.destroy().catch(() => {});
      await env?.stop();
    }, 120_000);

    /**
     * Runs a command in a pod through the API server and kubelet (kubectl exec); returns stdout or throws. (Busybox
     * 1.35's `wget -T` crashes: deadlines come from `timeout`.)
     */
    const exec = (pod: string, command: string[], timeoutMs = 20_000) =>
      env.kubectl(['exec', '-n', ns, pod, '--', ...command], timeoutMs);

    it('both Nodes get Ready with InternalIPs from the node range and podCIDRs inside pods', async () => {
      const started = Date.now();
      machines.push(
        new Machine(await env.machineOptions(0, 'machine-a')),
        new Machine(await env.machineOptions(1, 'machine-b')),
      );
      await Promise.all(machines.map((m) => m.deploy()));
      await Promise.all(machines.map((m) => m.wait(150_000)));
      const readyMs = Date.now() - started;
      const rss = machines.map((m) => Math.round(m.rssBytes() / 2 ** 20));
      process.stderr.write(
        `[machines ${label}] both Nodes Ready in ${readyMs}ms; RSS per machine (MiB): ${rss.join(', ')}\n`,
      );

      for (const [i, m] of machines.entries()) {
        const node = (await env.client.get(ref.node, m.opts.name)) as NodeInfo | undefined;
        const internal = node?.status?.addresses?.filter((a) => a.type === 'InternalIP').map((a) => a.address);
        expect(internal).toEqual(families.map((f) => NETWORKS[f].machineAddress(i).split('/')[0]));
        const podCIDRs = node?.spec?.podCIDRs ?? [];
        expect(podCIDRs).toHaveLength(families.length);
        podCIDRs.forEach((cidr, j) => {
          const net = NETWORKS[families[j]!];
          expect(parseCIDR(cidr)?.prefix).toBe(net.nodeMask);
          expect(inCIDR(net.pods, cidr.split('/')[0]!)).toBe(true);
        });
      }
    }, 240_000);

    it('a Deployment spreads over both machines and its pods get addresses of the shoot families', async () => {
      await env.client.create(ref.namespace, { metadata: { name: ns } });
      await waitFor(
        () =>
          env.client.get(
            { group: '', version: 'v1', plural: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true },
            'default',
            ns,
          ),
        {
          timeoutMs: 30_000,
          message: 'the default ServiceAccount',
        },
      );
      const labels = { app: 'web' };
      await env.client.create(ref.deployment, {
        metadata: { name: 'web', namespace: ns },
        spec: {
          replicas: 2,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              topologySpreadConstraints: [
                {
                  maxSkew: 1,
                  topologyKey: 'kubernetes.io/hostname',
                  whenUnsatisfiable: 'DoNotSchedule',
                  labelSelector: { matchLabels: labels },
                },
              ],
              terminationGracePeriodSeconds: 1,
              containers: [
                {
                  name: 'web',
                  image: TEST_IMAGE,
                  command: ['sh', '-c', 'hostname > /www/index.html && exec httpd -f -p 8080 -h /www'],
                  ports: [{ containerPort: 8080 }],
                },
              ],
            },
          },
        },
      } as KubernetesObject);
      pods = await waitFor(
        async () => {
          const list = await env.client.list<Pod>(ref.pod, { namespace: ns, labelSelector: 'app=web' });
          const ready = list.items.filter((p) =>
            p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
          );
          return ready.length === 2 ? ready : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 500, message: 'two web pods Ready' },
      ).catch((e: Error) => {
        throw new Error(
          `${e.message}\n${env.kubectl(['get', 'events', '-A', '-o', 'custom-columns=OBJ:.involvedObject.name,MSG:.message'])}`,
        );
      });
      pods.sort((a, b) => (a.spec!.nodeName! < b.spec!.nodeName! ? -1 : 1));
      expect(pods.map((p) => p.spec?.nodeName)).toEqual(['machine-a', 'machine-b']);
      for (const pod of pods) {
        const node = (await env.client.get(ref.node, pod.spec!.nodeName!)) as NodeInfo;
        const ips = pod.status!.podIPs!.map((p) => p.ip);
        expect(ips.map((ip) => parseIP(ip)!.family)).toEqual(families);
        ips.forEach((ip, j) => expect(inCIDR(node.spec!.podCIDRs![j]!, ip)).toBe(true));
      }
    }, 180_000);

    it('pod A reaches pod B on the other machine by IP, per family', async () => {
      for (const ip of pods[1]!.status!.podIPs!.map((p) => p.ip)) {
        // A fresh pod's address can take a moment to settle (duplicate address detection): retry, with a deadline.
        const body = await waitFor(
          () =>
            exec(pods[0]!.metadata!.name!, ['timeout', '3', 'wget', '-q', '-O', '-', `http://${urlHost(ip)}:8080/`]),
          { timeoutMs: 20_000, intervalMs: 500, message: `pod B at ${ip}` },
        );
        expect(body.trim()).toBe(pods[1]!.metadata!.name);
      }
    }, 60_000);

    it('pod A reaches pod B through a ClusterIP Service and by its DNS name through CoreDNS', async () => {
      // A Service in front of pod B only, so every answer crosses machines.
      await env.client.mergePatch(ref.pod, pods[1]!.metadata!.name!, ns, { metadata: { labels: { role: 'b' } } });
      await env.client.create(ref.service, {
        metadata: { name: 'web-b', namespace: ns },
        spec: {
          selector: { role: 'b' },
          ipFamilies: families,
          ipFamilyPolicy: families.length > 1 ? 'RequireDualStack' : 'SingleStack',
          ports: [{ port: 80, targetPort: 8080 }],
        },
      } as KubernetesObject);
      const service = (await env.client.get(ref.service, 'web-b', ns)) as KubernetesObject & {
        spec: { clusterIPs: string[] };
      };
      expect(service.spec.clusterIPs.map((ip) => parseIP(ip)!.family)).toEqual(families);
      for (const ip of service.spec.clusterIPs) {
        const body = await waitFor(
          () => exec(pods[0]!.metadata!.name!, ['timeout', '3', 'wget', '-q', '-O', '-', `http://${urlHost(ip)}/`]),
          { timeoutMs: 30_000, intervalMs: 500, message: `an answer through the Service at ${ip}` },
        );
        expect(body.trim()).toBe(pods[1]!.metadata!.name);
      }

      // The kube-dns Service on the pods' families: the cluster DNS address first, a second family's tenth address.
      await deployCoreDNS(env.client, { clusterIPs: families.map((f) => NETWORKS[f].clusterDNS), families });
      await waitFor(() => coreDNSReady(env.client), {
        timeoutMs: 90_000,
        intervalMs: 500,
        message: 'CoreDNS available',
      });
      const name = `web-b.${ns}.svc.cluster.local`;
      const answer = await waitFor(() => exec(pods[0]!.metadata!.name!, ['nslookup', name]), {
        timeoutMs: 30_000,
        intervalMs: 500,
        message: `${name} resolved through CoreDNS`,
      });
      expect(answer).toContain(service.spec.clusterIPs[0]!);
      const body = exec(pods[0]!.metadata!.name!, ['timeout', '5', 'wget', '-q', '-O', '-', `http://${name}/`]);
      expect(body.trim()).toBe(pods[1]!.metadata!.name);
    }, 180_000);

    it(`${families[0]} forwarding turned off through the worker sysctls breaks cross-machine pod traffic; on again, it works`, async () => {
      const b = machines[1]!;
      const key = families[0] === 'IPv6' ? 'net.ipv6.conf.all.forwarding' : 'net.ipv4.conf.all.forwarding';
      const podB = pods[1]!.status!.podIPs![0]!.ip;
      const fetch = () =>
        exec(pods[0]!.metadata!.name!, ['timeout', '3', 'wget', '-q', '-O', '-', `http://${urlHost(podB)}:8080/`]);
      await b.applyOperatingSystemConfig(b.opts.operatingSystemConfig, { [key]: '0' });
      expect(fetch).toThrow();
      await b.applyOperatingSystemConfig(b.opts.operatingSystemConfig, { [key]: '1' });
      const body = await waitFor(fetch, { timeoutMs: 20_000, intervalMs: 500, message: 'pod B reachable again' });
      expect(body.trim()).toBe(pods[1]!.metadata!.name);
    }, 90_000);

    it.runIf(families.length === 1 && families[0] === 'IPv6')(
      'a killed kubelet is started again and its Node stays Ready',
      async () => {
        const a = machines[0]!;
        const before = a.status().processes.find((p) => p.name === 'kubelet')!;
        expect(before.running).toBe(true);
        process.kill(before.pid!, 'SIGKILL');
        await waitFor(
          () => {
            const now = a.status().processes.find((p) => p.name === 'kubelet')!;
            return now.running && now.restarts === before.restarts + 1 && now.pid !== before.pid;
          },
          { timeoutMs: 20_000, message: 'the kubelet running again' },
        );
        await a.wait(60_000);
      },
      90_000,
    );

    it.runIf(families.length === 1 && families[0] === 'IPv6')(
      'a kubelet that keeps exiting after the first Ready is named in a Node condition, until it runs stably again',
      async () => {
        const a = machines[0]!;
        const condition = async () =>
          ((await env.client.get(ref.node, a.opts.name)) as NodeInfo).status?.conditions?.find(
            (c) => c.type === PROCESS_CRASH_LOOP_CONDITION,
          );
        // Each run killed within seconds of its start, as a kubelet that keeps failing.
        for (let i = 0; i < CRASH_LOOP_EXITS; i++) {
          const kubelet = await waitFor(
            () => {
              const p = a.status().processes.find((x) => x.name === 'kubelet')!;
              return p.running ? p : undefined;
            },
            { timeoutMs: 30_000, message: 'the kubelet running' },
          );
          process.kill(kubelet.pid!, 'SIGKILL');
          await waitFor(() => a.status().processes.find((x) => x.name === 'kubelet')!.pid !== kubelet.pid, {
            timeoutMs: 10_000,
            message: 'the kubelet killed',
          });
        }
        const looping = await waitFor(
          async () => {
            const c = await condition();
            return c?.status === 'True' ? c : undefined;
          },
          {
            timeoutMs: 20_000,
            intervalMs: 500,
            message: `${PROCESS_CRASH_LOOP_CONDITION}=True on the Node`,
          },
        );
        expect(looping?.reason).toBe('ProcessKeepsExiting');
        expect(looping?.message).toMatch(/^kubelet keeps exiting \(\d+ times\), last .*SIGKILL/);
        // Left alone, it runs for a minute: the condition says so, and the Node is Ready.
        const running = await waitFor(
          async () => {
            const c = await condition();
            return c?.status === 'False' ? c : undefined;
          },
          {
            timeoutMs: 150_000,
            intervalMs: 2_000,
            message: `${PROCESS_CRASH_LOOP_CONDITION}=False on the Node`,
          },
        );
        expect(running?.reason).toBe('ProcessesRunning');
        await a.wait(60_000);
      },
      240_000,
    );

    it.runIf(families.length === 1 && families[0] === 'IPv6')(
      'a machine whose namespace holder is killed is replaced on its state dir and its Node gets Ready again',
      async () => {
        const a = machines[0]!;
        const before = a.status();
        expect(before.holderPid).toBeDefined();
        process.kill(before.holderPid!, 'SIGKILL');
        await waitFor(
          () => {
            const now = a.status();
            return (
              now.replaced === before.replaced + 1 && now.holderPid !== undefined && now.holderPid !== before.holderPid
            );
          },
          { timeoutMs: 60_000, message: 'the machine replaced with a new holder' },
        );
        await a.wait(90_000);
        // Processes enter the new namespaces: a kubelet killed now is started again. (The Node may still be Ready from
        // before the replacement: the kubelet is waited for itself.)
        const kubelet = await waitFor(
          () => a.status().processes.find((p) => p.name === 'kubelet' && p.running && p.pid !== undefined),
          { timeoutMs: 60_000, message: 'the kubelet running in the new namespaces' },
        );
        process.kill(kubelet.pid!, 'SIGKILL');
        await waitFor(
          () => {
            const now = a.status().processes.find((p) => p.name === 'kubelet')!;
            return now.running && now.pid !== kubelet.pid;
          },
          { timeoutMs: 20_000, message: 'the kubelet running again in the new namespaces' },
        );
        await a.wait(60_000);
      },
      180_000,
    );

    it.runIf(families.length === 1 && families[0] === 'IPv6')(
      'a machine stopped and deployed again on its state dir comes back with its pod',
      async () => {
        const b = machines[1]!;
        await b.stop();
        expect(machineLeftovers(b.id)).toEqual([]);
        expect(existsSync(b.opts.stateDir)).toBe(true);
        await b.deploy();
        await b.wait(60_000);
        // The kubelet starts the Pod the API server still has on this node again: a new sandbox with a new
        // address, which the Pod's status shows a moment later. Ask for the address on every try.
        const body = await waitFor(
          async () => {
            const pod = (await env.client.get(ref.pod, pods[1]!.metadata!.name!, ns)) as Pod;
            const ip = pod.status?.podIPs?.[0]?.ip;
            if (ip === undefined) return undefined;
            const url = `http://${urlHost(ip)}:8080/`;
            return exec(pods[0]!.metadata!.name!, ['timeout', '3', 'wget', '-q', '-O', '-', url]);
          },
          { timeoutMs: 60_000, intervalMs: 500, message: 'pod B answering again after the restart' },
        );
        expect(body.trim()).toBe(pods[1]!.metadata!.name);
      },
      120_000,
    );

    it('destroy leaves nothing: namespaces, cgroups, processes, veths', async () => {
      const ids = machines.map((m) => m.id);
      const stateDirs = machines.map((m) => m.opts.stateDir);
      for (const m of machines.splice(0)) await m.destroy();
      for (const id of ids) expect(machineLeftovers(id)).toEqual([]);
      for (const dir of stateDirs) expect(existsSync(dir)).toBe(false);
    }, 90_000);
  });
}

// GARDENER_IPV6_MACHINE_FAMILIES=IPv6 runs only the IPv6 variant (the quickest check).
const selected = process.env.GARDENER_IPV6_MACHINE_FAMILIES?.split(',');
const VARIANTS: IPFamily[][] = [['IPv6'], ['IPv6', 'IPv4'], ['IPv4']];
for (const families of VARIANTS) if (!selected || selected.includes(families.join('+'))) variant(families);
