/**
 * provider-local's pool planning without a server: which machines a pool has (minimum, hibernation, those that go),
 * its StatefulSet's replicas step by step (a few started at a time, lowered only past drained machines), and the
 * layout of the machines in the shoot (node ranges, sizes, first machine per pool) or why there is none.
 */
import { describe, expect, it } from 'vitest';
import type { Cluster } from '../../../../src/apis/extensions/v1alpha1/cluster.js';
import type { Worker, WorkerPool } from '../../../../src/apis/extensions/v1alpha1/worker.js';
import { localCloudProfile } from '../../../../src/extensions/provider-local/cloudprofile.js';
import { KUBELET_KERNEL_DEFAULTS } from '../../../../src/extensions/provider-local/machine/kubelet-host.js';
import {
  machineDeployments,
  machineLayout,
  machineName,
  poolMachines,
  poolReplicas,
  poolSpecProblems,
} from '../../../../src/extensions/provider-local/worker/pool-plan.js';

const pool = (name: string, minimum: number, extra: Partial<WorkerPool> = {}): WorkerPool & { name: string } => ({
  name,
  machineType: 'local',
  machineImage: { name: 'local', version: '1.0.0' },
  minimum,
  maximum: minimum,
  userDataSecretRef: { name: `worker-user-data-${name}`, key: 'userData' },
  ...extra,
});

function worker(pools: WorkerPool[]): Worker {
  return {
    apiVersion: 'extensions.gardener.cloud/v1alpha1',
    kind: 'Worker',
    metadata: { name: 'local', namespace: 'shoot--dev--a' },
    spec: { type: 'local', region: 'local', secretRef: { name: 'cloudprovider' }, pools },
  } as Worker;
}

/** The namespace's Cluster as the gardenlet writes it: the shoot's networking and hibernation, its CloudProfile. */
function cluster(networking: Record<string, unknown>, opts: { hibernated?: boolean; cloudProfile?: unknown } = {}) {
  return {
    apiVersion: 'extensions.gardener.cloud/v1alpha1',
    kind: 'Cluster',
    metadata: { name: 'shoot--dev--a' },
    spec: {
      cloudProfile: opts.cloudProfile ?? localCloudProfile(),
      seed: {},
      shoot: {
        metadata: { name: 'a' },
        spec: { networking, ...(opts.hibernated ? { hibernation: { enabled: true } } : {}) },
      },
    },
  } as unknown as Cluster;
}

const host = { sysctl: (key: string) => KUBELET_KERNEL_DEFAULTS[key], swapOn: () => true };

describe("a Worker's pools", () => {
  it('have their minimum of machines, the rest going from the highest ordinal', () => {
    expect(poolMachines(pool('a', 2), 0, false)).toEqual({
      pool: 'a',
      wanted: 2,
      kept: ['machine-a-0', 'machine-a-1'],
      going: [],
    });
    expect(poolMachines(pool('a', 1), 3, false)).toEqual({
      pool: 'a',
      wanted: 1,
      kept: ['machine-a-0'],
      going: ['machine-a-1', 'machine-a-2'],
    });
    expect(poolMachines({ name: 'b' }, 0, false)).toMatchObject({ wanted: 0, kept: [], going: [] });
    expect(poolMachines({ name: 'b', minimum: -1 }, 1, false)).toMatchObject({ wanted: 0, going: ['machine-b-0'] });
  });

  it('have no machines while the shoot is hibernated, whatever their minimum', () => {
    expect(poolMachines(pool('a', 2), 2, true)).toEqual({
      pool: 'a',
      wanted: 0,
      kept: [],
      going: ['machine-a-0', 'machine-a-1'],
    });
  });

  it('start a few machines at a time past the ready ones', () => {
    const machines = poolMachines(pool('big', 7), 0, false);
    expect(poolReplicas(machines, { replicas: 0, ready: 0 }, new Map(), 3)).toBe(3);
    expect(poolReplicas(machines, { replicas: 3, ready: 0 }, new Map(), 3)).toBe(3);
    expect(poolReplicas(machines, { replicas: 3, ready: 2 }, new Map(), 3)).toBe(5);
    expect(poolReplicas(machines, { replicas: 5, ready: 5 }, new Map(), 3)).toBe(7);
    expect(poolReplicas(machines, { replicas: 7, ready: 7 }, new Map(), 3)).toBe(7);
  });

  it('lose machines only past those drained, from the highest ordinal down', () => {
    const machines = poolMachines(pool('a', 1), 3, false);
    const current = { replicas: 3, ready: 3 };
    // Machine 2 still draining: nothing goes, even though machine 1 is drained.
    expect(poolReplicas(machines, current, new Map([['machine-a-2', false]]), 3)).toBe(3);
    expect(
      poolReplicas(
        machines,
        current,
        new Map([
          ['machine-a-2', true],
          ['machine-a-1', false],
        ]),
        3,
      ),
    ).toBe(2);
    // A machine the drain does not name has nothing to drain (no shoot to drain it in): it may go.
    expect(poolReplicas(machines, current, new Map(), 3)).toBe(1);
    // Scaling down is not bounded by the machines starting at once.
    expect(poolReplicas(poolMachines(pool('a', 0), 7, false), { replicas: 7, ready: 7 }, new Map(), 3)).toBe(0);
  });

  it('name their machines after their StatefulSets', () => {
    expect(machineName('a', 4)).toBe('machine-a-4');
    expect(machineDeployments(worker([{ ...pool('a', 2), maximum: 4 }, pool('b', 1), { minimum: 1 }]))).toEqual([
      { name: 'machine-a', minimum: 2, maximum: 4 },
      { name: 'machine-b', minimum: 1, maximum: 1 },
    ]);
  });

  it('refuse user data without a reference and kubelet settings the host cannot give, naming the field', () => {
    expect(poolSpecProblems(worker([pool('a', 1)]), host)).toEqual([]);
    const problems = poolSpecProblems(
      worker([
        { ...pool('a', 1), userDataSecretRef: { name: 'x', key: '' } },
        { ...pool('b', 1), kubeletConfig: { failSwapOn: true } },
      ]),
      host,
    );
    expect(problems).toEqual([
      'pool a: spec.pools[].userDataSecretRef needs name and key',
      "pool b: spec.pools[1].kubeletConfig.failSwapOn: true, but the host has swap on: the kubelet would refuse to start, and a machine can't turn the host's swap off",
    ]);
  });
});

describe("the layout of a Worker's machines", () => {
  it("takes node ranges per family from the shoot, each pool's first machine after the maxima before it", () => {
    const pools = [{ ...pool('a', 2), maximum: 4 }, pool('b', 1)];
    const layout = machineLayout(cluster({ ipFamilies: ['IPv6', 'IPv4'], nodes: 'fd00:10:1:100::/56' }), pools);
    expect(layout).toEqual({
      hibernated: false,
      nodes: 'fd00:10:1:100::/56',
      nodeCIDRs: ['fd00:10:1:100::/56', '10.255.255.0/24'],
      podCIDRs: [],
      resources: new Map([
        ['a', { requests: { cpu: '100m', memory: '1Gi' }, limits: { cpu: '1', memory: '8Gi' } }],
        ['b', { requests: { cpu: '100m', memory: '1Gi' }, limits: { cpu: '1', memory: '8Gi' } }],
      ]),
      offsets: new Map([
        ['a', 0],
        ['b', 4],
      ]),
    });
  });

  it('says when the shoot is hibernated', () => {
    const layout = machineLayout(cluster({ nodes: '10.250.0.0/16' }, { hibernated: true }), [pool('a', 1)]);
    expect(layout).toMatchObject({ hibernated: true, nodeCIDRs: ['10.250.0.0/16'] });
  });

  it("refuses machine types the shoot's CloudProfile lacks or gives no size", () => {
    const cloudProfile = {
      metadata: { name: 'local' },
      spec: {
        machineTypes: [
          { name: 'local', cpu: '1', memory: '8Gi' },
          { name: 'tiny', cpu: '0', memory: '1Gi' },
        ],
      },
    };
    const pools = [pool('a', 1), pool('b', 1, { machineType: 'large' }), pool('c', 1, { machineType: 'tiny' })];
    expect(machineLayout(cluster({ ipFamilies: ['IPv6'] }, { cloudProfile }), pools)).toEqual({
      problem:
        "pool b: machine type large is not in the shoot's CloudProfile local; pool c: machine type tiny has no CPU (cpu: 0)",
    });
  });

  it("refuses pools that do not fit into the shoot's node range, naming the pool", () => {
    const pools = [pool('a', 2), pool('b', 2, { maximum: 5 })];
    expect(machineLayout(cluster({ nodes: '10.20.0.0/28' }), pools)).toEqual({
      problem: "the shoot's node ranges: pool b: node range 10.20.0.0/28 has no room for machine 6 (its maximum is 5)",
    });
  });
});
