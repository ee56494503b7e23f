import { Counter, Histogram, type Registry } from 'prom-client';
import type { AdmissionMode } from './review.js';

/** What became of a review: admitted (with or without a patch), denied (an ordinary answer), or failed (500). */
export const ReviewResult = { Allowed: 'allowed', Denied: 'denied', Error: 'error' } as const;
export type ReviewResult = (typeof ReviewResult)[keyof typeof ReviewResult];

/**
 * The webhook's metrics: `admission_webhook_reviews_total{webhook,kind,result}` (webhook `validate` or `mutate`,
 * kind one of the admitted kinds or `other`) and `admission_webhook_review_duration_seconds{webhook}` (from the
 * decoded body to the answer).
 */
export class AdmissionMetrics {
  readonly reviews: Counter<'webhook' | 'kind' | 'result'>;
  readonly duration: Histogram<'webhook'>;

  constructor(registry: Registry) {
    this.reviews = new Counter({
      name: 'admission_webhook_reviews_total',
      help: 'AdmissionReviews answered per webhook, kind of the object and result (allowed, denied, error)',
      labelNames: ['webhook', 'kind', 'result'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'admission_webhook_review_duration_seconds',
      help: 'Time from the decoded AdmissionReview to its answer, per webhook',
      labelNames: ['webhook'],
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
      registers: [registry],
    });
  }

  observe(webhook: AdmissionMode, kind: string, result: ReviewResult, seconds: number): void {
    this.reviews.inc({ webhook, kind, result });
    this.duration.observe({ webhook }, seconds);
  }
}
