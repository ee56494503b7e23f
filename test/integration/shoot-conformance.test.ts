/**
 * Kubernetes' own judgement of an IPv6 shoot (needs root): the `[sig-network] … [Conformance]` tests of the pinned
 * release's e2e suite (`e2e.test`, through hack/conformance.ts as `npm run conformance` runs them) against an IPv6
 * shoot with two machines on an IPv6 seed. Every test passes but those hack/conformance-skips.yaml lists with a
 * reason; the JUnit report stays in .cache/conformance/ipv6.
 *
 * With GARDENER_IPV6_CONFORMANCE_DUAL_STACK=1 the shoot is dual-stack (IPv4 first, on a dual-stack seed) and the
 * `[Feature:IPv6DualStack]` tests (KEP-563's) run too, into .cache/conformance/dual-stack: not in CI's budget.
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
import { seedDualStackMigrationNetworks, seedIPv6Networks } from '../fixtures/objects.js';
import { SeedEnvironment } from '../support/seed-environment.js';

const unsupported = machinesUnsupportedReason();
const DUAL_STACK = process.env.GARDENER_IPV6_CONFORMANCE_DUAL_STACK === '1';

const PROJECT = 'conformance';
const NAMESPACE = `garden-${PROJECT}`;
// Ranges of their own: other files of this namespace run environments meanwhile.
const LB_NETWORKS = { IPv6: 'fd00:ff:e6::/64', IPv4: '172.31.250.0/24' };
const SEED_CLUSTER = DUAL_STACK
  ? {
      families: ['IPv6', 'IPv4'] as IPFamily[],
      nodes: ['fd00:21::/64', '10.37.0.0/24'],
      pods: ['fd00:21:1::/56', '10.38.0.0/16'],
      services: ['fd00:21:2::/112', '10.39.0.0/16'],
    }
  : {
      families: ['IPv6'] as IPFamily[],
      nodes: ['fd00:21::/64'],
      pods: ['fd00:21:1::/56'],
      services: ['fd00:21:2::/112'],
    };
const SHOOT = DUAL_STACK
  ? {
      name: 'cds',
      seed: 'dual',
      networking: { ipFamilies: ['IPv4', 'IPv6'], nodes: '10.10.0.0/16', pods: '10.3.0.0/16', services: '10.4.0.0/16' },
      focus: `${SIG_NETWORK_CONFORMANCE}|\\[Feature:IPv6DualStack\\]`,
      report: 'dual-stack',
    }
  : {
      name: 'c6',
      seed: 'ipv6',
      networking: { ipFamilies: ['IPv6'], nodes: 'fd00:10:1:100::/64' },
      focus: SIG_NETWORK_CONFORMANCE,
      report: 'ipv6',
    };
/** A narrower focus for a rerun of some tests (the counts below then don't apply). */
const FOCUS = process.env.GARDENER_IPV6_CONFORMANCE_FOCUS || SHOOT.focus;

const env = new SeedEnvironment();

describe
  .skipIf(unsupported !== undefined)
  .sequential(`Kubernetes conformance on an ${DUAL_STACK ? 'dual-stack' : 'IPv6'} shoot (needs root)`, () => {
    beforeAll(async () => {
      // Built before the environment starts: the first build takes minutes.
      ensureE2ETest();
      await env.start({
        tag: 'conf',
        cluster: SEED_CLUSTER,
        gates: featureGates({ IPv6SingleStack: true, DualStack: DUAL_STACK }),
        loadBalancerNetworks: LB_NETWORKS,
        careSyncPeriodMs: 2_000,
        namespace: NAMESPACE,
        seeds: DUAL_STACK ? { dual: seedDualStackMigrationNetworks } : { ipv6: seedIPv6Networks },
      });
    }, 900_000);

    afterAll(async () => {
      await env.stop();
    }, 120_000);

    it('passes the sig-network conformance tests but the listed skips', async () => {
      await env.client.create(Refs.shoot, {
        apiVersion: 'core.gardener.cloud/v1beta1',
        kind: 'Shoot',
        metadata: { name: SHOOT.name, namespace: NAMESPACE },
        spec: {
          seedName: SHOOT.seed,
          cloudProfile: { name: 'local' },
          region: 'local',
          provider: { type: 'local', workers: [{ name: 'w', machine: { type: 'local' }, minimum: 2, maximum: 2 }] },
          networking: { type: 'calico', ...SHOOT.networking },
        },
      } as KubernetesObject);
      await env.waitForShoot(
        NAMESPACE,
        SHOOT.name,
        ['APIServerAvailable', 'ControlPlaneHealthy', 'EveryNodeReady', 'SystemComponentsHealthy'],
        300_000,
      );
      const kubeconfig = await env.writeShootKubeconfig(NAMESPACE, SHOOT.name);
      let output = '';
      const run = await runConformance({
        kubeconfig,
        focus: FOCUS,
        reportDir: join(projectRoot(), '.cache', 'conformance', SHOOT.report),
        timeout: '50m',
        log: (chunk) => (output += chunk),
      });
      process.stderr.write(`[conformance ${SHOOT.report}] ${formatSummary(run)}`);
      expect(run.failed.map((r) => `${r.name}: ${r.message}`)).toEqual([]);
      expect(run.exitCode, output.slice(-4000)).toBe(0);
      // The sig-network conformance set of 1.37 has 47 tests; none may skip itself unnoticed.
      if (FOCUS === SIG_NETWORK_CONFORMANCE) {
        expect(run.skippedByTest.map((r) => `${r.name}: ${r.message}`)).toEqual([]);
        expect(run.passed.length + run.listed.length).toBe(47);
      }
    }, 3_600_000);
  });
