/**
 * The conformance runner's reading of Ginkgo's JUnit report and of the skip file (hack/conformance.ts); the run
 * itself is test/integration/shoot-conformance.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  conformanceCommand,
  DEFAULT_SKIP_FILE,
  defaultProcs,
  hasIPv4Loopback,
  parseJUnit,
  readSkips,
  SIG_NETWORK_CONFORMANCE,
  summarize,
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

  it('has a committed skip file that reads', () => {
    for (const skip of readSkips(DEFAULT_SKIP_FILE)) expect(skip.reason.length).toBeGreaterThan(20);
  });

  const binaries = { e2eTest: '/bin/e2e.test', ginkgo: '/bin/ginkgo' };
  const ginkgoFlags = ['--focus=\\[sig-network\\]', '--timeout=50m', '--no-color'];
  const suiteFlags = ['--kubeconfig=/k', '--provider=skeleton'];

  it('runs e2e.test alone on one node, with the Ginkgo flags under its ginkgo. prefix', () => {
    expect(conformanceCommand({ binaries, procs: 1, ginkgoFlags, suiteFlags })).toEqual([
      '/bin/e2e.test',
      '--kubeconfig=/k',
      '--provider=skeleton',
      '--ginkgo.focus=\\[sig-network\\]',
      '--ginkgo.timeout=50m',
      '--ginkgo.no-color',
    ]);
  });

  it('runs the Ginkgo CLI over e2e.test on parallel nodes, the suite flags after --', () => {
    expect(conformanceCommand({ binaries, procs: 4, ginkgoFlags, suiteFlags })).toEqual([
      '/bin/ginkgo',
      '--procs=4',
      ...ginkgoFlags,
      '/bin/e2e.test',
      '--',
      ...suiteFlags,
    ]);
  });

  it('takes its parallel nodes from GARDENER_IPV6_CONFORMANCE_PROCS, 4 by default, refusing what is not a count', () => {
    expect(defaultProcs({}, true)).toBe(4);
    expect(defaultProcs({ GARDENER_IPV6_CONFORMANCE_PROCS: '' }, true)).toBe(4);
    expect(defaultProcs({ GARDENER_IPV6_CONFORMANCE_PROCS: '2' }, true)).toBe(2);
    for (const bad of ['0', '-1', '2.5', 'many']) {
      expect(() => defaultProcs({ GARDENER_IPV6_CONFORMANCE_PROCS: bad }, true)).toThrow(/must be a positive number/);
    }
  });

  it("runs e2e.test alone where 127.0.0.1 does not exist (the Ginkgo CLI's parallel server listens there only)", () => {
    expect(defaultProcs({}, false)).toBe(1);
    expect(defaultProcs({ GARDENER_IPV6_CONFORMANCE_PROCS: '3' }, false)).toBe(3);
    // npm test runs in an IPv6-only namespace (hack/test-in-netns.mjs), which has no 127.0.0.1.
    if (process.env.GARDENER_IPV6_NETNS) expect(hasIPv4Loopback()).toBe(false);
  });
});
