import { describe, expect, it } from 'vitest';
import {
  leaseHolderPod,
  notLeading,
  type ControllerPod,
} from '../../../../../src/gardenlet/shoot/components/controlplane/leadership.js';
import type { Lease } from '../../../../../src/runtime/leader-election.js';

const now = new Date('2026-12-03T12:00:00Z');
const lease = (holderIdentity: string | undefined, renewTime = '2026-12-03T11:59:50.000000Z'): Lease => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name: 'kube-controller-manager', namespace: 'kube-system' },
  spec: { holderIdentity, renewTime, leaseDurationSeconds: 60 },
});
const pod = (name: string, deleting = false): ControllerPod => ({
  metadata: { name, ...(deleting ? { deletionTimestamp: new Date('2026-12-03T11:59:55Z') } : {}) },
});

describe('leaseHolderPod', () => {
  it('is the hostname part of client-go identity while the lease is renewed', () => {
    expect(leaseHolderPod(lease('kube-controller-manager-7d9f-abcde_0b7e9c1a-1f0e-4f7c-9c43-9d1c2f3a4b5c'), now)).toBe(
      'kube-controller-manager-7d9f-abcde',
    );
  });

  it('is nobody for a released, expired or missing lease', () => {
    // client-go's release: no holder, a one-second lease.
    expect(leaseHolderPod(lease(''), now)).toBeUndefined();
    expect(leaseHolderPod(lease('p_1', '2026-12-03T11:58:59.000000Z'), now)).toBeUndefined();
    expect(leaseHolderPod(lease('p_1', 'not a time'), now)).toBeUndefined();
    expect(leaseHolderPod(undefined, now)).toBeUndefined();
  });
});

describe('notLeading', () => {
  it('is satisfied only when a pod that is not being deleted holds the lease', () => {
    const pods = [pod('kcm-old', true), pod('kcm-new')];
    expect(notLeading('kube-controller-manager', lease('kcm-new_u'), pods, now)).toBeUndefined();
    expect(notLeading('kube-controller-manager', lease('kcm-old_u'), pods, now)).toBe(
      'kube-controller-manager of the current template does not lead yet (its Lease is held by kcm-old)',
    );
    expect(notLeading('kube-controller-manager', lease(''), pods, now)).toBe(
      'kube-controller-manager does not lead yet (nobody holds its Lease)',
    );
    expect(notLeading('kube-scheduler', lease('gone_u'), [], now)).toMatch(/held by gone/);
  });
});
