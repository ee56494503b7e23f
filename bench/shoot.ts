/**
 * Shoot control plane start: the time from creating an IPv6 Shoot to its kube-apiserver answering /readyz at its
 * load-balancer address, and the RSS of its processes (etcd, kube-apiserver, kube-controller-manager,
 * kube-scheduler), against the same binaries with the same flags started directly in the same run (a namespace on
 * the same bridge, the certificates, four processes, a /readyz poll): the difference is what the gardenlet's flow,
 * the webhook, the extensions and the load-balancer controller cost on top. Rounds alternate between the two.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalServices } from '../src/app/local-environment.js';
import type { ControlPlaneSpec } from '../src/gardenlet/shoot/components/controlplane/args.js';
import {
  LocalControlPlane,
  type ControlPlaneBinaries,
} from '../src/extensions/provider-local/controlplane/control-plane.js';
import { featureGates } from '../src/featuregate/featuregate.js';
import { Refs } from '../src/gardenlet/resources.js';
import { ensureBinaries } from '../src/localenv/binaries.js';
import { startControlPlane } from '../src/localenv/control-plane.js';
import { netnsUnsupportedReason } from '../src/localenv/netns.js';
import { createCA, createSigningKeyPair } from '../src/pki/certificates.js';
import { ResourceClient } from '../src/runtime/client.js';
import { silentLogger } from '../src/runtime/log.js';
import { BENCH_NAMESPACE, benchShoot, createBenchSeed, rssMiB, until } from './support.js';

const LB_NETWORKS = { IPv6: 'fd00:ff:be::/64', IPv4: '172.31.250.0/24' };
const SETTLE_MS = 10_000;

export interface ShootBenchResult {
  readonly rounds: number;
  /** Median seconds from create to /readyz 200, via the gardenlet. */
  readonly gardenletSeconds: number;
  /** Median seconds from nothing to /readyz 200, by hand. */
  readonly baselineSeconds: number;
  /** Median MiB of the four processes, 10 s after ready. */
  readonly gardenletRSSMiB: number;
  readonly baselineRSSMiB: number;
  readonly samples: { gardenlet: number[]; baseline: number[] };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runShootBench(rounds = 3): Promise<ShootBenchResult> {
  const reason = netnsUnsupportedReason();
  if (reason !== undefined) throw new Error(`the shoot benchmark runs control planes in namespaces, but ${reason}`);
  const binaries = (await ensureBinaries({
    names: ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'],
  })) as unknown as ControlPlaneBinaries;
  const cp = await startControlPlane({ startTimeoutMs: 120_000 });
  const services = await startLocalServices(
    cp,
    featureGates({ IPv6SingleStack: true, DualStack: true }),
    silentLogger(),
    {
      controlPlanes: true,
      machines: false,
      loadBalancerNetworks: LB_NETWORKS,
      tag: 'bench',
    },
  );
  const client = new ResourceClient(cp.kubeConfig());
  const samples = { gardenlet: [] as number[], baseline: [] as number[] };
  const rss = { gardenlet: [] as number[], baseline: [] as number[] };
  try {
    await createBenchSeed(client);

    for (let round = 0; round < rounds; round++) {
      // Through the gardenlet: create, then /readyz at the address the service got.
      const name = `b${round}`;
      const started = Date.now();
      await client.create(Refs.shoot, benchShoot(name, 1, 'fd00:10:1:100::/56'));
      const instance = await until(
        async () => {
          const i = services.provider!.controlPlane(`shoot--bench--${name}`);
          return i && (await i.get('/readyz', 1_000)).status === 200 ? i : undefined;
        },
        120_000,
        `shoot ${name}'s API server`,
      );
      samples.gardenlet.push((Date.now() - started) / 1000);
      await sleep(SETTLE_MS);
      rss.gardenlet.push(rssMiB(instance.states().map((s) => s.pid)));
      await client.delete(Refs.shoot, name, BENCH_NAMESPACE);
      await until(
        async () => ((await client.get(Refs.shoot, name, BENCH_NAMESPACE)) ? undefined : true),
        120_000,
        `shoot ${name} to be deleted`,
      );

      // By hand: the same binaries and flags, in a namespace on the same bridge.
      const byHand = await startByHand(round, binaries, services.loadBalancerNetwork!.bridge);
      samples.baseline.push(byHand.seconds);
      await sleep(SETTLE_MS);
      rss.baseline.push(rssMiB(byHand.instance.states().map((s) => s.pid)));
      await byHand.instance.stop();
      await rm(byHand.dir, { recursive: true, force: true });
    }
  } finally {
    client.close();
    await services.stop();
    await cp.stop();
  }
  return {
    rounds,
    gardenletSeconds: median(samples.gardenlet),
    baselineSeconds: median(samples.baseline),
    gardenletRSSMiB: median(rss.gardenlet),
    baselineRSSMiB: median(rss.baseline),
    samples,
  };
}

/**
 * The baseline: what a script does to run one control plane (a namespace on the bridge, certificates, the four
 * processes with the same flags, a /readyz poll), through the provider's process layer directly: no API objects,
 * no controllers, no webhook.
 */
async function startByHand(round: number, binaries: ControlPlaneBinaries, bridge: string) {
  const started = Date.now();
  const dir = await mkdtemp(join(tmpdir(), 'gardener-ipv6-bench-shoot-'));
  const spec: ControlPlaneSpec = {
    name: `byhand-${round}`,
    families: ['IPv6'],
    addresses: { IPv6: `fd00:ff:be::${(0xf000 + round).toString(16)}` },
    serviceCIDRs: ['fd00:10:4::/112'],
    podCIDRs: ['fd00:10:3::/56'],
    nodeCIDRMaskSizes: { IPv6: 64 },
    externalDomain: 'api.byhand.bench.external.local.gardener.cloud',
    internalDomain: 'api.byhand.bench.internal.local.gardener.cloud',
  };
  const [ca, serviceAccount] = await Promise.all([
    createCA('byhand', { notAfter: new Date(Date.now() + 86_400_000) }),
    createSigningKeyPair(),
  ]);
  const instance = new LocalControlPlane(spec, { ca, serviceAccount }, dir, binaries, {});
  await instance.start({ bridge, networks: { IPv6: { prefixLength: 64, gateway: 'fd00:ff:be::1' } } });
  await until(
    async () => ((await instance.get('/readyz', 1_000)).status === 200 ? true : undefined),
    120_000,
    'by hand',
  );
  return { instance, dir, seconds: (Date.now() - started) / 1000 };
}
