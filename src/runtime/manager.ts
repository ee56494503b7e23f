import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { ResourceClient } from './client.js';
import { type ResourceRef } from '../apis/refs.js';
import { realClock, type Clock } from './clock.js';
import { Controller, type ControllerOptions } from './controller.js';
import { startHealthServer, type HealthServer } from './health.js';
import { Informer, type InformerOptions } from './informer.js';
import { LeaderElector, type LeaderElectorOptions } from './leader-election.js';
import { newLogger, type Logger } from './log.js';
import { Metrics } from './metrics.js';

/** How long `start()` waits for the informers' first lists. */
export const DEFAULT_SYNC_TIMEOUT_MS = 2 * 60_000;
/** How long `stop()` waits for reconciles in flight. */
export const DEFAULT_GRACEFUL_SHUTDOWN_MS = 30_000;

export interface ManagerOptions {
  readonly kubeConfig: KubeConfig;
  /** Names the process in logs. */
  readonly name?: string;
  readonly logger?: Logger;
  /** @default new Metrics with process metrics */
  readonly metrics?: Metrics;
  readonly clock?: Clock;
  /** @default new ResourceClient(kubeConfig) */
  readonly client?: ResourceClient;
  /** Serve /healthz, /readyz and /metrics. @default no server */
  readonly health?: { host?: string; port: number };
  /** Run the controllers only while holding this Lease. @default no leader election (always run) */
  readonly leaderElection?: Omit<LeaderElectorOptions, 'client' | 'logger' | 'clock' | 'metrics' | 'identity'> & {
    identity?: string;
  };
  /** Passed to every informer the manager creates. */
  readonly informerDefaults?: Pick<InformerOptions, 'watchdogMs' | 'backoff' | 'minHealthyWatchMs'>;
  /** @default DEFAULT_SYNC_TIMEOUT_MS */
  readonly syncTimeoutMs?: number;
  /** @default DEFAULT_GRACEFUL_SHUTDOWN_MS */
  readonly gracefulShutdownMs?: number;
}

/**
 * What a controller needs of a cluster: its client and shared informers. The manager is one (the cluster it runs
 * against); {@link Manager.cluster} adds another, as controller-runtime's `cluster.Cluster` (the gardenlet's garden
 * when it runs in its seed).
 */
export interface ClusterAccess {
  readonly client: ResourceClient;
  informer<T extends KubernetesObject>(
    ref: ResourceRef,
    opts?: { namespace?: string; labelSelector?: string; fieldSelector?: string },
  ): Informer<T>;
}

/**
 * A part of the process the manager runs besides its controllers, as controller-runtime's webhook server is one of
 * its Runnables: the admission webhook. Components run on every replica, leading or not (a standby's webhook answers
 * the API server too); they start after the health server and before the informers (a webhook serves while the caches
 * sync) and stop after the controllers and the informers, last first.
 */
export interface ManagerComponent {
  /** What it is ("admission webhook"), for the log. */
  readonly name: string;
  /**
   * Starts it. `stopping` aborts when the manager's stop begins, before the controllers stop: what the component lets
   * go of first (a webhook unregisters itself), and what cuts a start still running short.
   */
  start(stopping: AbortSignal): Promise<void>;
  /** Stops it, waiting up to `timeoutMs` for its work in flight. Called once its start began, even if that failed. */
  stop(opts: { timeoutMs: number }): Promise<void>;
}

/** Rejects {@link Manager.done} when the lease was lost: the process should exit and restart. */
export class LeadershipLostError extends Error {
  override readonly name = 'LeadershipLostError';
}

/**
 * Holds what controllers share (client, logger, metrics, informers) and runs them in order:
 * `start()`: health server → components (on every replica) → informers (on every replica, so a standby has warm
 * caches) → wait for their first lists → controllers, directly or only while leading. `stop()`: the reverse, waiting
 * for reconciles in flight and releasing the lease; the components are told at its beginning. `done` settles when
 * the manager stopped, rejecting with LeadershipLostError when the lease was lost (then everything has already been
 * stopped).
 */
export class Manager implements ClusterAccess {
  readonly kubeConfig: KubeConfig;
  readonly client: ResourceClient;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly clock: Clock;
  readonly done: Promise<void>;
  private readonly informers = new Map<string, Informer<KubernetesObject>>();
  /** The clients of the clusters added with cluster(), closed when the manager stops. */
  private readonly clusterClients: ResourceClient[] = [];
  private readonly controllers: Controller[] = [];
  private readonly components: ManagerComponent[] = [];
  /** The components whose start began: what stop() stops. */
  private readonly startedComponents: ManagerComponent[] = [];
  /** Aborted as stop() begins: the components' `stopping`. */
  private readonly stopping = new AbortController();
  private elector?: LeaderElector;
  private health?: HealthServer;
  private state: 'new' | 'starting' | 'started' | 'stopping' | 'stopped' = 'new';
  private controllersRunning = false;
  private settle!: { resolve: () => void; reject: (e: Error) => void };

  constructor(private readonly opts: ManagerOptions) {
    this.kubeConfig = opts.kubeConfig;
    this.client = opts.client ?? new ResourceClient(opts.kubeConfig);
    this.logger = opts.logger ?? newLogger(opts.name ? { name: opts.name } : {});
    this.metrics = opts.metrics ?? new Metrics({ processMetrics: true });
    this.clock = opts.clock ?? realClock;
    this.done = new Promise<void>((resolve, reject) => (this.settle = { resolve, reject }));
    // Awaiting `done` is optional; an unobserved LeadershipLostError must not crash the process by itself.
    this.done.catch(() => {});
  }

  /**
   * The shared informer for `ref` with this namespace and selector (one list+watch however many controllers use
   * it). Started with the manager, or at once when the manager already runs.
   */
  informer<T extends KubernetesObject>(
    ref: ResourceRef,
    opts: { namespace?: string; labelSelector?: string; fieldSelector?: string } = {},
  ): Informer<T> {
    return this.sharedInformer<T>('', this.client, ref, opts);
  }

  /**
   * Another cluster, reached with `kubeConfig`: its informers start, sync (before controllers start and /readyz
   * reports ready) and stop with the manager's own; its client closes when the manager stops. Leader election and
   * the controllers stay the manager's.
   */
  cluster(kubeConfig: KubeConfig, opts: { name?: string; client?: ResourceClient } = {}): ClusterAccess {
    const client = opts.client ?? new ResourceClient(kubeConfig);
    this.clusterClients.push(client);
    const id = `${opts.name ?? 'cluster'}#${this.clusterClients.length}`;
    return {
      client,
      informer: <T extends KubernetesObject>(
        ref: ResourceRef,
        informerOpts: { namespace?: string; labelSelector?: string; fieldSelector?: string } = {},
      ) => this.sharedInformer<T>(id, client, ref, informerOpts),
    };
  }

  private sharedInformer<T extends KubernetesObject>(
    cluster: string,
    client: ResourceClient,
    ref: ResourceRef,
    opts: { namespace?: string; labelSelector?: string; fieldSelector?: string },
  ): Informer<T> {
    const key = JSON.stringify([
      cluster,
      ref.group,
      ref.version,
      ref.plural,
      opts.namespace,
      opts.labelSelector,
      opts.fieldSelector,
    ]);
    let informer = this.informers.get(key);
    if (!informer) {
      informer = new Informer<KubernetesObject>({
        ...this.opts.informerDefaults,
        ...opts,
        client,
        ref,
        logger: this.logger,
        clock: this.clock,
      });
      this.informers.set(key, informer);
      if (this.state === 'starting' || this.state === 'started') void informer.start();
    }
    return informer as unknown as Informer<T>;
  }

  /** Creates a controller with the manager's logger, metrics and clock, and runs it with the manager. */
  controller(opts: Omit<ControllerOptions, 'logger' | 'metrics' | 'clock'> & Partial<ControllerOptions>): Controller {
    const controller = new Controller({ logger: this.logger, metrics: this.metrics, clock: this.clock, ...opts });
    this.add(controller);
    return controller;
  }

  add(controller: Controller): void {
    if (this.state !== 'new') throw new Error('controllers must be added before start()');
    this.controllers.push(controller);
  }

  /** Runs `component` with the manager, on every replica: see {@link ManagerComponent}. */
  addComponent(component: ManagerComponent): void {
    if (this.state !== 'new') throw new Error('components must be added before start()');
    this.components.push(component);
  }

  /** All informers synced (what /readyz reports). */
  isReady(): boolean {
    return this.state === 'started' && [...this.informers.values()].every((i) => i.hasSynced());
  }

  isLeader(): boolean {
    return this.elector ? this.elector.isLeader() : this.controllersRunning;
  }

  /** The health server's port, once started. */
  healthPort(): number | undefined {
    return this.health?.port;
  }

  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error(`manager was already ${this.state}`);
    this.state = 'starting';
    if (this.opts.health) {
      this.health = await startHealthServer({
        ...this.opts.health,
        readiness: () => this.isReady(),
        registry: this.metrics.registry,
      });
      this.logger.info({ port: this.health.port }, 'serving /healthz, /readyz and /metrics');
    }
    await this.startComponents();
    if (this.isStopping()) return;
    await this.startInformers();
    if (this.isStopping()) return;
    this.state = 'started';

    const le = this.opts.leaderElection;
    if (!le) {
      await this.startControllers();
      return;
    }
    this.elector = new LeaderElector({
      ...le,
      identity: le.identity ?? `${hostname()}_${randomUUID()}`,
      client: this.client,
      logger: this.logger,
      clock: this.clock,
      metrics: this.metrics,
    });
    const running = this.elector.run(
      () => this.startControllers(),
      () => this.stopControllers(),
    );
    void running.then(() => {
      if (this.isStopping()) return;
      this.logger.error('leadership lost, stopping');
      void this.stop(new LeadershipLostError(`lost the lease ${le.namespace}/${le.name}`));
    });
  }

  /** Stops everything in reverse order; safe to call more than once. */
  async stop(reason?: Error): Promise<void> {
    if (this.isStopping()) {
      await this.done.catch(() => {});
      return;
    }
    this.state = 'stopping';
    this.logger.info('stopping');
    this.stopping.abort();
    try {
      if (this.elector) await this.elector.stop();
      else await this.stopControllers();
      for (const informer of this.informers.values()) informer.stop();
      await Promise.all([...this.informers.values()].map((i) => i.stopped()));
      await this.stopComponents();
      await this.health?.close();
      this.client.close();
      for (const client of this.clusterClients) client.close();
    } finally {
      this.state = 'stopped';
      this.logger.info('stopped');
      if (reason) this.settle.reject(reason);
      else this.settle.resolve();
    }
  }

  private isStopping(): boolean {
    return this.state === 'stopping' || this.state === 'stopped';
  }

  /** Starts the components in order; one that fails stops the manager, and start() rejects with its error. */
  private async startComponents(): Promise<void> {
    for (const component of this.components) {
      if (this.isStopping()) return;
      this.startedComponents.push(component);
      try {
        await component.start(this.stopping.signal);
      } catch (e) {
        // Cut short by the stop: start() returns, as when stopped while the informers sync.
        if (this.isStopping()) return;
        await this.stop();
        throw e;
      }
    }
  }

  /** Stops the components that began to start, last first; one that fails is logged, the others stop all the same. */
  private async stopComponents(): Promise<void> {
    const timeoutMs = this.opts.gracefulShutdownMs ?? DEFAULT_GRACEFUL_SHUTDOWN_MS;
    for (const component of this.startedComponents.splice(0).reverse()) {
      await component.stop({ timeoutMs }).catch((err: unknown) => {
        this.logger.error({ err, component: component.name }, 'stopping a component failed');
      });
    }
  }

  private async startInformers(): Promise<void> {
    const timeoutMs = this.opts.syncTimeoutMs ?? DEFAULT_SYNC_TIMEOUT_MS;
    const abort = new AbortController();
    const synced = Promise.all([...this.informers.values()].map((i) => i.start())).then(() => true);
    const inTime = await Promise.race([synced, this.clock.sleep(timeoutMs, abort.signal).then(() => false)]);
    abort.abort();
    if (!inTime) {
      await this.stop();
      throw new Error(`informers did not sync within ${timeoutMs} ms`);
    }
  }

  private async startControllers(): Promise<void> {
    if (this.controllersRunning || this.isStopping()) return;
    this.controllersRunning = true;
    for (const c of this.controllers) await c.start();
  }

  private async stopControllers(): Promise<void> {
    if (!this.controllersRunning) return;
    const timeoutMs = this.opts.gracefulShutdownMs ?? DEFAULT_GRACEFUL_SHUTDOWN_MS;
    await Promise.all(this.controllers.map((c) => c.stop({ timeoutMs })));
    this.controllersRunning = false;
  }
}
