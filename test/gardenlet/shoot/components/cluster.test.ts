import { describe, expect, it } from 'vitest';
import type { Seed } from '../../../../src/apis/core/v1beta1/seed.js';
import type { Shoot } from '../../../../src/apis/core/v1beta1/shoot.js';
import { clusterShoot, ClusterSchema } from '../../../../src/apis/extensions/v1alpha1/cluster.js';
import { desiredCluster } from '../../../../src/gardenlet/shoot/components/cluster.js';
import { localCloudProfile } from '../../../../src/extensions/provider-local/cloudprofile.js';

const shoot = {
  apiVersion: 'core.gardener.cloud/v1beta1',
  kind: 'Shoot',
  metadata: { name: 'local', namespace: 'garden-local', uid: 'u-1', managedFields: [{ manager: 'kubectl' }] },
  spec: {
    cloudProfile: { name: 'local' },
    region: 'local',
    networking: { type: 'calico', ipFamilies: ['IPv6'], nodes: 'fd00:10:1:100::/56' },
  },
} as unknown as Shoot;
const seed = {
  apiVersion: 'core.gardener.cloud/v1beta1',
  kind: 'Seed',
  metadata: { name: 'local-ipv6', managedFields: [] },
  spec: { networks: { ipFamilies: ['IPv6'], pods: 'fd00:10:1::/56', services: 'fd00:10:2::/112' } },
} as unknown as Seed;

describe("the shoot's Cluster", () => {
  it('is named after the seed namespace and carries the shoot and seed without their managed fields', () => {
    const cluster = desiredCluster(shoot, seed);
    expect(ClusterSchema.safeParse(cluster).success).toBe(true);
    expect(cluster.metadata.name).toBe('shoot--local--local');
    expect(clusterShoot(cluster)?.spec?.networking?.nodes).toBe('fd00:10:1:100::/56');
    expect(JSON.stringify(cluster)).not.toContain('managedFields');
    expect((cluster.spec.seed as Seed).metadata.name).toBe('local-ipv6');
    expect(cluster.spec.cloudProfile).toMatchObject({ kind: 'CloudProfile', metadata: { name: 'local' } });
    // The shoot given is left as it was.
    expect(shoot.metadata.managedFields).toHaveLength(1);
  });

  it("carries the shoot's CloudProfile as the garden has it, its machine types included", () => {
    const profile = { ...localCloudProfile(), metadata: { name: 'local', generation: 3, managedFields: [{}] } };
    const cluster = desiredCluster(shoot, seed, profile);
    expect(ClusterSchema.safeParse(cluster).success).toBe(true);
    expect(cluster.spec.cloudProfile).toMatchObject({
      apiVersion: 'core.gardener.cloud/v1beta1',
      kind: 'CloudProfile',
      metadata: { name: 'local', generation: 3 },
      spec: {
        machineTypes: [
          { name: 'local', cpu: '1', memory: '8Gi' },
          { name: 'local-2cpu', cpu: '2', memory: '8Gi' },
        ],
      },
    });
    expect(JSON.stringify(cluster)).not.toContain('managedFields');
  });

  it('holds no shoot when its spec has none', () => {
    expect(clusterShoot({ spec: { cloudProfile: {}, seed: {}, shoot: null } })).toBeUndefined();
  });
});
