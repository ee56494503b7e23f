import { describe, expect, it } from 'vitest';
import { sameIgnoringTimestamps, statusUnchanged } from '../../src/runtime/status.js';

const op = (state: string, time: string) => ({
  type: 'Reconcile',
  state,
  progress: 100,
  description: 'd',
  lastUpdateTime: time,
});

describe('status writes', () => {
  it('ignore timestamps only', () => {
    expect(
      sameIgnoringTimestamps(op('Succeeded', '2026-01-01T00:00:00Z'), op('Succeeded', '2026-01-02T00:00:00Z')),
    ).toBe(true);
    expect(sameIgnoringTimestamps(op('Succeeded', 't'), op('Error', 't'))).toBe(false);
  });

  it('are skipped when merging the patch changes nothing but timestamps', () => {
    const current = { lastOperation: op('Succeeded', 't1'), observedGeneration: 2 };
    expect(statusUnchanged(current, { lastOperation: op('Succeeded', 't2') })).toBe(true);
    expect(statusUnchanged(current, { observedGeneration: 3 })).toBe(false);
    expect(statusUnchanged(undefined, { observedGeneration: 3 })).toBe(false);
  });

  it('treat null in the patch as removing the field', () => {
    expect(statusUnchanged({ lastError: undefined }, { lastError: null })).toBe(true);
    expect(statusUnchanged({ lastError: { description: 'x' } }, { lastError: null })).toBe(false);
  });
});
