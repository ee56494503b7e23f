import { describe, expect, it } from 'vitest';
import { extensionDeletionError } from '../../src/gardenlet/apply.js';

const deleting = {
  name: 'alpha-external-v6',
  namespace: 'shoot--dev--alpha',
  deletionTimestamp: '2026-01-01T00:00:00Z',
};
const operation = (type: string, state: string) => ({
  type,
  state,
  progress: 50,
  description: 'the operation failed',
  lastUpdateTime: '2026-01-01T00:00:00Z',
});

describe('extensionDeletionError', () => {
  it("is the extension's error when deleting the object failed", () => {
    expect(
      extensionDeletionError({
        kind: 'DNSRecord',
        metadata: deleting,
        status: { lastOperation: operation('Delete', 'Error'), lastError: { description: 'TSIG error: BADSIG' } },
      }),
    ).toBe('DNSRecord shoot--dev--alpha/alpha-external-v6 reports Error while being deleted: TSIG error: BADSIG');
    expect(
      extensionDeletionError({
        kind: 'Network',
        metadata: deleting,
        status: { lastOperation: operation('Delete', 'Failed') },
      }),
    ).toBe('Network shoot--dev--alpha/alpha-external-v6 reports Failed while being deleted: the operation failed');
  });

  it('is nothing while the deletion has not failed', () => {
    for (const lastOperation of [undefined, operation('Delete', 'Processing'), operation('Reconcile', 'Error')]) {
      expect(
        extensionDeletionError({ metadata: deleting, status: lastOperation ? { lastOperation } : {} }),
      ).toBeUndefined();
    }
    // An error of the deletion of an object not being deleted (any more) is no news.
    const { deletionTimestamp: _, ...alive } = deleting;
    expect(
      extensionDeletionError({ metadata: alive, status: { lastOperation: operation('Delete', 'Error') } }),
    ).toBeUndefined();
  });
});
