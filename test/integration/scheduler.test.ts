/**
 * The scheduler with everything `up` runs, on a control plane of its own (its webhooks must not judge other files'
 * objects): an IPv6 shoot written as Gardener's provider-local example is (no seed name, no pods or services) lands on the IPv6 seed (not on the
 * IPv4 one, which comes first by name) and succeeds; a shoot no seed fits gets a SchedulingFailed event and a Pending
 * last operation naming every seed, and is scheduled once a fitting seed appears.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startRuntime, type Runtime } from '../../src/app/runtime.js';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import { featureGates } from '../../src/featuregate/featuregate.js';
import { localDNSProvider } from '../../src/gardenlet/dns-provider.js';
import { Refs } from '../../src/apis/refs.js';
import { startBind9, type Bind9 } from '../../src/localenv/bind9.js';
import { startControlPlane, type ControlPlane } from '../../src/localenv/control-plane.js';
import { ResourceClient } from '../../src/runtime/client.js';
import { EventRef } from '../../src/runtime/events.js';
import { silentLogger } from '../../src/runtime/log.js';
import { seedDualStackMigrationNetworks, seedIPv4Networks } from '../fixtures/objects.js';
import { example } from '../support/kube.js';
import { waitFor } from '../support/wait.js';
import { applyLocalCloudProfile } from '../support/shoot.js';

const NAMESPACE = 'garden-local';

let cp: ControlPlane;
let bind: Bind9;
let runtime: Runtime;
let client: ResourceClient;

function seed(name: string, networks: object): KubernetesObject {
  return {
    apiVersion: 'core.gardener.cloud/v1beta1',
    kind: 'Seed',
    metadata: { name },
    spec: { provider: { type: 'local', region: 'local' }, networks },
  } as KubernetesObject;
}

/** Shaped as Gardener's provider-local IPv6 example, as a user would apply it (it names no seed). */
function unscheduledIPv6Shoot(): KubernetesObject {
  const path = join(import.meta.dirname, '..', 'fixtures', 'shoot-ipv6-unscheduled.yaml');
  return parse(readFileSync(path, 'utf8')) as KubernetesObject;
}

async function shoot(name: string): Promise<Shoot & KubernetesObject> {
  return (await client.get<Shoot & KubernetesObject>(Refs.shoot, name, NAMESPACE))!;
}

async function events(name: string): Promise<{ reason?: string; message?: string; type?: string }[]> {
  const list = await client.list<KubernetesObject & { reason?: string; message?: string; type?: string }>(EventRef, {
    namespace: NAMESPACE,
    fieldSelector: `involvedObject.name=${name}`,
  });
  return list.items;
}

beforeAll(async () => {
  cp = await startControlPlane();
  bind = await startBind9();
  runtime = await startRuntime({
    kubeConfig: cp.kubeConfig(),
    gates: featureGates({ IPv6SingleStack: true, DualStack: true }),
    logger: silentLogger(),
    webhook: { host: '::1', port: 0, advertiseHost: '::1' },
    gardenlet: {
      dns: localDNSProvider({ server: bind.server, tsigKeyName: bind.tsigKeyName, tsigSecret: bind.tsigSecret }),
    },
  });
  client = new ResourceClient(cp.kubeConfig());
  await client.create(Refs.namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
  // `local-ipv4` sorts first: a scheduler that ignored IP families would take it.
  await client.create(Refs.seed, seed('local-ipv4', seedIPv4Networks));
  await client.create(Refs.seed, example<KubernetesObject>('seed-ipv6.yaml'));
  await applyLocalCloudProfile(client);
  await waitFor(
    async () =>
      (await Promise.all(['local-ipv4', 'local-ipv6'].map((n) => client.get(Refs.seed, n)))).every(
        (s) => (s as { status?: { lastOperation?: { state?: string } } })?.status?.lastOperation?.state === 'Succeeded',
      ),
    { timeoutMs: 30_000, message: 'both seeds to be reconciled' },
  );
}, 120_000);

afterAll(async () => {
  await runtime?.stop();
  await bind?.stop();
  await cp?.stop();
});

describe('the scheduler', () => {
  it(
    "schedules a shoot like Gardener's provider-local IPv6 example onto the IPv6 seed, where it succeeds",
    { timeout: 120_000 },
    async () => {
      const manifest = unscheduledIPv6Shoot();
      expect((manifest as unknown as Shoot).spec.seedName).toBeUndefined();
      await client.create(Refs.shoot, manifest);

      const scheduled = await waitFor(async () => (await shoot('local')).spec.seedName, {
        timeoutMs: 30_000,
        message: 'the shoot to be scheduled',
      });
      expect(scheduled).toBe('local-ipv6');
      let last = '';
      const done = await waitFor(
        async () => {
          const s = await shoot('local');
          const op = s.status?.lastOperation;
          last = op ? `${op.state} ${op.progress}%: ${op.description}` : 'no status';
          return op?.state === 'Succeeded' ? s : undefined;
        },
        { timeoutMs: 90_000, message: 'the shoot to succeed' },
      ).catch((e: unknown) => {
        throw new Error(`${(e as Error).message}; last operation: ${last}`);
      });
      // The binding went through the mutating webhook: the IPv6 seed's shootDefaults gave the shoot its ranges.
      expect(done.spec.networking).toMatchObject({ pods: 'fd00:10:3::/56', services: 'fd00:10:4::/112' });
      expect(done.status?.networking?.pods).toEqual(['fd00:10:3::/56']);
      const scheduledEvent = await waitFor(
        async () => (await events('local')).find((e) => e.reason === 'SchedulingSuccessful'),
        { message: 'the SchedulingSuccessful event' },
      );
      expect(scheduledEvent).toMatchObject({ type: 'Normal', message: "Scheduled to seed 'local-ipv6'" });
    },
  );

  it(
    'reports why no seed fits, naming each seed, and schedules once a fitting seed appears',
    { timeout: 60_000 },
    async () => {
      await client.create(Refs.shoot, {
        apiVersion: 'core.gardener.cloud/v1beta1',
        kind: 'Shoot',
        metadata: { name: 'dual', namespace: NAMESPACE },
        spec: {
          cloudProfile: { name: 'local' },
          region: 'local',
          provider: { type: 'local', workers: [{ name: 'w', machine: { type: 'local' }, minimum: 1, maximum: 1 }] },
          networking: {
            type: 'calico',
            ipFamilies: ['IPv4', 'IPv6'],
            nodes: '10.10.0.0/16',
            pods: '10.3.0.0/16',
            services: '10.4.0.0/16',
          },
        },
      } as KubernetesObject);

      const expected =
        'Failed to schedule Shoot: none out of the 2 seeds supports the IP families [IPv4 IPv6] of the shoot: ' +
        '{local-ipv4 => seed has IP families [IPv4], local-ipv6 => seed has IP families [IPv6]}';
      const pending = await waitFor(async () => (await shoot('dual')).status?.lastOperation, {
        timeoutMs: 30_000,
        message: 'the scheduling failure to be reported',
      });
      expect(pending).toMatchObject({ type: 'Create', state: 'Pending', description: expected });
      // The event follows the status write.
      const failed = await waitFor(async () => (await events('dual')).find((e) => e.reason === 'SchedulingFailed'), {
        message: 'the SchedulingFailed event',
      });
      expect(failed).toMatchObject({ type: 'Warning', message: expected });
      expect((await shoot('dual')).spec.seedName).toBeUndefined();

      await client.create(Refs.seed, seed('local-dual', seedDualStackMigrationNetworks));
      const seedName = await waitFor(async () => (await shoot('dual')).spec.seedName, {
        timeoutMs: 30_000,
        message: 'the shoot to be scheduled once a dual-stack seed is ready',
      });
      expect(seedName).toBe('local-dual');
    },
  );
});
