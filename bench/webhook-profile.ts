/**
 * The webhook's review path in process, for a CPU profile of it alone (no TLS, no HTTP): the bench webhook's Shoot
 * review with seed context, its body fed in TLS-sized chunks to the body reader, decoded, answered by `/mutate` and
 * `/validate` in turn and encoded, against a Seed and a CloudProfile in maps (as the synced caches hand them out) and
 * provider-local's admission with an installation of `--shoots` stored Shoots, counted as the runtime counts them
 * (MachineTotal).
 *
 *   node --cpu-prof --cpu-prof-dir=DIR --import tsx bench/webhook-profile.ts [--seconds 10] [--shoots 500]
 *   npx tsx bench/cpu-profile.ts DIR
 *
 * Prints the reviews per second it answered and their CPU (a hot loop: relative shares, not the paced webhook's cold
 * costs). Two more figures, each after the loop:
 *
 *   --evict KIB   a review's cost after KIB of other memory was touched (as TLS, HTTP and the kernel touch it between
 *                 reviews in the server) against its hot cost, reviews of both kinds interleaved in one loop
 *   --allocation  the heap each kind of review allocates (V8's sampling heap profiler, collected objects included)
 */
import { Session } from 'node:inspector/promises';
import type { KubernetesObject } from '@kubernetes/client-node';
import { answerText } from '../src/admission/answer-json.js';
import { ReviewBodyReader } from '../src/admission/decode.js';
import { DEFAULT_REGISTERED_EXTENSION_TYPES } from '../src/admission/extensions.js';
import { MachineTotal } from '../src/admission/machine-total.js';
import { answerAdmissionReview, type AdmissionContext, type AdmissionMode } from '../src/admission/review.js';
import {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_JSON_DEPTH,
  DEFAULT_MAX_JSON_OBJECT_KEYS,
  DEFAULT_MAX_JSON_VALUES,
} from '../src/admission/server.js';
import { extensionAdmission } from '../src/app/extension-admission.js';
import { LOCAL_KUBERNETES_VERSION, localCloudProfile } from '../src/extensions/provider-local/cloudprofile.js';
import { DEFAULT_LOCAL_ADMISSION_CONFIG, localMachineSlots } from '../src/extensions/provider-local/admission.js';
import { parseFeatureGates } from '../src/featuregate/featuregate.js';
import { benchSeed, benchShoot, shootCreateReview } from './objects.js';

const args = process.argv.slice(2);
const numberOf = (flag: string, fallback: number) =>
  args.includes(flag) ? Number(args[args.indexOf(flag) + 1]) : fallback;
const seconds = numberOf('--seconds', 10);
const storedShootCount = numberOf('--shoots', 500);

const LIMITS = {
  maxBytes: DEFAULT_MAX_BODY_BYTES,
  maxDepth: DEFAULT_MAX_JSON_DEPTH,
  maxValues: DEFAULT_MAX_JSON_VALUES,
  maxObjectKeys: DEFAULT_MAX_JSON_OBJECT_KEYS,
};
const CHUNK = 16 * 1024;

/** The bench webhook's `valid+seed` review (bench/webhook.ts). */
export function validSeedReview(): Buffer {
  const shoot = benchShoot(1, 'ipv6') as { spec: Record<string, unknown> & { kubernetes: { version: string } } };
  shoot.spec.kubernetes.version = LOCAL_KUBERNETES_VERSION;
  shoot.spec.seedName = 'bench-seed';
  shoot.spec.networking = { type: 'calico', ipFamilies: ['IPv6'], nodes: 'fd00:20:1::/64' };
  return Buffer.from(shootCreateReview(shoot));
}

const seed = benchSeed(0, 'ipv6') as KubernetesObject;
seed.metadata = { name: 'bench-seed' };
const seeds = new Map<string, unknown>([['bench-seed', seed]]);
const cloudProfiles = new Map<string, unknown>([['local', localCloudProfile()]]);
const storedShoots = Array.from({ length: storedShootCount }, (_, i) => {
  const shoot = benchShoot(i + 100, 'ipv6') as KubernetesObject;
  shoot.metadata = { name: `stored-${i}`, namespace: 'garden-bench' };
  return shoot;
});
const machines = new MachineTotal(localMachineSlots);
for (const shoot of storedShoots) machines.set(shoot);
const storedByKey = new Map(storedShoots.map((s) => [`${s.metadata?.namespace ?? ''}/${s.metadata?.name ?? ''}`, s]));
const ctx: AdmissionContext = {
  gates: parseFeatureGates('IPv6SingleStack=true,DualStack=true'),
  lookupSeed: (name) => seeds.get(name),
  lookupCloudProfile: (name) => cloudProfiles.get(name),
  extensions: DEFAULT_REGISTERED_EXTENSION_TYPES,
  // As the runtime counts them: a running total kept by the Shoot informer's events, read in constant time.
  extensionAdmission: extensionAdmission(
    { ...DEFAULT_LOCAL_ADMISSION_CONFIG, maxMachines: 1_000_000 },
    {
      othersThan: (namespace, name) => machines.othersThan(namespace, name),
      stored: (namespace, name) => storedByKey.get(`${namespace ?? ''}/${name ?? ''}`),
    },
  ),
};

const body = validSeedReview();
const chunks = Array.from({ length: Math.ceil(body.length / CHUNK) }, (_, i) =>
  body.subarray(i * CHUNK, (i + 1) * CHUNK),
);

function oneReview(mode: AdmissionMode): string {
  const reader = new ReviewBodyReader(LIMITS, body.length);
  for (const chunk of chunks) reader.push(chunk);
  const answer = answerAdmissionReview(reader.review(), ctx, mode);
  if (answer instanceof Promise) throw new Error('a lookup was not answered from the maps');
  if (!answer.response.allowed) throw new Error(`denied: ${JSON.stringify(answer.response.status)}`);
  // As the server encodes it.
  return answerText(answer).text;
}

const deadline = performance.now() + seconds * 1000;
const cpu = process.cpuUsage();
let reviews = 0;
while (performance.now() < deadline) {
  for (let i = 0; i < 100; i++) oneReview(reviews++ % 2 === 0 ? 'mutate' : 'validate');
}
const used = process.cpuUsage(cpu);
console.log(
  `${reviews} reviews in ${seconds} s: ${Math.round(reviews / seconds)} reviews/s, ` +
    `${((used.user + used.system) / reviews).toFixed(1)} µs CPU per review ` +
    `(${storedShootCount} stored Shoots, ${body.length} bytes per body)`,
);

const evictKiB = numberOf('--evict', 0);
if (evictKiB > 0) {
  const { hot, cold } = coldCost(evictKiB, 20_000);
  console.log(
    `after touching ${evictKiB} KiB: ${cold.toFixed(1)} µs per review, hot ${hot.toFixed(1)} µs: ` +
      `${(cold / hot).toFixed(2)}x`,
  );
}
if (args.includes('--allocation')) {
  for (const mode of ['mutate', 'validate'] as const) {
    console.log(`${mode}: ${((await allocatedPerReview(mode, 20_000)) / 1024).toFixed(1)} KiB allocated per review`);
  }
}

/**
 * Mean wall time of a review right after `kib` KiB of other memory were written (every cache line of it) and of one
 * right after another review, alternating, so that the host's drift falls on both alike.
 */
function coldCost(kib: number, count: number): { hot: number; cold: number } {
  const other = new Float64Array((kib * 1024) / 8);
  let hot = 0;
  let cold = 0;
  for (let i = 0; i < count; i++) {
    const evicted = i % 4 >= 2;
    if (evicted) for (let j = 0; j < other.length; j += 8) other[j]!++;
    const started = process.hrtime.bigint();
    oneReview(i % 2 === 0 ? 'mutate' : 'validate');
    const took = Number(process.hrtime.bigint() - started) / 1000;
    if (evicted) cold += took;
    else hot += took;
  }
  return { hot: hot / (count / 2), cold: cold / (count / 2) };
}

/** Bytes a review of `mode` allocates, collected or not, from V8's sampling heap profiler over `count` reviews. */
async function allocatedPerReview(mode: AdmissionMode, count: number): Promise<number> {
  const session = new Session();
  session.connect();
  try {
    // Node's types lack the two `include…` parameters (V8 has them since 10.x).
    const sampling: object = {
      samplingInterval: 512,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    };
    await session.post('HeapProfiler.startSampling', sampling);
    for (let i = 0; i < count; i++) oneReview(mode);
    const { profile } = await session.post('HeapProfiler.stopSampling');
    let bytes = 0;
    const stack = [profile.head];
    while (stack.length > 0) {
      const node = stack.pop()!;
      bytes += node.selfSize;
      stack.push(...node.children);
    }
    return bytes / count;
  } finally {
    session.disconnect();
  }
}
