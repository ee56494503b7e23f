/**
 * What the webhook's pre-scan adds to decoding a review: JSON.parse of the body alone (the baseline, what the webhook
 * did before) against the webhook's decode path (scan each chunk, then parse), for a typical Shoot review and a large
 * one (100 worker pools), measured here in the same run.
 */
import { Bench } from 'tinybench';
import { decodeReviewBody } from '../src/admission/decode.js';
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_JSON_DEPTH, DEFAULT_MAX_JSON_VALUES } from '../src/admission/server.js';
import { benchShoot } from './objects.js';

const LIMITS = {
  maxBytes: DEFAULT_MAX_BODY_BYTES,
  maxDepth: DEFAULT_MAX_JSON_DEPTH,
  maxValues: DEFAULT_MAX_JSON_VALUES,
};
/** TLS hands the body over in records of up to 16 KiB. */
const CHUNK = 16 * 1024;

export interface WebhookDecodeResult {
  readonly name: string;
  readonly bytes: number;
  readonly baselineMicros: number;
  readonly decodeMicros: number;
}

function reviewBody(workers: number): Buffer {
  const shoot = benchShoot(1, 'ipv6') as { spec: { provider: { workers: unknown[] } } };
  const worker = shoot.spec.provider.workers[0];
  shoot.spec.provider.workers = Array.from({ length: workers }, (_, i) => ({ ...(worker as object), name: `w${i}` }));
  return Buffer.from(
    JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: { uid: '5d3e1f00-0000-4000-8000-00000000000a', operation: 'UPDATE', object: shoot, oldObject: shoot },
    }),
  );
}

const chunksOf = (body: Buffer) =>
  Array.from({ length: Math.ceil(body.length / CHUNK) }, (_, i) => body.subarray(i * CHUNK, (i + 1) * CHUNK));

export async function runWebhookDecodeBench(): Promise<WebhookDecodeResult[]> {
  const bodies = { 'typical Shoot review': reviewBody(1), 'Shoot review with 100 worker pools': reviewBody(100) };
  const bench = new Bench({ time: 1000, warmupTime: 200 });
  for (const [name, body] of Object.entries(bodies)) {
    const chunks = chunksOf(body);
    bench
      .add(`${name}: JSON.parse (baseline)`, () => JSON.parse(Buffer.concat(chunks).toString('utf8')))
      .add(`${name}: scan + parse`, () => decodeReviewBody(chunks, LIMITS));
  }
  await bench.run();
  const micros = (task: string) => {
    const result = bench.tasks.find((t) => t.name === task)?.result as { latency?: { mean: number } } | undefined;
    if (!result?.latency) throw new Error(`no result for ${task}`);
    return result.latency.mean * 1000;
  };
  return Object.entries(bodies).map(([name, body]) => ({
    name,
    bytes: body.length,
    baselineMicros: micros(`${name}: JSON.parse (baseline)`),
    decodeMicros: micros(`${name}: scan + parse`),
  }));
}
