/**
 * `npm run bench`: every benchmark of the project, each reported with its baseline measured in the same run.
 * `npm run bench -- api`, `-- cli`, `-- reconcile [--sizes 200,1000]`, `-- garden [--shoots 2,10]`, `-- machines` (a shoot on a seed with Nodes),
 * `-- density [--max-shoots N]` (shoots with a machine each on one seed until it is full; only when named),
 * `-- network-policies`, `-- webhook-decode`, `-- webhook-attack` or `-- webhook [--rounds 2] [--duration 10] [--slice 2] [--rss-seconds 60] [--rss-warmup-seconds 90]
 * [--cpu-prof DIR] [--loads 200,1000,max] [--targets valid,valid+seed,invalid,invalid+seed]` or `-- webhook-writes
 * [--slice 5] [--slices 3]` runs one of them (the webhook benchmarks need h2load: Debian's `nghttp2-client`;
 * `--rss-seconds 0` leaves out the RSS phase).
 */
import { runApiBench } from './api.js';
import { CLI_TARGET_MS, runCliBench } from './cli.js';
import { runReconcileBench } from './reconcile.js';
import { formatGardenBench, runGardenBench } from './garden.js';
import { runMachinesBench } from './machines.js';
import { runDensityBench } from './density.js';
import { runNetworkPolicyBench } from './network-policies.js';
import { runNetworkPolicyFootprintBench } from './network-policy-footprint.js';
import { formatWebhookBench, runWebhookBench, type Target } from './webhook.js';
import { runWebhookAttackBench } from './webhook-attack.js';
import { formatWebhookWritesBench, runWebhookWritesBench } from './webhook-writes.js';
import { runWebhookDecodeBench } from './webhook-decode.js';

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const args = process.argv.slice(2);
const valueOf = (flag: string): string | undefined => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
const flagValues = new Set(
  [
    '--sizes',
    '--shoots',
    '--rounds',
    '--duration',
    '--slice',
    '--rss-seconds',
    '--rss-warmup-seconds',
    '--cpu-prof',
    '--max-shoots',
    '--slices',
  ].map(valueOf),
);
const only = args.find((a) => !a.startsWith('--') && !flagValues.has(a));
const sizes = valueOf('--sizes')?.split(',').map(Number) ?? [200, 1000];
const numberOf = (flag: string): number | undefined =>
  valueOf(flag) === undefined ? undefined : Number(valueOf(flag));

if (!only || only === 'api') {
  console.log('# validate+default throughput (one core, mix of IPv4, IPv6 and dual-stack objects)');
  for (const r of await runApiBench()) {
    console.log(
      `${r.name}: ${fmt(r.objectsPerSecond)} objects/s admitted; baseline schema parse ${fmt(r.baselinePerSecond)} ` +
        `objects/s; admit costs ${(r.baselinePerSecond / r.objectsPerSecond).toFixed(2)}x the baseline`,
    );
  }
}

if (!only || only === 'webhook-decode') {
  console.log("\n# the webhook's body decoding: pre-scan + JSON.parse against JSON.parse alone (the baseline)");
  for (const r of await runWebhookDecodeBench()) {
    console.log(
      `${r.name} (${fmt(r.bytes)} bytes): ${r.decodeMicros.toFixed(1)} µs; baseline JSON.parse ` +
        `${r.baselineMicros.toFixed(1)} µs; ratio ${(r.decodeMicros / r.baselineMicros).toFixed(2)}x`,
    );
  }
}

if (!only || only === 'webhook-attack') {
  console.log(`\n# valid reviews while 16 concurrent worst-case bodies (3 rounds) arrive; baseline: no attack`);
  for (const r of await runWebhookAttackBench()) {
    console.log(
      `${r.attack}: ${r.reviews} valid reviews, p50 ${r.p50Ms.toFixed(1)} ms, p99 ${r.p99Ms.toFixed(1)} ms; ` +
        `webhook peak RSS ${r.peakRssMiB.toFixed(0)} MiB`,
    );
  }
}

if (!only || only === 'cli') {
  console.log('\n# command line start-up (compiled, as installed; whole processes, medians of runs taken in turn)');
  for (const r of await runCliBench()) {
    console.log(
      `${r.name}: ${r.medianMs.toFixed(0)} ms (target < ${CLI_TARGET_MS} ms${r.medianMs < CLI_TARGET_MS ? ', met' : ', MISSED'}); ` +
        `baseline node -e 0: ${r.baselineMs.toFixed(0)} ms; ratio ${r.ratio.toFixed(2)}x`,
    );
  }
}

if (!only || only === 'reconcile') {
  console.log('\n# reconcile throughput (real kube-apiserver + etcd on [::1], IPv6 shoots, gardenlet controllers)');
  for (const r of await runReconcileBench(sizes)) {
    console.log(
      `${r.shoots} shoots: all Succeeded after ${r.reconcileSeconds.toFixed(1)}s with ${fmt(r.writes)} writes; ` +
        `the same writes replayed by a plain client took ${r.replaySeconds.toFixed(1)}s ` +
        `(ratio ${(r.reconcileSeconds / r.replaySeconds).toFixed(2)}x); as many ConfigMap applies took ` +
        `${r.configMapSeconds.toFixed(1)}s (ratio ${(r.reconcileSeconds / r.configMapSeconds).toFixed(2)}x)`,
    );
  }
}

if (!only || only === 'garden') {
  console.log(
    "\n# the garden's cost with 1 and 2 seeds (each a cluster with its gardenlet), shoots objects only; baseline: 1 seed, fewest shoots",
  );
  const shootCounts = valueOf('--shoots')?.split(',').map(Number) ?? [2, 10];
  console.log(formatGardenBench(await runGardenBench(shootCounts)));
}

if (!only || only === 'network-policies') {
  console.log(
    '\n# a NetworkPolicy change in force on a machine (API write -> nftables committed); baseline: an informer sees it',
  );
  const r = await runNetworkPolicyBench();
  console.log(
    `${r.changes} changes: in force after p50 ${r.enforcedP50Ms.toFixed(1)} ms, p99 ${r.enforcedP99Ms.toFixed(1)} ms; ` +
      `seen by an informer after p50 ${r.watchedP50Ms.toFixed(1)} ms, p99 ${r.watchedP99Ms.toFixed(1)} ms ` +
      `(ratio ${(r.enforcedP50Ms / r.watchedP50Ms).toFixed(2)}x at p50); CPU ${r.cpuMsPerChange.toFixed(1)} ms per ` +
      `change with the enforcer (nft included), ${r.baselineCpuMsPerChange.toFixed(1)} ms without ` +
      `(ratio ${(r.cpuMsPerChange / Math.max(0.1, r.baselineCpuMsPerChange)).toFixed(2)}x)`,
  );
  console.log(
    "\n# the enforcer's cost on a Node next to kube-proxy's on the same Node (both as the machines run them, 50 changes each)",
  );
  const f = await runNetworkPolicyFootprintBench();
  const line = (name: string, own: string, p: typeof f.enforcer) =>
    `${name}: ${p.cpuMsPerOwnChange.toFixed(1)} ms CPU per ${own} change, ${p.cpuMsPerOtherChange.toFixed(1)} ms per ` +
    `change of the other kind; in force after p50 ${p.inForceP50Ms.toFixed(1)} ms, p99 ${p.inForceP99Ms.toFixed(1)} ms; ` +
    `RSS ${p.rssMiB.toFixed(1)} MiB (peak ${p.peakRssMiB.toFixed(1)} MiB)`;
  console.log(line('enforcer', 'NetworkPolicy', f.enforcer));
  console.log(line('kube-proxy (baseline)', 'Service', f.kubeProxy));
  console.log(
    `ratios enforcer/kube-proxy: CPU per own change ${(f.enforcer.cpuMsPerOwnChange / Math.max(0.1, f.kubeProxy.cpuMsPerOwnChange)).toFixed(2)}x, ` +
      `RSS ${(f.enforcer.rssMiB / f.kubeProxy.rssMiB).toFixed(2)}x, peak RSS ${(f.enforcer.peakRssMiB / f.kubeProxy.peakRssMiB).toFixed(2)}x`,
  );
}

if (!only || only === 'machines') {
  console.log(
    '\n# IPv6 shoot with two machine pods on a seed with two Nodes: create -> both Nodes Ready -> first pod-to-pod answer',
  );
  const r = await runMachinesBench();
  const f = (n: number) => n.toFixed(1);
  console.log(
    `gardenlet: Nodes Ready after ${f(r.gardenlet.readySeconds)}s, pod-to-pod answer after ${f(r.gardenlet.podSeconds)}s, ` +
      `${Math.round(r.gardenlet.rssMiB)} MiB RSS for the shoot's pods (control plane and machines); the same workloads as processes: ` +
      `${f(r.direct.readySeconds)}s, ${f(r.direct.podSeconds)}s, ${Math.round(r.direct.rssMiB)} MiB; ` +
      `ratios ${(r.gardenlet.podSeconds / r.direct.podSeconds).toFixed(2)}x time, ${(r.gardenlet.rssMiB / r.direct.rssMiB).toFixed(2)}x RSS ` +
      '(target: <= 30 s and <= 1.5 GiB)',
  );
  console.log(
    `hibernation: hibernated after ${f(r.gardenlet.hibernateSeconds)}s, woken up with both Nodes Ready after ` +
      `${f(r.gardenlet.wakeSeconds)}s; baseline the fresh create's Nodes Ready ${f(r.gardenlet.readySeconds)}s; ` +
      `ratio ${(r.gardenlet.wakeSeconds / r.gardenlet.readySeconds).toFixed(2)}x`,
  );
  console.log(
    `containment: machine pods in user namespaces of their own ${f(r.gardenlet.podSeconds)}s to the pod-to-pod answer, ` +
      `${Math.round(r.gardenlet.rssMiB)} MiB; in the host's user namespace (baseline) ${f(r.uncontained.podSeconds)}s, ` +
      `${Math.round(r.uncontained.rssMiB)} MiB; ratios ${(r.gardenlet.podSeconds / r.uncontained.podSeconds).toFixed(2)}x time, ` +
      `${(r.gardenlet.rssMiB / r.uncontained.rssMiB).toFixed(2)}x RSS`,
  );
}

if (only === 'density') {
  // Not part of the full run: it fills the host for up to an hour.
  console.log(
    '\n# IPv6 shoots with one machine each on one seed with two Nodes, created one at a time until one has no Ready ' +
      "Node within 5 minutes or the host's memory is 90 % used",
  );
  const r = await runDensityBench({
    ...(numberOf('--max-shoots') !== undefined ? { maxShoots: numberOf('--max-shoots')! } : {}),
    log: (line) => console.log(`  ${line}`),
  });
  const first = r.readySeconds[0] ?? Number.NaN;
  const last = r.readySeconds.at(-1) ?? Number.NaN;
  console.log(
    `${r.fit} shoots fit on this ${(r.memTotalMiB / 1024).toFixed(0)} GiB host (stopped: ${r.stoppedBecause}); ` +
      `${Math.round(r.memoryPerShootMiB)} MiB of host memory per shoot; create -> Node Ready of the last shoot ` +
      `${last.toFixed(1)} s, baseline the first's ${first.toFixed(1)} s; ratio ${(last / first).toFixed(2)}x (goal: at least 15 shoots)`,
  );
  console.log(
    `at rest with ${r.fit} shoots (${r.steadyCPU.total.toFixed(2)} cores in all, ` +
      `${(r.steadyCPU.total / Math.max(1, r.fit)).toFixed(3)} per shoot), by command:`,
  );
  for (const p of r.steadyCPU.byComm.slice(0, 15)) {
    console.log(`  ${p.comm}: ${p.cores.toFixed(3)} cores (${p.processes} processes)`);
  }
  console.log(
    `the seed's CPU requests at the end: ${r.seedCPURequests
      .map((n) => `${n.node} ${n.requested.toFixed(2)} of ${n.allocatable.toFixed(2)} cores allocatable`)
      .join('; ')}`,
  );
  const restarts = Object.entries(r.restarts);
  console.log(`restarts of the seed's containers: ${restarts.length === 0 ? 'none' : ''}`);
  for (const [container, { count, last }] of restarts) console.log(`  ${container}: ${count}; last: ${last}`);
}

if (!only || only === 'webhook') {
  console.log('\n# admission webhook under load (h2load over HTTPS on [::1]; baseline: bare Node HTTPS server)');
  const cpuProfileDir = valueOf('--cpu-prof');
  const loads = valueOf('--loads');
  const targets = valueOf('--targets');
  const result = await runWebhookBench({
    durationSeconds: numberOf('--duration'),
    sliceSeconds: numberOf('--slice'),
    rounds: numberOf('--rounds'),
    rssSeconds: numberOf('--rss-seconds'),
    rssWarmupSeconds: numberOf('--rss-warmup-seconds'),
    ...(cpuProfileDir ? { cpuProfileDir } : {}),
    ...(loads ? { loads: loads.split(',').map((l) => (l === 'max' ? undefined : Number(l))) } : {}),
    ...(targets ? { targets: targets.split(',') as Exclude<Target, 'baseline'>[] } : {}),
  });
  console.log(formatWebhookBench(result));
}

if (!only || only === 'webhook-writes') {
  console.log(
    '\n# Shoot writes through kube-apiserver: the admission webhook registered, against the bare server registered',
  );
  const result = await runWebhookWritesBench({ sliceSeconds: numberOf('--slice'), slices: numberOf('--slices') });
  console.log(formatWebhookWritesBench(result));
}
