import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { extensionOutcomeChanged, loadBalancerChanged, specOrMetadataChanged } from '../../src/runtime/predicates.js';

type Obj = KubernetesObject & { status?: Record<string, unknown> };
const obj = (metadata: Record<string, unknown> = {}, status?: Record<string, unknown>): Obj =>
  ({ metadata: { name: 'a', generation: 1, ...metadata }, ...(status ? { status } : {}) }) as Obj;

describe('update predicates', () => {
  it('specOrMetadataChanged: generation, deletion, labels and annotations; not status or finalizers', () => {
    expect(specOrMetadataChanged(obj({ generation: 2 }), obj())).toBe(true);
    expect(specOrMetadataChanged(obj({ deletionTimestamp: '2026-11-21T00:00:00Z' }), obj())).toBe(true);
    expect(specOrMetadataChanged(obj({ labels: { a: 'b' } }), obj())).toBe(true);
    expect(specOrMetadataChanged(obj({ annotations: { 'gardener.cloud/operation': 'reconcile' } }), obj())).toBe(true);
    expect(specOrMetadataChanged(obj({}, { lastOperation: { state: 'Succeeded' } }), obj())).toBe(false);
    expect(specOrMetadataChanged(obj({ finalizers: ['gardener'] }), obj())).toBe(false);
  });

  it('loadBalancerChanged: only the ingress addresses (or deletion) of a Service', () => {
    const lb = (ip: string) => obj({}, { loadBalancer: { ingress: [{ ip }] } });
    expect(loadBalancerChanged(lb('::1'), obj())).toBe(true);
    expect(loadBalancerChanged(lb('::1'), lb('::2'))).toBe(true);
    expect(loadBalancerChanged(lb('::1'), lb('::1'))).toBe(false);
    expect(loadBalancerChanged(obj({ labels: { x: 'y' } }), obj())).toBe(false);
  });

  it('extensionOutcomeChanged: the last operation state and the observed generation', () => {
    const ext = (state: string, observed: number, time = 't1') =>
      obj({}, { lastOperation: { state, lastUpdateTime: time }, observedGeneration: observed });
    expect(extensionOutcomeChanged(ext('Succeeded', 1), ext('Processing', 1))).toBe(true);
    expect(extensionOutcomeChanged(ext('Succeeded', 2), ext('Succeeded', 1))).toBe(true);
    expect(extensionOutcomeChanged(ext('Succeeded', 1, 't2'), ext('Succeeded', 1, 't1'))).toBe(false);
  });
});
