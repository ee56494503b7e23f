/**
 * Runs the gardenlet's controllers in the test process against the shared control plane.
 */
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import { localDNSProvider } from '../../src/gardenlet/dns-provider.js';
import { addGardenletControllers, type GardenletOptions } from '../../src/gardenlet/gardenlet.js';
import { addProviderLocalControllers } from '../../src/extensions/provider-local/controller.js';
import { silentLogger, type Logger } from '../../src/runtime/log.js';
import { Manager } from '../../src/runtime/manager.js';
import { Refs } from '../../src/apis/refs.js';
import type { ResourceClient } from '../../src/runtime/client.js';
import { uniqueSuffix } from './kube.js';

export interface RunningControllers {
  readonly manager: Manager;
  stop(): Promise<void>;
}

/** Starts a manager (no health server, no leader election) with what `add` puts on it. */
export async function startManager(
  kc: KubeConfig,
  add: (manager: Manager) => void,
  logger: Logger = silentLogger(),
): Promise<RunningControllers> {
  const manager = new Manager({ kubeConfig: kc, logger, gracefulShutdownMs: 5_000 });
  add(manager);
  await manager.start();
  return { manager, stop: () => manager.stop() };
}

export function startGardenlet(
  kc: KubeConfig,
  options: Partial<GardenletOptions> = {},
  logger?: Logger,
): Promise<RunningControllers> {
  return startManager(
    kc,
    (manager) => {
      addGardenletControllers(manager, {
        dns: localDNSProvider({ server: '[::1]:53' }),
        waitForExtensions: false,
        ...options,
      });
      // provider-local's load balancers, as the gardenlet's process runs them beside it.
      addProviderLocalControllers(manager, {});
    },
    logger,
  );
}

/** Informers and controllers built outside a manager (the extensions' own wiring). */
export interface ControllerSet {
  readonly informers: readonly { start(): Promise<void>; stop(): void }[];
  readonly controllers: readonly { start(): Promise<void>; stop(): Promise<void> }[];
}

/** Starts the informers, waits for their first list, then the controllers. */
export async function startControllerSet(set: ControllerSet): Promise<{ stop(): Promise<void> }> {
  await Promise.all(set.informers.map((i) => i.start()));
  await Promise.all(set.controllers.map((c) => c.start()));
  return {
    async stop() {
      await Promise.all(set.controllers.map((c) => c.stop()));
      for (const informer of set.informers) informer.stop();
    },
  };
}

/** Creates a local Seed `seed-xxxxxx` with these networks and returns its name. */
export async function createSeed(client: ResourceClient, networks: Record<string, unknown>): Promise<string> {
  const name = `seed-${uniqueSuffix()}`;
  await client.create(Refs.seed, {
    apiVersion: 'core.gardener.cloud/v1beta1',
    kind: 'Seed',
    metadata: { name },
    spec: { provider: { type: 'local', region: 'local' }, networks },
  } as KubernetesObject);
  return name;
}

/**
 * Creates an IPv6 Shoot on `seedName` with one worker pool (so it gets a Network and an OperatingSystemConfig),
 * written past any webhook.
 */
export async function createShootOn(
  client: ResourceClient,
  namespace: string,
  name: string,
  seedName: string,
): Promise<Shoot> {
  return (await client.create(Refs.shoot, {
    apiVersion: 'core.gardener.cloud/v1beta1',
    kind: 'Shoot',
    metadata: { name, namespace },
    spec: {
      seedName,
      region: 'local',
      provider: { type: 'local', workers: [{ name: 'w1', machine: { type: 'local' }, minimum: 1, maximum: 1 }] },
      networking: { type: 'calico', ipFamilies: ['IPv6'], pods: 'fd00:10:3::/56', services: 'fd00:10:4::/112' },
    },
  } as KubernetesObject)) as unknown as Shoot;
}
