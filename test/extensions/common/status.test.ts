import { describe, expect, it } from 'vitest';
import { extensionStatusPatch, operationType, type ExtensionObject } from '../../../src/extensions/common/status.js';

const NOW = Date.UTC(2026, 10, 21, 20, 0, 0, 456);
const object: ExtensionObject = { metadata: { generation: 3 } };
const op = (state: string, type = 'Create') => ({ type, state });

describe("an extension object's status", () => {
  it('operation type: Create until the first success, then Reconcile; Delete while deleting', () => {
    expect(operationType(object)).toBe('Create');
    expect(operationType({ ...object, status: { lastOperation: op('Error') } })).toBe('Create');
    expect(operationType({ ...object, status: { lastOperation: op('Processing') } })).toBe('Create');
    expect(operationType({ ...object, status: { lastOperation: op('Succeeded') } })).toBe('Reconcile');
    expect(operationType({ ...object, status: { lastOperation: op('Error', 'Reconcile') } })).toBe('Reconcile');
    expect(
      operationType({
        metadata: { deletionTimestamp: '2026-11-21T20:00:00Z' },
        status: { lastOperation: op('Succeeded') },
      }),
    ).toBe('Delete');
  });

  it('on success: progress 100, observedGeneration, lastError cleared', () => {
    expect(extensionStatusPatch(object, { state: 'Succeeded', description: 'done' }, NOW)).toEqual({
      lastOperation: {
        type: 'Create',
        state: 'Succeeded',
        progress: 100,
        description: 'done',
        lastUpdateTime: '2026-11-21T20:00:00Z',
      },
      observedGeneration: 3,
      lastError: null,
    });
  });

  it("while processing: the operation's progress, lastError left as it is", () => {
    const patch = extensionStatusPatch(
      { ...object, status: { lastOperation: op('Succeeded') } },
      { state: 'Processing', progress: 40, description: 'draining' },
      NOW,
    );
    expect(patch).toEqual({
      lastOperation: {
        type: 'Reconcile',
        state: 'Processing',
        progress: 40,
        description: 'draining',
        lastUpdateTime: '2026-11-21T20:00:00Z',
      },
      observedGeneration: 3,
    });
    expect(patch).not.toHaveProperty('lastError');
  });

  it('on error: progress 50 and lastError with its codes, at the same time; the type given wins', () => {
    expect(
      extensionStatusPatch(
        { metadata: {} },
        { state: 'Error', description: 'broken', codes: ['ERR_CONFIGURATION_PROBLEM'] },
        NOW,
        'Delete',
      ),
    ).toEqual({
      lastOperation: {
        type: 'Delete',
        state: 'Error',
        progress: 50,
        description: 'broken',
        lastUpdateTime: '2026-11-21T20:00:00Z',
      },
      lastError: {
        description: 'broken',
        codes: ['ERR_CONFIGURATION_PROBLEM'],
        lastUpdateTime: '2026-11-21T20:00:00Z',
      },
    });
    expect(extensionStatusPatch(object, { state: 'Error', description: 'x', codes: [] }, NOW).lastError).toEqual({
      description: 'x',
      lastUpdateTime: '2026-11-21T20:00:00Z',
    });
  });
});
