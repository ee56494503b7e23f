/**
 * What the shoot benchmarks share: polling with a deadline, the RSS of processes, and the garden objects they start
 * from (the project namespace, an IPv6 seed and the CloudProfile `local` their shoots name).
 */
import { readFileSync } from 'node:fs';
import type { KubernetesObject } from '@kubernetes/client-node';
import { Refs } from '../src/apis/refs.js';
import { localCloudProfile } from '../src/extensions/provider-local/cloudprofile.js';
import type { ResourceClient } from '../src/runtime/client.js';

export const BENCH_NAMESPACE = 'garden-bench';
export const BENCH_SEED = 'ipv6';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Calls `fn` every `intervalMs` until it returns a value (errors count as "not yet"); throws at the deadline. */
export async function until<T>(
  fn: () => Promise<T | undefined>,
  timeoutMs: number,
  what: string,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch {
      // Not yet.
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** MiB resident of the processes (an exited one counts 0), plus `extraBytes`. */
export function rssMiB(pids: readonly (number | undefined)[], extraBytes = 0): number {
  let kib = 0;
  for (const pid of pids) {
    if (pid === undefined) continue;
    try {
      kib += Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // Exited meanwhile.
    }
  }
  return (kib * 1024 + extraBytes) / 2 ** 20;
}

/** The project namespace and the IPv6 seed the benchmark shoots are scheduled on (once the webhook admits it). */
export async function createBenchSeed(client: ResourceClient): Promise<void> {
  await client.create(Refs.namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: BENCH_NAMESPACE } });
  // The webhook admits a Shoot against the CloudProfile it names, as `up` creates it.
  await client.apply(Refs.cloudProfile, localCloudProfile() as KubernetesObject, {
    fieldManager: 'gardener-ipv6-bench',
    force: true,
  });
  await createLocalSeed(client, BENCH_SEED, {
    ipFamilies: ['IPv6'],
    nodes: 'fd00:10::/64',
    pods: 'fd00:10:1::/56',
    services: 'fd00:10:2::/112',
    shootDefaults: { pods: 'fd00:10:3::/56', services: 'fd00:10:4::/112' },
  });
}

/** A Seed of provider `local` with these networks, created once the webhook admits it. */
export async function createLocalSeed(client: ResourceClient, name: string, networks: object): Promise<void> {
  await until(
    () =>
      client
        .create(Refs.seed, {
          apiVersion: 'core.gardener.cloud/v1beta1',
          kind: 'Seed',
          metadata: { name },
          spec: { provider: { type: 'local', region: 'local' }, networks },
        } as KubernetesObject)
        .then(() => true),
    30_000,
    `seed ${name} to be admitted`,
  );
}

/** An IPv6 Shoot on the benchmark seed with one worker pool of `machines` machines. */
export function benchShoot(name: string, machines: number, nodes: string): KubernetesObject {
  return {
    apiVersion: 'core.gardener.cloud/v1beta1',
    kind: 'Shoot',
    metadata: { name, namespace: BENCH_NAMESPACE },
    spec: {
      seedName: BENCH_SEED,
      cloudProfile: { name: 'local' },
      region: 'local',
      provider: {
        type: 'local',
        workers: [{ name: 'w', machine: { type: 'local' }, minimum: machines, maximum: machines }],
      },
      networking: { type: 'calico', ipFamilies: ['IPv6'], nodes },
    },
  } as KubernetesObject;
}
