import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { AdmissionMetrics, DURATION_BUCKETS, ReviewResult } from '../../src/admission/metrics.js';
import type { AdmissionMode } from '../../src/admission/review.js';

/** The same metrics kept by prom-client itself, one `inc` and `observe` per review. */
function reference(registry: Registry) {
  const reviews = new Counter({
    name: 'admission_webhook_reviews_total',
    help: 'AdmissionReviews answered per webhook, kind of the object and result (allowed, denied, error)',
    labelNames: ['webhook', 'kind', 'result'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'admission_webhook_review_duration_seconds',
    help: 'Time from the decoded AdmissionReview to its answer, per webhook',
    labelNames: ['webhook'],
    buckets: [...DURATION_BUCKETS],
    registers: [registry],
  });
  return (webhook: AdmissionMode, kind: string, result: ReviewResult, seconds: number) => {
    reviews.inc({ webhook, kind, result });
    duration.observe({ webhook }, seconds);
  };
}

describe('admission metrics', () => {
  it('render what prom-client renders for the same reviews', async () => {
    const registry = new Registry();
    const metrics = new AdmissionMetrics(registry);
    const expected = new Registry();
    const observe = reference(expected);
    expect(await registry.metrics()).toBe(await expected.metrics());

    const reviews: [AdmissionMode, string, ReviewResult, number][] = [
      ['mutate', 'Shoot', ReviewResult.Allowed, 0.00005],
      ['validate', 'Shoot', ReviewResult.Denied, 0.0001],
      ['validate', 'Shoot', ReviewResult.Denied, 0.0003],
      ['validate', 'Seed', ReviewResult.Allowed, 0.002],
      ['mutate', 'other', ReviewResult.Error, 7],
      ['validate', 'DNSRecord', ReviewResult.Allowed, 5],
    ];
    for (const [i, review] of reviews.entries()) {
      metrics.observe(...review);
      observe(...review);
      // Read between reviews too: a scrape takes nothing away from the totals.
      if (i % 2 === 0) expect(await registry.metrics()).toBe(await expected.metrics());
    }
    expect(await registry.metrics()).toBe(await expected.metrics());
    expect(await registry.getMetricsAsJSON()).toEqual(await expected.getMetricsAsJSON());
    expect((await metrics.reviews.get()).values).toContainEqual({
      labels: { webhook: 'validate', kind: 'Shoot', result: 'denied' },
      value: 2,
    });
  });
});
