import { Counter, type Metric, type Registry } from 'prom-client';
import type { AdmissionMode } from './review.js';

/** What became of a review: admitted (with or without a patch), denied (an ordinary answer), or failed (500). */
export const ReviewResult = { Allowed: 'allowed', Denied: 'denied', Error: 'error' } as const;
export type ReviewResult = (typeof ReviewResult)[keyof typeof ReviewResult];

const WEBHOOKS: readonly AdmissionMode[] = ['validate', 'mutate'];
const RESULTS: readonly ReviewResult[] = [ReviewResult.Allowed, ReviewResult.Denied, ReviewResult.Error];

/** Upper bounds of the duration histogram's buckets, in seconds. */
export const DURATION_BUCKETS: readonly number[] = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5,
];

/**
 * The webhook's metrics: `admission_webhook_reviews_total{webhook,kind,result}` (webhook `validate` or `mutate`,
 * kind one of the admitted kinds or `other`) and `admission_webhook_review_duration_seconds{webhook}` (from the
 * decoded body to the answer).
 *
 * A review only adds to plain arrays; the registry reads them when it is scraped. prom-client's `inc` and `observe`
 * hash their labels on every call, and a paced webhook runs that code cold for every review: it cost 12–17 µs of a
 * review that costs 200–300 µs cold.
 */
export class AdmissionMetrics {
  readonly reviews: Counter<'webhook' | 'kind' | 'result'>;
  readonly duration: ReviewDurations;
  /** Reviews by kind, then by webhook and result (index `webhook * RESULTS.length + result`). */
  private readonly counts = new Map<string, Float64Array>();
  /** The combinations counted so far, in the order of their first review. */
  private readonly seen: [kind: string, byOutcome: Float64Array, index: number][] = [];

  constructor(registry: Registry) {
    const seen = this.seen;
    this.reviews = new Counter({
      name: 'admission_webhook_reviews_total',
      help: 'AdmissionReviews answered per webhook, kind of the object and result (allowed, denied, error)',
      labelNames: ['webhook', 'kind', 'result'],
      registers: [registry],
      collect() {
        // The totals since the start, as they stand now, in the order prom-client would list them (first seen).
        this.reset();
        for (const [kind, byOutcome, i] of seen) {
          const webhook = WEBHOOKS[Math.floor(i / RESULTS.length)]!;
          this.inc({ webhook, kind, result: RESULTS[i % RESULTS.length]! }, byOutcome[i]!);
        }
      },
    });
    this.duration = new ReviewDurations();
    registry.registerMetric(this.duration as unknown as Metric);
  }

  observe(webhook: AdmissionMode, kind: string, result: ReviewResult, seconds: number): void {
    let byOutcome = this.counts.get(kind);
    if (byOutcome === undefined)
      this.counts.set(kind, (byOutcome = new Float64Array(WEBHOOKS.length * RESULTS.length)));
    const i = WEBHOOKS.indexOf(webhook) * RESULTS.length + RESULTS.indexOf(result);
    if (byOutcome[i] === 0) this.seen.push([kind, byOutcome, i]);
    byOutcome[i]! += 1;
    this.duration.observe(webhook, seconds);
  }
}

/** One sample of a metric, as prom-client's `get()` gives it and its registry renders it. */
interface Sample {
  labels: { webhook: string; le?: number | string };
  value: number;
  metricName: string;
  /** prom-client's buckets carry one (none here). */
  exemplar?: null;
}

/**
 * `admission_webhook_review_duration_seconds{webhook}`, a histogram counted in arrays and rendered in prom-client's
 * form (what its `Histogram#get` returns) when the registry is scraped.
 */
export class ReviewDurations {
  readonly name = 'admission_webhook_review_duration_seconds';
  readonly help = 'Time from the decoded AdmissionReview to its answer, per webhook';
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  /** Per webhook: observations per bucket (the last one past every bound), their sum and count. */
  private readonly byWebhook = new Map<string, { buckets: Float64Array; sum: number; count: number }>();

  observe(webhook: string, seconds: number): void {
    let entry = this.byWebhook.get(webhook);
    if (entry === undefined) {
      this.byWebhook.set(
        webhook,
        (entry = { buckets: new Float64Array(DURATION_BUCKETS.length + 1), sum: 0, count: 0 }),
      );
    }
    let bucket = 0;
    while (bucket < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[bucket]!) bucket++;
    entry.buckets[bucket]! += 1;
    entry.sum += seconds;
    entry.count += 1;
  }

  get(): Promise<{ name: string; help: string; type: string; values: Sample[]; aggregator: string }> {
    const values: Sample[] = [];
    for (const [webhook, { buckets, sum, count }] of this.byWebhook) {
      let cumulative = 0;
      DURATION_BUCKETS.forEach((bound, i) => {
        cumulative += buckets[i]!;
        values.push({
          labels: { le: bound, webhook },
          value: cumulative,
          metricName: `${this.name}_bucket`,
          exemplar: null,
        });
      });
      values.push({ labels: { le: '+Inf', webhook }, value: count, metricName: `${this.name}_bucket`, exemplar: null });
      values.push({ labels: { webhook }, value: sum, metricName: `${this.name}_sum` });
      values.push({ labels: { webhook }, value: count, metricName: `${this.name}_count` });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator });
  }

  reset(): void {
    this.byWebhook.clear();
  }
}
