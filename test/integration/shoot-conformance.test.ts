/**
 * Kubernetes' own judgement of a shoot (needs root): the `[sig-network] … [Conformance]` tests of the pinned release's
 * e2e suite (`e2e.test`, through hack/conformance.ts as `npm run conformance` runs them) against a shoot with two
 * machines in the zones of the region `local` (six for the `sig-network` set; of two CPUs for the `dual-stack` set).
 * Every test passes but those hack/conformance-skips.yaml lists with a reason (those of a trait the shoot has, such
 * as calico's overlay); the JUnit report stays in .cache/conformance/<family>.
 *
 * GARDENER_IPV6_CONFORMANCE_FAMILY picks the shoot: `ipv6` (the default, in CI) on an IPv6 seed; `dual-stack` (IPv4
 * first) on a dual-stack seed, where KEP-563's `[Feature:IPv6DualStack]` tests and KEP-2681's host IP tests run too;
 * `ipv4` on the IPv4 Seed of a dual-stack seed cluster; `migrated`: an IPv4 shoot migrated to dual-stack once it runs,
 * then the dual-stack set; `migrated-ipv6`: the same from an IPv6 shoot ([IPv6] → [IPv6, IPv4]).
 * GARDENER_IPV6_CONFORMANCE_SETS runs other named sets on the same shoot (`sig-network,netpol`, hack/conformance.ts);
 * GARDENER_IPV6_CONFORMANCE_FOCUS narrows them for a rerun.
 */
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { featureGates } from '../../src/featuregate/featuregate.js';
import { LOCAL_ZONES, MACHINE_TYPE, MACHINE_TYPE_2CPU } from '../../src/extensions/provider-local/cloudprofile.js';
import { Refs } from '../../src/apis/refs.js';
import { projectRoot } from '../../src/system/project.js';
import type { IPFamily } from '../../src/net/cidr.js';
import {
  ensureE2EBinaries,
  formatSummary,
  parseTestSets,
  runConformance,
  shootTraits,
  TEST_SETS,
  type TestSetName,
} from '../../hack/conformance.js';
import { machinesUnsupportedReason } from '../extensions/provider-local/machine/shoot-env.js';
import {
  seedDualStackIPv6MigrationNetworks,
  seedDualStackMigrationNetworks,
  seedIPv4Networks,
  seedIPv6Networks,
} from '../fixtures/objects.js';
import type { SeedNetworks } from '../../src/apis/core/v1beta1/seed.js';
import { SeedEnvironment } from '../support/seed-environment.js';
import { waitFor } from '../support/wait.js';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import { DUAL_STACK_NODES_MIGRATION_READY } from '../../src/apis/core/v1beta1/dual-stack-migration.js';

const unsupported = machinesUnsupportedReason();

const PROJECT = 'conformance';
const NAMESPACE = `garden-${PROJECT}`;
// Ranges of their own: other files of this namespace run environments meanwhile.
const LB_NETWORKS = { IPv6: 'fd00:ff:e6::/64', IPv4: '172.31.250.0/24' };

interface ConformanceCase {
  readonly label: string;
  /** The seed cluster's families: dual-stack runs shoots of every family. */
  readonly seedFamilies: IPFamily[];
  readonly seeds: Record<string, SeedNetworks>;
  readonly shoot: { readonly name: string; readonly seed: string; readonly networking: Record<string, unknown> };
  readonly sets: readonly TestSetName[];
  /** How many tests the sets hold in the pinned release (passed or listed in the skip file). */
  readonly tests: number;
  /** The families the shoot is migrated to once it runs, before the tests (`spec.networking.ipFamilies`). */
  readonly migrateTo?: IPFamily[];
}

const CASES: Record<string, ConformanceCase> = {
  ipv6: {
    label: 'IPv6',
    seedFamilies: ['IPv6'],
    seeds: { ipv6: seedIPv6Networks },
    shoot: { name: 'c6', seed: 'ipv6', networking: { ipFamilies: ['IPv6'], nodes: 'fd00:10:1:100::/64' } },
    sets: ['conformance'],
    tests: 47,
  },
  'dual-stack': {
    label: 'dual-stack',
    seedFamilies: ['IPv6', 'IPv4'],
    seeds: { dual: seedDualStackMigrationNetworks },
    shoot: {
      name: 'cds',
      seed: 'dual',
      networking: { ipFamilies: ['IPv4', 'IPv6'], nodes: '10.10.0.0/16', pods: '10.3.0.0/16', services: '10.4.0.0/16' },
    },
    sets: ['conformance', 'dual-stack'],
    tests: 74,
  },
  // KEP-563's tests on a shoot that ran IPv4 and was migrated to dual-stack (docs/dual-stack-migration.md).
  migrated: {
    label: 'IPv4 → dual-stack migrated',
    seedFamilies: ['IPv6', 'IPv4'],
    seeds: { dual: seedDualStackMigrationNetworks },
    shoot: {
      name: 'cmig',
      seed: 'dual',
      networking: { ipFamilies: ['IPv4'], nodes: '10.10.0.0/16', pods: '10.3.0.0/16', services: '10.4.0.0/16' },
    },
    migrateTo: ['IPv4', 'IPv6'],
    sets: ['conformance', 'dual-stack'],
    tests: 74,
  },
  // The same on a shoot that ran IPv6 and was migrated to [IPv6, IPv4], its IPv4 ranges from its Seed's shootDefaults.
  'migrated-ipv6': {
    label: 'IPv6 → dual-stack migrated',
    seedFamilies: ['IPv6', 'IPv4'],
    seeds: { dual6: seedDualStackIPv6MigrationNetworks },
    shoot: {
      name: 'cmig6',
      seed: 'dual6',
      networking: {
        ipFamilies: ['IPv6'],
        nodes: 'fd00:10:1:100::/64',
        pods: 'fd00:10:3::/56',
        services: 'fd00:10:4::/112',
      },
    },
    migrateTo: ['IPv6', 'IPv4'],
    sets: ['conformance', 'dual-stack'],
    tests: 74,
  },
  ipv4: {
    label: 'IPv4',
    seedFamilies: ['IPv6', 'IPv4'],
    seeds: { ipv4: seedIPv4Networks },
    shoot: {
      name: 'c4',
      seed: 'ipv4',
      networking: { nodes: '10.20.0.0/16', pods: '10.21.0.0/16', services: '10.22.0.0/16' },
    },
    sets: ['conformance'],
    tests: 47,
  },
};

const FAMILY = process.env.GARDENER_IPV6_CONFORMANCE_FAMILY || 'ipv6';
const CASE = CASES[FAMILY];
if (CASE === undefined) {
  throw new Error(`GARDENER_IPV6_CONFORMANCE_FAMILY=${FAMILY}: must be one of ${Object.keys(CASES).join(', ')}`);
}
const SEED_CLUSTER = {
  families: CASE.seedFamilies,
  nodes: ['fd00:21::/64', '10.37.0.0/24'].slice(0, CASE.seedFamilies.length),
  pods: ['fd00:21:1::/56', '10.38.0.0/16'].slice(0, CASE.seedFamilies.length),
  services: ['fd00:21:2::/112', '10.39.0.0/16'].slice(0, CASE.seedFamilies.length),
};
/** Other sets than the case's own (`sig-network,netpol`): the count below then doesn't apply. */
const SETS = process.env.GARDENER_IPV6_CONFORMANCE_SETS
  ? parseTestSets(process.env.GARDENER_IPV6_CONFORMANCE_SETS)
  : CASE.sets;
/** A narrower focus within the sets, for a rerun of some tests (the count below then doesn't apply either). */
const FOCUS = process.env.GARDENER_IPV6_CONFORMANCE_FOCUS || undefined;
const OWN_SETS = FOCUS === undefined && SETS === CASE.sets;
/**
 * Two machines, or six for the sig-network set: its topology tests (Traffic Distribution, topology hints) need three
 * zones with two schedulable Nodes each.
 */
const MACHINES = SETS.includes('sig-network') ? 6 : 2;
/**
 * Machines of two CPUs for the dual-stack set: its Downward API host IP tests give their pod a CPU limit of 1250m,
 * which a machine of one CPU can't run on this cgroup v1 host (cloudprofile.ts).
 */
const MACHINE = SETS.includes('dual-stack') ? MACHINE_TYPE_2CPU : MACHINE_TYPE;
/** As many zones as machines, at most the region's three (a pool's maximum may not be below its zones' count). */
const ZONES = LOCAL_ZONES.slice(0, MACHINES);
/** The case's own sets take up to an hour here; sig-network, netpol and dual-stack together about three times that. */
const RUN_TIMEOUT_MS = OWN_SETS ? 3_600_000 : 4 * 3_600_000;

const env = new SeedEnvironment();

describe
  .skipIf(unsupported !== undefined)
  .sequential(`Kubernetes conformance on an ${CASE.label} shoot (needs root)`, () => {
    beforeAll(async () => {
      // Built (or waited for, when .ci/run builds them beside the other files) before the environment starts.
      ensureE2EBinaries();
      await env.start({
        tag: 'conf',
        cluster: SEED_CLUSTER,
        gates: featureGates({ IPv6SingleStack: true, DualStack: CASE.seedFamilies.length > 1 }),
        loadBalancerNetworks: LB_NETWORKS,
        careSyncPeriodMs: 2_000,
        namespace: NAMESPACE,
        seeds: CASE.seeds,
      });
    }, 900_000);

    afterAll(async () => {
      await env.stop();
    }, 120_000);

    it(
      `passes ${SETS.map((set) => TEST_SETS[set].description).join(', ')}${FOCUS ? ` (focused)` : ''} but the listed skips`,
      async () => {
        await env.client.create(Refs.shoot, {
          apiVersion: 'core.gardener.cloud/v1beta1',
          kind: 'Shoot',
          metadata: { name: CASE.shoot.name, namespace: NAMESPACE },
          spec: {
            seedName: CASE.shoot.seed,
            cloudProfile: { name: 'local' },
            region: 'local',
            provider: {
              type: 'local',
              workers: [{ name: 'w', machine: { type: MACHINE }, minimum: MACHINES, maximum: MACHINES, zones: ZONES }],
            },
            networking: { type: 'calico', ...CASE.shoot.networking },
          },
        } as KubernetesObject);
        await env.waitForShoot(
          NAMESPACE,
          CASE.shoot.name,
          ['APIServerAvailable', 'ControlPlaneHealthy', 'EveryNodeReady', 'SystemComponentsHealthy'],
          300_000,
        );
        if (CASE.migrateTo) {
          await env.client.mergePatch(Refs.shoot, CASE.shoot.name, NAMESPACE, {
            spec: { networking: { ipFamilies: CASE.migrateTo } },
          });
          await waitFor(
            async () => {
              const s = await env.client.get<Shoot & KubernetesObject>(Refs.shoot, CASE.shoot.name, NAMESPACE);
              return (
                s?.status?.observedGeneration === s?.metadata.generation &&
                s?.status?.lastOperation?.state === 'Succeeded' &&
                !(s?.status?.constraints ?? []).some((c) => c.type === DUAL_STACK_NODES_MIGRATION_READY)
              );
            },
            { timeoutMs: 900_000, intervalMs: 1_000, message: `shoot ${CASE.shoot.name} migrated` },
          );
        }
        const kubeconfig = await env.writeShootKubeconfig(NAMESPACE, CASE.shoot.name);
        const shoot = await env.client.get<Shoot & KubernetesObject>(Refs.shoot, CASE.shoot.name, NAMESPACE);
        let output = '';
        const run = await runConformance({
          kubeconfig,
          sets: SETS,
          focus: FOCUS,
          traits: shootTraits(shoot!),
          reportDir: join(projectRoot(), '.cache', 'conformance', FAMILY),
          timeout: '50m',
          log: (chunk) => (output += chunk),
        });
        process.stderr.write(`[conformance ${FAMILY}] ${formatSummary(run)}`);
        expect(run.failed.map((r) => `${r.name}: ${r.message}`)).toEqual([]);
        expect(run.exitCode, output.slice(-4000)).toBe(0);
        // Every test of the sets is accounted for: none may skip itself unnoticed.
        if (OWN_SETS) {
          expect(run.skippedByTest.map((r) => `${r.name}: ${r.message}`)).toEqual([]);
          expect(run.passed.length + run.listed.length).toBe(CASE.tests);
        }
      },
      RUN_TIMEOUT_MS,
    );
  });
