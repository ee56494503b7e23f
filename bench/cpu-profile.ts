/**
 * Where the webhook's CPU goes per review, from the V8 profile `npm run bench -- webhook --cpu-prof DIR` writes:
 * `npx tsx bench/cpu-profile.ts DIR`. Self time is grouped by the step of a review it belongs to (TLS, HTTP and body
 * read, JSON decode, schema parse, defaulting, validation, patch, encode, seed lookup, logging, metrics, GC) and by
 * function; idle time is left out.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The first rule whose test matches a frame (or, for native frames, its nearest JavaScript caller) names its step. */
const STEPS: [step: string, test: (fn: string, url: string) => boolean][] = [
  ['garbage collection', (fn) => fn === '(garbage collector)'],
  // Writes to a TLS socket encrypt in these native calls.
  [
    'TLS: encrypt and write',
    (fn) => /^(writev|writeLatin1String|writeUtf8String|writeBuffer|writeString|writeAsciiString)$/.test(fn),
  ],
  // Native code with no JavaScript on the stack: mostly TLS records (OpenSSL) and socket I/O (libuv).
  ['native: TLS records and socket I/O', (fn) => fn === '(program)'],
  ['JSON decode (body)', (fn) => fn === 'parse' || fn === 'parseReview'],
  ['encode (JSON.stringify, base64)', (fn) => fn === 'stringify' || fn === 'toString' || fn === 'writeHead'],
  [
    'schema parse (compiled, zod)',
    (fn, url) =>
      url.includes('/zod/') ||
      url.endsWith('apis/admission.ts') ||
      url.endsWith('meta/compiled-parse.ts') ||
      fn === 'compiledParse',
  ],
  ['defaulting', (_fn, url) => /\/defaults\.ts$/.test(url) || url.endsWith('meta/nulls.ts')],
  ['validation', (_fn, url) => /\/validation\//.test(url) || url.includes('/net/') || url.includes('/ipaddr.js/')],
  [
    'patch (diff, JSON patch)',
    (fn, url) => url.endsWith('meta/objects.ts') || /defaultingPatch|diffOldKeys|addNewKeys|diffFrame/.test(fn),
  ],
  ['field errors and Status', (_fn, url) => url.includes('/apis/field/')],
  [
    'seed lookup (client, cache)',
    (_fn, url) => /runtime\/(client|cached-reader|informer)\.ts$/.test(url) || url.includes('@kubernetes'),
  ],
  ['logging (pino)', (_fn, url) => url.includes('/pino') || url.includes('sonic-boom') || url.endsWith('/log.ts')],
  ['metrics (prom-client)', (_fn, url) => url.includes('prom-client') || url.endsWith('admission/metrics.ts')],
  ['review handling (review.ts, server.ts)', (_fn, url) => url.includes('/admission/')],
  ['TLS: other', (fn, url) => /tls|crypto/i.test(url) || /^(SSL|Tls|TLS)|encrypt|decrypt/i.test(fn)],
  ['HTTP and body read', (_fn, url) => /node:(_http|http|net|stream|internal\/streams|events|buffer)/.test(url)],
];

function stepOf(fn: string, url: string): string | undefined {
  return STEPS.find(([, test]) => test(fn, url))?.[0];
}

export function summarize(profile: Profile): {
  steps: [string, number][];
  functions: [string, number][];
  total: number;
} {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stepOfNode = new Map<number, string>();
  const resolve = (id: number): string => {
    const known = stepOfNode.get(id);
    if (known) return known;
    const node = byId.get(id)!;
    const own = stepOf(node.callFrame.functionName, node.callFrame.url);
    // Native and anonymous frames count for the step of their caller.
    const up = parent.get(id);
    const step = own ?? (up === undefined ? 'other' : resolve(up));
    stepOfNode.set(id, step);
    return step;
  };
  const steps = new Map<string, number>();
  const functions = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id)!;
    const { functionName, url } = node.callFrame;
    if (functionName === '(idle)') return;
    const micros = profile.timeDeltas[i] ?? 0;
    total += micros;
    const step = resolve(id);
    steps.set(step, (steps.get(step) ?? 0) + micros);
    const name = `${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(src|bench)\//, '$1/')}`;
    functions.set(name, (functions.get(name) ?? 0) + micros);
  });
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return { steps: sorted(steps), functions: sorted(functions), total };
}

const dir = process.argv[2];
if (dir) {
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    const { steps, functions, total } = summarize(JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile);
    console.log(`# ${file}: ${(total / 1000).toFixed(0)} ms of CPU (idle left out)`);
    for (const [step, micros] of steps) console.log(`${((100 * micros) / total).toFixed(1).padStart(5)} %  ${step}`);
    console.log('top functions (self time):');
    for (const [name, micros] of functions.slice(0, 25)) {
      console.log(`${((100 * micros) / total).toFixed(1).padStart(5)} %  ${name}`);
    }
  }
}
