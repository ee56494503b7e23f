/**
 * Admission webhook under load: h2load (Debian's `nghttp2-client`) sends Shoot AdmissionReviews over HTTPS on [::1]
 * to the webhook (`gardener-ipv6 run --components admission`, compiled, as the chart runs it, against a real
 * kube-apiserver) and, in the same run and alternating with it, to a bare Node HTTPS server with the same certificate
 * that answers a fixed AdmissionReview (bench/baseline-server.mjs: what HTTPS and the body read cost alone).
 *
 * Scenarios: valid and invalid Shoots of the CloudProfile `local` (created with the Seed), each without and with
 * seed context (`spec.seedName` of an existing Seed);
 * every connection alternates `/mutate` and `/validate`, as the API server calls both for each write. Loads: 200
 * and 1000 reviews/s and full speed (10 connections). Per scenario and load: p50/p90/p99/max latency, errors,
 * throughput, webhook CPU per review (from /proc), kube-apiserver + etcd CPU per review, API server requests per
 * review (`apiserver_request_total`), log bytes per review. Then 60 s at 1000 reviews/s with seed context, sampling
 * the webhook's RSS every second.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { webhookBaseURL } from '../src/admission/webhook-configurations.js';
import { Refs } from '../src/apis/refs.js';
import { generateCertificates } from '../src/localenv/certs.js';
import { startControlPlane } from '../src/localenv/control-plane.js';
import { freePorts } from '../src/system/net.js';
import { which } from '../src/system/process.js';
import { CLOCK_TICKS, readProcStat } from '../src/system/proc-stat.js';
import { ResourceClient } from '../src/runtime/client.js';
import { SERVER_NODE_FLAGS } from '../src/runtime/node-flags.js';
import { LOCAL_KUBERNETES_VERSION, localCloudProfile } from '../src/extensions/provider-local/cloudprofile.js';
import { benchSeed, benchShoot, shootCreateReview } from './objects.js';

export interface WebhookBenchOptions {
  /** Seconds per scenario and load in a round. @default 10 */
  readonly durationSeconds?: number;
  /**
   * A round's seconds per scenario and load are measured in slices of this length, the scenarios taking turns slice
   * by slice (in an order that rotates): the host's speed drifts by up to 2x over minutes, and slices give every
   * scenario the same share of each phase of it. @default 2
   */
  readonly sliceSeconds?: number;
  /** Rounds over all scenarios and loads (alternating the order). @default 2 */
  readonly rounds?: number;
  /** Seconds of the RSS phase. @default 60 */
  readonly rssSeconds?: number;
  /**
   * Seconds at the RSS phase's load before it is measured. V8 grows the old generation lazily: a fresh process's RSS
   * rises for a minute or two at this load until the first full collection, then stays flat. @default 90
   */
  readonly rssWarmupSeconds?: number;
  /**
   * Write V8 CPU profiles (`node --cpu-prof`) into this folder: the webhook's in `webhook/`, the baseline's in
   * `baseline/`, so that each step's share can be set against the bare server's in the same run.
   */
  readonly cpuProfileDir?: string;
  /** The loads measured (reviews/s; `undefined` is full speed). @default 200, 1000 and full speed */
  readonly loads?: readonly Load[];
  /** The scenarios measured besides the baseline, which always runs. @default all */
  readonly targets?: readonly Exclude<Target, 'baseline'>[];
}

export const CONNECTIONS = 10;
/** Not measured at the start of each h2load run (connecting, TLS handshakes). */
const WARM_UP_MS = 300;
/** Reviews per second of the paced loads; `undefined` is full speed. */
export const LOADS = [200, 1000, undefined] as const;
export type Load = number | undefined;
export const SEED_NAME = 'bench-seed';

export type Target = 'baseline' | 'valid' | 'valid+seed' | 'invalid' | 'invalid+seed';
export const TARGETS: readonly Target[] = ['baseline', 'valid', 'valid+seed', 'invalid', 'invalid+seed'];

export interface LoadResult {
  readonly target: Target;
  /** Reviews/s asked for; undefined at full speed. */
  readonly load: number | undefined;
  readonly reviews: number;
  readonly reviewsPerSecond: number;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
  /**
   * The median of the slices' own p99s: the pooled p99 is decided by the few slices a pause (GC, the host) hit, this
   * one by a typical slice.
   */
  readonly sliceP99MedianMs: number;
  readonly maxMs: number;
  readonly errors: number;
  /** CPU of the server process per review. */
  readonly cpuMicrosPerReview: number;
  /** CPU of kube-apiserver and etcd per review. */
  readonly apiServerCpuMicrosPerReview: number;
  /** Requests on seeds (any verb) the API server served per review. */
  readonly seedRequestsPerReview: number;
  /** All resource requests the API server served per review (includes the controller manager's background). */
  readonly apiRequestsPerReview: number;
  readonly logBytesPerReview: number;
}

export interface RSSResult {
  readonly seconds: number;
  readonly warmupSeconds: number;
  /** MiB, one sample per second of the warm-up. */
  readonly warmupSamples: readonly number[];
  readonly reviews: number;
  readonly errors: number;
  /** MiB, one sample per second. */
  readonly samples: readonly number[];
  /** The webhook's V8 heap at the end (its /metrics, MiB): what of the RSS is the JavaScript heap. */
  readonly heap: { readonly committed: number; readonly used: number; readonly external: number };
}

export interface WebhookBenchResult {
  readonly results: readonly LoadResult[];
  /** Undefined when `rssSeconds` was 0. */
  readonly rss: RSSResult | undefined;
  readonly rounds: number;
  readonly durationSeconds: number;
  readonly sliceSeconds: number;
}

/** The Shoot of a scenario: the API benchmark's IPv6 Shoot, with or without seed context, valid or not. */
export function benchShootOf(target: Exclude<Target, 'baseline'>): KubernetesObject {
  const shoot = benchShoot(1, 'ipv6') as {
    spec: Record<string, unknown> & { networking: Record<string, unknown>; kubernetes: { version: string } };
  };
  // A version the CloudProfile offers.
  shoot.spec.kubernetes.version = LOCAL_KUBERNETES_VERSION;
  const withSeed = target.endsWith('+seed');
  if (withSeed) {
    shoot.spec.seedName = SEED_NAME;
    // pods and services come from the seed's shootDefaults (the mutating webhook adds them).
    shoot.spec.networking = { type: 'calico', ipFamilies: ['IPv6'], nodes: 'fd00:20:1::/64' };
  } else {
    delete shoot.spec.seedName;
  }
  if (target === 'invalid') shoot.spec.networking.pods = '100.96.0.0/11';
  // Overlaps the seed's pod network: only the seed context finds that.
  if (target === 'invalid+seed') shoot.spec.networking.nodes = 'fd00:10:1::/64';
  return shoot as KubernetesObject;
}

function shootReview(target: Exclude<Target, 'baseline'>): string {
  return shootCreateReview(benchShootOf(target));
}

/** POSTs a JSON body over HTTPS (trusting `ca`) on a connection of its own: the answer's status and text. */
export function post(
  url: string,
  body: string,
  ca: Buffer,
  headers: Readonly<Record<string, string>> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method: 'POST',
        ca,
        agent: false,
        headers: { ...headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Each scenario answers as it should (else the figures would measure something else). */
async function preflight(port: number, bodies: Record<Target, string>, ca: Buffer): Promise<void> {
  const expect: Record<Exclude<Target, 'baseline'>, { allowed: boolean }> = {
    valid: { allowed: true },
    'valid+seed': { allowed: true },
    invalid: { allowed: false },
    'invalid+seed': { allowed: false },
  };
  for (const [target, want] of Object.entries(expect) as [Exclude<Target, 'baseline'>, { allowed: boolean }][]) {
    const validate = JSON.parse((await post(`${webhookBaseURL('::1', port)}/validate`, bodies[target], ca)).body) as {
      response: { allowed: boolean; status?: { message?: string } };
    };
    const mutate = JSON.parse((await post(`${webhookBaseURL('::1', port)}/mutate`, bodies[target], ca)).body) as {
      response: { allowed: boolean };
    };
    if (validate.response.allowed !== want.allowed || !mutate.response.allowed) {
      throw new Error(
        `${target}: unexpected answers: validate ${JSON.stringify(validate.response)}, mutate ${JSON.stringify(mutate.response)}`,
      );
    }
  }
}

/** utime + stime of a process, in microseconds. */
export function cpuMicros(pid: number): number {
  const stat = readProcStat(pid);
  if (stat === undefined) throw new Error(`process ${pid} is gone`);
  return (stat.cpuTicks * 1_000_000) / CLOCK_TICKS;
}

function rssMiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? 0) / 1024;
}

/** `apiserver_request_total` summed: on seeds, and over every resource (non-resource URLs such as /metrics left out). */
async function apiRequestCounts(kc: KubeConfig): Promise<{ seeds: number; all: number }> {
  const cluster = kc.getCurrentCluster()!;
  const options: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(options);
  const text = await new Promise<string>((resolve, reject) => {
    const req = https.request(new URL('/metrics', cluster.server), { ...options, method: 'GET' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks).toString()));
    });
    req.on('error', reject);
    req.end();
  });
  let seeds = 0;
  let all = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (/[{,]resource=""/.test(line)) continue;
    all += value;
    if (/[{,]resource="seeds"/.test(line)) seeds += value;
  }
  return { seeds, all };
}

export interface H2LoadRun {
  readonly reviews: number;
  readonly errors: number;
  readonly seconds: number;
  /** Milliseconds, sorted. */
  readonly latencies: number[];
}

/**
 * {@link h2loadOnce}, again for up to a minute while h2load is missing: a long run outlasts a reinstall of the host's
 * packages (nghttp2-client) by whatever else runs there.
 */
export async function h2load(request: H2LoadRequest, seconds: number, load: Load, logFile: string): Promise<H2LoadRun> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await h2loadOnce(request, seconds, load, logFile);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 30) throw e;
      await new Promise((r) => setTimeout(r, 2_000));
    }
  }
}

/** What h2load sends: every connection takes the URIs in turn, each with the body and the headers. */
export interface H2LoadRequest {
  readonly uris: readonly string[];
  readonly bodyFile: string;
  readonly headers?: readonly string[];
}

/** A review on each path of the webhook in turn, as the API server sends them for a write. */
function reviewRequest(port: number, bodyFile: string): H2LoadRequest {
  const base = webhookBaseURL('::1', port);
  return { uris: [`${base}/mutate?timeout=10s`, `${base}/validate?timeout=10s`], bodyFile };
}

function h2loadOnce(request: H2LoadRequest, seconds: number, load: Load, logFile: string): Promise<H2LoadRun> {
  const args = [
    // HTTP/1.1, as the API server's webhook client speaks to a Node HTTPS server (h2load's counts of an HTTP/2 run
    // with a warm-up are not the main duration's).
    '--h1',
    '-c',
    String(CONNECTIONS),
    '-D',
    String(seconds),
    // Each run opens its connections anew: their TLS handshakes are not what is measured.
    '--warm-up-time',
    `${WARM_UP_MS}ms`,
    '-H',
    'content-type: application/json',
    ...(request.headers ?? []).flatMap((header) => ['-H', header]),
    '-d',
    request.bodyFile,
    '--log-file',
    logFile,
    ...(load === undefined ? [] : ['--rps', String(load / CONNECTIONS)]),
    ...request.uris,
  ];
  // h2load appends to its log file.
  rmSync(logFile, { force: true });
  return new Promise((resolve, reject) => {
    const child = spawn('h2load', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`h2load exited with ${code}:\n${out}`));
      const requests =
        /requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/.exec(
          out,
        );
      const codes = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(out);
      const finished = /finished in ([\d.]+)s/.exec(out);
      if (!requests || !codes || !finished) return reject(new Error(`unexpected h2load output:\n${out}`));
      const latencies = readFileSync(logFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => Number(line.split('\t')[2]) / 1000)
        .sort((a, b) => a - b);
      const succeeded = Number(codes[1]);
      resolve({
        reviews: succeeded,
        errors: Number(requests[5]) + Number(requests[6]) + Number(requests[7]) + Number(requests[3]) - succeeded,
        // "finished in" counts the warm-up too; the requests counted are the main duration's.
        seconds,
        latencies,
      });
    });
  });
}

export const percentile = (sorted: readonly number[], p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly port: number;
  readonly logFile: string;
  /** The webhook's health and metrics port. */
  readonly healthPort?: number;
}

const ROOT = join(import.meta.dirname, '..');

/**
 * The webhook as the chart runs it: the compiled `gardener-ipv6 run --components admission` (built here first, so
 * that what is measured is what ships, not the TypeScript loader) under the image's node flags, logging JSON lines at
 * the default level.
 */
export async function startWebhook(
  kubeconfig: string,
  certDir: string,
  dir: string,
  cpuProfileDir?: string,
): Promise<ServerProcess> {
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}${build.stderr}`);
  const [port, healthPort] = (await freePorts(2)) as [number, number];
  const logFile = join(dir, 'webhook.log');
  // setpriv execs node (the pid stays the webhook's) with a parent-death signal: when the bench dies without its
  // finally (Ctrl-C), the kernel stops the webhook too.
  const setpriv = which('setpriv');
  const child = spawn(
    setpriv ?? process.execPath,
    [
      ...(setpriv ? ['--pdeathsig', 'SIGTERM', '--', process.execPath] : []),
      ...SERVER_NODE_FLAGS,
      ...(cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`] : []),
      join(ROOT, 'bin', 'gardener-ipv6.js'),
      'run',
      '--kubeconfig',
      kubeconfig,
      '--components',
      'admission',
      '--feature-gates',
      'IPv6SingleStack=true,DualStack=true',
      '--webhook-host',
      '::1',
      '--webhook-port',
      String(port),
      '--webhook-cert-dir',
      certDir,
      '--no-webhook-register',
      '--health-host',
      '::1',
      '--health-port',
      String(healthPort),
    ],
    { cwd: ROOT, stdio: ['ignore', openSync(logFile, 'w'), 'inherit'] },
  );
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`the webhook exited with ${code}; see ${logFile}`))),
  );
  await Promise.race([waitReady(healthPort), exited]);
  return { child, port, logFile, healthPort };
}

/** The bare HTTPS baseline (bench/baseline-server.mjs), plain node with the webhook's flags. */
export async function startBaseline(certDir: string, dir: string, cpuProfileDir?: string): Promise<ServerProcess> {
  const logFile = join(dir, 'baseline.log');
  const child = spawn(
    process.execPath,
    [
      ...SERVER_NODE_FLAGS,
      ...(cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`] : []),
      join(import.meta.dirname, 'baseline-server.mjs'),
      certDir,
    ],
    {
      cwd: ROOT,
      stdio: ['ignore', openSync(logFile, 'w'), 'inherit', 'ipc'],
    },
  );
  const { port } = await new Promise<{ port: number }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { port: number }));
    child.once('exit', (code) => reject(new Error(`the baseline server exited with ${code}`)));
  });
  return { child, port, logFile };
}

/** The V8 heap figures of the webhook's /metrics (prom-client's nodejs_* gauges), in MiB. */
async function heapMiB(healthPort: number): Promise<RSSResult['heap']> {
  const text = await (await fetch(`http://[::1]:${healthPort}/metrics`)).text();
  const gauge = (name: string) => {
    const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    if (!m) throw new Error(`the webhook's /metrics has no ${name}`);
    return Number(m[1]) / 2 ** 20;
  };
  return {
    committed: gauge('nodejs_heap_size_total_bytes'),
    used: gauge('nodejs_heap_size_used_bytes'),
    external: gauge('nodejs_external_memory_bytes'),
  };
}

/** /readyz of the health port: the webhook's caches are synced. */
async function waitReady(healthPort: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const ok = await fetch(`http://[::1]:${healthPort}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the webhook did not get ready within 60 s');
}

export async function stopServer(server: ServerProcess): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  await exited;
}

/** Throws unless h2load runs here. */
export function requireH2load(): void {
  if (spawnSync('h2load', ['--version']).status !== 0) {
    throw new Error("h2load is missing: install Debian's nghttp2-client (apt-get install -y nghttp2-client)");
  }
}

/** The Seed the Shoots with seed context name, and the CloudProfile they all name, as `up` creates it. */
export async function createSeedAndCloudProfile(client: ResourceClient): Promise<void> {
  const seed = benchSeed(0, 'ipv6') as KubernetesObject;
  seed.metadata = { name: SEED_NAME };
  await client.create(Refs.seed, seed);
  await client.create(Refs.cloudProfile, localCloudProfile() as KubernetesObject);
}

/** The servers' certificate for [::1] in `dir`/certs (tls.crt, tls.key, ca.crt), and its CA. */
export async function serverCertificates(dir: string): Promise<{ certDir: string; ca: Buffer }> {
  const certDir = join(dir, 'certs');
  mkdirSync(certDir);
  const certs = await generateCertificates(certDir, { ipAddresses: ['::1'], dnsNames: ['localhost'], days: 1 });
  copyFileSync(certs.serverCert, join(certDir, 'tls.crt'));
  copyFileSync(certs.serverKey, join(certDir, 'tls.key'));
  copyFileSync(certs.caCert, join(certDir, 'ca.crt'));
  return { certDir, ca: readFileSync(certs.caCert) };
}

export async function runWebhookBench(opts: WebhookBenchOptions = {}): Promise<WebhookBenchResult> {
  requireH2load();
  const durationSeconds = opts.durationSeconds ?? 10;
  // h2load takes whole seconds.
  const sliceSeconds = Math.max(1, Math.round(Math.min(opts.sliceSeconds ?? 2, durationSeconds)));
  const slices = Math.max(1, Math.round(durationSeconds / sliceSeconds));
  const rounds = opts.rounds ?? 2;
  const rssSeconds = opts.rssSeconds ?? 60;
  const rssWarmupSeconds = opts.rssWarmupSeconds ?? 90;
  const loads = opts.loads ?? LOADS;
  const targets: readonly Target[] = ['baseline', ...(opts.targets ?? TARGETS.filter((t) => t !== 'baseline'))];
  const dir = mkdtempSync(join(tmpdir(), 'gardener-ipv6-bench-webhook-'));
  const cp = await startControlPlane({ log: () => {} });
  const servers: ServerProcess[] = [];
  try {
    const kc = cp.kubeConfig();
    const client = new ResourceClient(kc);
    await createSeedAndCloudProfile(client);
    const { certDir, ca } = await serverCertificates(dir);

    const bodies = {} as Record<Target, string>;
    const bodyFiles = {} as Record<Target, string>;
    for (const target of TARGETS) {
      bodies[target] = target === 'baseline' ? shootReview('valid') : shootReview(target);
      bodyFiles[target] = join(dir, `${target}.json`);
      writeFileSync(bodyFiles[target], bodies[target]);
    }

    const profileDir = (server: string) => (opts.cpuProfileDir ? join(opts.cpuProfileDir, server) : undefined);
    const baseline = await startBaseline(certDir, dir, profileDir('baseline'));
    servers.push(baseline);
    const webhook = await startWebhook(cp.kubeconfigPath, certDir, dir, profileDir('webhook'));
    servers.push(webhook);
    await preflight(webhook.port, bodies, ca);

    const apiPids = cp.processes.filter((p) => p.name !== 'kube-controller-manager').map((p) => p.pid);
    const apiCpu = () => apiPids.reduce((sum, pid) => sum + cpuMicros(pid), 0);
    const serverOf = (target: Target) => (target === 'baseline' ? baseline : webhook);

    // Warm-up (JIT, connections): a few seconds of each scenario at full speed, not measured.
    for (const target of targets) {
      await h2load(reviewRequest(serverOf(target).port, bodyFiles[target]), 2, undefined, join(dir, 'warmup.log'));
    }

    const runs = new Map<
      string,
      { run: H2LoadRun; p99Ms: number; cpu: number; apiCpu: number; seeds: number; all: number; logBytes: number }[]
    >();
    for (let round = 0; round < rounds; round++) {
      for (const load of loads) {
        for (let slice = 0; slice < slices; slice++) {
          // Rotate the order from slice to slice and reverse it every other round, so no target always runs first or
          // right after another.
          const turn = round * slices + slice;
          const order = targets.map((_, i) => targets[(i + turn) % targets.length]!);
          for (const target of round % 2 === 0 ? order : [...order].reverse()) {
            const server = serverOf(target);
            const before = {
              cpu: cpuMicros(server.child.pid!),
              apiCpu: apiCpu(),
              requests: await apiRequestCounts(kc),
              log: statSync(server.logFile).size,
            };
            const run = await h2load(
              reviewRequest(server.port, bodyFiles[target]),
              sliceSeconds,
              load,
              join(dir, 'latency.log'),
            );
            const requests = await apiRequestCounts(kc);
            const key = JSON.stringify([target, load ?? null]);
            const measured = {
              run,
              p99Ms: percentile(run.latencies, 99),
              cpu: cpuMicros(server.child.pid!) - before.cpu,
              apiCpu: apiCpu() - before.apiCpu,
              seeds: requests.seeds - before.requests.seeds,
              // The two scrapes' own requests are not resource requests; the seeds' informer watch may end here.
              all: requests.all - before.requests.all,
              logBytes: statSync(server.logFile).size - before.log,
            };
            runs.set(key, [...(runs.get(key) ?? []), measured]);
            process.stderr.write(
              `round ${round + 1}/${rounds} slice ${slice + 1}/${slices} ${target} @ ${load ?? 'max'}: ` +
                `${run.reviews} reviews, ${(run.reviews / run.seconds).toFixed(0)}/s, ` +
                `p99 ${measured.p99Ms.toFixed(2)} ms, ${(measured.cpu / Math.max(1, run.reviews)).toFixed(0)} µs CPU ` +
                `per review, ${measured.seeds} seed requests\n`,
            );
          }
        }
      }
    }

    const results: LoadResult[] = [];
    for (const load of loads) {
      for (const target of targets) {
        const list = runs.get(JSON.stringify([target, load ?? null])) ?? [];
        const latencies = list.flatMap((r) => r.run.latencies).sort((a, b) => a - b);
        const reviews = list.reduce((s, r) => s + r.run.reviews, 0);
        const sum = (f: (r: (typeof list)[number]) => number) => list.reduce((s, r) => s + f(r), 0);
        results.push({
          target,
          load,
          reviews,
          reviewsPerSecond: reviews / sum((r) => r.run.seconds),
          p50Ms: percentile(latencies, 50),
          p90Ms: percentile(latencies, 90),
          p99Ms: percentile(latencies, 99),
          sliceP99MedianMs: percentile(
            list.map((r) => r.p99Ms).sort((a, b) => a - b),
            50,
          ),
          maxMs: latencies[latencies.length - 1] ?? NaN,
          errors: sum((r) => r.run.errors),
          cpuMicrosPerReview: sum((r) => r.cpu) / reviews,
          apiServerCpuMicrosPerReview: sum((r) => r.apiCpu) / reviews,
          seedRequestsPerReview: sum((r) => r.seeds) / reviews,
          apiRequestsPerReview: sum((r) => r.all) / reviews,
          logBytesPerReview: sum((r) => r.logBytes) / reviews,
        });
      }
    }

    return { results, rss: rssSeconds > 0 ? await measureRSS() : undefined, rounds, durationSeconds, sliceSeconds };

    /** RSS over time at a steady 1000 reviews/s with seed context, after a warm-up at that load. */
    async function measureRSS(): Promise<RSSResult> {
      const warmupSamples: number[] = [];
      let sampler = setInterval(() => warmupSamples.push(rssMiB(webhook.child.pid!)), 1000);
      if (rssWarmupSeconds > 0) {
        await h2load(
          reviewRequest(webhook.port, bodyFiles['valid+seed']),
          rssWarmupSeconds,
          1000,
          join(dir, 'rss.log'),
        );
      }
      clearInterval(sampler);
      const samples: number[] = [];
      sampler = setInterval(() => samples.push(rssMiB(webhook.child.pid!)), 1000);
      const rssRun = await h2load(
        reviewRequest(webhook.port, bodyFiles['valid+seed']),
        rssSeconds,
        1000,
        join(dir, 'rss.log'),
      );
      clearInterval(sampler);
      return {
        seconds: rssSeconds,
        warmupSeconds: rssWarmupSeconds,
        warmupSamples,
        reviews: rssRun.reviews,
        errors: rssRun.errors,
        samples,
        heap: await heapMiB(webhook.healthPort!),
      };
    }
  } finally {
    for (const server of servers) await stopServer(server).catch(() => {});
    await cp.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const fmt = (n: number, digits = 0) =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : '-';

/** The report: one table per load, then the ratios the issue asks for. */
export function formatWebhookBench(r: WebhookBenchResult): string {
  const lines: string[] = [];
  lines.push(
    `${r.rounds} rounds of ${r.durationSeconds} s per scenario and load, in slices of ${r.sliceSeconds} s that take ` +
      `turns across the scenarios; ${CONNECTIONS} connections, /mutate and /validate alternating; latencies pooled`,
  );
  const loads = LOADS.filter((load) => r.results.some((x) => x.load === load));
  for (const load of loads) {
    lines.push('', `## ${load === undefined ? 'full speed' : `${load} reviews/s`}`, '');
    lines.push(
      '| target | reviews/s | p50 ms | p90 ms | p99 ms | median slice p99 ms | max ms | errors | CPU µs/review | apiserver+etcd CPU µs/review | seed requests/review | API requests/review | log bytes/review |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    );
    for (const x of r.results.filter((x) => x.load === load)) {
      lines.push(
        `| ${x.target} | ${fmt(x.reviewsPerSecond)} | ${fmt(x.p50Ms, 2)} | ${fmt(x.p90Ms, 2)} | ${fmt(x.p99Ms, 2)} | ` +
          `${fmt(x.sliceP99MedianMs, 2)} | ` +
          `${fmt(x.maxMs, 1)} | ${x.errors} | ${fmt(x.cpuMicrosPerReview)} | ${fmt(x.apiServerCpuMicrosPerReview)} | ` +
          `${fmt(x.seedRequestsPerReview, 3)} | ${fmt(x.apiRequestsPerReview, 3)} | ${fmt(x.logBytesPerReview)} |`,
      );
    }
  }
  const at = (target: Target, load: Load) => r.results.find((x) => x.target === target && x.load === load);
  const ratio = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined ? '-' : `${fmt(a / b, 2)}x`;
  lines.push('', '## ratios', '');
  for (const load of [200, 1000] as const) {
    for (const target of ['valid+seed', 'invalid+seed', 'valid', 'invalid'] as const) {
      if (!at(target, load)) continue;
      lines.push(
        `p99 at ${load}/s, ${target} / baseline: ${ratio(at(target, load)?.p99Ms, at('baseline', load)?.p99Ms)} ` +
          `(median slice p99: ${ratio(at(target, load)?.sliceP99MedianMs, at('baseline', load)?.sliceP99MedianMs)})`,
      );
    }
  }
  for (const [withSeed, without] of [
    ['valid+seed', 'valid'],
    ['invalid+seed', 'invalid'],
  ] as const) {
    const full = (target: Target) => at(target, undefined)?.reviewsPerSecond;
    if (full(withSeed) === undefined) continue;
    lines.push(
      `max throughput ${withSeed} / ${without}: ${ratio(full(withSeed), full(without))}; ` +
        `${withSeed} / baseline: ${ratio(full(withSeed), full('baseline'))}`,
    );
  }
  const cpu = (target: Target) => {
    const list = r.results.filter((x) => x.target === target);
    return list.reduce((s, x) => s + x.cpuMicrosPerReview * x.reviews, 0) / list.reduce((s, x) => s + x.reviews, 0);
  };
  for (const target of TARGETS) {
    if (r.results.some((x) => x.target === target)) {
      lines.push(`CPU per review over all loads, ${target}: ${fmt(cpu(target))} µs`);
    }
  }
  if (r.rss === undefined) return lines.join('\n');
  const s = r.rss.samples;
  // The second 10 s: the heap refills for a few seconds after a full collection that may just have happened.
  const head = s.slice(10, 20);
  const tail = s.slice(-10);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  lines.push(
    `RSS over ${r.rss.seconds} s at 1000 reviews/s after ${r.rss.warmupSeconds} s at that load (valid+seed, ` +
      `${r.rss.reviews} reviews, ${r.rss.errors} errors): ` +
      `${fmt(mean(head), 1)} MiB (s 10-20) -> ${fmt(mean(tail), 1)} MiB (last 10 s), min ${fmt(Math.min(...s), 1)}, ` +
      `max ${fmt(Math.max(...s), 1)} MiB ` +
      `(${fmt((100 * (mean(tail) - mean(head))) / mean(head), 1)} %)`,
  );
  const { heap } = r.rss;
  lines.push(
    `V8 heap at the end: ${fmt(heap.committed, 1)} MiB committed (${fmt(heap.used, 1)} MiB used), external ` +
      `${fmt(heap.external, 1)} MiB; the rest of the RSS is code, stacks and native allocations (TLS, buffers)`,
  );
  lines.push(`RSS samples of the warm-up (MiB, 1/s): ${r.rss.warmupSamples.map((x) => x.toFixed(0)).join(' ')}`);
  lines.push(`RSS samples (MiB, 1/s): ${s.map((x) => x.toFixed(0)).join(' ')}`);
  return lines.join('\n');
}
