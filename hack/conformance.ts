/**
 * `npm run conformance -- --shoot garden-local/local [--set sig-network,netpol]`: runs Kubernetes' own end-to-end tests
 * (`e2e.test` of the pinned release, hack/ensure-binaries.sh) against a shoot, with an admin kubeconfig of it (as
 * `gardener-ipv6 kubeconfig --pin-address`), prints the passed/failed/skipped counts and keeps the JUnit report
 * (`junit_01.xml`) and the suite's output (`e2e.log`) in the report folder.
 * Tests that can't apply to the local shoots are listed, each with its reason, in hack/conformance-skips.yaml; an
 * entry with `when` applies only to shoots of that trait ({@link ShootTraits}).
 *
 * Options: --kubeconfig FILE (the garden's; $KUBECONFIG when omitted), --shoot-kubeconfig FILE (instead of --shoot),
 * --set NAME[,NAME] (named sets of tests, {@link TEST_SETS}; default `conformance`), --focus REGEX (instead of the
 * sets, or within them when both are given), --skip-file FILE, --report-dir DIR (default .cache/conformance/<time>),
 * --timeout 90m (each test's), --procs N (tests at once; default 4, or GARDENER_IPV6_CONFORMANCE_PROCS), --list (print
 * the selected tests, serial ones marked, and the listed skips, without a cluster), --overlay (the cluster's pods reach
 * other Nodes through a tunnel: for --shoot-kubeconfig and --list; with --shoot it is read from the Shoot).
 *
 * Parallel runs without Ginkgo's server: the Ginkgo CLI's parallel nodes report to a server that listens on 127.0.0.1
 * alone (internal/parallel_support in Ginkgo v2), which `npm test`'s IPv6-only namespace and an IPv6-only host don't
 * have. So the runner lists the focused tests itself (`e2e.test --list-tests`) and runs each in an e2e.test process of
 * its own, PROCS at a time, tests marked `[Serial]` or `[Disruptive]` one by one after the others (as Ginkgo orders
 * them), and merges the reports.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Shoot } from '../src/apis/core/v1beta1/shoot.js';
import { errorString, notSupported } from '../src/apis/field/errors.js';
import { FieldPath } from '../src/apis/field/path.js';
import { podNetworkSettings } from '../src/gardenlet/shoot/components/worker.js';
import { NETNS_ENV } from '../src/system/netns.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The `[sig-network] … [Conformance]` tests. */
export const SIG_NETWORK_CONFORMANCE = String.raw`\[sig-network\].*\[Conformance\]`;
/**
 * KEP-2681's tests of a pod's host IPs (`status.hostIP`, `status.hostIPs` and their downward API), which a dual-stack
 * shoot passes with one address per family (`[Feature:IPv6DualStack]` has the dual-stack one of them).
 */
export const HOST_IPS = String.raw`\[sig-node\] (Pods should get a host IP|Downward API should provide (host IP|hostIPs))`;
export const DEFAULT_SKIP_FILE = join(ROOT, 'hack', 'conformance-skips.yaml');

/** Which tests of the suite a run takes, by full name. */
export type TestFilter = (name: string) => boolean;

export interface TestSet {
  readonly description: string;
  readonly includes: TestFilter;
}

/** Tags of tests that need a feature a cluster may lack, its whole self, or much time (upstream's CI runs them apart). */
const SPECIAL_TAGS = /\[(Feature:[^\]]*|Serial|Disruptive|Slow|Flaky)\]/;
const SIG_NETWORK_CONFORMANCE_RE = new RegExp(SIG_NETWORK_CONFORMANCE);
const HOST_IPS_RE = new RegExp(HOST_IPS);

/** The named sets of `--set`: what each runs of the pinned suite. */
export const TEST_SETS = {
  conformance: {
    description: 'the [sig-network] … [Conformance] tests',
    includes: (name) => SIG_NETWORK_CONFORMANCE_RE.test(name),
  },
  'sig-network': {
    description: 'every [sig-network] test without a Feature, Serial, Disruptive, Slow or Flaky tag',
    includes: (name) => name.startsWith('[sig-network] ') && !SPECIAL_TAGS.test(name),
  },
  netpol: {
    description: 'the [Feature:NetworkPolicy] tests',
    includes: (name) => name.includes('[Feature:NetworkPolicy]'),
  },
  'dual-stack': {
    description: "KEP-563's [Feature:IPv6DualStack] tests and KEP-2681's host IP tests",
    includes: (name) => name.includes('[Feature:IPv6DualStack]') || HOST_IPS_RE.test(name),
  },
} as const satisfies Record<string, TestSet>;

export type TestSetName = keyof typeof TEST_SETS;

/** The sets' names as given (`--set a,b`); an unknown name is an error naming the known ones. */
export function parseTestSets(value: string): TestSetName[] {
  const names = value.split(',').map((n) => n.trim());
  for (const name of names) {
    if (!Object.hasOwn(TEST_SETS, name)) {
      throw new Error(
        `--set ${value}: unknown set ${JSON.stringify(name)}; known: ${Object.keys(TEST_SETS).join(', ')}`,
      );
    }
  }
  return [...new Set(names)] as TestSetName[];
}

/**
 * The tests of any of `sets`, narrowed to `focus` (a regular expression over the full name) when given; `focus`
 * alone when no set is given; the `conformance` set when neither is.
 */
export function testFilter(sets: readonly TestSetName[] = [], focus?: string): TestFilter {
  const focused = focus === undefined ? undefined : new RegExp(focus);
  const named = sets.length === 0 && focused === undefined ? (['conformance'] as const) : sets;
  return (name) =>
    (named.length === 0 || named.some((set) => TEST_SETS[set].includes(name))) && (focused?.test(name) ?? true);
}

/**
 * What a shoot under test is, as far as a test's applying depends on it: `overlay`, its pods reach other Nodes
 * through calico's tunnel (a pool of mode `Always`), from the tunnel address calico gives each Node.
 */
export interface ShootTraits {
  readonly overlay: boolean;
}

/** The traits a skip can be conditional on (`when`). */
export const SKIP_CONDITIONS = ['overlay'] as const satisfies readonly (keyof ShootTraits)[];
export type SkipCondition = (typeof SKIP_CONDITIONS)[number];

export interface SkipEntry {
  /** A regular expression matched against the test's full name. */
  readonly test: string;
  readonly reason: string;
  /** Only on a shoot of this trait; on every shoot when absent. */
  readonly when?: SkipCondition;
}

/** A Shoot's traits: whether the pools its network puts in force tunnel between Nodes, as the machines decide it. */
export function shootTraits(shoot: Shoot): ShootTraits {
  return { overlay: podNetworkSettings(shoot).pools.some((p) => p.mode === 'Always') };
}

/** The entries that apply to a shoot of TRAITS: the unconditional ones, and those whose trait it has. */
export function skipsFor(skips: readonly SkipEntry[], traits: ShootTraits | undefined): SkipEntry[] {
  return skips.filter((s) => s.when === undefined || traits?.[s.when] === true);
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
    if (entry.when !== undefined && !(SKIP_CONDITIONS as readonly unknown[]).includes(entry.when)) {
      const path = FieldPath.root('skips').index(i).child('when');
      throw new Error(`${file}: ${errorString(notSupported(path, entry.when, SKIP_CONDITIONS))}`);
    }
    new RegExp(entry.test);
    return { test: entry.test, reason: entry.reason, ...(entry.when === undefined ? {} : { when: entry.when }) };
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

/** Whether a test's full name is in the run (a filter, or a regular expression), and whether the skip file lists it. */
function testMatchers(select: TestFilter | string, skips: readonly SkipEntry[]) {
  const patterns = skips.map((s) => new RegExp(s.test));
  return {
    focused: typeof select === 'string' ? testFilter([], select) : select,
    isListed: (name: string) => patterns.some((p) => p.test(name)),
  };
}

/** The results of the focused tests; the others (Ginkgo reports every spec, unfocused ones skipped) are left out. */
export function summarize(
  results: readonly TestResult[],
  select: TestFilter | string,
  skips: readonly SkipEntry[],
): Summary {
  const { focused, isListed } = testMatchers(select, skips);
  const mine = results.filter((r) => focused(r.name));
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
  /** Named sets of tests. @default ['conformance'] unless `focus` is given */
  readonly sets?: readonly TestSetName[];
  /** A regular expression over the tests' full names: instead of the sets, or within them. */
  readonly focus?: string;
  readonly skipFile?: string;
  /** What the shoot is, for the skips conditional on it; unknown: those don't apply. */
  readonly traits?: ShootTraits;
  readonly reportDir: string;
  /** Each e2e.test process's Ginkgo timeout, e.g. `90m`. */
  readonly timeout?: string;
  /** e2e.test. @default .cache/bin's, built by hack/ensure-binaries.sh */
  readonly binaries?: E2EBinaries;
  /** Tests run at once, each in an e2e.test process of its own. @default defaultProcs() */
  readonly procs?: number;
  /** Where kubectl is (some tests run it). @default .cache/bin */
  readonly binDir?: string;
  /** A line per finished test, and the output of each failed one. @default process.stdout */
  readonly log?: (chunk: string) => void;
}

export interface ConformanceRun extends Summary {
  /** 0, or the first non-zero exit code of an e2e.test process. */
  readonly exitCode: number;
  /** The merged JUnit report of every test run (each process's own is in tests/<n>/ beside it). */
  readonly junit: string;
  readonly seconds: number;
}

export interface E2EBinaries {
  readonly e2eTest: string;
}

/**
 * Builds e2e.test if missing or stale (instant when cached; waits for a build another run started). Inside `npm
 * test`'s IPv6-only namespace, which has no route to the Go module proxy, the build runs in the host's network
 * namespace (hack/test-in-netns.mjs names it in GARDENER_IPV6_HOST_NETNS).
 */
export function ensureE2EBinaries(): E2EBinaries {
  const script = ['bash', join(ROOT, 'hack', 'ensure-binaries.sh'), '@test'];
  const hostNetns = process.env[NETNS_ENV] ? process.env.GARDENER_IPV6_HOST_NETNS : undefined;
  const argv = hostNetns ? ['nsenter', `--net=${hostNetns}`, '--', ...script] : script;
  const r = spawnSync(argv[0]!, argv.slice(1), {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, GARDENER_IPV6_QUIET_CACHED: '1' },
  });
  if (r.status !== 0) throw new Error(`hack/ensure-binaries.sh @test failed (exit ${r.status})`);
  return { e2eTest: join(ROOT, '.cache', 'bin', 'e2e.test') };
}

/** Tests at once (GARDENER_IPV6_CONFORMANCE_PROCS, default 4: the tests mostly wait on the cluster). */
export function defaultProcs(env: NodeJS.ProcessEnv = process.env): number {
  const value = env.GARDENER_IPV6_CONFORMANCE_PROCS;
  if (value === undefined || value === '') return 4;
  if (!/^[1-9]\d*$/.test(value)) throw new Error(`GARDENER_IPV6_CONFORMANCE_PROCS=${value}: must be a positive number`);
  return Number(value);
}

/** The full names of `e2e.test --list-tests` (`path:line: name` lines). */
export function parseTestList(text: string): string[] {
  const names: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*\S+:\d+: (.+?)\s*$/.exec(line);
    if (m) names.push(m[1]!);
  }
  return names;
}

export interface Selection {
  /** The tests to run, those Ginkgo would run on parallel nodes first, then the `[Serial]` and `[Disruptive]` ones. */
  readonly parallel: string[];
  readonly serial: string[];
  /** Focused but listed in the skip file: not run. */
  readonly listed: string[];
}

/** The focused tests of NAMES, without the listed ones, in the order they run. */
export function selectTests(
  names: readonly string[],
  select: TestFilter | string,
  skips: readonly SkipEntry[],
): Selection {
  const { focused, isListed } = testMatchers(select, skips);
  const mine = [...new Set(names)].filter(focused);
  const run = mine.filter((n) => !isListed(n));
  const serial = (n: string) => /\[(Serial|Disruptive)\]/.test(n);
  return { parallel: run.filter((n) => !serial(n)), serial: run.filter(serial), listed: mine.filter(isListed) };
}

/**
 * A Ginkgo focus (Go's RE2 syntax) that matches exactly the test of this full name. Not anchored at `^`: the text
 * Ginkgo matches starts with a blank before the name `--list-tests` prints.
 */
export function exactFocus(name: string): string {
  return `(^|\\s)${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;
}

/** The command line of one test: e2e.test focused on it, with the suite's flags and the report in reportDir. */
export function testCommand(opts: {
  readonly e2eTest: string;
  readonly name: string;
  readonly timeout: string;
  readonly reportDir: string;
  readonly suiteFlags: readonly string[];
}): string[] {
  return [
    opts.e2eTest,
    ...opts.suiteFlags,
    `--report-dir=${opts.reportDir}`,
    `--ginkgo.focus=${exactFocus(opts.name)}`,
    `--ginkgo.timeout=${opts.timeout}`,
    '--ginkgo.no-color',
    '--ginkgo.succinct',
  ];
}

/**
 * The result of NAME in one process's JUnit report; a report without it, or with it skipped for being unfocused (the
 * message Ginkgo gives every spec it did not select), is a failure: the exact focus selected nothing.
 */
export function resultOf(name: string, results: readonly TestResult[], exitCode: number): TestResult {
  const r = results.find((x) => x.name === name);
  if (!r || (r.state === 'skipped' && (r.message ?? 'skipped') === 'skipped')) {
    return {
      name,
      state: 'failed',
      seconds: r?.seconds ?? 0,
      message: `e2e.test (exit ${exitCode}) did not run this test: its focus ${exactFocus(name)} selected none`,
    };
  }
  return r;
}

const escapeXml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/\n/g, '&#xA;');

/** One JUnit report of RESULTS, in the shape parseJUnit reads (Ginkgo's). */
export function junitXml(results: readonly TestResult[], seconds: number): string {
  const count = (state: TestResult['state']) => results.filter((r) => r.state === state).length;
  const cases = results.map((r) => {
    const open = `    <testcase name="${escapeXml(`[It] ${r.name}`)}" classname="Kubernetes e2e suite" status="${r.state}" time="${r.seconds}">`;
    const body =
      r.state === 'failed'
        ? `<failure message="${escapeXml(r.message ?? '')}" type="failed"></failure>`
        : r.state === 'skipped'
          ? `<skipped message="${escapeXml(r.message ?? 'skipped')}"></skipped>`
          : '';
    return `${open}${body}</testcase>`;
  });
  const totals = `tests="${results.length}" disabled="0" skipped="${count('skipped')}" errors="0" failures="${count('failed')}" time="${seconds}"`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites ${totals}>`,
    `  <testsuite name="Kubernetes e2e suite" package="/" ${totals}>`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

/** Every test of the suite by full name (`e2e.test --list-tests`), its temporary files in `tmp`. */
export function listTests(binaries: E2EBinaries, tmp: string): string[] {
  const list = spawnSync(binaries.e2eTest, ['--list-tests'], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    env: { ...process.env, TMPDIR: tmp },
  });
  if (list.status !== 0) {
    throw new Error(`${binaries.e2eTest} --list-tests failed (exit ${list.status}): ${list.stderr}`);
  }
  return parseTestList(list.stdout);
}

/** Runs each focused test in an e2e.test process of its own against the cluster of `kubeconfig`, PROCS at a time. */
export async function runConformance(opts: ConformanceOptions): Promise<ConformanceRun> {
  const select = testFilter(opts.sets, opts.focus);
  const skips = skipsFor(readSkips(opts.skipFile ?? DEFAULT_SKIP_FILE), opts.traits);
  const binaries = opts.binaries ?? ensureE2EBinaries();
  const binDir = opts.binDir ?? join(ROOT, '.cache', 'bin');
  const procs = opts.procs ?? defaultProcs();
  const timeout = opts.timeout ?? '90m';
  // A report folder used before keeps nothing of that run's tests.
  rmSync(join(opts.reportDir, 'tests'), { recursive: true, force: true });
  mkdirSync(opts.reportDir, { recursive: true });
  // The suite leaves temporary folders behind whenever it loads (kubectl's kuberc tests make theirs).
  const tmp = mkdtempSync(join(tmpdir(), 'conformance-'));
  let selection: Selection;
  try {
    selection = selectTests(listTests(binaries, tmp), select, skips);
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  const suiteFlags = [
    `--kubeconfig=${opts.kubeconfig}`,
    // No cloud: tests that need one skip themselves.
    '--provider=skeleton',
    // The suite's own log dump on failure reads every node's logs through the API server: slow, and the JUnit
    // report has the failure.
    '--dump-logs-on-failure=false',
    `--kubectl-path=${join(binDir, 'kubectl')}`,
  ];
  const toCaller = opts.log ?? ((chunk: string) => process.stdout.write(chunk));
  const logFile = createWriteStream(join(opts.reportDir, 'e2e.log'));
  const log = (chunk: string) => {
    logFile.write(chunk);
    toCaller(chunk);
  };
  const total = selection.parallel.length + selection.serial.length;
  log(
    `running ${total} tests, ${procs} at a time (${selection.serial.length} serial), ${selection.listed.length} listed skips\n`,
  );
  const started = Date.now();
  const results: TestResult[] = [];
  let exitCode = 0;
  let index = 0;
  const runOne = async (name: string) => {
    const reportDir = join(opts.reportDir, 'tests', String(++index).padStart(3, '0'));
    mkdirSync(reportDir, { recursive: true });
    const command = testCommand({ e2eTest: binaries.e2eTest, name, timeout, reportDir, suiteFlags });
    let output = '';
    const code = await new Promise<number>((done, fail) => {
      const child = spawn(command[0]!, command.slice(1), {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, PATH: `${binDir}:${process.env.PATH ?? ''}`, KUBECONFIG: opts.kubeconfig, TMPDIR: tmp },
      });
      child.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
      child.stderr.setEncoding('utf8').on('data', (c: string) => (output += c));
      child.on('error', fail);
      child.on('close', (c) => done(c ?? 1));
    });
    writeFileSync(join(reportDir, 'e2e.log'), output);
    const junit = join(reportDir, 'junit_01.xml');
    const result = resultOf(name, existsSync(junit) ? parseJUnit(readFileSync(junit, 'utf8')) : [], code);
    if (code !== 0 && exitCode === 0) exitCode = code;
    results.push(result);
    log(`[${results.length}/${total}] ${result.state} ${Math.round(result.seconds)}s ${name}\n`);
    if (result.state === 'failed') log(`${output}\n`);
  };
  const lane = async (queue: string[]) => {
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) await runOne(name);
  };
  try {
    const queue = [...selection.parallel];
    await Promise.all(Array.from({ length: Math.min(procs, queue.length) }, () => lane(queue)));
    await lane([...selection.serial]);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    await new Promise((closed) => logFile.end(closed));
  }
  const seconds = Math.round((Date.now() - started) / 1000);
  const all = [
    ...results,
    ...selection.listed.map((name) => ({
      name,
      state: 'skipped' as const,
      seconds: 0,
      message: 'listed in the skip file',
    })),
  ];
  const junit = join(opts.reportDir, 'junit_01.xml');
  writeFileSync(junit, junitXml(all, seconds));
  return { ...summarize(all, select, skips), exitCode, junit, seconds };
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

/** The traits of the Shoot NAMESPACE/NAME, read from the garden. */
async function readShootTraits(ref: string, gardenKubeconfig: string | undefined): Promise<ShootTraits> {
  const [{ ResourceClient }, { loadKubeConfig }, { Refs }, { parseShootRef }] = await Promise.all([
    import('../src/runtime/client.js'),
    import('../src/cli/run.js'),
    import('../src/apis/refs.js'),
    import('../src/cli/kubeconfig.js'),
  ]);
  const { namespace, name } = parseShootRef(ref);
  const client = new ResourceClient(loadKubeConfig(gardenKubeconfig));
  try {
    const shoot = await client.get<Shoot & KubernetesObject>(Refs.shoot, name, namespace);
    if (!shoot) throw new Error(`shoot ${ref} not found`);
    return shootTraits(shoot);
  } finally {
    client.close();
  }
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
  const sets = value('--set') === undefined ? undefined : parseTestSets(value('--set')!);
  // Traits stated for a shoot the runner can't read (--shoot-kubeconfig, --list): `--overlay`.
  const stated: ShootTraits | undefined = argv.includes('--overlay') ? { overlay: true } : undefined;
  if (argv.includes('--list')) {
    const tmp = mkdtempSync(join(tmpdir(), 'conformance-'));
    try {
      const selection = selectTests(
        listTests(ensureE2EBinaries(), tmp),
        testFilter(sets, value('--focus')),
        skipsFor(readSkips(value('--skip-file') ?? DEFAULT_SKIP_FILE), stated),
      );
      const lines = [
        ...selection.parallel,
        ...selection.serial.map((n) => `${n} (serial)`),
        ...selection.listed.map((n) => `${n} (listed skip)`),
        `${selection.parallel.length + selection.serial.length} tests (${selection.serial.length} serial), ` +
          `${selection.listed.length} listed skips`,
      ];
      process.stdout.write(lines.join('\n') + '\n');
      return 0;
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  const shoot = value('--shoot');
  let kubeconfig = value('--shoot-kubeconfig');
  const reportDir = resolve(
    value('--report-dir') ?? join(ROOT, '.cache', 'conformance', new Date().toISOString().replace(/[:.]/g, '-')),
  );
  let traits = stated;
  if (!kubeconfig) {
    if (!shoot) {
      process.stderr.write('error: --shoot NAMESPACE/NAME (or --shoot-kubeconfig FILE) is required\n');
      return 2;
    }
    traits = await readShootTraits(shoot, value('--kubeconfig'));
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
    sets,
    focus: value('--focus'),
    skipFile: value('--skip-file'),
    traits,
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
