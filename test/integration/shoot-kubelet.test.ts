/**
 * The kubelet as the Shoot says, and the machine as a boundary, end to end: an IPv6 shoot with
 * `spec.kubernetes.kubelet` on a seed with two Nodes (the garden's API server doubling as the seed's), two machines.
 * Every machine's kubelet runs with the Shoot's settings (its `/configz` through the API server's node proxy), a
 * container without a seccomp profile runs with RuntimeDefault (and one that asks for Unconfined without), and a
 * changed kubelet setting in the Shoot reaches the running machines in place: the same Nodes and machine pods, the
 * kubelet restarted with the new value, the pods on it still the same.
 *
 * The boundary, tried as a shoot's owner would: a pod with `hostPath: /proc` and `/`, root but unprivileged, and a
 * privileged one with the host's PID namespace (the machine's, as it turns out), change no kernel setting of the
 * host, no file the machine or the seed executes, mount or read no disk, see no process of the host, read nothing
 * of the environment's files, find no other machine's containerd and load no kernel module. A privileged pod that
 * takes another pod's address, or root in a machine's network that takes kube-apiserver's, sends nothing as it (counted
 * where it would arrive); a pod's fork bomb ends at the pod's PID limit, and machine pods have the seed's; a pod that
 * writes past its ephemeral-storage limit is evicted. A second
 * shoot on the same seed: root in the first shoot's machine gets no answer from its kube-apiserver, etcd and kubelet,
 * nor from the seed's API server, all of which answer their own clients; machines have their machine type's CPU and
 * memory as cgroup limits, and one of a type the seed cannot fit stays Pending with the reason on its Worker.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubernetesObject, V1PodCondition as Condition } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGE } from '../../src/extensions/provider-local/machine/images.js';
import { MACHINE_POD_PIDS_LIMIT, SEED_POD_PIDS_LIMIT } from '../../src/apis/provider-local/v1alpha1/kubelet.js';
import { featureGates } from '../../src/featuregate/featuregate.js';
import { API_SERVER_PORT, ETCD_PORT } from '../../src/gardenlet/shoot/components/controlplane/args.js';
import { TO_ETCD_LABEL, TO_KUBE_APISERVER_LABEL } from '../../src/gardenlet/shoot/components/controlplane/names.js';
import { Refs } from '../../src/apis/refs.js';
import { ensureBinaries } from '../../src/localenv/binaries.js';
import type { IPFamily } from '../../src/net/cidr.js';
import type { ResourceClient } from '../../src/runtime/client.js';
import { machinesUnsupportedReason } from '../extensions/provider-local/machine/shoot-env.js';
import { localCloudProfile } from '../../src/extensions/provider-local/cloudprofile.js';
import { SeedEnvironment } from '../support/seed-environment.js';
import { seedPodScript, tcpConnectScript } from '../support/seed-pod.js';
import { run, testFile } from '../support/shoot.js';
import { waitFor } from '../support/wait.js';

const unsupported = machinesUnsupportedReason();

const PROJECT = 'kubelet';
const NAMESPACE = `garden-${PROJECT}`;
const SHOOT = 'k6';
const SEED_NAMESPACE = `shoot--${PROJECT}--${SHOOT}`;
/** A second shoot of the same seed, whose control plane and machine the first shoot's machines must not reach. */
const OTHER_SHOOT = 'k6b';
const OTHER_SEED_NAMESPACE = `shoot--${PROJECT}--${OTHER_SHOOT}`;
const KUBELET_PORT = 10250;
/** A machine type no seed of this test can fit, even with the default overcommit (64 CPUs reserve 6.4). */
const HUGE_MACHINE_TYPE = { name: 'local-huge', cpu: '64', gpu: '0', memory: '512Gi' };
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

async function kubectl(args: string[], timeoutMs = 40_000): Promise<string> {
  const r = await run(env.kubectlBin, ['--kubeconfig', kubeconfig, '--request-timeout=20s', ...args], timeoutMs);
  if (r.code === null) throw new Error(`kubectl ${args.join(' ')}: killed after ${timeoutMs} ms`);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: exit code ${r.code}: ${r.stderr.trim()}`);
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
      // The Seed says what its Nodes have: its namespaces' policies keep machines from the seed's own networks.
      seeds: {
        ipv6: {
          ipFamilies: SEED_CLUSTER.families,
          nodes: SEED_CLUSTER.nodes[0],
          pods: SEED_CLUSTER.pods[0],
          services: SEED_CLUSTER.services[0],
          shootDefaults: { pods: 'fd00:1f:3::/56', services: 'fd00:1f:4::/112' },
        },
      },
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
        podPidsLimit: MACHINE_POD_PIDS_LIMIT,
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
      ...sleeper(name),
      ...(seccomp ? { securityContext: { seccompProfile: { type: seccomp } } } : {}),
    });
    await waitFor(() => kubectl(['get', 'serviceaccount', 'default']).then(() => true), {
      timeoutMs: 30_000,
      message: 'the default ServiceAccount',
    });
    await runPod('seccomp', { containers: [container('default'), container('unconfined', 'Unconfined')] });
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

  it("runs every machine, and every pod on it, as an unprivileged user of the seed's host", async () => {
    const pods = await client.list<KubernetesObject & { spec?: { hostUsers?: boolean } }>(Refs.pod, {
      namespace: SEED_NAMESPACE,
      labelSelector: 'app=machine',
    });
    expect(pods.items).toHaveLength(2);
    for (const pod of pods.items) expect(pod.spec?.hostUsers, pod.metadata?.name).toBe(false);
    await startBoundaryPod();
    for (const container of ['plain', 'privileged']) {
      // "inside outside count": root inside is a host user other than root.
      const [inside, outside] = (await inPod(container, 'cat /proc/self/uid_map')).trim().split(/\s+/);
      expect(inside, container).toBe('0');
      expect(Number(outside), container).toBeGreaterThan(0);
    }
  }, 120_000);

  it("refuses the host's kernel settings to a pod with hostPath: /proc", async () => {
    // Settings of the host's kernel (none of a namespace's: kernel.pid_max is the PID namespace's since Linux 6.14);
    // modprobe and sysrq where the kernel has them.
    const settings = ['kernel/core_pattern', 'kernel/panic', 'kernel/threads-max', 'vm/swappiness', 'kernel/modprobe']
      .concat(['kernel/sysrq', 'fs/inotify/max_user_instances'])
      .filter((key) => existsSync(`/proc/sys/${key}`));
    expect(settings).toContain('kernel/core_pattern');
    const before = settings.map(hostSetting);
    const changed = (key: string): string =>
      key === 'kernel/core_pattern' || key === 'kernel/modprobe'
        ? '|/bin/true boundary-test'
        : String(Number(hostSetting(key)) + 1);
    const attempts = [...settings.map((key) => [key, changed(key)]), ['net/core/rmem_max', '4194304']];
    const script = attempts
      .map(
        ([key, value]) =>
          `if echo '${value}' > /hostproc/sys/${key} 2>/dev/null; then r=written; else r=refused; fi; echo "${key}=$r"`,
      )
      // sysrq-trigger: `h` only prints the help, should it ever get through.
      .concat([
        'if echo h > /hostproc/sysrq-trigger 2>/dev/null; then echo sysrq-trigger=written; else echo sysrq-trigger=refused; fi',
      ])
      .join('\n');
    for (const container of ['plain', 'privileged']) {
      const results = parseResults(await inPod(container, script));
      expect(results, container).toEqual(
        Object.fromEntries([...attempts.map(([key]) => [key!, 'refused']), ['sysrq-trigger', 'refused']]),
      );
    }
    expect(settings.map(hostSetting)).toEqual(before);
  }, 60_000);

  it('refuses changes to any file the machine executes, and shows none of the seed', async () => {
    const seedKubelet = (await ensureBinaries({ names: ['kubelet'] })).kubelet;
    const script = [
      // The machine's binaries, its agent and the host tools in its image: changed, replaced or added to.
      'for f in $(find /host/usr /host/bin /host/sbin /host/lib -xdev -type f -perm -u+x 2>/dev/null | head -400); do',
      // A failed redirection of `:` (a special built-in) would end the shell: printf is a regular one.
      '  if touch -c "$f" 2>/dev/null || { printf "" >> "$f"; } 2>/dev/null; then echo "written=$f"; fi',
      'done',
      'for d in /host/usr/local/lib/gardener-ipv6/bin /host/usr/local/lib/gardener-ipv6/cni /host/usr/local/lib/gardener-ipv6/agent /host/usr/bin /host/bin; do',
      '  if touch "$d/boundary-test" 2>/dev/null; then echo "created=$d"; fi',
      'done',
      'echo "executables=$(find /host/usr /host/bin /host/sbin /host/lib -xdev -type f -perm -u+x 2>/dev/null | wc -l)"',
      `if [ -e '/host${seedKubelet}' ]; then echo seed-kubelet=visible; else echo seed-kubelet=absent; fi`,
    ].join('\n');
    const out = await inPod('plain', script);
    expect(out).not.toMatch(/^(written|created)=/m);
    // The search found the machine's executables: a test that looked at nothing could not fail.
    expect(Number(parseResults(out).executables)).toBeGreaterThan(20);
    expect(parseResults(out)['seed-kubelet']).toBe('absent');
  }, 60_000);

  it("gives a privileged pod no way to the host's disks, processes, files or kernel, nor other machines", async () => {
    const rootDevice = rootFilesystemDevice();
    const marker = `boundary-marker-${randomBytes(4).toString('hex')}`;
    // `; :` keeps the shell from exec'ing sleep: the shell's command line carries the marker.
    const hostProcess = spawn('sh', ['-c', 'sleep 600; :', marker], { stdio: 'ignore' });
    try {
      await waitFor(() => readFileSync(`/proc/${hostProcess.pid}/cmdline`, 'utf8').includes(marker), {
        timeoutMs: 5_000,
        message: 'the marked process on the host',
      });
      const script = [
        `dev='${rootDevice}'`,
        'if [ -b "$dev" ]; then echo root-device=present; else echo root-device=absent; fi',
        'mkdir -p /mnt/boundary',
        'if mount "$dev" /mnt/boundary 2>/dev/null; then echo mount=done; umount /mnt/boundary; else echo mount=refused; fi',
        'if head -c 512 "$dev" >/dev/null 2>&1; then echo read=done; else echo read=refused; fi',
        // The host's PID namespace is the machine's: its kubelet, not the host's processes.
        `if grep -qs '[${marker[0]}]${marker.slice(1)}' /proc/[0-9]*/cmdline; then echo host-process=seen; else echo host-process=unseen; fi`,
        'if grep -qs kubelet /proc/[0-9]*/cmdline; then echo machine-kubelet=seen; else echo machine-kubelet=unseen; fi',
        `if cat '/host${env.cp.kubeconfigPath}' >/dev/null 2>&1; then echo garden-kubeconfig=read; else echo garden-kubeconfig=refused; fi`,
        'echo "containerd-sockets=$(find /host -path /host/proc -prune -o -path /host/sys -prune -o -name containerd.sock -print 2>/dev/null | sort | tr "\\n" " ")"',
        "printf 'not a module' > /tmp/boundary.ko",
        'echo "insmod=$(insmod /tmp/boundary.ko 2>&1 | tr "\\n" " ")"',
      ].join('\n');
      const results = parseResults(await inPod('privileged', script));
      expect(results).toMatchObject({
        mount: 'refused',
        read: 'refused',
        'host-process': 'unseen',
        'machine-kubelet': 'seen',
        'garden-kubeconfig': 'refused',
      });
      // Its own machine's containerd only.
      expect(results['containerd-sockets']!.trim()).toBe('/host/run/containerd/containerd.sock');
      // Not "invalid module format": the kernel refused before it looked at the file (this kernel, without module
      // support, refuses everyone).
      expect(results.insmod).toMatch(
        existsSync('/proc/modules') ? /Operation not permitted/ : /Operation not permitted|not support/,
      );
    } finally {
      hostProcess.kill();
    }
  }, 90_000);

  it("holds a privileged pod to its own addresses and MAC on its machine's bridge: it sends as no other pod", async () => {
    await runPod('spoof-victim', { nodeName: 'machine-w-0', containers: [sleeper('victim')] });
    await runPod('spoofer', {
      nodeName: 'machine-w-0',
      containers: [{ ...sleeper('spoofer'), securityContext: { privileged: true } }],
    });
    await runPod('spoof-target', { nodeName: 'machine-w-1', containers: [sleeper('target')] });
    const podIP = async (name: string) =>
      (await kubectl(['get', 'pod', name, '-o', 'jsonpath={.status.podIP}'])).trim();
    const [victim, spoofer, target] = [
      await podIP('spoof-victim'),
      await podIP('spoofer'),
      await podIP('spoof-target'),
    ];
    // Echo requests to the target counted where they arrive: on the target's machine, before anything else.
    const counted = await arrivalCounter('machine-w-1', 'forward', target, [victim, spoofer]);
    const ping = (from: string) => `ping -c 3 -w 4 -I ${from} ${target} >/dev/null 2>&1; echo done`;
    try {
      // Its own echo requests arrive: the path is there.
      await kubectl(['exec', 'spoofer', '--', 'sh', '-c', ping(spoofer)]);
      expect(await counted(spoofer)).toBeGreaterThan(0);
      // With the victim's address on its own interface, as the victim: none arrives.
      await holdAddress('spoofer', victim);
      await kubectl(['exec', 'spoofer', '--', 'sh', '-c', ping(victim)]);
      expect(await counted(victim)).toBe(0);
      // With another MAC address: not even its own.
      const before = await counted(spoofer);
      await kubectl([
        'exec',
        'spoofer',
        '--',
        'sh',
        '-c',
        `ip link set eth0 address 02:00:00:0b:0b:0b && ${ping(spoofer)}`,
      ]);
      expect(await counted(spoofer)).toBe(before);
      // The victim itself is not hindered.
      await kubectl(['exec', 'spoof-victim', '--', 'sh', '-c', ping(victim)]);
      expect(await counted(victim)).toBeGreaterThan(0);
    } finally {
      await counted.remove();
      await kubectl(['delete', 'pod', 'spoof-victim', 'spoofer', 'spoof-target', '--wait=false']);
    }
  }, 120_000);

  it("holds a machine to its own addresses on the seed's bridge: root in its network sends as no other", async () => {
    const seedPods = async (selector: string) =>
      (
        await client.list<KubernetesObject & { status?: { podIP?: string } }>(Refs.pod, {
          namespace: SEED_NAMESPACE,
          labelSelector: selector,
        })
      ).items;
    const machines = Object.fromEntries(
      (await seedPods('app=machine')).map((p) => [p.metadata?.name, p.status?.podIP]),
    );
    const apiServer = (await seedPods('role=apiserver'))[0]?.status?.podIP;
    const [own, target] = [machines['machine-w-0']!, machines['machine-w-1']!];
    expect(apiServer).toBeDefined();
    // Echo requests to the other machine counted where they arrive: the other machine itself.
    const counted = await arrivalCounter('machine-w-1', 'input', target, [own, apiServer!]);
    // Root in machine w-0's network namespace, as a privileged hostNetwork shoot pod is: from the seed's side, so
    // that the machine's own connections (which an address of kube-apiserver on its eth0 breaks) don't matter.
    const ping = (from: string) => `busybox ping -c 3 -w 4 -I ${from} ${target} >/dev/null 2>&1; echo done`;
    try {
      await inMachine('machine-w-0', ping(own));
      expect(await counted(own)).toBeGreaterThan(0);
      // As the shoot's kube-apiserver, towards the other machine's kubelet: none arrives.
      await inMachine(
        'machine-w-0',
        [
          `dad=$(cat ${ACCEPT_DAD})`,
          `echo 0 > ${ACCEPT_DAD}`,
          `ip addr add ${apiServer}/128 dev eth0`,
          `ip -6 addr show dev eth0 | grep -q '${apiServer}/128'`,
          ping(apiServer!),
          `ip addr del ${apiServer}/128 dev eth0`,
          `echo $dad > ${ACCEPT_DAD}`,
        ].join(' && '),
      );
      expect(await counted(apiServer!)).toBe(0);
    } finally {
      await inMachine('machine-w-0', `ip addr del ${apiServer}/128 dev eth0`).catch(() => '');
      await counted.remove();
    }
  }, 120_000);

  it("ends a pod's fork bomb at its own PID limit, the machine's at the seed's, and both keep going", async () => {
    // Background sleepers until fork fails: the count of those started ends up in /tmp/forked (`read`, a built-in,
    // needs no fork to tell it). More than the pod's limit, fewer than the machine's. The sleepers outlive the
    // forking (a machine has one CPU, so it may take a while) and don't hold the exec's output open; deleting the
    // pod ends them.
    const attempts = MACHINE_POD_PIDS_LIMIT + 1000;
    const bomb = [
      `( n=0; while [ $n -lt ${attempts} ]; do sleep 600 & n=$((n+1)); echo $n > /tmp/forked; done ) >/dev/null 2>&1`,
      'read n < /tmp/forked; echo "forked=$n"',
    ].join('\n');
    await runPod('forker', { containers: [sleeper('forker')] });
    const node = (await kubectl(['get', 'pod', 'forker', '-o', 'jsonpath={.spec.nodeName}'])).trim();
    const forked = Number(parseResults(await kubectl(['exec', 'forker', '--', 'sh', '-c', bomb], 90_000)).forked);
    expect(forked).toBeGreaterThan(MACHINE_POD_PIDS_LIMIT / 2);
    expect(forked).toBeLessThan(MACHINE_POD_PIDS_LIMIT);
    // Its machine starts another pod meanwhile: its kubelet and containerd still fork.
    await runPod('after-fork', { nodeName: node, containers: [sleeper('after')] });
    await kubectl(['delete', 'pod', 'forker', 'after-fork', '--wait=false']);

    // The machine pods, with all their shoot runs, have the seed's limit in their cgroups.
    for (const machine of await machinePods()) {
      const limits = podCgroupFiles('pids', machine.uid, 'pids.max').map((f) => readFileSync(f, 'utf8').trim());
      expect(limits, machine.name).toEqual([String(SEED_POD_PIDS_LIMIT)]);
    }
  }, 180_000);

  it("evicts a pod that writes past its ephemeral-storage limit, and reports each Node's file system", async () => {
    // The kubelet measures what pods write (its Summary API, which its eviction manager reads): a pod over its limit
    // is evicted, not left to fill the disk every machine of the host shares.
    const nodes = await shootNodes();
    for (const { name } of nodes) {
      const summary = JSON.parse(await kubectl(['get', '--raw', `/api/v1/nodes/${name}/proxy/stats/summary`])) as {
        node: { fs?: { capacityBytes?: number; availableBytes?: number } };
      };
      expect(summary.node.fs?.capacityBytes, name).toBeGreaterThan(0);
      expect(summary.node.fs?.availableBytes, name).toBeGreaterThan(0);
    }
    // Not waited for Ready: it may be evicted before.
    const manifest = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'disk-filler', namespace: 'default' },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'filler',
            image: TEST_IMAGE,
            command: ['sh', '-c', 'dd if=/dev/urandom of=/filler bs=1M count=10 && exec sleep 3600'],
            resources: { limits: { 'ephemeral-storage': '5Mi' } },
          },
        ],
      },
    };
    await kubectl(['apply', '-f', testFile('disk-filler.json', JSON.stringify(manifest))]);
    await waitFor(
      async () => {
        const pod = JSON.parse(await kubectl(['get', 'pod', 'disk-filler', '-o', 'json'])) as {
          status: { phase?: string; reason?: string };
        };
        return pod.status.phase === 'Failed' && pod.status.reason === 'Evicted';
      },
      { timeoutMs: 90_000, intervalMs: 1_000, message: 'pod disk-filler evicted' },
    );
    await kubectl(['delete', 'pod', 'disk-filler', '--wait=false']);
  }, 150_000);

  it("gives a machine no answer from another shoot's API server, etcd and kubelet, nor from the seed's API server", async () => {
    await client.apply(
      Refs.cloudProfile,
      {
        ...localCloudProfile(),
        spec: {
          ...localCloudProfile().spec,
          machineTypes: [...localCloudProfile().spec.machineTypes!, HUGE_MACHINE_TYPE],
        },
      } as KubernetesObject,
      { fieldManager: 'gardener-ipv6-test', force: true },
    );
    const started = Date.now();
    await client.create(Refs.shoot, {
      apiVersion: 'core.gardener.cloud/v1beta1',
      kind: 'Shoot',
      metadata: { name: OTHER_SHOOT, namespace: NAMESPACE },
      spec: {
        seedName: 'ipv6',
        cloudProfile: { name: 'local' },
        region: 'local',
        provider: {
          type: 'local',
          workers: [
            { name: 'w', machine: { type: 'local' }, minimum: 1, maximum: 1 },
            // More than the seed has, even overcommitted: its machine stays Pending (the next test).
            { name: 'huge', machine: { type: HUGE_MACHINE_TYPE.name }, minimum: 1, maximum: 1 },
          ],
        },
        networking: { type: 'calico', ipFamilies: ['IPv6'], nodes: 'fd00:10:2:100::/64' },
      },
    } as KubernetesObject);
    // Its control plane and its machine running (what answers), not a finished shoot.
    const ready = async (namespace: string, selector: string) => {
      const pods = await client.list<KubernetesObject & { status?: { podIP?: string; conditions?: Condition[] } }>(
        Refs.pod,
        { namespace, labelSelector: selector },
      );
      const pod = pods.items.find((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
      return pod?.status?.podIP;
    };
    const other = await waitFor(
      async () => {
        const [apiServer, etcd, machine] = [
          await ready(OTHER_SEED_NAMESPACE, 'role=apiserver'),
          await ready(OTHER_SEED_NAMESPACE, 'app=etcd-statefulset'),
          await ready(OTHER_SEED_NAMESPACE, 'app=machine,worker.gardener.cloud/pool=w'),
        ];
        return apiServer && etcd && machine ? { apiServer, etcd, machine } : undefined;
      },
      { timeoutMs: 240_000, intervalMs: 1_000, message: `the control plane and machine of shoot ${OTHER_SHOOT}` },
    );
    process.stderr.write(`[e2e kubelet] second shoot's control plane and machine after ${Date.now() - started} ms\n`);
    const ownAPIServer = (await ready(SEED_NAMESPACE, 'role=apiserver'))!;
    const seedAPIServer = new URL(env.cp.server);
    const targets = {
      apiServer: `${other.apiServer} ${API_SERVER_PORT}`,
      etcd: `${other.etcd} ${ETCD_PORT}`,
      kubelet: `${other.machine} ${KUBELET_PORT}`,
      seed: `${seedAPIServer.hostname.replace(/^\[|\]$/g, '')} ${seedAPIServer.port}`,
    };
    const kubectlOf = { bin: env.kubectlBin, kubeconfig: env.cp.kubeconfigPath };
    // What answers, and to whom: the other shoot's own clients, as its policies allow them.
    expect(
      await seedPodScript(client, kubectlOf, {
        namespace: OTHER_SEED_NAMESPACE,
        name: 'isolation-own-clients',
        labels: { [TO_KUBE_APISERVER_LABEL]: 'allowed', [TO_ETCD_LABEL]: 'allowed' },
        script: tcpConnectScript([targets.apiServer, targets.etcd], 'connected'),
      }),
    ).toBe(`${targets.apiServer} connected\n${targets.etcd} connected\n`);
    expect(
      await nodeInMachine(OTHER_SEED_NAMESPACE, 'machine-w-0', tcpConnectScript([targets.kubelet], 'connected')),
    ).toBe(`${targets.kubelet} connected\n`);
    // The seed's API server, from a pod of the seed that no policy holds.
    expect(
      await seedPodScript(client, kubectlOf, {
        namespace: 'garden',
        name: 'isolation-seed-client',
        script: tcpConnectScript([targets.seed], 'connected'),
      }),
    ).toBe(`${targets.seed} connected\n`);

    // Root in this shoot's machine (a privileged hostNetwork pod is): its own API server answers, nothing else.
    const inOwnMachine = (script: string) => nodeInMachine(SEED_NAMESPACE, 'machine-w-1', script);
    expect(await inOwnMachine(tcpConnectScript([`${ownAPIServer} ${API_SERVER_PORT}`], 'connected'))).toBe(
      `${ownAPIServer} ${API_SERVER_PORT} connected\n`,
    );
    const refused = (await inOwnMachine(tcpConnectScript(Object.values(targets), 'refused', 5_000)))
      .trim()
      .split('\n')
      .sort();
    expect(refused).toHaveLength(4);
    for (const line of refused) expect(line).toMatch(/ refused /);
  }, 360_000);

  it("sizes each machine by its machine type, and keeps one the seed can't fit Pending, saying why", async () => {
    // The `local` type's 1 CPU and 8Gi, in force on the machine pods' cgroups on the host.
    for (const machine of await machinePods()) {
      const [memory] = podCgroupFiles('memory', machine.uid, 'memory.limit_in_bytes');
      const [quota] = podCgroupFiles('cpu', machine.uid, 'cpu.cfs_quota_us');
      const [period] = podCgroupFiles('cpu', machine.uid, 'cpu.cfs_period_us');
      expect(Number(readFileSync(memory!, 'utf8')), machine.name).toBe(8 * 2 ** 30);
      expect(Number(readFileSync(quota!, 'utf8')) / Number(readFileSync(period!, 'utf8')), machine.name).toBe(1);
    }
    // The other shoot's huge machine: Pending, and its Worker (so its Shoot) says why.
    const description = await waitFor(
      async () => {
        const worker = await client.get<KubernetesObject & { status?: { lastOperation?: { description?: string } } }>(
          Refs.worker,
          OTHER_SHOOT,
          OTHER_SEED_NAMESPACE,
        );
        const text = worker?.status?.lastOperation?.description ?? '';
        return text.includes('machine machine-huge-0:') ? text : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 1_000, message: 'the Worker to name the machine the seed cannot fit' },
    );
    process.stderr.write(`[e2e kubelet] ${description}\n`);
    expect(description).toMatch(/machine machine-huge-0: the seed can't schedule its pod: .*Insufficient cpu/);
    const pending = await client.get<KubernetesObject & { status?: { phase?: string } }>(
      Refs.pod,
      'machine-huge-0',
      OTHER_SEED_NAMESPACE,
    );
    expect(pending?.status?.phase).toBe('Pending');
    // The seed goes on: this shoot still starts pods.
    await runPod('after-huge', { containers: [sleeper('after')] });
    await kubectl(['delete', 'pod', 'after-huge', '--wait=false']);
  }, 120_000);
});

const ACCEPT_DAD = '/proc/sys/net/ipv6/conf/eth0/accept_dad';

/**
 * Puts another's address on a privileged pod's eth0, usable at once: without duplicate address detection, which the
 * other's answer would fail (busybox's `ip` has no `nodad`).
 */
async function holdAddress(pod: string, address: string): Promise<void> {
  await kubectl(['exec', pod, '--', 'sh', '-c', `echo 0 > ${ACCEPT_DAD} && ip addr add ${address}/128 dev eth0`]);
  expect(await kubectl(['exec', pod, '--', 'ip', '-6', 'addr', 'show', 'dev', 'eth0'])).toContain(`${address}/128`);
}

/** Runs a script in a machine pod's container (the machine's namespaces) from the seed's side. */
function inMachine(machinePod: string, script: string): Promise<string> {
  return run(
    env.kubectlBin,
    ['--kubeconfig', env.cp.kubeconfigPath, 'exec', '-n', SEED_NAMESPACE, machinePod, '--', 'sh', '-c', script],
    40_000,
  ).then((r) => {
    if (r.code !== 0) throw new Error(`${machinePod}: ${script}: ${r.stderr.trim()}`);
    return r.stdout;
  });
}

/** Runs a node script in a machine pod's container (the machine's namespaces, the image's node); its output. */
async function nodeInMachine(namespace: string, machinePod: string, script: string): Promise<string> {
  const r = await run(
    env.kubectlBin,
    ['--kubeconfig', env.cp.kubeconfigPath, 'exec', '-n', namespace, machinePod, '--', process.execPath, '-e', script],
    40_000,
  );
  if (r.code !== 0) throw new Error(`${namespace}/${machinePod}: ${r.stderr.trim()}`);
  return r.stdout;
}

/**
 * A counter of ICMPv6 echo requests to `target` per source, in the network namespace of a machine pod (`hook` forward:
 * to its shoot pods; input: to the machine itself), ahead of every other rule there.
 */
async function arrivalCounter(machinePod: string, hook: 'forward' | 'input', target: string, sources: string[]) {
  await inMachine(
    machinePod,
    [
      'nft add table inet spoof-probe',
      `nft add chain inet spoof-probe arrivals '{ type filter hook ${hook} priority -300; policy accept; }'`,
      ...sources.map(
        (source) =>
          `nft add rule inet spoof-probe arrivals ip6 saddr ${source} ip6 daddr ${target} icmpv6 type echo-request counter`,
      ),
    ].join(' && '),
  );
  const counted = async (source: string) => {
    const out = await inMachine(machinePod, 'nft list chain inet spoof-probe arrivals');
    return Number(new RegExp(`ip6 saddr ${source} .*counter packets (\\d+)`).exec(out)?.[1] ?? NaN);
  };
  return Object.assign(counted, {
    remove: () =>
      inMachine(machinePod, 'nft delete table inet spoof-probe').then(
        () => {},
        () => {},
      ),
  });
}

/** A container of the test image that sleeps. */
function sleeper(name: string) {
  return { name, image: TEST_IMAGE, command: ['sh', '-c', 'exec sleep 3600'] };
}

/** Creates pod `name` in the shoot's `default` namespace with `spec` and waits until it is Ready. */
async function runPod(name: string, spec: Record<string, unknown>): Promise<void> {
  const manifest = testFile(
    `${name}.json`,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default' },
      spec: { terminationGracePeriodSeconds: 1, ...spec },
    }),
  );
  await kubectl(['apply', '-f', manifest]);
  await kubectl(['wait', '--for=condition=Ready', `pod/${name}`, '--timeout=60s']);
}

/** One pod on a machine: `plain` (root, unprivileged) and `privileged`, both with hostPath `/` and `/proc`. */
function startBoundaryPod(): Promise<void> {
  const container = (name: string, privileged: boolean) => ({
    ...sleeper(name),
    securityContext: { privileged },
    volumeMounts: [
      { name: 'root', mountPath: '/host' },
      { name: 'proc', mountPath: '/hostproc' },
    ],
  });
  return runPod('boundary', {
    hostPID: true,
    containers: [container('plain', false), container('privileged', true)],
    volumes: [
      { name: 'root', hostPath: { path: '/' } },
      { name: 'proc', hostPath: { path: '/proc' } },
    ],
  });
}

/** Runs a script in a container of the boundary pod; its output. */
function inPod(container: string, script: string): Promise<string> {
  return kubectl(['exec', 'boundary', '-c', container, '--', 'sh', '-c', script]);
}

/** `key=value` lines. */
function parseResults(out: string): Record<string, string> {
  return Object.fromEntries(
    out
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}

/** A kernel setting of the host (not of a network namespace). */
function hostSetting(key: string): string {
  return readFileSync(`/proc/sys/${key}`, 'utf8').trim();
}

/** The file `name` of the pod's cgroup in one of the host's hierarchies (the kubelets' `pod<uid>` folders). */
function podCgroupFiles(hierarchy: string, uid: string, name: string): string[] {
  const found: string[] = [];
  const walk = (dir: string, depth: number) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const path = join(dir, entry.name);
      if (entry.name === `pod${uid}`) found.push(join(path, name));
      else if (depth < 10) walk(path, depth + 1);
    }
  };
  walk(join('/sys/fs/cgroup', hierarchy), 0);
  return found;
}

/** The block device this host's root filesystem is on. */
function rootFilesystemDevice(): string {
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const fields = line.split(' ');
    const sep = fields.indexOf('-');
    if (fields[4] === '/' && sep > 0) return fields[sep + 2]!;
  }
  throw new Error('no root filesystem in /proc/self/mountinfo');
}
