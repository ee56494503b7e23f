import { describe, expect, it } from 'vitest';
import {
  DUAL_STACK_NODES_MIGRATION_READY,
  dnsServiceFamiliesInEffect,
  networkFamiliesInEffect,
  nodesMigrating,
  nodesMigrationCondition,
} from '../../../../src/apis/core/v1beta1/dual-stack-migration.js';

const NOW = Date.parse('2026-12-03T18:00:00Z');
const node = (name: string, ...podCIDRs: string[]) => ({ metadata: { name }, spec: { podCIDRs } });
const shootWith = (status?: string) => ({
  status: {
    constraints: [
      { type: 'HibernationPossible', status: 'True' },
      ...(status ? [{ type: DUAL_STACK_NODES_MIGRATION_READY, status }] : []),
    ],
  },
});
const families = ['IPv4', 'IPv6'];

describe("a shoot's migration to dual-stack", () => {
  it('keeps the network at the primary family until the Nodes are migrated, CoreDNS until the constraint goes', () => {
    expect(networkFamiliesInEffect(families, shootWith())).toEqual(families);
    expect(networkFamiliesInEffect(families, shootWith('Progressing'))).toEqual(['IPv4']);
    expect(networkFamiliesInEffect(families, shootWith('True'))).toEqual(families);
    expect(dnsServiceFamiliesInEffect(families, shootWith('True'))).toEqual(['IPv4']);
    expect(dnsServiceFamiliesInEffect(families, shootWith())).toEqual(families);
    expect(nodesMigrating(shootWith('Progressing'))).toBe(true);
    expect(nodesMigrating(shootWith('True'))).toBe(false);
    expect(nodesMigrating({})).toBe(false);
  });

  it('is True once every Node has a pod range per family, Progressing naming those left', () => {
    const left = nodesMigrationCondition([node('m-0', '10.3.0.0/24'), node('m-1', '10.3.1.0/24', 'fd00::/64')], 2, NOW);
    expect(left).toEqual({
      type: DUAL_STACK_NODES_MIGRATION_READY,
      status: 'Progressing',
      reason: 'NodesNotMigrated',
      message: 'Migrating the Nodes to both IP families: 1 of 2 Nodes migrated, m-0 left.',
      lastTransitionTime: '2026-12-03T18:00:00Z',
      lastUpdateTime: '2026-12-03T18:00:00Z',
    });
    const done = nodesMigrationCondition(
      [node('m-0', '10.3.2.0/24', 'fd00:0:0:1::/64'), node('m-1', '10.3.1.0/24', 'fd00::/64')],
      2,
      NOW + 60_000,
      left,
    );
    expect(done).toMatchObject({ status: 'True', reason: 'NodesMigrated', lastTransitionTime: '2026-12-03T18:01:00Z' });
    // The same status keeps its transition time.
    expect(nodesMigrationCondition([node('m-0', '10.3.0.0/24')], 2, NOW + 5_000, left).lastTransitionTime).toBe(
      '2026-12-03T18:00:00Z',
    );
    // No Node yet is nothing migrated.
    expect(nodesMigrationCondition([], 2, NOW).status).toBe('Progressing');
  });
});
