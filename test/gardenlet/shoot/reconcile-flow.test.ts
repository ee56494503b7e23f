/**
 * The shoot's reconcile flow as a graph: pinned here for each plan (awake, hibernating, objects only), and the flow
 * tables of docs/architecture.md checked against it task by task (id, name, the tasks it runs after), so that the
 * docs can't drift from the code. The graph is built, never run: no task touches the stub clients.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Seed } from '../../../src/apis/core/v1beta1/seed.js';
import { localDNSProvider } from '../../../src/gardenlet/dns-provider.js';
import { hibernationPlan } from '../../../src/gardenlet/shoot/hibernation.js';
import { reconcileFlow } from '../../../src/gardenlet/shoot/reconcile-flow.js';
import type { ResourceClient } from '../../../src/runtime/client.js';
import { realClock } from '../../../src/runtime/clock.js';
import { seedIPv6Networks, seedObject, shootObject } from '../../fixtures/objects.js';
import { DUAL_STACK_NODES_MIGRATION_READY } from '../../../src/apis/core/v1beta1/dual-stack-migration.js';

type Graph = ReturnType<ReturnType<typeof reconcileFlow>['flow']['graph']>;

function graphOf(opts: { hibernate: boolean; controlPlaneWorkloads: boolean; migrating?: boolean }): Graph {
  const shoot = shootObject({ ipFamilies: opts.migrating ? ['IPv4', 'IPv6'] : ['IPv6'] });
  shoot.spec.hibernation = { enabled: opts.hibernate };
  if (opts.migrating) {
    shoot.status = { constraints: [{ type: DUAL_STACK_NODES_MIGRATION_READY, status: 'Progressing' }] } as never;
  }
  const unused = new Proxy({} as ResourceClient, {
    get: (_, key) => {
      throw new Error(`the flow's graph was built with a call to the client (${String(key)})`);
    },
  });
  return reconcileFlow({
    client: unused,
    garden: unused,
    clock: realClock,
    shoot,
    seed: seedObject({}, { base: seedIPv6Networks }) as Seed,
    cloudProfile: undefined,
    dns: localDNSProvider(),
    service: () => Promise.resolve(undefined),
    waitForExtensions: true,
    runtime: opts.controlPlaneWorkloads ? { seedFamilies: ['IPv6'] } : undefined,
    plan: hibernationPlan(shoot, opts.controlPlaneWorkloads),
    publishNetworks: () => Promise.resolve(),
  }).flow.graph();
}

const describeGraph = (graph: Graph) =>
  graph.map((t) => `${t.id}${t.dependencies.length ? ` <- ${t.dependencies.join(', ')}` : ''}`);

const AWAKE = graphOf({ hibernate: false, controlPlaneWorkloads: true });
const HIBERNATING = graphOf({ hibernate: true, controlPlaneWorkloads: true });
const MIGRATING = graphOf({ hibernate: false, controlPlaneWorkloads: true, migrating: true });

describe('the shoot reconcile flow', () => {
  it('deploys the control plane, waits for it and the extensions, then deploys the Worker (awake)', () => {
    expect(describeGraph(AWAKE)).toEqual([
      'deploy-namespace',
      'deploy-secrets <- deploy-namespace',
      'deploy-kube-apiserver-service <- deploy-namespace',
      'compute-networks <- deploy-namespace',
      'deploy-network <- compute-networks',
      'deploy-operating-system-config <- deploy-namespace',
      'deploy-network-policies <- compute-networks',
      'wait-kube-apiserver-load-balancer <- deploy-kube-apiserver-service',
      'deploy-dns-records <- wait-kube-apiserver-load-balancer',
      'deploy-control-plane <- wait-kube-apiserver-load-balancer, compute-networks, deploy-secrets',
      'wait-control-plane <- deploy-control-plane',
      'wait-network <- deploy-network',
      'wait-dns-records <- deploy-dns-records',
      'deploy-machine-bootstrap <- deploy-secrets, wait-control-plane, wait-network, wait-dns-records',
      'deploy-worker <- compute-networks, deploy-secrets, deploy-operating-system-config, deploy-machine-bootstrap',
      'deploy-coredns <- compute-networks, wait-control-plane, wait-network, wait-dns-records',
      'wait-worker <- deploy-worker',
      'wait-coredns <- deploy-coredns, wait-worker',
    ]);
  });

  it('stops the machines after every wait, then the control plane (hibernating)', () => {
    expect(describeGraph(HIBERNATING).slice(-5)).toEqual([
      'wait-network <- deploy-network',
      'wait-dns-records <- deploy-dns-records',
      'stop-machines <- compute-networks, wait-network, wait-dns-records',
      'wait-machines-stopped <- stop-machines',
      'hibernate-control-plane <- wait-machines-stopped',
    ]);
    const ids = new Set(HIBERNATING.map((t) => t.id));
    for (const id of ['deploy-control-plane', 'wait-control-plane', 'deploy-worker', 'wait-worker']) {
      expect(ids.has(id), id).toBe(false);
    }
  });

  it("ends a dual-stack migration after the Worker: the Nodes, the network's switch, then CoreDNS's Service", () => {
    expect(describeGraph(MIGRATING).slice(AWAKE.length)).toEqual([
      'wait-dual-stack-nodes <- wait-coredns',
      'deploy-dual-stack-network <- wait-dual-stack-nodes, compute-networks',
      'wait-dual-stack-network <- deploy-dual-stack-network',
      'deploy-dual-stack-pod-network <- wait-dual-stack-network, deploy-secrets',
      'wait-dual-stack-pod-network <- deploy-dual-stack-pod-network',
      'finish-dual-stack-migration <- wait-dual-stack-pod-network',
      'wait-dual-stack-coredns <- finish-dual-stack-migration',
    ]);
    expect(describeGraph(MIGRATING).slice(0, AWAKE.length)).toEqual(describeGraph(AWAKE));
  });

  it('has neither control plane nor machines in objects-only mode', () => {
    const ids = graphOf({ hibernate: false, controlPlaneWorkloads: false }).map((t) => t.id);
    expect(ids).not.toContain('deploy-control-plane');
    expect(ids).not.toContain('deploy-worker');
    expect(ids).toContain('wait-dns-records');
  });
});

/** The rows of docs/architecture.md's flow tables: a task's id, its name and the ids of the tasks it runs after. */
function documentedTasks(): Map<string, { name: string; after: string[] }> {
  const text = readFileSync(join(import.meta.dirname, '../../../docs/architecture.md'), 'utf8');
  const section = text.slice(text.indexOf('### The shoot flow'), text.indexOf('### Names and labels'));
  const rows = new Map<string, { name: string; after: string[] }>();
  for (const line of section.split('\n')) {
    const cells = line.split(' | ');
    const id = /^\| `([a-z-]+)`$/.exec(cells[0] ?? '')?.[1];
    if (id === undefined) continue;
    const after = [...(cells[2] ?? '').matchAll(/`([a-z-]+)`/g)].map((m) => m[1]!);
    rows.set(id, { name: cells[1]!, after });
  }
  return rows;
}

describe("docs/architecture.md's flow tables", () => {
  const documented = documentedTasks();

  it('list every task of the awake, the hibernating and the migrating flow, and nothing else', () => {
    const tasks = new Set([...AWAKE, ...HIBERNATING, ...MIGRATING].map((t) => t.id));
    expect([...documented.keys()].sort()).toEqual([...tasks].sort());
  });

  it("give each task the flow's name and the tasks it runs after", () => {
    for (const task of [...AWAKE, ...HIBERNATING, ...MIGRATING]) {
      expect(documented.get(task.id), task.id).toEqual({ name: task.name, after: task.dependencies });
    }
  });
});
