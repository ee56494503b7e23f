/**
 * Valid reviews while the webhook is attacked: the webhook server alone in a process of its own, a client (in a worker
 * thread, so that the attack's encryption does not delay it) sending valid Shoot reviews one after the other over a
 * kept-alive connection, first alone (the baseline), then while rounds of 16 concurrent worst-case bodies just under
 * the 3 MiB size limit arrive (deep nesting, wide arrays and one object of 98,000 keys, refused by the pre-scan; the
 * most values, as many keys in objects of 9,800 and the longest strings the limits let through, decoded). Reports p50/p99 of the valid reviews and the webhook's peak RSS.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_JSON_VALUES } from '../src/admission/server.js';
import { generateCertificates } from '../src/localenv/certs.js';
import { benchShoot } from './objects.js';

const CONCURRENT = 16;
const ROUNDS = 3;

export interface WebhookAttackResult {
  readonly attack: string;
  readonly reviews: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly peakRssMiB: number;
}

/** A valid IPv6 Shoot, not scheduled (the server alone knows no Seeds). */
function unscheduledShoot(i: number): Record<string, unknown> {
  const shoot = benchShoot(i, 'ipv6') as { spec: Record<string, unknown> };
  const { seedName: _, ...spec } = shoot.spec;
  return { ...shoot, spec };
}

const reviewOf = (object: unknown, uid: string) =>
  JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid, operation: 'CREATE', object },
  });

function attackBody(inner: (room: number) => string): string {
  const shoot = unscheduledShoot(1) as { spec: Record<string, unknown> };
  const text = reviewOf({ ...shoot, spec: { ...shoot.spec, providerConfig: '@@' } }, 'attack');
  return text.replace('"@@"', inner(DEFAULT_MAX_BODY_BYTES - text.length - 16));
}

/** `keys` keys (`"k00001":0`, …) in objects of `perObject` keys: one object, or an object of such objects. */
function wideObject(keys: number, perObject: number): string {
  const objects: string[] = [];
  for (let start = 0; start < keys; start += perObject) {
    const entries = [];
    for (let i = start; i < Math.min(keys, start + perObject); i++) entries.push(`"k${String(i).padStart(5, '0')}":0`);
    objects.push(`{${entries.join(',')}}`);
  }
  return objects.length === 1 ? objects[0]! : `{${objects.map((o, i) => `"o${i}":${o}`).join(',')}}`;
}

const ATTACKS: Record<string, () => string> = {
  'deep arrays (refused)': () => attackBody((room) => '['.repeat(room / 2) + ']'.repeat(room / 2)),
  'wide objects (refused)': () => attackBody((room) => `[${'{},'.repeat(room / 3 - 1)}{}]`),
  'most values (decoded)': () =>
    attackBody(() => {
      const chain = '{"a":'.repeat(90) + '0' + '}'.repeat(90);
      return `[${new Array(Math.floor((DEFAULT_MAX_JSON_VALUES * 0.95) / 91)).fill(chain).join(',')}]`;
    }),
  'one object of 98,000 keys (refused)': () => attackBody(() => wideObject(98_000, 98_000)),
  '98,000 keys in objects of 9,800 (decoded)': () => attackBody(() => wideObject(98_000, 9_800)),
  'long strings (decoded)': () =>
    attackBody((room) => JSON.stringify(Array.from({ length: 30 }, (_, i) => String(i % 10).repeat(room / 31)))),
};

/** Sends `valid` one after the other until told to stop; answers the latencies in ms. */
const CLIENT = `
const https = require('node:https');
const { parentPort, workerData } = require('node:worker_threads');
const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
let stop = false;
const latencies = [];
parentPort.on('message', () => { stop = true; });
const post = () => new Promise((resolve, reject) => {
  const started = performance.now();
  const req = https.request({ host: '::1', port: workerData.port, method: 'POST', path: '/validate', ca: workerData.ca,
    agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(workerData.valid) } },
    (res) => { let body = ''; res.on('data', (c) => (body += c)); res.on('end', () => {
      if (!body.includes('"allowed":true')) reject(new Error('valid review not admitted: ' + body.slice(0, 200)));
      resolve(performance.now() - started); }); });
  req.on('error', reject);
  req.end(workerData.valid);
});
(async () => { while (!stop) latencies.push(await post()); agent.destroy(); parentPort.postMessage(latencies); })()
  .catch((e) => { throw e; });
`;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;
}

export async function runWebhookAttackBench(): Promise<WebhookAttackResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'gardener-ipv6-webhook-attack-'));
  const certs = await generateCertificates(dir, { ipAddresses: ['::1'], dnsNames: ['localhost'], days: 1 });
  const ca = readFileSync(certs.caCert);
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(import.meta.dirname, '../test/support/admission-server-process.ts'),
      certs.serverCert,
      certs.serverKey,
    ],
    { cwd: join(import.meta.dirname, '..'), stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.once('message', (m) => resolve((m as { port: number }).port));
      child.once('exit', (code) => reject(new Error(`webhook exited with ${code}`)));
    });
    let peak = 0;
    const sampler = setInterval(() => {
      const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) peak = Math.max(peak, Number(m[1]) / 1024);
    }, 20);
    const valid = reviewOf(unscheduledShoot(2), 'valid');
    const post = (body: string) =>
      new Promise<void>((resolve) => {
        const req = https.request(
          {
            host: '::1',
            port,
            method: 'POST',
            path: '/validate',
            ca,
            agent: false,
            headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
          },
          (res) => res.resume().on('end', resolve),
        );
        req.on('error', () => resolve());
        req.end(body);
      });
    const results: WebhookAttackResult[] = [];
    for (const [attack, build] of [['none (baseline)', undefined] as const, ...Object.entries(ATTACKS)]) {
      peak = 0;
      const client = new Worker(CLIENT, { eval: true, workerData: { port, ca, valid } });
      const latencies = new Promise<number[]>((resolve, reject) => {
        client.once('message', resolve);
        client.once('error', reject);
      });
      if (build) {
        const body = build();
        for (let round = 0; round < ROUNDS; round++)
          await Promise.all(Array.from({ length: CONCURRENT }, () => post(body)));
      } else {
        await new Promise((resolve) => setTimeout(resolve, 3000));
      }
      client.postMessage('stop');
      const sorted = (await latencies).sort((a, b) => a - b);
      await client.terminate();
      results.push({
        attack,
        reviews: sorted.length,
        p50Ms: percentile(sorted, 0.5),
        p99Ms: percentile(sorted, 0.99),
        peakRssMiB: peak,
      });
    }
    clearInterval(sampler);
    return results;
  } finally {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}
