/**
 * `npm run conformance -- --shoot garden-local/local [--focus REGEX]`: runs Kubernetes' own end-to-end tests
 * (`e2e.test` of the pinned release, hack/ensure-binaries.sh) against a shoot, with an admin kubeconfig of it (as
 * `gardener-ipv6 kubeconfig --pin-address`), prints the passed/failed/skipped counts and keeps the JUnit report
 * (`junit_01.xml`) and the suite's output (`e2e.log`) in the report folder.
 * Tests that can't apply to the local shoots are listed, each with its reason, in hack/conformance-skips.yaml.
 *
 * Options: --kubeconfig FILE (the garden's; $KUBECONFIG when omitted), --shoot-kubeconfig FILE (instead of --shoot),
 * --focus REGEX (default: the sig-network conformance tests), --skip-file FILE, --report-dir DIR (default
 * .cache/conformance/<time>), --timeout 90m, --procs N (parallel Ginkgo nodes; default 4, or
 * GARDENER_IPV6_CONFORMANCE_PROCS; 1 runs e2e.test alone).
 */
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse } from 'yaml';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The `[sig-network] … [Conformance]` tests. */
export const SIG_NETWORK_CONFORMANCE = String.raw`\[sig-network\].*\[Conformance\]`;
/**
 * KEP-2681's tests of a pod's host IPs (`status.hostIP`, `status.hostIPs` and their downward API), which a dual-stack
 * shoot passes with one address per family (`[Feature:IPv6DualStack]` has the dual-stack one of them).
 */
export const HOST_IPS = String.raw`\[sig-node\] (Pods should get a host IP|Downward API should provide (host IP|hostIPs))`;
export const DEFAULT_SKIP_FILE = join(ROOT, 'hack', 'conformance-skips.yaml');

export interface SkipEntry {
  /** A regular expression matched against the test's full name. */
  readonly test: string;
  readonly reason: string;
}

/** The skip file's entries; each needs a test pattern that compiles and a reason. */
export function readSkips(file: string): SkipEntry[] {
  const doc = parse(readFileSync(file, 'utf8')) as { skips?: unknown } | null;
  const skips = (doc?.skips ?? []) as unknown[];
  if (!Array.isArray(skips)) throw new Error(`${file}: skips must be a list`);
  return skips.map((s, i) => {
    const entry = s as Partial<SkipEntry>;
    if (typeof entry?.test !== 'string' || entry.test === '') throw new Error(`${file}: skips[${i}].test: Required`);
    if (typeof entry.reason !== 'string' || entry.reason.trim() === '') {
      throw new Error(`${file}: skips[${i}].reason: Required value: say why the test can't apply`);
    }
    new RegExp(entry.test);
    return { test: entry.test, reason: entry.reason };
  });
}

export interface TestResult {
  readonly name: string;
  readonly state: 'passed' | 'failed' | 'skipped';
  readonly seconds: number;
  /** The failure's message, or why the test skipped itself. */
  readonly message?: string;
}

const unescapeXml = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#xA;/g, '\n')
    .replace(/&#x9;/g, '\t')
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCharCode(Number(d)))
    .replace(/&amp;/g, '&');

/** The test cases of Ginkgo's JUnit report (`[It] ` dropped from their names). */
export function parseJUnit(xml: string): TestResult[] {
  const results: TestResult[] = [];
  for (const m of xml.matchAll(/<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const attrs = m[1]!;
    const body = m[3] ?? '';
    const attr = (name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(attrs)?.[1];
    const name = unescapeXml(attr('name') ?? '').replace(/^\[It\]\s*/, '');
    const status = attr('status');
    const failure = /<(failure|error)\b([^>]*)>/.exec(body);
    const skipped = /<skipped\b([^>]*)\/?>/.exec(body);
    const message = (tag: RegExpExecArray | null, index: number) =>
      tag ? unescapeXml(/message="([^"]*)"/.exec(tag[index]!)?.[1] ?? '') : undefined;
    const state: TestResult['state'] = failure
      ? 'failed'
      : skipped || status === 'skipped' || status === 'pending'
        ? 'skipped'
        : 'passed';
    const text = state === 'failed' ? message(failure, 2) : state === 'skipped' ? message(skipped, 1) : undefined;
    results.push({
      name,
      state,
      seconds: Number(attr('time') ?? 0),
      ...(text ? { message: text } : {}),
    });
  }
  return results;
}

export interface Summary {
  readonly passed: TestResult[];
  readonly failed: TestResult[];
  /** Listed in the skip file. */
  readonly listed: TestResult[];
  /** Skipped by the test itself (a provider, a feature or a node count it needs). */
  readonly skippedByTest: TestResult[];
}

/** The results of the focused tests; the others (Ginkgo reports every spec, unfocused ones skipped) are left out. */
export function summarize(results: readonly TestResult[], focus: string, skips: readonly SkipEntry[]): Summary {
  const focused = new RegExp(focus);
  const isListed = (name: string) => skips.some((s) => new RegExp(s.test).test(name));
  const mine = results.filter((r) => focused.test(r.name));
  return {
    passed: mine.filter((r) => r.state === 'passed'),
    failed: mine.filter((r) => r.state === 'failed'),
    listed: mine.filter((r) => r.state === 'skipped' && isListed(r.name)),
    skippedByTest: mine.filter((r) => r.state === 'skipped' && !isListed(r.name)),
  };
}

export interface ConformanceOptions {
  /** The shoot's kubeconfig. */
  readonly kubeconfig: string;
  readonly focus?: string;
  readonly skipFile?: string;
  readonly reportDir: string;
  /** Ginkgo's suite timeout, e.g. `90m`. */
  readonly timeout?: string;
  /** e2e.test and ginkgo. @default .cache/bin's, built by hack/ensure-binaries.sh */
  readonly binaries?: E2EBinaries;
  /** Parallel Ginkgo nodes; 1 runs e2e.test alone. @default defaultProcs() */
  readonly procs?: number;
  /** Where kubectl is (some tests run it). @default .cache/bin */
  readonly binDir?: string;
  /** e2e.test's output, line by line. @default process.stdout */
  readonly log?: (chunk: string) => void;
}

export interface ConformanceRun extends Summary {
  readonly exitCode: number;
  readonly junit: string;
  readonly seconds: number;
}

export interface E2EBinaries {
  readonly e2eTest: string;
  /** The Ginkgo CLI of the version e2e.test requires, which runs it on parallel nodes. */
  readonly ginkgo: string;
}

/**
 * Builds e2e.test and ginkgo if missing or stale (instant when cached; waits for a build another run started). Inside
 * `npm test`'s IPv6-only namespace, which has no route to the Go module proxy, the build runs in the host's network
 * namespace (hack/test-in-netns.mjs names it in GARDENER_IPV6_HOST_NETNS).
 */
export function ensureE2EBinaries(): E2EBinaries {
  const script = ['bash', join(ROOT, 'hack', 'ensure-binaries.sh'), '@test'];
  const hostNetns = process.env.GARDENER_IPV6_NETNS ? process.env.GARDENER_IPV6_HOST_NETNS : undefined;
  const argv = hostNetns ? ['nsenter', `--net=${hostNetns}`, '--', ...script] : script;
  const r = spawnSync(argv[0]!, argv.slice(1), {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, GARDENER_IPV6_QUIET_CACHED: '1' },
  });
  if (r.status !== 0) throw new Error(`hack/ensure-binaries.sh @test failed (exit ${r.status})`);
  const bin = join(ROOT, '.cache', 'bin');
  return { e2eTest: join(bin, 'e2e.test'), ginkgo: join(bin, 'ginkgo') };
}

/** Whether this network namespace has IPv4's loopback address (an IPv6-only one, as `npm test`'s, has not). */
export function hasIPv4Loopback(): boolean {
  return Object.values(networkInterfaces()).some((addresses) =>
    (addresses ?? []).some((a) => a.family === 'IPv4' && a.address === '127.0.0.1'),
  );
}

/**
 * Parallel Ginkgo nodes (GARDENER_IPV6_CONFORMANCE_PROCS, default 4: the tests mostly wait on the cluster). One where
 * 127.0.0.1 does not exist: the Ginkgo CLI's server for its parallel nodes listens on 127.0.0.1 only
 * (internal/parallel_support in Ginkgo v2), so in `npm test`'s IPv6-only namespace e2e.test runs alone.
 */
export function defaultProcs(env: NodeJS.ProcessEnv = process.env, ipv4Loopback = hasIPv4Loopback()): number {
  const value = env.GARDENER_IPV6_CONFORMANCE_PROCS;
  if (value === undefined || value === '') return ipv4Loopback ? 4 : 1;
  if (!/^[1-9]\d*$/.test(value)) throw new Error(`GARDENER_IPV6_CONFORMANCE_PROCS=${value}: must be a positive number`);
  return Number(value);
}

/**
 * The command line that runs the focused tests: e2e.test itself on one node, else the Ginkgo CLI with PROCS parallel
 * nodes over the prebuilt e2e.test (as Kubernetes' hack/ginkgo-e2e.sh runs it); Ginkgo's own flags go to the CLI,
 * which hands each node its share, and the suite's flags after `--`.
 */
export function conformanceCommand(opts: {
  readonly binaries: E2EBinaries;
  readonly procs: number;
  readonly ginkgoFlags: readonly string[];
  readonly suiteFlags: readonly string[];
}): string[] {
  if (opts.procs <= 1) {
    return [opts.binaries.e2eTest, ...opts.suiteFlags, ...opts.ginkgoFlags.map((f) => f.replace(/^--/, '--ginkgo.'))];
  }
  return [
    opts.binaries.ginkgo,
    `--procs=${opts.procs}`,
    ...opts.ginkgoFlags,
    opts.binaries.e2eTest,
    '--',
    ...opts.suiteFlags,
  ];
}

/** Runs e2e.test with the focus against the cluster of `kubeconfig` and reads its JUnit report. */
export async function runConformance(opts: ConformanceOptions): Promise<ConformanceRun> {
  const focus = opts.focus ?? SIG_NETWORK_CONFORMANCE;
  const skips = readSkips(opts.skipFile ?? DEFAULT_SKIP_FILE);
  const binaries = opts.binaries ?? ensureE2EBinaries();
  const binDir = opts.binDir ?? join(ROOT, '.cache', 'bin');
  mkdirSync(opts.reportDir, { recursive: true });
  const command = conformanceCommand({
    binaries,
    procs: opts.procs ?? defaultProcs(),
    ginkgoFlags: [
      `--focus=${focus}`,
      ...(skips.length > 0 ? [`--skip=${skips.map((s) => `(${s.test})`).join('|')}`] : []),
      `--timeout=${opts.timeout ?? '90m'}`,
      '--no-color',
      '--succinct',
    ],
    suiteFlags: [
      `--kubeconfig=${opts.kubeconfig}`,
      // No cloud: tests that need one skip themselves.
      '--provider=skeleton',
      `--report-dir=${opts.reportDir}`,
      // The suite's own log dump on failure reads every node's logs through the API server: slow, and the JUnit
      // report has the failure.
      '--dump-logs-on-failure=false',
      `--kubectl-path=${join(binDir, 'kubectl')}`,
    ],
  });
  const started = Date.now();
  const logFile = createWriteStream(join(opts.reportDir, 'e2e.log'));
  const toCaller = opts.log ?? ((chunk: string) => process.stdout.write(chunk));
  const log = (chunk: string) => {
    logFile.write(chunk);
    toCaller(chunk);
  };
  // The suite leaves temporary folders behind (kubectl's kuberc tests make theirs when the suite loads).
  const tmp = mkdtempSync(join(tmpdir(), 'conformance-'));
  const exitCode = await new Promise<number>((done, fail) => {
    const child = spawn(command[0]!, command.slice(1), {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PATH: `${binDir}:${process.env.PATH ?? ''}`, KUBECONFIG: opts.kubeconfig, TMPDIR: tmp },
    });
    child.stdout.setEncoding('utf8').on('data', log);
    child.stderr.setEncoding('utf8').on('data', log);
    child.on('error', fail);
    child.on('close', (code) => done(code ?? 1));
  }).finally(() => {
    rmSync(tmp, { recursive: true, force: true });
    return new Promise((closed) => logFile.end(closed));
  });
  const junit = join(opts.reportDir, 'junit_01.xml');
  if (!existsSync(junit)) throw new Error(`e2e.test exited ${exitCode} without a JUnit report (${junit})`);
  const summary = summarize(parseJUnit(readFileSync(junit, 'utf8')), focus, skips);
  return { ...summary, exitCode, junit, seconds: Math.round((Date.now() - started) / 1000) };
}

export function formatSummary(run: ConformanceRun): string {
  const lines = [
    `${run.passed.length} passed, ${run.failed.length} failed, ${run.listed.length + run.skippedByTest.length} skipped ` +
      `(${run.listed.length} listed in the skip file, ${run.skippedByTest.length} by the tests) in ${run.seconds}s`,
    ...run.failed.map((r) => `FAILED  ${r.name}\n        ${(r.message ?? '').split('\n')[0]}`),
    ...run.skippedByTest.map((r) => `SKIPPED ${r.name}: ${(r.message ?? '').split('\n')[0]}`),
    `JUnit report: ${run.junit}`,
  ];
  return lines.join('\n') + '\n';
}

async function main(argv: string[]): Promise<number> {
  const value = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith(`${flag}=`))?.slice(flag.length + 1);
  };
  const positive = (flag: string, v: string) => {
    if (!/^[1-9]\d*$/.test(v)) throw new Error(`${flag} ${v}: must be a positive number`);
    return Number(v);
  };
  const shoot = value('--shoot');
  let kubeconfig = value('--shoot-kubeconfig');
  const reportDir = resolve(
    value('--report-dir') ?? join(ROOT, '.cache', 'conformance', new Date().toISOString().replace(/[:.]/g, '-')),
  );
  if (!kubeconfig) {
    if (!shoot) {
      process.stderr.write('error: --shoot NAMESPACE/NAME (or --shoot-kubeconfig FILE) is required\n');
      return 2;
    }
    const { runKubeconfig } = await import('../src/cli/kubeconfig.js');
    let out = '';
    const code = await runKubeconfig(
      { shoot, kubeconfig: value('--kubeconfig'), expiration: '6h', pinAddress: true },
      { out: (t) => (out += t), err: (t) => process.stderr.write(t) },
    );
    if (code !== 0) return code;
    mkdirSync(reportDir, { recursive: true });
    kubeconfig = join(reportDir, 'shoot.kubeconfig');
    writeFileSync(kubeconfig, out, { mode: 0o600 });
  }
  const run = await runConformance({
    kubeconfig,
    focus: value('--focus'),
    skipFile: value('--skip-file'),
    reportDir,
    timeout: value('--timeout'),
    procs: value('--procs') === undefined ? undefined : positive('--procs', value('--procs')!),
  });
  process.stdout.write('\n' + formatSummary(run));
  return run.failed.length > 0 || (run.exitCode !== 0 && run.passed.length === 0) ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  process.exitCode = await main(process.argv.slice(2)).catch((e: Error) => {
    process.stderr.write(`error: ${e.message}\n`);
    return 2;
  });
}
