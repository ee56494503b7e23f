/**
 * `npm run bench`: every benchmark of the project, each reported with its baseline measured in the same run.
 */
import { runApiBench } from './api.js';

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

async function main(): Promise<void> {
  console.log('# validate+default throughput (one core, mix of IPv4, IPv6 and dual-stack objects)');
  for (const r of await runApiBench()) {
    console.log(
      `${r.name}: ${fmt(r.objectsPerSecond)} objects/s admitted; baseline schema parse ${fmt(r.baselinePerSecond)} ` +
        `objects/s; admit costs ${(r.baselinePerSecond / r.objectsPerSecond).toFixed(2)}x the baseline`,
    );
  }
}

await main();
