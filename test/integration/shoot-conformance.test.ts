/**
 * Kubernetes' own judgement of an IPv6 shoot (needs root): the `[sig-network] … [Conformance]` tests of the pinned
 * release's e2e suite (`e2e.test`, through hack/conformance.ts as `npm run conformance` runs them) against an IPv6
 * shoot with two machines on an IPv6 seed. Every test passes but those hack/conformance-skips.yaml lists with a
 * reason; the JUnit report stays in .cache/conformance/ipv6.
 */
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { featureGates } from '../../src/featuregate/featuregate.js';
import { Refs } from '../../src/apis/refs.js';
import { projectRoot } from '../../src/system/project.js';
import type { IPFamily } from '../../src/net/cidr.js';
import { ensureE2ETest, formatSummary, runConformance, SIG_NETWORK_CONFORMANCE } from '../../hack/conformance.js';
import { machinesUnsupportedReason } from '../extensions/provider-local/machine/shoot-env.js';
import { seedIPv6Networks } from '../fixtures/objects.js';
import { SeedEnvironment } from '../support/seed-environment.js';

const unsupported = machinesUnsupportedReason();

const PROJECT = 'conformance';
const NAMESPACE = `garden-${PROJECT}`;
const SHOOT = 'c6';
// Ranges of their own: other files of this namespace run environments meanwhile.
const LB_NETWORKS = { IPv6: 'fd00:ff:e6::/64', IPv4: '172.31.250.0/24' };
const SEED_CLUSTER = {
  families: ['IPv6'] as IPFamily[],
  nodes: ['fd00:21::/64'],
  pods: ['fd00:21:1::/56'],
  services: ['fd00:21:2::/112'],
};

/** A narrower focus for a rerun of some tests (the counts below then don't apply). */
const FOCUS = process.env.GARDENER_IPV6_CONFORMANCE_FOCUS || SIG_NETWORK_CONFORMANCE;

const env = new SeedEnvironment();

describe.skipIf(unsupported !== undefined).sequential('Kubernetes conformance on an IPv6 shoot (needs root)', () => {
  beforeAll(async () => {
    // Built before the environment starts: the first build takes minutes.
    ensureE2ETest();
    await env.start({
      tag: 'conf',
      cluster: SEED_CLUSTER,
      gates: featureGates({ IPv6SingleStack: true }),
      loadBalancerNetworks: LB_NETWORKS,
      careSyncPeriodMs: 2_000,
      namespace: NAMESPACE,
      seeds: { ipv6: seedIPv6Networks },
    });
  }, 900_000);

  afterAll(async () => {
    await env.stop();
  }, 120_000);

  it('passes the sig-network conformance tests but the listed skips', async () => {
    await env.client.create(Refs.shoot, {
      apiVersion: 'core.gardener.cloud/v1beta1',
      kind: 'Shoot',
      metadata: { name: SHOOT, namespace: NAMESPACE },
      spec: {
        seedName: 'ipv6',
        cloudProfile: { name: 'local' },
        region: 'local',
        provider: { type: 'local', workers: [{ name: 'w', machine: { type: 'local' }, minimum: 2, maximum: 2 }] },
        networking: { type: 'calico', ipFamilies: ['IPv6'], nodes: 'fd00:10:1:100::/64' },
      },
    } as KubernetesObject);
    await env.waitForShoot(
      NAMESPACE,
      SHOOT,
      ['APIServerAvailable', 'ControlPlaneHealthy', 'EveryNodeReady', 'SystemComponentsHealthy'],
      300_000,
    );
    const kubeconfig = await env.writeShootKubeconfig(NAMESPACE, SHOOT);
    let output = '';
    const run = await runConformance({
      kubeconfig,
      focus: FOCUS,
      reportDir: join(projectRoot(), '.cache', 'conformance', 'ipv6'),
      timeout: '50m',
      log: (chunk) => (output += chunk),
    });
    process.stderr.write(`[conformance IPv6] ${formatSummary(run)}`);
    expect(run.failed.map((r) => `${r.name}: ${r.message}`)).toEqual([]);
    expect(run.exitCode, output.slice(-4000)).toBe(0);
    // The sig-network conformance set of 1.37 has 47 tests; none may skip itself unnoticed.
    if (FOCUS === SIG_NETWORK_CONFORMANCE) {
      expect(run.skippedByTest.map((r) => `${r.name}: ${r.message}`)).toEqual([]);
      expect(run.passed.length + run.listed.length).toBe(47);
    }
  }, 3_600_000);
});
