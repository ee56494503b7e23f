/**
 * The webhook under the chart's memory limit: its process runs in a cgroup v1 memory cgroup limited to the chart's
 * `admission.resources.limits.memory` and gets 16 concurrent worst-case bodies just under the 3 MiB size limit
 * (deep nesting, wide arrays, long strings; refused or decoded), round after round, while valid reviews keep coming.
 * It must stay alive, under the limit (`memory.max_usage_in_bytes`, no OOM kill), and answer every review.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_JSON_VALUES } from '../../src/admission/server.js';
import type { AdmissionReviewResponse } from '../../src/admission/review.js';
import { generateCertificates } from '../../src/localenv/certs.js';
import { SERVER_NODE_FLAGS } from '../../src/runtime/node-flags.js';
import { CgroupSubtree } from '../../src/system/cgroups.js';
import { ipv6ShootObject } from '../fixtures/objects.js';

const CONCURRENT = 16;
const ROUNDS = 2;

/** The chart's memory limit of the webhook, e.g. `256Mi`, in bytes. */
function chartMemoryLimit(): number {
  const values = parse(readFileSync(join(import.meta.dirname, '../../charts/gardener-ipv6/values.yaml'), 'utf8')) as {
    admission: { resources: { limits: { memory: string } } };
  };
  const quantity = values.admission.resources.limits.memory;
  const m = /^(\d+)(Mi|Gi)$/.exec(quantity);
  if (!m) throw new Error(`unexpected memory quantity ${quantity}`);
  return Number(m[1]) * (m[2] === 'Gi' ? 1024 ** 3 : 1024 ** 2);
}

const reviewOf = (object: unknown, uid: string) =>
  JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      operation: 'CREATE',
      resource: { group: 'core.gardener.cloud', version: 'v1beta1', resource: 'shoots' },
      object,
    },
  });

/** A Shoot review whose providerConfig is `inner` (JSON text). */
function attackReview(inner: (room: number) => string): string {
  const shoot = ipv6ShootObject();
  const text = reviewOf({ ...shoot, spec: { ...shoot.spec, providerConfig: '@@' } }, 'attack');
  const body = text.replace('"@@"', inner(DEFAULT_MAX_BODY_BYTES - text.length - 16));
  if (body.length > DEFAULT_MAX_BODY_BYTES) throw new Error(`attack body of ${body.length} bytes is over the limit`);
  return body;
}

/** Worst cases just under the size limit: some the pre-scan refuses, some within every limit that are decoded. */
const ATTACKS: Record<string, () => string> = {
  'deep arrays': () => attackReview((room) => '['.repeat(room / 2) + ']'.repeat(room / 2)),
  'deep objects': () => attackReview((room) => '{"a":'.repeat(room / 6) + '0' + '}'.repeat(room / 6)),
  'wide objects': () => attackReview((room) => `[${'{},'.repeat(room / 3 - 1)}{}]`),
  'wide numbers': () => attackReview((room) => `[${'0,'.repeat(room / 2 - 1)}0]`),
  'most values, decoded': () => attackReview(() => `[${'{},'.repeat(DEFAULT_MAX_JSON_VALUES - 1000)}{}]`),
  'deep and wide, decoded': () =>
    attackReview(() => {
      const chain = '{"a":'.repeat(90) + '0' + '}'.repeat(90);
      return `[${new Array(Math.floor((DEFAULT_MAX_JSON_VALUES * 0.95) / 91)).fill(chain).join(',')}]`;
    }),
  'long strings, decoded': () =>
    attackReview((room) => JSON.stringify(Array.from({ length: 30 }, (_, i) => String(i % 10).repeat(room / 31)))),
};

/** Keys in the wide-object attacks: 1.08 MB reviews within the value limit, 48 concurrent copies of each. */
const WIDE_OBJECT_KEYS = 98_000;
const WIDE_OBJECT_CONCURRENT = 48;

/**
 * A Shoot review whose `spec.networking.providerConfig` holds {@link WIDE_OBJECT_KEYS} keys (`"k00001":0`, …), in
 * objects of `perObject` keys: one object of all (refused by the pre-scan's key limit), or spread over many (decoded,
 * each key an unknown field).
 */
function wideObjectReview(perObject: number): string {
  const shoot = ipv6ShootObject();
  const root: Record<string, unknown> = {};
  for (let i = 0; i < WIDE_OBJECT_KEYS; i++) {
    const object =
      perObject >= WIDE_OBJECT_KEYS ? root : ((root[`o${Math.floor(i / perObject)}`] ??= {}) as Record<string, number>);
    (object as Record<string, number>)[`k${String(i).padStart(5, '0')}`] = 0;
  }
  return reviewOf(
    { ...shoot, spec: { ...shoot.spec, networking: { ...shoot.spec.networking, providerConfig: root } } },
    'attack',
  );
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

describe('the webhook under the chart memory limit', () => {
  const limit = chartMemoryLimit();
  let dir: string;
  let ca: Buffer;
  let cgroup: CgroupSubtree;
  let memoryDir: string;
  let child: ChildProcess;
  let port: number;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gardener-ipv6-webhook-memory-'));
    const certs = await generateCertificates(dir, { ipAddresses: ['::1'], dnsNames: ['localhost'], days: 1 });
    ca = readFileSync(certs.caCert);
    cgroup = new CgroupSubtree(`gardener-ipv6-webhook-memory-${process.pid}`);
    cgroup.create();
    const memory = cgroup.hierarchies.findIndex((h) => h.controllers.includes('memory'));
    if (memory < 0) throw new Error('no cgroup v1 memory hierarchy');
    memoryDir = cgroup.dirs[memory]!;
    writeFileSync(join(memoryDir, 'memory.limit_in_bytes'), String(limit));
    // The shell joins the cgroup, then becomes node: everything the webhook allocates is charged to it.
    child = spawn(
      'sh',
      [
        '-c',
        'echo $$ > "$0" && shift && exec "$@"',
        join(memoryDir, 'cgroup.procs'),
        'x',
        process.execPath,
        // As the image runs it: the heap the webhook keeps without the memory reducer must fit the limit too.
        ...SERVER_NODE_FLAGS,
        '--import',
        'tsx',
        join(import.meta.dirname, '../support/admission-server-process.ts'),
        certs.serverCert,
        certs.serverKey,
      ],
      { cwd: join(import.meta.dirname, '../..'), stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
    );
    port = await new Promise<number>((resolve, reject) => {
      child.once('message', (m) => resolve((m as { port: number }).port));
      child.once('exit', (code, signal) => reject(new Error(`webhook process exited (${code ?? signal})`)));
    });
  });

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
    cgroup?.destroy();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  function post(body: string, path: string, agent: https.Agent | false): Promise<Reply> {
    return new Promise((resolve) => {
      const req = https.request(
        {
          host: '::1',
          port,
          method: 'POST',
          path,
          ca,
          agent,
          headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
          );
          res.on('error', () => resolve({ status: -1, headers: {}, body: '' }));
        },
      );
      // A killed server: no answer.
      req.on('error', (e) => resolve({ status: -1, headers: {}, body: e.message }));
      req.end(body);
    });
  }

  it(`stays alive and under the limit with ${CONCURRENT} concurrent worst-case bodies, answering valid reviews`, async () => {
    const valid = reviewOf(ipv6ShootObject(), 'valid');
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    const validReplies: Reply[] = [];
    let attacking = true;
    const validLoop = (async () => {
      while (attacking) validReplies.push(await post(valid, validReplies.length % 2 ? '/mutate' : '/validate', agent));
    })();

    const attackReplies: Record<string, Reply[]> = {};
    for (let round = 0; round < ROUNDS; round++) {
      for (const [shape, build] of Object.entries(ATTACKS)) {
        const body = build();
        const path = round % 2 ? '/mutate' : '/validate';
        (attackReplies[shape] ??= []).push(
          ...(await Promise.all(Array.from({ length: CONCURRENT }, () => post(body, path, false)))),
        );
      }
    }
    attacking = false;
    await validLoop;
    agent.destroy();

    expect(child.exitCode, 'the webhook process exited').toBeNull();
    expect(child.signalCode, 'the webhook process was killed').toBeNull();
    const oomKills = /oom_kill (\d+)/.exec(readFileSync(join(memoryDir, 'memory.oom_control'), 'utf8'))?.[1];
    expect(oomKills ?? '0').toBe('0');
    const maxUsage = Number(readFileSync(join(memoryDir, 'memory.max_usage_in_bytes'), 'utf8'));
    expect(maxUsage).toBeLessThan(limit);

    for (const [shape, replies] of Object.entries(attackReplies)) {
      for (const reply of replies) {
        // Bodies beyond the bytes in flight wait for room, and are told to come back after 2 s without.
        if (reply.status === 429) continue;
        expect(reply.status, `${shape}: ${reply.body.slice(0, 200)}`).toBe(200);
        expect((JSON.parse(reply.body) as AdmissionReviewResponse).response.uid, shape).toBe('attack');
      }
    }
    expect(validReplies.length).toBeGreaterThan(0);
    for (const reply of validReplies) {
      expect(reply.status, reply.body.slice(0, 200)).toBe(200);
      expect((JSON.parse(reply.body) as AdmissionReviewResponse).response).toMatchObject({
        uid: 'valid',
        allowed: true,
      });
    }
  }, 240_000);

  it(`stays alive and under the limit with ${WIDE_OBJECT_CONCURRENT} concurrent reviews of ${WIDE_OBJECT_KEYS} keys`, async () => {
    for (const perObject of [WIDE_OBJECT_KEYS, 9_800, 1_000, 100]) {
      const body = wideObjectReview(perObject);
      const replies = await Promise.all(
        Array.from({ length: WIDE_OBJECT_CONCURRENT }, (_, i) => post(body, i % 2 ? '/mutate' : '/validate', false)),
      );
      const valid = await post(reviewOf(ipv6ShootObject(), 'valid'), '/validate', false);

      expect(child.exitCode, 'the webhook process exited').toBeNull();
      expect(child.signalCode, 'the webhook process was killed').toBeNull();
      const oomKills = /oom_kill (\d+)/.exec(readFileSync(join(memoryDir, 'memory.oom_control'), 'utf8'))?.[1];
      expect(oomKills ?? '0').toBe('0');
      expect(Number(readFileSync(join(memoryDir, 'memory.max_usage_in_bytes'), 'utf8'))).toBeLessThan(limit);
      let answered = 0;
      for (const [i, reply] of replies.entries()) {
        // Told to come back later, as the API server's max-in-flight filter does, or answered: denied with the first
        // errors by the validating webhook, defaulted by the mutating one.
        if (reply.status === 429) {
          expect(JSON.parse(reply.body)).toMatchObject({ kind: 'Status', code: 429, reason: 'TooManyRequests' });
          continue;
        }
        expect(reply.status, reply.body.slice(0, 200)).toBe(200);
        const response = (JSON.parse(reply.body) as AdmissionReviewResponse).response;
        expect(response.uid).toBe('attack');
        if (i % 2 === 0) expect(response.allowed).toBe(false);
        expect(reply.body.length).toBeLessThan(64 * 1024);
        answered++;
      }
      expect(answered, `${perObject} keys per object`).toBeGreaterThan(0);
      expect(valid.status).toBe(200);
      expect((JSON.parse(valid.body) as AdmissionReviewResponse).response).toMatchObject({
        uid: 'valid',
        allowed: true,
      });
    }
  }, 240_000);

  it('holds at most a bounded number of bodies: 100 concurrent 3 MiB bodies (300 MB) are answered or told to wait', async () => {
    const body = ATTACKS['long strings, decoded']!();
    const replies = await Promise.all(Array.from({ length: 100 }, () => post(body, '/validate', false)));

    expect(child.exitCode, 'the webhook process exited').toBeNull();
    expect(child.signalCode, 'the webhook process was killed').toBeNull();
    const oomKills = /oom_kill (\d+)/.exec(readFileSync(join(memoryDir, 'memory.oom_control'), 'utf8'))?.[1];
    expect(oomKills ?? '0').toBe('0');
    expect(Number(readFileSync(join(memoryDir, 'memory.max_usage_in_bytes'), 'utf8'))).toBeLessThan(limit);
    for (const reply of replies) {
      expect([200, 429], reply.body.slice(0, 200)).toContain(reply.status);
      if (reply.status === 200) expect((JSON.parse(reply.body) as AdmissionReviewResponse).response.uid).toBe('attack');
      else expect(reply.headers['retry-after']).toBe('1');
    }
  }, 240_000);
});
