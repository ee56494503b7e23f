/**
 * Wiring of the gardenlet's controllers: which informers feed which reconciler, and how events on owned objects
 * map back to their Shoot.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ResourceClient } from '../runtime/client.js';
import type { Clock } from '../runtime/clock.js';
import { Controller, type Request } from '../runtime/controller.js';
import { Informer } from '../runtime/informer.js';
import type { Logger } from '../runtime/log.js';
import type { Metrics } from '../runtime/metrics.js';
import { GARDEN_NAMESPACE } from './names.js';
import { DEFAULT_HOST_IPS, type HostIPs } from './provider-local/ingress.js';
import { isShootLoadBalancer, ServiceLoadBalancerReconciler } from './provider-local/service-controller.js';
import { Refs } from './resources.js';
import { SeedReconciler } from './seed/reconciler.js';
import type { DNSProviderConfig } from './shoot/components/dns-records.js';
import { ShootReconciler } from './shoot/reconciler.js';

export interface GardenletOptions {
  readonly client: ResourceClient;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly dns: DNSProviderConfig;
  readonly seedName?: string;
  readonly hostIPs?: HostIPs;
  readonly waitForExtensions?: boolean;
  readonly workers?: number;
  readonly clock?: Clock;
}

export interface ControllerSet {
  readonly informers: Informer[];
  readonly controllers: Controller[];
}

/** `shoot--<project>--<shoot>` → the Shoot's request (`garden-<project>`, or `garden` for project garden). */
export function shootRequestForSeedNamespace(namespace: string | undefined): Request[] {
  const match = /^shoot--(.+?)--(.+)$/.exec(namespace ?? '');
  if (!match) return [];
  const [, project, name] = match as unknown as [string, string, string];
  return [{ namespace: project === GARDEN_NAMESPACE ? GARDEN_NAMESPACE : `garden-${project}`, name }];
}

export function gardenletControllers(options: GardenletOptions): ControllerSet {
  const { client, logger, metrics, clock } = options;
  const informer = (ref: (typeof Refs)[keyof typeof Refs]) =>
    new Informer<KubernetesObject>({
      client,
      ref,
      logger: logger.child({ informer: ref.plural }),
      ...(clock ? { clock } : {}),
    });
  const shoots = informer(Refs.shoot);
  const seeds = informer(Refs.seed);
  const services = informer(Refs.service);
  const networks = informer(Refs.network);
  const dnsRecords = informer(Refs.dnsRecord);
  const common = {
    logger,
    metrics,
    ...(options.workers ? { workers: options.workers } : {}),
    ...(clock ? { clock } : {}),
  };
  const ownedToShoot = (o: KubernetesObject) => shootRequestForSeedNamespace(o.metadata?.namespace);

  const shootController = new Controller({
    name: 'shoot',
    reconciler: new ShootReconciler({
      client,
      dns: options.dns,
      ...(options.seedName !== undefined ? { seedName: options.seedName } : {}),
      ...(options.waitForExtensions !== undefined ? { waitForExtensions: options.waitForExtensions } : {}),
      ...(clock ? { clock } : {}),
    }),
    ...common,
  })
    .watch(shoots)
    .watch(services, ownedToShoot)
    .watch(networks, ownedToShoot)
    .watch(dnsRecords, ownedToShoot);

  const seedController = new Controller({
    name: 'seed',
    reconciler: new SeedReconciler({
      client,
      ...(options.seedName !== undefined ? { seedName: options.seedName } : {}),
      ...(clock ? { clock } : {}),
    }),
    ...common,
  }).watch(seeds);

  const serviceController = new Controller({
    name: 'provider-local-service',
    reconciler: new ServiceLoadBalancerReconciler(client, options.hostIPs ?? DEFAULT_HOST_IPS),
    ...common,
  }).watch(services, (s) =>
    isShootLoadBalancer(s) ? [{ namespace: s.metadata?.namespace ?? '', name: s.metadata?.name ?? '' }] : [],
  );

  return {
    informers: [shoots, seeds, services, networks, dnsRecords],
    controllers: [shootController, seedController, serviceController],
  };
}
