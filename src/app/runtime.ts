/**
 * One process with the project's server-side parts, as `gardener-ipv6 run` and `up` start it: the admission webhook
 * (HTTPS on IPv6), and on one Manager the gardenlet's controllers and the network and DNS extensions.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { DEFAULT_REGISTERED_EXTENSION_TYPES, type RegisteredExtensionTypes } from '../admission/extensions.js';
import { startAdmissionServer, type AdmissionServer } from '../admission/server.js';
import {
  deployLocalAPIService,
  destroyLocalAPIService,
  LOCAL_API_SERVICE_REFERENCE,
  serviceDNSName,
} from '../admission/apiservice.js';
import { readRequestHeaderConfig } from '../admission/front-proxy.js';
import {
  desiredWebhookConfigurations,
  deployWebhookConfigurations,
  destroyWebhookConfigurations,
  webhookBaseURL,
} from '../admission/webhook-configurations.js';
import type { DNSExtensionOptions } from '../extensions/dns/controller.js';
import type { NetworkExtensionOptions } from '../extensions/network/controller.js';
import type { FeatureGates } from '../featuregate/featuregate.js';
import type { GardenletOptions } from '../gardenlet/gardenlet.js';
import type { ProviderLocalOptions } from '../extensions/provider-local/controller.js';
import { ResourceClient } from '../runtime/client.js';
import type { Logger } from '../runtime/log.js';
import { Manager } from '../runtime/manager.js';
import { COMPONENTS, type Component } from './components.js';
import { sharedReaders, syncedLookup, type SharedReaders } from './readers.js';
import { extensionAdmission } from './extension-admission.js';
import { MachineTotal } from '../admission/machine-total.js';
import { localMachineSlots, type LocalAdmissionConfig } from '../extensions/provider-local/admission.js';

export { COMPONENTS, type Component };

export interface WebhookOptions {
  /** Listen address, without brackets. @default '::' */
  readonly host?: string;
  /** @default 9443; 0 picks a free port */
  readonly port?: number;
  /** Folder with `tls.crt`, `tls.key` and `ca.crt`; a self-signed CA and certificate are generated when unset. */
  readonly certDir?: string;
  /**
   * Register the webhook configurations with the API server, pointing at `https://[advertiseHost]:port`, and, unless
   * that is a loopback address, the APIService of `shoots/adminkubeconfig` (an aggregated API is reached through a
   * Service, whose endpoints can't be loopback addresses: see apiservice.ts); a Helm deployment registers both
   * itself, through its Service. @default true
   */
  readonly register?: boolean;
  /** The address the API server reaches the webhook at. @default '::1' */
  readonly advertiseHost?: string;
  /** The extension types Shoots may use. @default DEFAULT_REGISTERED_EXTENSION_TYPES */
  readonly extensions?: RegisteredExtensionTypes;
  /** What provider-local's admission checks against. @default DEFAULT_LOCAL_ADMISSION_CONFIG */
  readonly providerLocal?: LocalAdmissionConfig;
}

export interface RuntimeOptions {
  /** The cluster the process runs against: the garden, or the seed when `garden` is given. */
  readonly kubeConfig: KubeConfig;
  /**
   * The garden, when it is another cluster than `kubeConfig`'s: the gardenlet and the extensions then run in their
   * seed (leader election there too) and reach the garden with this kubeconfig, as Gardener's gardenlet does. The
   * webhook and the scheduler belong to the garden and can't run so.
   */
  readonly garden?: KubeConfig;
  readonly gates: FeatureGates;
  readonly logger: Logger;
  /** @default every component */
  readonly components?: readonly Component[];
  readonly webhook?: WebhookOptions;
  readonly gardenlet: GardenletOptions;
  /** provider-local's controllers, which run with the gardenlet. */
  readonly providerLocal?: ProviderLocalOptions;
  /** `/healthz`, `/readyz` and `/metrics`; off when unset. */
  readonly health?: { host?: string; port: number };
  /** Run the controllers only while holding this Lease. */
  readonly leaderElection?: { namespace: string; name: string };
  /**
   * How long stop() waits for reconciles in flight (then aborts their API calls), and for the webhook configurations
   * to be unregistered and the webhook's connections to close. @default DEFAULT_SHUTDOWN_TIMEOUT_MS
   */
  readonly shutdownTimeoutMs?: number;
  /**
   * Aborting it while startRuntime() runs (SIGTERM before the caches synced) stops what it started, the webhook
   * configurations it registered included, and makes it reject with the signal's reason.
   */
  readonly signal?: AbortSignal;
  /**
   * The garden's seed lifecycle (gardener-controller-manager's `seedMonitorPeriod`, `shootMonitorPeriod`), run with the
   * scheduler. @default 40 s, 200 s, checked every 10 s
   */
  readonly seedLifecycle?: { monitorPeriodMs?: number; shootMonitorPeriodMs?: number; syncPeriodMs?: number };
  /** Options of the extensions' controllers (tests shorten the DNS resync). */
  readonly extensions?: { readonly network?: NetworkExtensionOptions; readonly dns?: DNSExtensionOptions };
}

export interface Runtime {
  readonly manager: Manager;
  /** The caches the components share. */
  readonly readers: SharedReaders;
  readonly webhook: AdmissionServer | undefined;
  /**
   * Unregisters the webhooks, stops the controllers and closes the webhook, within `shutdownTimeoutMs` and, when given,
   * by `deadline` (ms since the epoch), whichever comes first.
   */
  stop(opts?: { deadline?: number }): Promise<void>;
}

/** The default of {@link RuntimeOptions.shutdownTimeoutMs}: within a pod's default 30 s termination grace period. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;

interface WebhookTLS {
  cert: string;
  key: string;
  ca: string;
  cleanup(): void;
}

async function webhookTLS(options: WebhookOptions): Promise<WebhookTLS> {
  if (options.certDir) {
    const read = (name: string) => readFileSync(join(options.certDir!, name), 'utf8');
    return { cert: read('tls.crt'), key: read('tls.key'), ca: read('ca.crt'), cleanup: () => {} };
  }
  const dir = mkdtempSync(join(process.env.GARDENER_IPV6_TMPDIR ?? tmpdir(), 'gardener-ipv6-webhook-'));
  const advertise = options.advertiseHost ?? '::1';
  const { generateCertificates } = await import('../localenv/certs.js');
  const certs = await generateCertificates(dir, {
    ipAddresses: [...new Set(['::1', advertise])],
    // The aggregator checks the name of the Service the APIService names.
    dnsNames: ['localhost', serviceDNSName(LOCAL_API_SERVICE_REFERENCE)],
    days: 365,
  });
  return {
    cert: readFileSync(certs.serverCert, 'utf8'),
    key: readFileSync(certs.serverKey, 'utf8'),
    ca: readFileSync(certs.caCert, 'utf8'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return bare === '::1' || bare === 'localhost' || bare.startsWith('127.');
}

export async function startRuntime(options: RuntimeOptions): Promise<Runtime> {
  const components = new Set(options.components ?? COMPONENTS);
  if (options.garden !== undefined) {
    const gardenOnly = ['admission', 'scheduler'].filter((c) => components.has(c as Component));
    if (gardenOnly.length > 0) {
      throw new Error(`${gardenOnly.join(' and ')} run in the garden: not with a separate garden kubeconfig`);
    }
  }
  const { logger } = options;
  const client = new ResourceClient(options.kubeConfig);
  let webhook: AdmissionServer | undefined;
  let tls: WebhookTLS | undefined;
  const registered = components.has('admission') && (options.webhook?.register ?? true);
  const advertiseHost = options.webhook?.advertiseHost ?? '::1';
  const apiServiceRegistered = registered && !isLoopback(advertiseHost);
  const shutdownTimeoutMs = options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;

  const manager = new Manager({
    kubeConfig: options.kubeConfig,
    logger,
    client,
    gracefulShutdownMs: shutdownTimeoutMs,
    ...(options.health ? { health: options.health } : {}),
    ...(options.leaderElection ? { leaderElection: options.leaderElection } : {}),
  });
  const garden = options.garden !== undefined ? manager.cluster(options.garden, { name: 'garden' }) : undefined;
  // One cache per kind for the components of the process that read it; the informers start with the manager.
  const readers = sharedReaders(manager, garden);

  const { signal } = options;
  // A stop during start: the manager's start (informers syncing) returns, the other steps are checked after.
  const onAbort = () => void manager.stop();
  signal?.addEventListener('abort', onAbort, { once: true });
  let configured = false;
  try {
    signal?.throwIfAborted();
    if (components.has('admission')) {
      const webhookOptions = options.webhook ?? {};
      tls = await webhookTLS(webhookOptions);
      signal?.throwIfAborted();
      const { seeds, cloudProfiles, shoots } = readers;
      // Follows the shared Shoot informer from its first list on (attached before the manager starts it).
      const machines = new MachineTotal(localMachineSlots).attach(shoots.informer);
      const requestHeader = await readRequestHeaderConfig(client).catch((e: unknown) => {
        logger.warn({ err: e }, 'reading the request-header configuration failed: shoots/adminkubeconfig answers 401');
        return undefined;
      });
      if (requestHeader === undefined) {
        logger.warn(
          'the API server has no aggregation layer (requestheader flags): shoots/adminkubeconfig answers 401',
        );
      }
      signal?.throwIfAborted();
      webhook = await startAdmissionServer({
        tls: { cert: tls.cert, key: tls.key },
        gates: options.gates,
        extensions: webhookOptions.extensions ?? DEFAULT_REGISTERED_EXTENSION_TYPES,
        // provider-local checks against the machines of the installation's shoots in the cache (unsynced: none yet),
        // a running total kept by the cache's events rather than a sum over every Shoot at each review.
        extensionAdmission: extensionAdmission(webhookOptions.providerLocal, {
          othersThan: (namespace, name) => machines.othersThan(namespace, name),
          stored: (namespace, name) => (name === undefined ? undefined : shoots.informer.get(name, namespace)),
        }),
        // From the caches: once synced, a name they lack is none at once; only before that is the API server asked.
        lookupSeed: syncedLookup(seeds),
        lookupCloudProfile: syncedLookup(cloudProfiles),
        // The seed restriction's Shoots: the cache as it is (a gardenlet's write of a Shoot it just saw is judged).
        lookupShoot: (namespace, name) => shoots.informer.get(name, namespace),
        ready: () => seeds.hasSynced() && cloudProfiles.hasSynced() && shoots.hasSynced(),
        metrics: manager.metrics.registry,
        host: webhookOptions.host ?? '::',
        port: webhookOptions.port ?? 9443,
        logger: logger.child({ component: 'admission' }),
        adminKubeconfig: { client, requestHeader, logger: logger.child({ component: 'adminkubeconfig' }) },
      });
      if (registered) {
        const url = webhookBaseURL(webhookOptions.advertiseHost ?? '::1', webhook.port);
        configured = true;
        await deployWebhookConfigurations(
          client,
          desiredWebhookConfigurations({ caBundle: tls.ca, url }),
          signal ? { signal } : {},
        );
        logger.info({ url }, 'registered the admission webhooks');
        if (apiServiceRegistered) {
          await deployLocalAPIService(client, {
            caBundle: tls.ca,
            address: advertiseHost.replace(/^\[(.*)\]$/, '$1'),
            port: webhook.port,
            ...(signal ? { signal } : {}),
          });
          logger.info({ apiService: 'v1alpha1.core.gardener.cloud' }, 'registered shoots/adminkubeconfig');
        } else {
          logger.info(
            { advertiseHost },
            'shoots/adminkubeconfig not registered: the API server reaches no aggregated API at a loopback address',
          );
        }
      }
    }

    // Each component's code is loaded only when it runs: the chart runs one component per Deployment, and the webhook's
    // process then holds neither the gardenlet's nor the extensions' modules (a smaller heap to mark, less to start).
    if (components.has('gardenlet')) {
      const { addGardenletControllers } = await import('../gardenlet/gardenlet.js');
      addGardenletControllers(manager, {
        ...options.gardenlet,
        ...(garden !== undefined ? { garden } : {}),
        seeds: readers.seeds,
        cloudProfiles: readers.cloudProfiles,
      });
      const { addProviderLocalControllers } = await import('../extensions/provider-local/controller.js');
      addProviderLocalControllers(manager, {
        ...options.providerLocal,
        ...(options.gardenlet.workers !== undefined ? { workers: options.gardenlet.workers } : {}),
      });
    }
    if (components.has('network')) {
      const { addNetworkExtension } = await import('../extensions/network/controller.js');
      // The shoots' machines have only the images built here (no registry): calico's own workloads can't run.
      const { IMAGES } = await import('../imagevector/images.js');
      addNetworkExtension(manager, { availableImages: Object.values(IMAGES), ...options.extensions?.network });
    }
    if (components.has('dns')) {
      const { addDNSExtension } = await import('../extensions/dns/controller.js');
      addDNSExtension(manager, options.extensions?.dns);
    }
    if (components.has('scheduler')) {
      const { addSchedulerController } = await import('../scheduler/scheduler.js');
      addSchedulerController(manager);
      // gardener-controller-manager's shoot hibernation controller: the garden's other controller of Shoots.
      const { addShootHibernationController } = await import('../controllermanager/shoot-hibernation.js');
      addShootHibernationController(manager);
      // And its seed lifecycle controller: a Seed whose gardenlet stopped renewing its Lease turns Unknown.
      const { addSeedLifecycleController } = await import('../controllermanager/seed-lifecycle.js');
      addSeedLifecycleController(manager, options.seedLifecycle);
    }
    signal?.throwIfAborted();
    await manager.start();
    signal?.throwIfAborted();
  } catch (e) {
    // Nothing started outlives a failed start: the webhook's port, its certificates' folder, the health server, and
    // webhook configurations that would point at a port nobody serves (bounded: the API server may not answer).
    await webhook?.close({ graceMs: 0 });
    if (configured) {
      const unregisterClient = new ResourceClient(options.kubeConfig);
      const bound = { signal: AbortSignal.timeout(shutdownTimeoutMs) };
      await Promise.all([
        destroyWebhookConfigurations(unregisterClient, undefined, bound).catch((err: unknown) =>
          logger.warn({ err }, 'unregistering the webhooks failed'),
        ),
        apiServiceRegistered
          ? destroyLocalAPIService(unregisterClient, bound).catch((err: unknown) =>
              logger.warn({ err }, 'unregistering shoots/adminkubeconfig failed'),
            )
          : undefined,
      ]);
      unregisterClient.close();
    }
    tls?.cleanup();
    await manager.stop();
    throw signal?.aborted ? signal.reason : e;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }

  return {
    manager,
    readers,
    webhook,
    async stop(stopOpts = {}) {
      // Unregister before closing: a registered webhook that no longer answers blocks every write (failurePolicy Fail).
      // Both steps are bounded: against an API server that stopped answering (its etcd died), a request would wait
      // for the server's own 34 s timeout.
      const budgetMs = (): number =>
        Math.max(0, Math.min(shutdownTimeoutMs, (stopOpts.deadline ?? Infinity) - Date.now()));
      const bound = { signal: AbortSignal.timeout(budgetMs()) };
      // Its own client: the manager's closes its connections when it stops.
      const unregisterClient = new ResourceClient(options.kubeConfig);
      const unregister = registered
        ? destroyWebhookConfigurations(unregisterClient, undefined, bound).catch((e: unknown) =>
            logger.warn({ err: e }, 'unregistering the webhooks failed'),
          )
        : undefined;
      const unregisterAPIService = apiServiceRegistered
        ? destroyLocalAPIService(unregisterClient, bound).catch((e: unknown) =>
            logger.warn({ err: e }, 'unregistering shoots/adminkubeconfig failed'),
          )
        : undefined;
      await Promise.all([manager.stop(), unregister, unregisterAPIService]);
      unregisterClient.close();
      await webhook?.close({ graceMs: budgetMs() });
      tls?.cleanup();
    },
  };
}
