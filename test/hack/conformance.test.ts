/**
 * The conformance runner's reading of Ginkgo's JUnit report and of the skip file (hack/conformance.ts); the run
 * itself is test/integration/shoot-conformance.test.ts.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import {
  DEFAULT_SKIP_FILE,
  defaultProcs,
  exactFocus,
  junitXml,
  parseJUnit,
  parseTestList,
  parseTestSets,
  readSkips,
  resultOf,
  selectTests,
  shootTraits,
  skipsFor,
  SIG_NETWORK_CONFORMANCE,
  summarize,
  testCommand,
  testFilter,
} from '../../hack/conformance.js';

const dir = mkdtempSync(join(tmpdir(), 'conformance-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The shape of the report e2e.test writes with --report-dir (Ginkgo v2's JUnit reporter).
const JUNIT = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="5" disabled="0" errors="0" failures="1" time="120.5">
  <testsuite name="Kubernetes e2e suite" package="/" tests="5" disabled="0" skipped="3" errors="0" failures="1" time="120.5">
    <testcase name="[It] [sig-network] DNS should provide DNS for services  [Conformance]" classname="Kubernetes e2e suite" status="passed" time="30.2"></testcase>
    <testcase name="[It] [sig-network] Services should serve a basic endpoint from pods  [Conformance]" classname="Kubernetes e2e suite" status="failed" time="60.1">
      <failure message="[FAILED] Timed out after 120s: service &quot;endpoint-test2&quot; not reachable &lt;nil&gt;&#xA;second line" type="failed">[FAILED] Timed out</failure>
      <system-err>log</system-err>
    </testcase>
    <testcase name="[It] [sig-network] HostPort validates that there is no conflict between pods with same hostPort but different hostIP and protocol [LinuxOnly] [Conformance]" classname="Kubernetes e2e suite" status="skipped" time="0">
      <skipped message="skipped"></skipped>
    </testcase>
    <testcase name="[It] [sig-network] Services should have session affinity work for NodePort service [LinuxOnly] [Conformance]" classname="Kubernetes e2e suite" status="skipped" time="0.3">
      <skipped message="skipped - Only supported for providers [gce]"></skipped>
    </testcase>
    <testcase name="[It] [sig-storage] Secrets should be consumable from pods in volume [NodeConformance] [Conformance]" classname="Kubernetes e2e suite" status="skipped" time="0"><skipped message="skipped"></skipped></testcase>
  </testsuite>
</testsuites>`;

describe('npm run conformance', () => {
  it('reads every test case of the JUnit report with its state, time and message', () => {
    const results = parseJUnit(JUNIT);
    expect(results.map((r) => r.state)).toEqual(['passed', 'failed', 'skipped', 'skipped', 'skipped']);
    expect(results[0]).toEqual({
      name: '[sig-network] DNS should provide DNS for services  [Conformance]',
      state: 'passed',
      seconds: 30.2,
    });
    expect(results[1]!.message).toBe(
      '[FAILED] Timed out after 120s: service "endpoint-test2" not reachable <nil>\nsecond line',
    );
    expect(results[3]!.message).toBe('skipped - Only supported for providers [gce]');
  });

  it('counts the focused tests only, and tells listed skips from those the tests chose', () => {
    const skips = [{ test: String.raw`\[sig-network\] HostPort`, reason: 'no portmap' }];
    const summary = summarize(parseJUnit(JUNIT), SIG_NETWORK_CONFORMANCE, skips);
    expect(summary.passed.map((r) => r.name)).toEqual([
      '[sig-network] DNS should provide DNS for services  [Conformance]',
    ]);
    expect(summary.failed).toHaveLength(1);
    expect(summary.listed.map((r) => r.name)).toEqual([expect.stringContaining('HostPort')]);
    expect(summary.skippedByTest.map((r) => r.name)).toEqual([expect.stringContaining('session affinity')]);
  });

  it('needs a reason for every skip and a pattern that compiles', () => {
    const file = join(dir, 'skips.yaml');
    writeFileSync(file, 'skips:\n  - test: "x"\n');
    expect(() => readSkips(file)).toThrow('skips[0].reason: Required value');
    writeFileSync(file, 'skips:\n  - test: "(x"\n    reason: because\n');
    expect(() => readSkips(file)).toThrow(/Invalid regular expression/);
    writeFileSync(file, 'skips:\n  - test: "x"\n    reason: because\n');
    expect(readSkips(file)).toEqual([{ test: 'x', reason: 'because' }]);
  });

  it('takes a skip conditional on a trait it knows, and names the field of one it does not', () => {
    const file = join(dir, 'skips.yaml');
    writeFileSync(file, 'skips:\n  - test: "x"\n    reason: because\n    when: overlay\n');
    expect(readSkips(file)).toEqual([{ test: 'x', reason: 'because', when: 'overlay' }]);
    writeFileSync(file, 'skips:\n  - test: "x"\n    reason: because\n    when: ipip\n');
    expect(() => readSkips(file)).toThrow('skips[0].when: Unsupported value: "ipip": supported values: "overlay"');
  });

  it('applies a conditional skip only to a shoot known to have the trait', () => {
    const skips = [
      { test: 'a', reason: 'always' },
      { test: 'b', reason: 'tunnelled', when: 'overlay' as const },
    ];
    expect(skipsFor(skips, { overlay: true }).map((s) => s.test)).toEqual(['a', 'b']);
    expect(skipsFor(skips, { overlay: false }).map((s) => s.test)).toEqual(['a']);
    expect(skipsFor(skips, undefined).map((s) => s.test)).toEqual(['a']);
    const selection = selectTests(['a', 'b'], 'a|b', skipsFor(skips, { overlay: false }));
    expect(selection).toEqual({ parallel: ['b'], serial: [], listed: ['a'] });
  });

  it("reads a shoot's overlay from the pools its network puts in force", () => {
    const example = (name: string) =>
      parse(readFileSync(join(__dirname, '..', '..', 'examples', `shoot-${name}.yaml`), 'utf8')) as Shoot;
    const ipv4 = example('ipv4');
    expect(shootTraits(ipv4)).toEqual({ overlay: true });
    // calico's default for IPv4 without a NetworkConfig: an IP-in-IP pool of mode Always.
    const { providerConfig: _, ...bare } = ipv4.spec.networking!;
    expect(shootTraits({ ...ipv4, spec: { ...ipv4.spec, networking: bare } })).toEqual({ overlay: true });
    const off = {
      ...ipv4.spec.networking!,
      providerConfig: { ...(ipv4.spec.networking!.providerConfig as object), overlay: { enabled: false } },
    };
    expect(shootTraits({ ...ipv4, spec: { ...ipv4.spec, networking: off } })).toEqual({ overlay: false });
    expect(shootTraits(example('ipv6'))).toEqual({ overlay: false });
    expect(shootTraits(example('dual-stack'))).toEqual({ overlay: false });
  });

  it('has a committed skip file that reads', () => {
    for (const skip of readSkips(DEFAULT_SKIP_FILE)) expect(skip.reason.length).toBeGreaterThan(20);
  });

  // The shape of `e2e.test --list-tests`.
  const LIST = [
    '    k8s.io/kubernetes@v1.37.1/test/e2e/network/dns.go:130: [sig-network] DNS should provide /etc/hosts entries for the cluster [Conformance]',
    '    k8s.io/kubernetes@v1.37.1/test/e2e/network/hostport.go:63: [sig-network] HostPort validates that there is no conflict between pods with same hostPort but different hostIP and protocol [LinuxOnly] [Conformance]',
    '    k8s.io/kubernetes@v1.37.1/test/e2e/network/service.go:733: [sig-network] Services should serve a basic endpoint from pods [Conformance]',
    '    k8s.io/kubernetes@v1.37.1/test/e2e/network/service.go:900: [sig-network] Services should serve a basic endpoint from pods [Serial] [Conformance]',
    '    k8s.io/kubernetes@v1.37.1/test/e2e/storage/secrets.go:40: [sig-storage] Secrets should be consumable from pods in volume [NodeConformance] [Conformance]',
    '',
  ].join('\n');

  it('lists the focused tests, the serial ones after the others, the listed skips apart', () => {
    const names = parseTestList(LIST);
    expect(names).toHaveLength(5);
    expect(names[0]).toBe('[sig-network] DNS should provide /etc/hosts entries for the cluster [Conformance]');
    const skips = [{ test: String.raw`\[sig-network\] HostPort`, reason: 'no portmap' }];
    expect(selectTests(names, SIG_NETWORK_CONFORMANCE, skips)).toEqual({
      parallel: [names[0], names[2]],
      serial: [names[3]],
      listed: [names[1]],
    });
  });

  it('runs named sets of tests, narrowed by a focus, the Conformance set when given neither', () => {
    const names = [
      '[sig-network] DNS should provide DNS for services  [Conformance]',
      '[sig-network] Services should be able to up and down services',
      '[sig-network] Services should work after the service has been recreated [Slow]',
      '[sig-network] KubeProxy should update conntrack entries [Serial]',
      '[sig-network] DNS should work with a service name that starts with a digit [FeatureGate:RelaxedServiceNameValidation]',
      '[sig-network] Netpol NetworkPolicy between server and client should support allow-all policy [Feature:NetworkPolicy]',
      '[sig-network] [Feature:IPv6DualStack] should have ipv4 and ipv6 internal node ip',
      '[sig-node] Pods should get a host IP [NodeConformance] [Conformance]',
      '[sig-node] Downward API should provide hostIPs as an env var [NodeConformance]',
      '[sig-storage] Secrets should be consumable from pods in volume [NodeConformance] [Conformance]',
    ];
    const picked = (filter: (name: string) => boolean) => names.flatMap((n, i) => (filter(n) ? [i] : []));
    expect(picked(testFilter())).toEqual([0]);
    expect(picked(testFilter(['conformance']))).toEqual([0]);
    // A feature gate is no [Feature:…] tag: the test runs where the API server has the gate on.
    expect(picked(testFilter(['sig-network']))).toEqual([0, 1, 4]);
    expect(picked(testFilter(['netpol']))).toEqual([5]);
    expect(picked(testFilter(['dual-stack']))).toEqual([6, 7, 8]);
    expect(picked(testFilter(['conformance', 'dual-stack']))).toEqual([0, 6, 7, 8]);
    expect(picked(testFilter(['sig-network'], 'Services'))).toEqual([1]);
    expect(picked(testFilter([], 'Secrets'))).toEqual([9]);
    expect(parseTestSets('sig-network, netpol,netpol')).toEqual(['sig-network', 'netpol']);
    expect(() => parseTestSets('sig-network,storage')).toThrow(
      '--set sig-network,storage: unknown set "storage"; known: conformance, sig-network, netpol, dual-stack',
    );
  });

  it('focuses a test by its full name alone, even where another name begins with it', () => {
    const names = parseTestList(LIST);
    const focus = new RegExp(exactFocus(names[2]!));
    // Ginkgo matches against its text, which has a blank before the listed name.
    expect(names.map((n) => focus.test(` ${n}`))).toEqual([false, false, true, false, false]);
    expect(exactFocus('a.b (c) [d]')).toBe(String.raw`(^|\s)a\.b \(c\) \[d\]$`);
  });

  it('runs one test per e2e.test process, its report in a folder of its own', () => {
    const name = '[sig-network] DNS should provide DNS for services [Conformance]';
    expect(
      testCommand({
        e2eTest: '/bin/e2e.test',
        name,
        timeout: '50m',
        reportDir: '/r/tests/001',
        suiteFlags: ['--kubeconfig=/k'],
      }),
    ).toEqual([
      '/bin/e2e.test',
      '--kubeconfig=/k',
      '--report-dir=/r/tests/001',
      `--ginkgo.focus=${exactFocus(name)}`,
      '--ginkgo.timeout=50m',
      '--ginkgo.no-color',
      '--ginkgo.succinct',
    ]);
  });

  it("takes a test's result from its process's report, and fails one its focus did not select", () => {
    const results = parseJUnit(JUNIT);
    const dns = '[sig-network] DNS should provide DNS for services  [Conformance]';
    expect(resultOf(dns, results, 0)).toEqual(results[0]);
    const affinity = results[3]!.name;
    expect(resultOf(affinity, results, 0).state).toBe('skipped');
    // Unfocused: Ginkgo reports it "skipped" with nothing more.
    const secrets = results[4]!.name;
    expect(resultOf(secrets, results, 0)).toMatchObject({
      state: 'failed',
      message: expect.stringContaining('selected none'),
    });
    expect(resultOf('[sig-network] missing', [], 2)).toMatchObject({
      state: 'failed',
      message: expect.stringContaining('exit 2'),
    });
  });

  it('writes one JUnit report of every result that reads back the same', () => {
    const results = parseJUnit(JUNIT);
    const xml = junitXml(results, 120);
    expect(parseJUnit(xml)).toEqual(results);
    expect(xml).toContain('tests="5" disabled="0" skipped="3" errors="0" failures="1" time="120"');
  });

  it('runs 4 tests at once by default, or GARDENER_IPV6_CONFORMANCE_PROCS, refusing what is not a count', () => {
    expect(defaultProcs({})).toBe(4);
    expect(defaultProcs({ GARDENER_IPV6_CONFORMANCE_PROCS: '' })).toBe(4);
    expect(defaultProcs({ GARDENER_IPV6_CONFORMANCE_PROCS: '2' })).toBe(2);
    for (const bad of ['0', '-1', '2.5', 'many']) {
      expect(() => defaultProcs({ GARDENER_IPV6_CONFORMANCE_PROCS: bad })).toThrow(/must be a positive number/);
    }
  });
});
