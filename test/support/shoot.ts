/**
 * Helpers for tests that use a shoot as its user does: kubectl with an admin kubeconfig whose server is the shoot's
 * DNS name, resolved by the environment's DNS server.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import { localCloudProfile } from '../../src/extensions/provider-local/cloudprofile.js';
import { Refs } from '../../src/apis/refs.js';
import { which } from '../../src/system/process.js';
import type { ResourceClient } from '../../src/runtime/client.js';
import { waitFor } from './wait.js';

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A file in a temporary folder removed when the test finishes. */
export function testFile(name: string, text: string): string {
  const dir = mkdtempSync(join(process.env.GARDENER_IPV6_TMPDIR || tmpdir(), 'gardener-ipv6-test-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, name);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

export function run(command: string, args: string[], timeoutMs = 30_000): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Runs a command in a private mount namespace whose /etc/resolv.conf names only `nameserver`, as `ip netns exec`
 * gives a namespace its own resolv.conf: names resolve through the environment's DNS server, as for a user there.
 */
export function runWithNameserver(nameserver: string, command: string, args: string[]): Promise<CommandResult> {
  const resolvConf = testFile('resolv.conf', `nameserver ${nameserver}\noptions timeout:1 attempts:2\n`);
  return run(which('unshare') ?? 'unshare', [
    '--mount',
    '--propagation',
    'private',
    '--',
    'sh',
    '-c',
    'mount --bind "$0" /etc/resolv.conf && exec "$@"',
    resolvConf,
    command,
    ...args,
  ]);
}

/**
 * The CloudProfile `local` as `up` creates it: the webhook admits a Shoot against the CloudProfile it names and
 * refuses it without one. Server-side apply: the files that share an API server may each apply it.
 */
export async function applyLocalCloudProfile(client: ResourceClient): Promise<void> {
  await client.apply(Refs.cloudProfile, localCloudProfile() as KubernetesObject, {
    fieldManager: 'gardener-ipv6-test',
    force: true,
  });
}

/**
 * The project namespace, a local Seed per entry, each created once the webhook admits it (its registration takes a
 * moment to reach the API server), and the CloudProfile `local`.
 */
export async function createProjectAndSeeds(
  client: ResourceClient,
  namespace: string,
  seeds: Readonly<Record<string, unknown>>,
): Promise<void> {
  await client.create(Refs.namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  for (const [name, networks] of Object.entries(seeds)) {
    await waitFor(
      () =>
        client
          .create(Refs.seed, {
            apiVersion: 'core.gardener.cloud/v1beta1',
            kind: 'Seed',
            metadata: { name },
            spec: { provider: { type: 'local', region: 'local' }, networks },
          } as KubernetesObject)
          .then(() => true),
      { timeoutMs: 30_000, message: `seed ${name} to be admitted` },
    );
  }
  await applyLocalCloudProfile(client);
}

/**
 * Waits until the shoot's last operation succeeded and the care controller found its API server available and its
 * control plane healthy; fails with the last status seen.
 */
export async function healthyShoot(
  client: ResourceClient,
  namespace: string,
  name: string,
  timeoutMs: number,
): Promise<Shoot> {
  let last = 'no status';
  try {
    return await waitFor(
      async () => {
        const s = await client.get<Shoot & KubernetesObject>(Refs.shoot, name, namespace);
        const op = s?.status?.lastOperation;
        const conditions = s?.status?.conditions ?? [];
        last = `${op?.state} ${op?.progress}%: ${op?.description}; ${conditions.map((c) => `${c.type}=${c.status} (${c.message})`).join(', ')}`;
        const isTrue = (type: string) => conditions.some((c) => c.type === type && c.status === 'True');
        return op?.state === 'Succeeded' && isTrue('APIServerAvailable') && isTrue('ControlPlaneHealthy')
          ? s
          : undefined;
      },
      { timeoutMs, intervalMs: 200, message: `shoot ${name} to succeed with healthy conditions` },
    );
  } catch (e) {
    throw new Error(`${(e as Error).message}; last: ${last}`);
  }
}
