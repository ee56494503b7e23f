/**
 * Run by review-shapes.test.ts in a process with `--allow-natives-syntax`: answers the same reviews again and again,
 * as the webhook does (each decoded from its JSON text), and prints, per case, the places where two answers' objects
 * (and the defaulted objects behind them) have different V8 maps: a new map on every review.
 */
import { admit, defaultObject, type AdmissionInput } from '../../src/apis/admission.js';
import { copyWith } from '../../src/apis/meta/copy.js';
import { parseReview } from '../../src/admission/decode.js';
import { answerAdmissionReview, type AdmissionContext, type AdmissionMode } from '../../src/admission/review.js';
import {
  dnsRecordObject,
  dualStackShootObject,
  gateSets,
  ipv4ShootObject,
  ipv6ShootObject,
  networkObject,
  robustnessShootObject,
  seedDualStackNetworks,
  seedIPv6Networks,
  seedObject,
  shootObject,
} from '../fixtures/objects.js';

// V8's natives syntax is only parsed at run time, in a process started with --allow-natives-syntax.
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;

/** Paths where `a` and `b` (built alike) hold objects of different maps. */
function differentMaps(a: unknown, b: unknown, path = '$', seen = new Set<object>()): string[] {
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null || seen.has(a)) return [];
  seen.add(a);
  const out = haveSameMap(a, b) ? [] : [path];
  for (const key of Object.keys(a)) {
    out.push(
      ...differentMaps(
        (a as Record<string, unknown>)[key],
        (b as Record<string, unknown>)[key],
        `${path}.${key}`,
        seen,
      ),
    );
  }
  return out;
}

const seeds: Record<string, unknown> = {
  'seed-v6': seedObject({}, { name: 'seed-v6', base: seedIPv6Networks }),
  'seed-ds': seedObject({}, { name: 'seed-ds', base: seedDualStackNetworks }),
};
const ctx: AdmissionContext = { gates: gateSets.all, lookupSeed: (name) => seeds[name] };

const objects: Record<string, unknown> = {
  'ipv4 shoot': ipv4ShootObject(),
  'ipv6 shoot': ipv6ShootObject(),
  'dual-stack shoot': dualStackShootObject(),
  'shoot of many fields': robustnessShootObject(),
  'ipv6 shoot on a seed, pods and services from its defaults': shootObject({
    seedName: 'seed-v6',
    ipFamilies: ['IPv6'],
    nodes: 'fd00:20:1::/64',
  }),
  'dual-stack shoot on a seed': {
    ...dualStackShootObject(),
    spec: { ...dualStackShootObject().spec, seedName: 'seed-ds' },
  },
  'invalid shoot (IPv4 pods in IPv6)': ipv6ShootObject({ pods: '100.96.0.0/11' }),
  'shoot without networking': shootObject({ withoutNetworking: true }),
  'workerless shoot': shootObject({ workers: 0 }),
  seed: seedObject({}, { name: 'seed-ds', base: seedDualStackNetworks }),
  network: networkObject(),
  'dns record without ttl': dnsRecordObject(),
};

const results: Record<string, string[]> = {};
for (const [name, object] of Object.entries(objects)) {
  for (const operation of ['CREATE', 'UPDATE'] as const) {
    for (const mode of ['mutate', 'validate'] as AdmissionMode[]) {
      const body = Buffer.from(
        JSON.stringify({
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          request: {
            uid: '6f1c0a00-0000-4000-8000-000000000001',
            operation,
            object,
            ...(operation === 'UPDATE' ? { oldObject: object } : {}),
          },
        }),
      );
      const once = () => {
        const review = parseReview(body);
        const input = { object: review.request!.object, gates: ctx.gates, seed: seeds['seed-v6'] };
        return {
          answer: answerAdmissionReview(review, ctx, mode),
          defaulted: defaultObject(input).object,
          admitted: admit(
            operation === 'UPDATE' ? copyWith<AdmissionInput>(input, { oldObject: review.request!.oldObject }) : input,
          ),
        };
      };
      // Past the interpreter and the first optimizations: the shapes a review leaves from then on.
      for (let i = 0; i < 200; i++) once();
      results[`${name}, ${operation}, ${mode}`] = differentMaps(once(), once());
    }
  }
}
// The probe itself: objects whose keys come in another order have another map.
results.control = differentMaps({ x: { a: 1, b: 2 } }, { x: { b: 2, a: 1 } });
console.log(JSON.stringify(results));
