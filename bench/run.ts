/**
 * `npm run bench`: every benchmark of the project, each reported with its baseline measured in the same run.
 * `npm run bench -- api`, `-- reconcile [--sizes 200,1000]` or `-- webhook [--rounds 2] [--duration 10]
 * [--rss-seconds 60] [--rss-warmup-seconds 90] [--cpu-prof DIR]` runs one of them (the webhook benchmark needs
 * h2load: Debian's `nghttp2-client`).
 */
import { runApiBench } from './api.js';
import { runReconcileBench } from './reconcile.js';
import { formatWebhookBench, runWebhookBench } from './webhook.js';

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const args = process.argv.slice(2);
const valueOf = (flag: string): string | undefined => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
const flagValues = new Set(
  ['--sizes', '--rounds', '--duration', '--rss-seconds', '--rss-warmup-seconds', '--cpu-prof'].map(valueOf),
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

if (!only || only === 'webhook') {
  console.log('\n# admission webhook under load (h2load over HTTPS on [::1]; baseline: bare Node HTTPS server)');
  const cpuProfileDir = valueOf('--cpu-prof');
  const result = await runWebhookBench({
    durationSeconds: numberOf('--duration'),
    rounds: numberOf('--rounds'),
    rssSeconds: numberOf('--rss-seconds'),
    rssWarmupSeconds: numberOf('--rss-warmup-seconds'),
    ...(cpuProfileDir ? { cpuProfileDir } : {}),
  });
  console.log(formatWebhookBench(result));
}
