/**
 * The environment of the e2e tests of shoots with machines: a garden API server that doubles as the seed, with two
 * seed Nodes on a node network of the test's own, the webhook and the controllers with shoots as workloads, and the
 * project namespace with its seeds; stopped whatever part of it started. Also what such tests do with a shoot: wait
 * for it to succeed, write its kubeconfig, read what its machines applied of their user data, and the `web`
 * Deployment spread over its two machines.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { machinesOptions, startLocalServices, type LocalServices } from '../../src/app/local-environment.js';
import { SeedNodeNetwork, SeedNodes, type SeedNetworks } from '../../src/app/seed-nodes.js';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import {
  NODE_APPLIED_USER_DATA_ANNOTATION,
  workerUserDataAnnotation,
} from '../../src/apis/provider-local/v1alpha1/machine-user-data.js';
import type { LoadBalancerNetworks } from '../../src/extensions/provider-local/loadbalancer/pool.js';
import { TEST_IMAGE } from '../../src/extensions/provider-local/machine/images.js';
import type { FeatureGates } from '../../src/featuregate/featuregate.js';
import { Refs } from '../../src/apis/refs.js';
import { ensureBinaries } from '../../src/localenv/binaries.js';
import { startControlPlane, type ControlPlane } from '../../src/localenv/control-plane.js';
import { ResourceClient } from '../../src/runtime/client.js';
import { silentLogger } from '../../src/runtime/log.js';
import { cli } from './cli.js';
import { createProjectAndSeeds } from './shoot.js';
import { waitFor } from './wait.js';

export interface SeedEnvironmentOptions {
  /** Names the bridge and the services' networks apart from other tests'. */
  readonly tag: string;
  readonly cluster: SeedNetworks;
  readonly gates: FeatureGates;
  readonly loadBalancerNetworks: LoadBalancerNetworks;
  /** The project namespace and its seeds (name → networks). */
  readonly namespace: string;
  readonly seeds: Readonly<Record<string, unknown>>;
  /** How often the care controller judges the shoots; the services' own default when unset. */
  readonly careSyncPeriodMs?: number;
}

/** Where an environment's start or stop spends its time, one line on stderr (the CI log's figures per file). */
class PhaseTimer {
  private readonly started = Date.now();
  private last = this.started;
  private readonly phases: string[] = [];
  constructor(private readonly title: string) {}
  mark(phase: string): void {
    const now = Date.now();
    this.phases.push(`${phase} ${((now - this.last) / 1000).toFixed(1)} s`);
    this.last = now;
  }
  report(): void {
    const total = ((Date.now() - this.started) / 1000).toFixed(1);
    process.stderr.write(`${this.title} in ${total} s: ${this.phases.join(', ')}\n`);
  }
}

export class SeedEnvironment {
  kubectlBin!: string;
  dir!: string;
  network: SeedNodeNetwork | undefined;
  cp!: ControlPlane;
  client!: ResourceClient;
  nodes: SeedNodes | undefined;
  services: LocalServices | undefined;

  /** Starts every part; what started before a failure is stopped by {@link stop}. */
  async start(opts: SeedEnvironmentOptions): Promise<void> {
    const phases = new PhaseTimer(`[seed-environment ${opts.tag}] up`);
    this.kubectlBin = (await ensureBinaries({ names: ['kubectl'] })).kubectl;
    this.dir = mkdtempSync(join(process.env.GARDENER_IPV6_TMPDIR || tmpdir(), 'gardener-ipv6-test-'));
    this.network = new SeedNodeNetwork(opts.cluster, opts.tag);
    this.network.deploy();
    this.cp = await startControlPlane(this.network.controlPlaneOptions());
    this.client = new ResourceClient(this.cp.kubeConfig());
    phases.mark('control plane');
    // As `up`: the services first, so that the seed's Nodes and CoreDNS resolve through the environment's BIND9.
    this.services = await startLocalServices(this.cp, opts.gates, silentLogger(), {
      controlPlaneWorkloads: true,
      loadBalancerNetworks: opts.loadBalancerNetworks,
      tag: opts.tag,
      ...(opts.careSyncPeriodMs !== undefined ? { careSyncPeriodMs: opts.careSyncPeriodMs } : {}),
    });
    phases.mark('services');
    this.nodes = SeedNodes.forCluster(this.cp, {
      count: 2,
      network: this.network,
      machines: await machinesOptions({ seed: true }),
      client: this.client,
      upstreamDNS: [this.services.bind.address],
    });
    await this.nodes.deploy();
    phases.mark('seed Nodes started');
    await this.nodes.wait();
    phases.mark('seed Nodes Ready');
    await createProjectAndSeeds(this.client, opts.namespace, opts.seeds);
    phases.mark('seeds');
    phases.report();
  }

  async stop(): Promise<void> {
    const phases = new PhaseTimer('[seed-environment] stopped');
    await this.services?.stop({ keepLoadBalancerNetwork: true });
    phases.mark('services');
    await this.nodes?.destroy();
    phases.mark('seed Nodes');
    this.client?.close();
    await this.cp?.stop();
    this.services?.loadBalancerNetwork?.destroy();
    this.network?.destroy();
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    phases.mark('control plane');
    phases.report();
  }

  /** Waits until the shoot's last operation succeeded with each of `conditions` True, saying what it had last. */
  async waitForShoot(namespace: string, name: string, conditions: readonly string[], timeoutMs: number): Promise<void> {
    let last = '';
    await waitFor(
      async () => {
        const s = await this.client.get<Shoot & KubernetesObject>(Refs.shoot, name, namespace);
        const have = s?.status?.conditions ?? [];
        last = `${s?.status?.lastOperation?.description}; ${have.map((x) => `${x.type}=${x.status}: ${x.message}`).join('; ')}`;
        const isTrue = (t: string) => have.some((x) => x.type === t && x.status === 'True');
        return s?.status?.lastOperation?.state === 'Succeeded' && conditions.every(isTrue);
      },
      { timeoutMs, intervalMs: 500, message: `shoot ${name} with Ready nodes` },
    ).catch((e: Error) => {
      throw new Error(`${e.message}; last: ${last}`);
    });
  }

  /**
   * Deletes the shoot and waits until it is gone; one line on stderr with how long each step of its delete operation
   * took (its last operation's descriptions, polled every half second).
   */
  async deleteShoot(namespace: string, name: string, timeoutMs: number): Promise<void> {
    const started = Date.now();
    const steps: { description: string; at: number }[] = [];
    await this.client.delete(Refs.shoot, name, namespace);
    await waitFor(
      async () => {
        const s = await this.client.get<Shoot & KubernetesObject>(Refs.shoot, name, namespace);
        const description = s?.status?.lastOperation?.description;
        if (description !== undefined && steps.at(-1)?.description !== description) {
          steps.push({ description, at: Date.now() });
        }
        return s === undefined;
      },
      { timeoutMs, intervalMs: 500, message: `shoot ${name} deleted` },
    );
    const ended = Date.now();
    const timeline = steps.map((step, i) => {
      const until = steps[i + 1]?.at ?? ended;
      return `${((until - step.at) / 1000).toFixed(1)} s ${step.description}`;
    });
    process.stderr.write(
      `[seed-environment] shoot ${name} deleted in ${((ended - started) / 1000).toFixed(1)} s: ${timeline.join(' | ')}\n`,
    );
  }

  /** `gardener-ipv6 kubeconfig --pin-address` for the shoot, written into the environment's folder. */
  async writeShootKubeconfig(namespace: string, name: string): Promise<string> {
    const printed = await cli([
      'kubeconfig',
      '--kubeconfig',
      this.cp.kubeconfigPath,
      '--shoot',
      `${namespace}/${name}`,
      '--pin-address',
    ]);
    expect(printed.code, printed.stderr).toBe(0);
    const file = join(this.dir, `${name}.kubeconfig`);
    writeFileSync(file, printed.stdout, { mode: 0o600 });
    return file;
  }
}

/**
 * What the shoot's machines applied of a pool's user data: the checksum the shoot's Worker wants (its annotation)
 * and, per Node, the one the Node says its machine applied. `kubectl` runs against the shoot.
 */
export async function appliedUserData(
  client: ResourceClient,
  worker: { name: string; namespace: string; pool: string },
  kubectl: (args: string[]) => Promise<string>,
): Promise<{ want: string | undefined; applied: (string | undefined)[] }> {
  const found = await client.get<KubernetesObject>(Refs.worker, worker.name, worker.namespace);
  const want = found?.metadata?.annotations?.[workerUserDataAnnotation(worker.pool)];
  const nodes = JSON.parse(await kubectl(['get', 'nodes', '-o', 'json'])) as { items: KubernetesObject[] };
  return { want, applied: nodes.items.map((n) => n.metadata?.annotations?.[NODE_APPLIED_USER_DATA_ANNOTATION]) };
}

/**
 * Two pods `name` spread over two Nodes, each answering with its name on port 8080 (the machines' test image). With
 * `honorNodeTaints`, a Node with a taint they don't tolerate (a cordoned one) is no place to spread to: both may run
 * on the Node left.
 */
export function webDeployment(name = 'web', opts: { honorNodeTaints?: boolean } = {}): KubernetesObject {
  const labels = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default' },
    spec: {
      replicas: 2,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          topologySpreadConstraints: [
            {
              maxSkew: 1,
              topologyKey: 'kubernetes.io/hostname',
              whenUnsatisfiable: 'DoNotSchedule',
              ...(opts.honorNodeTaints ? { nodeTaintsPolicy: 'Honor' } : {}),
              labelSelector: { matchLabels: labels },
            },
          ],
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'web',
              image: TEST_IMAGE,
              command: ['sh', '-c', 'hostname > /www/index.html && exec httpd -f -p 8080 -h /www'],
            },
          ],
        },
      },
    },
  } as KubernetesObject;
}
