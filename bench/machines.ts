/**
 * An IPv6 shoot with two machines, end to end: create → both Nodes Ready → the first pod-to-pod answer across the
 * machines, and the total RSS of the shoot (its control plane and both machines with everything they run). Against
 * the same steps done directly with the same binaries in the same run: the provider's control plane and machines
 * started without any API object, controller or webhook, then the same Ready poll and the same pod check.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startLocalServices } from '../src/app/local-environment.js';
import type { ControlPlaneSpec } from '../src/gardenlet/shoot/components/controlplane/args.js';
import {
  LocalControlPlane,
  type ControlPlaneBinaries,
} from '../src/extensions/provider-local/controlplane/control-plane.js';
import { buildMachineImages, type BuiltImage } from '../src/extensions/provider-local/machine/images.js';
import { LocalWorkers } from '../src/extensions/provider-local/worker/workers.js';
import { featureGates } from '../src/featuregate/featuregate.js';
import { desiredOperatingSystemConfig } from '../src/gardenlet/shoot/components/operating-system-config.js';
import type { Shoot } from '../src/apis/core/v1beta1/shoot.js';
import { Refs } from '../src/gardenlet/resources.js';
import { ensureBinaries, NODE_BINARY_NAMES } from '../src/localenv/binaries.js';
import { startControlPlane } from '../src/localenv/control-plane.js';
import { projectRoot } from '../src/localenv/project.js';
import { createCA, createSigningKeyPair } from '../src/pki/certificates.js';
import { ResourceClient } from '../src/runtime/client.js';
import { silentLogger } from '../src/runtime/log.js';
import { BENCH_NAMESPACE, benchShoot, createBenchSeed, rssMiB, until } from './support.js';

const LB_NETWORKS = { IPv6: 'fd00:ff:bf::/64', IPv4: '172.31.249.0/24' };

export interface MachinesBenchResult {
  readonly gardenlet: { readySeconds: number; podSeconds: number; rssMiB: number };
  readonly direct: { readySeconds: number; podSeconds: number; rssMiB: number };
}

export async function runMachinesBench(): Promise<MachinesBenchResult> {
  const binaries = (await ensureBinaries({
    names: ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'],
  })) as unknown as ControlPlaneBinaries;
  const nodeBinaries = await ensureBinaries({ names: NODE_BINARY_NAMES });
  const binDir = dirname(nodeBinaries.kubelet);
  let images: Promise<BuiltImage[]> | undefined;
  const machineImages = () => (images ??= buildMachineImages(binDir, join(projectRoot(), '.cache', 'images')));
  await machineImages();

  const cp = await startControlPlane({ startTimeoutMs: 120_000 });
  const services = await startLocalServices(
    cp,
    featureGates({ IPv6SingleStack: true, DualStack: true }),
    silentLogger(),
    { controlPlanes: true, machines: true, loadBalancerNetworks: LB_NETWORKS, tag: 'mb', careSyncPeriodMs: 2_000 },
  );
  const client = new ResourceClient(cp.kubeConfig());
  try {
    await createBenchSeed(client);

    // Through the gardenlet.
    const started = Date.now();
    await client.create(Refs.shoot, benchShoot('mb', 2, 'fd00:10:1:100::/64'));
    const namespace = 'shoot--bench--mb';
    await until(
      async () => ((await services.provider!.workersNotReady(namespace)) === undefined ? true : undefined),
      300_000,
      'both Nodes Ready',
      200,
    );
    const readySeconds = (Date.now() - started) / 1000;
    await services.provider!.podCheck(namespace, 'IPv6', 120_000);
    const podSeconds = (Date.now() - started) / 1000;
    const instance = services.provider!.controlPlane(namespace)!;
    const machines = services.provider!.machines(namespace);
    const gardenlet = {
      readySeconds,
      podSeconds,
      rssMiB: rssMiB(
        instance.states().map((s) => s.pid),
        machines.reduce((sum, m) => sum + m.rssBytes(), 0),
      ),
    };
    await client.delete(Refs.shoot, 'mb', BENCH_NAMESPACE);
    await until(
      async () => ((await client.get(Refs.shoot, 'mb', BENCH_NAMESPACE)) ? undefined : true),
      180_000,
      'the shoot to be deleted',
      200,
    );

    // Directly: the same control plane and machines, no objects, no controllers.
    const direct = await runDirect(binaries, binDir, machineImages, services.loadBalancerNetwork!.bridge);
    return { gardenlet, direct };
  } finally {
    client.close();
    await services.stop();
    await cp.stop();
  }
}

async function runDirect(
  binaries: ControlPlaneBinaries,
  binDir: string,
  images: () => Promise<BuiltImage[]>,
  bridge: string,
): Promise<MachinesBenchResult['direct']> {
  const started = Date.now();
  const dir = await mkdtemp(join(tmpdir(), 'gardener-ipv6-bench-machines-'));
  const spec: ControlPlaneSpec = {
    name: 'direct',
    families: ['IPv6'],
    addresses: { IPv6: 'fd00:ff:bf::f000' },
    serviceCIDRs: ['fd00:10:4::/112'],
    podCIDRs: ['fd00:10:3::/56'],
    nodeCIDRMaskSizes: { IPv6: 64 },
    externalDomain: 'api.direct.bench.external.local.gardener.cloud',
    internalDomain: 'api.direct.bench.internal.local.gardener.cloud',
  };
  const [ca, serviceAccount] = await Promise.all([
    createCA('direct', { notAfter: new Date(Date.now() + 86_400_000) }),
    createSigningKeyPair(),
  ]);
  const controlPlane = new LocalControlPlane(spec, { ca, serviceAccount }, join(dir, 'cp'), binaries, {});
  const workers = new LocalWorkers(controlPlane, join(dir, 'machines'), { binDir, images });
  try {
    await controlPlane.start({ bridge, networks: { IPv6: { prefixLength: 64, gateway: 'fd00:ff:bf::1' } } });
    await until(
      async () => ((await controlPlane.get('/readyz', 1_000)).status === 200 ? true : undefined),
      120_000,
      'readyz',
      200,
    );
    const osc = desiredOperatingSystemConfig({
      metadata: { name: 'direct', namespace: BENCH_NAMESPACE },
      spec: { networking: { ipFamilies: ['IPv6'] } },
    } as unknown as Shoot);
    await workers.deploy({
      name: spec.name,
      families: ['IPv6'],
      nodeCIDRs: ['fd00:10:1:100::/64'],
      podCIDRs: spec.podCIDRs,
      serviceCIDRs: spec.serviceCIDRs,
      clusterDNS: ['fd00:10:4::a'],
      pools: [{ name: 'w', minimum: 2 }],
      operatingSystemConfig: { spec: { files: osc.spec.files ?? [] } },
      ca,
    });
    await until(async () => ((await workers.notReady()) === undefined ? true : undefined), 300_000, 'Nodes Ready', 200);
    const readySeconds = (Date.now() - started) / 1000;
    await workers.podCheck('IPv6', 120_000);
    const podSeconds = (Date.now() - started) / 1000;
    const rss = rssMiB(
      controlPlane.states().map((s) => s.pid),
      workers.machineList().reduce((sum, m) => sum + m.rssBytes(), 0),
    );
    return { readySeconds, podSeconds, rssMiB: rss };
  } finally {
    await workers.destroy();
    await controlPlane.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
