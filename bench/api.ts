/**
 * validate+default throughput of the admission pipeline, against plain schema parsing of the same objects (the
 * baseline), both measured here on one core.
 */
import { Bench } from 'tinybench';
import { admit } from '../src/apis/admission.js';
import { extensionAdmission } from '../src/app/extension-admission.js';
import { SeedSchema } from '../src/apis/core/v1beta1/seed.js';
import { ShootSchema } from '../src/apis/core/v1beta1/shoot.js';
import { featureGates } from '../src/featuregate/featuregate.js';
import { seedMix, shootMix } from './objects.js';

const BATCH = 300;
const gates = featureGates({ IPv6SingleStack: true, DualStack: true });
// As the webhook admits: with the extensions' admission.
const extensions = extensionAdmission();

export interface ApiBenchResult {
  name: string;
  objectsPerSecond: number;
  baselinePerSecond: number;
}

export async function runApiBench(): Promise<ApiBenchResult[]> {
  const shoots = shootMix(BATCH);
  const seeds = seedMix(BATCH);
  for (const object of [...shoots, ...seeds]) {
    const errors = admit({ object, gates, extensionAdmission: extensions }).errors;
    if (errors.length > 0) throw new Error(`benchmark object is invalid: ${JSON.stringify(errors)}`);
  }
  const bench = new Bench({ time: 1500, warmupTime: 300 });
  bench
    .add('shoot: schema parse (baseline)', () => shoots.forEach((o) => ShootSchema.parse(o)))
    .add('shoot: admit (decode+default+validate)', () =>
      shoots.forEach((object) => admit({ object, gates, extensionAdmission: extensions })),
    )
    .add('seed: schema parse (baseline)', () => seeds.forEach((o) => SeedSchema.parse(o)))
    .add('seed: admit (decode+default+validate)', () =>
      seeds.forEach((object) => admit({ object, gates, extensionAdmission: extensions })),
    );
  await bench.run();
  const perSecond = (name: string) => {
    const task = bench.tasks.find((t) => t.name === name);
    const result = task?.result as { throughput?: { mean: number } } | undefined;
    if (!result?.throughput) throw new Error(`no result for ${name}`);
    return result.throughput.mean * BATCH;
  };
  return ['shoot', 'seed'].map((kind) => ({
    name: kind,
    objectsPerSecond: perSecond(`${kind}: admit (decode+default+validate)`),
    baselinePerSecond: perSecond(`${kind}: schema parse (baseline)`),
  }));
}
