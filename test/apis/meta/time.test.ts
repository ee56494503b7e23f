import { describe, expect, it } from 'vitest';
import { metav1MicroTime, metav1Time } from '../../../src/apis/meta/time.js';

describe('Kubernetes times', () => {
  const ms = Date.UTC(2026, 10, 21, 20, 0, 0, 456);

  it('metav1.Time: UTC, whole seconds', () => {
    expect(metav1Time(ms)).toBe('2026-11-21T20:00:00Z');
  });

  it('metav1.MicroTime: six fractional digits', () => {
    expect(metav1MicroTime(ms)).toBe('2026-11-21T20:00:00.456000Z');
  });
});
