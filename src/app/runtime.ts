/**
 * One process with the project's server-side parts, as `gardener-ipv6 run` and `up` start it: on one Manager the
 * admission webhook (HTTPS on IPv6, a component of the manager: webhook-component.ts), the gardenlet's controllers and
 * the network and DNS extensions. It starts as ordered steps with their undo (src/runtime/steps.ts): a failed start
 * and stop() undo them, last first.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { DEFAULT_REGISTERED_EXTENSION_TYPES, type RegisteredExtensionTypes } from '../admission/extensions.js';
import type { RequestHeaderConfig } from '../admission/front-proxy.js';
import type { AdmissionServer, AdmissionServerOptions } from '../admission/server.js';
import type { DNSExtensionOptions } from '../extensions/dns/controller.js';
import type { NetworkExtensionOptions } from '../extensions/network/controller.js';
import type { FeatureGates } from '../featuregate/featuregate.js';
import type { GardenletOptions } from '../gardenlet/gardenlet.js';
import type { ProviderLocalOptions } from '../extensions/provider-local/controller.js';
import { ResourceClient } from '../runtime/client.js';
import type { Logger } from '../runtime/log.js';
import { Manager } from '../runtime/manager.js';
import { Steps, type Step } from '../runtime/steps.js';
import { COMPONENTS, type Component } from './components.js';
import { sharedReaders, syncedLookup, type SharedReaders } from './readers.js';
import { extensionAdmission } from './extension-admission.js';
import { WebhookComponent } from './webhook-component.js';
import { isLoopback, webhookTLS, type WebhookTLS } from './webhook-tls.js';
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

/** What the start's steps share and record, for the steps after them and their undo. */
interface RuntimeStart {
  readonly options: RuntimeOptions;
  readonly components: ReadonlySet<Component>;
  readonly client: ResourceClient;
  readonly manager: Manager;
  readonly garden: ReturnType<Manager['cluster']> | undefined;
  readonly readers: SharedReaders;
  /** The webhook configurations are registered with the API server (and unregistered on stop). */
  readonly registered: boolean;
  readonly apiServiceRegistered: boolean;
  readonly advertiseHost: string;
  readonly shutdownTimeoutMs: number;
  tls?: WebhookTLS;
  webhook?: WebhookComponent;
  /** The stop's deadline (ms since the epoch), once stop() was called with one. */
  stopDeadline?: number;
}

/** How long a part's stop may take: `shutdownTimeoutMs`, or less when the stop's deadline is closer. */
function budgetMs(s: RuntimeStart): number {
  return Math.max(0, Math.min(s.shutdownTimeoutMs, (s.stopDeadline ?? Infinity) - Date.now()));
}

type RuntimeStep = Step<RuntimeStart>;

const webhookCertificates: RuntimeStep = {
  name: "make the webhook's certificates",
  run: async (s) => void (s.tls = await webhookTLS(s.options.webhook ?? {})),
  undo: (s) => s.tls?.cleanup(),
};

// The manager starts it before its informers and stops it after its controllers, on every replica.
const addWebhook: RuntimeStep = {
  name: 'add the webhook',
  run: (s) => {
    const { options, client, tls, registered, advertiseHost, apiServiceRegistered } = s;
    s.webhook = new WebhookComponent({
      server: (requestHeader) => admissionServerOptions(s, requestHeader),
      client,
      logger: options.logger,
      ...(registered ? { registration: { caBundle: tls!.ca, advertiseHost, apiService: apiServiceRegistered } } : {}),
      stopBudgetMs: () => budgetMs(s),
    });
    s.manager.addComponent(s.webhook);
  },
};

function admissionServerOptions(
  s: RuntimeStart,
  requestHeader: RequestHeaderConfig | undefined,
): AdmissionServerOptions {
  const { options, readers, manager, client } = s;
  const webhookOptions = options.webhook ?? {};
  const { seeds, cloudProfiles, shoots } = readers;
  // Follows the shared Shoot informer from its first list on (attached before the manager starts it).
  const machines = new MachineTotal(localMachineSlots).attach(shoots.informer);
  return {
    tls: { cert: s.tls!.cert, key: s.tls!.key },
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
    logger: options.logger.child({ component: 'admission' }),
    adminKubeconfig: { client, requestHeader, logger: options.logger.child({ component: 'adminkubeconfig' }) },
  };
}

// Each component's code is loaded only when it runs: the chart runs one component per Deployment, and the webhook's
// process then holds neither the gardenlet's nor the extensions' modules (a smaller heap to mark, less to start).
const addControllers: RuntimeStep = {
  name: 'add the controllers',
  run: async ({ components, manager, options, garden, readers }) => {
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
  },
};

// Its stop unregisters the webhooks while the controllers stop; the webhook closes after both.
const startManager: RuntimeStep = {
  name: 'start the manager',
  run: (s) => s.manager.start(),
  undo: (s, opts) => {
    s.stopDeadline = opts.deadline;
    return s.manager.stop();
  },
};

function runtimeStart(options: RuntimeOptions): Steps<RuntimeStart> {
  const components = new Set(options.components ?? COMPONENTS);
  if (options.garden !== undefined) {
    const gardenOnly = ['admission', 'scheduler'].filter((c) => components.has(c as Component));
    if (gardenOnly.length > 0) {
      throw new Error(`${gardenOnly.join(' and ')} run in the garden: not with a separate garden kubeconfig`);
    }
  }
  const client = new ResourceClient(options.kubeConfig);
  const shutdownTimeoutMs = options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
  const manager = new Manager({
    kubeConfig: options.kubeConfig,
    logger: options.logger,
    client,
    gracefulShutdownMs: shutdownTimeoutMs,
    ...(options.health ? { health: options.health } : {}),
    ...(options.leaderElection ? { leaderElection: options.leaderElection } : {}),
  });
  const garden = options.garden !== undefined ? manager.cluster(options.garden, { name: 'garden' }) : undefined;
  const admission = components.has('admission');
  const registered = admission && (options.webhook?.register ?? true);
  const advertiseHost = options.webhook?.advertiseHost ?? '::1';
  const steps: RuntimeStep[] = [...(admission ? [webhookCertificates, addWebhook] : []), addControllers, startManager];
  return new Steps('runtime', steps, {
    options,
    components,
    client,
    manager,
    garden,
    // One cache per kind for the components of the process that read it; the informers start with the manager.
    readers: sharedReaders(manager, garden),
    registered,
    apiServiceRegistered: registered && !isLoopback(advertiseHost),
    advertiseHost,
    shutdownTimeoutMs,
  });
}

export async function startRuntime(options: RuntimeOptions): Promise<Runtime> {
  const start = runtimeStart(options);
  const { manager, readers } = start.state;
  const { signal } = options;
  // A stop during start: the manager's start (informers syncing) returns, the other steps are checked after.
  const onAbort = () => void manager.stop();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    // Nothing started outlives a failed start: the webhook's port, its certificates' folder, the health server, and
    // webhook configurations that would point at a port nobody serves.
    await start.run(signal ? { signal } : {});
  } catch (e) {
    // A step cut short by the stop fails for that reason.
    throw signal?.aborted ? signal.reason : e;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  return {
    manager,
    readers,
    webhook: start.state.webhook?.server,
    async stop(stopOpts = {}) {
      const failures = await start.undo({ reason: 'stop', ...stopOpts });
      if (failures.length > 0) throw failures[0]!.error;
    },
  };
}
