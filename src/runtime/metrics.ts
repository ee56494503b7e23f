import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ReadMetrics } from './cached-reader.js';

export interface MetricsOptions {
  /** Registry to register in; each registry can hold one Metrics. @default a new Registry */
  registry?: Registry;
  /** Also collect the process and Node.js metrics (prom-client defaults). @default false */
  processMetrics?: boolean;
}

/**
 * The metrics of the controller runtime, named like controller-runtime's so existing dashboards fit:
 * `controller_runtime_reconcile_total{controller,result}`, `controller_runtime_reconcile_errors_total{controller}`,
 * `controller_runtime_reconcile_time_seconds{controller}`, `controller_runtime_active_workers{controller}`,
 * `controller_runtime_max_concurrent_reconciles{controller}`, `workqueue_depth{name}`, `workqueue_adds_total{name}`,
 * `workqueue_retries_total{name}`, `leader_election_master_status{name}`; and the reads of the shared caches,
 * `cached_reader_reads_total{resource,result}` (`hit`, or `miss`: read from the API server).
 */
export class Metrics {
  readonly registry: Registry;
  readonly reconcileTotal: Counter<'controller' | 'result'>;
  readonly reconcileErrors: Counter<'controller'>;
  readonly reconcileTime: Histogram<'controller'>;
  readonly activeWorkers: Gauge<'controller'>;
  readonly maxConcurrentReconciles: Gauge<'controller'>;
  readonly workqueueAdds: Counter<'name'>;
  readonly workqueueRetries: Counter<'name'>;
  readonly leaderStatus: Gauge<'name'>;
  /** For the shared caches' readers: `cached_reader_reads_total`. */
  readonly cachedReads: ReadMetrics;
  private readonly queueDepths = new Map<string, () => number>();

  constructor(opts: MetricsOptions = {}) {
    this.registry = opts.registry ?? new Registry();
    const registers = [this.registry];
    if (opts.processMetrics) collectDefaultMetrics({ register: this.registry });
    this.reconcileTotal = new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller and result',
      labelNames: ['controller', 'result'],
      registers,
    });
    this.reconcileErrors = new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    });
    this.reconcileTime = new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60, 120, 180],
      registers,
    });
    this.activeWorkers = new Gauge({
      name: 'controller_runtime_active_workers',
      help: 'Number of currently used workers per controller',
      labelNames: ['controller'],
      registers,
    });
    this.maxConcurrentReconciles = new Gauge({
      name: 'controller_runtime_max_concurrent_reconciles',
      help: 'Maximum number of concurrent reconciles per controller',
      labelNames: ['controller'],
      registers,
    });
    const depths = this.queueDepths;
    new Gauge({
      name: 'workqueue_depth',
      help: 'Current depth of the work queue',
      labelNames: ['name'],
      registers,
      collect() {
        for (const [name, depth] of depths) this.set({ name }, depth());
      },
    });
    this.workqueueAdds = new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by the work queue',
      labelNames: ['name'],
      registers,
    });
    this.workqueueRetries = new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of rate-limited re-adds handled by the work queue',
      labelNames: ['name'],
      registers,
    });
    this.leaderStatus = new Gauge({
      name: 'leader_election_master_status',
      help: '1 while this process holds the named lease, 0 otherwise',
      labelNames: ['name'],
      registers,
    });
    // Each reader's hits not yet in `cached_reader_reads_total`, added at every scrape.
    const readHits = new Set<{ resource: string; take: () => number }>();
    const reads = new Counter({
      name: 'cached_reader_reads_total',
      help: 'Reads through the shared caches per resource: hit (from the cache) or miss (read from the API server)',
      labelNames: ['resource', 'result'] as const,
      registers,
      collect() {
        for (const { resource, take } of readHits) {
          const hits = take();
          if (hits > 0) this.inc({ resource, result: 'hit' }, hits);
        }
      },
    });
    this.cachedReads = {
      countMiss: (resource) => reads.inc({ resource, result: 'miss' }),
      reportHits: (resource, take) => {
        readHits.add({ resource, take });
      },
    };
  }

  /** Reports `depth()` as `workqueue_depth{name}` at every scrape. */
  registerQueue(name: string, depth: () => number): void {
    this.queueDepths.set(name, depth);
  }
}
