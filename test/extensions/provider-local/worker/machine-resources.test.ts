import { describe, expect, it } from 'vitest';
import {
  clusterMachineType,
  DEFAULT_MACHINE_OVERCOMMIT,
  invalidOvercommit,
  machineResources,
} from '../../../../src/extensions/provider-local/worker/machine-resources.js';
import { localCloudProfile } from '../../../../src/extensions/provider-local/cloudprofile.js';
import { WorkerReconciler } from '../../../../src/extensions/provider-local/worker/reconciler.js';
import type { ResourceClient } from '../../../../src/runtime/client.js';

describe("a machine's resources from its machine type", () => {
  it('limits the machine to its type and reserves a tenth of its CPU and an eighth of its memory', () => {
    expect(machineResources({ name: 'local', cpu: '1', memory: '8Gi' })).toEqual({
      requests: { cpu: '100m', memory: '1Gi' },
      limits: { cpu: '1', memory: '8Gi' },
    });
    expect(DEFAULT_MACHINE_OVERCOMMIT).toEqual({ cpu: 10, memory: 8 });
  });

  it('takes every quantity form a CloudProfile may hold, rounding requests up', () => {
    expect(machineResources({ name: 'm', cpu: '2500m', memory: '3G' }, { cpu: 3, memory: 1 })).toEqual({
      requests: { cpu: '834m', memory: '2862Mi' },
      limits: { cpu: '2500m', memory: '2862Mi' },
    });
    expect(machineResources({ name: 'n', cpu: 4, memory: '1.5Gi' }, { cpu: 1, memory: 1 })).toEqual({
      requests: { cpu: '4', memory: '1536Mi' },
      limits: { cpu: '4', memory: '1536Mi' },
    });
    expect(machineResources({ name: 'e', cpu: '1e0', memory: '512Mi' }, { cpu: 1000, memory: 1000 })).toEqual({
      requests: { cpu: '1m', memory: '1Mi' },
      limits: { cpu: '1', memory: '512Mi' },
    });
  });

  it('says which type has no CPU or memory instead of sizing a machine to nothing', () => {
    expect(machineResources({ name: 'z', cpu: '0', memory: '1Gi' })).toBe('machine type z has no CPU (cpu: 0)');
    expect(machineResources({ name: 'w', cpu: '1', memory: 'lots' })).toBe(
      'machine type w has no memory (memory: lots)',
    );
  });

  it('refuses ratios that would reserve more than the limit, or nothing', () => {
    expect(invalidOvercommit({ cpu: 1, memory: 20 })).toBeUndefined();
    expect(invalidOvercommit({ cpu: 0.5, memory: 2 })).toBe('the cpu overcommit must be a number ≥ 1, not 0.5');
    expect(invalidOvercommit({ cpu: 2, memory: Number.NaN })).toMatch(/memory overcommit/);
    // The Worker controller refuses to start with them.
    const client = {} as ResourceClient;
    expect(() => new WorkerReconciler({ client, machineOvercommit: { cpu: 0.5, memory: 2 } })).toThrow(
      'machineOvercommit: the cpu overcommit must be a number ≥ 1, not 0.5',
    );
    expect(() => new WorkerReconciler({ client, machineOvercommit: { cpu: 1, memory: 1 } })).not.toThrow();
  });

  it("finds the pool's type in the CloudProfile a Cluster carries", () => {
    const profile = localCloudProfile();
    expect(clusterMachineType(profile, 'local')).toMatchObject({ name: 'local', cpu: '1', memory: '8Gi' });
    expect(clusterMachineType(profile, 'large')).toBeUndefined();
    expect(clusterMachineType({ metadata: { name: 'local' } }, 'local')).toBeUndefined();
    expect(clusterMachineType(undefined, 'local')).toBeUndefined();
    expect(clusterMachineType({ spec: { machineTypes: [null, 'x'] } }, 'local')).toBeUndefined();
  });
});
