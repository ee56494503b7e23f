/**
 * test/support/target.ts: which cluster the integration tests run against, from KUBECONFIG and IPFAMILY.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  clusterIPFamilies,
  describeE2ETarget,
  selectE2ETarget,
  TargetError,
  type E2ETarget,
  type IPFamilySelection,
} from '../support/target.js';

let dir: string;
let kubeconfig: string;

function writeKubeconfig(name: string, currentContext: string): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'kind', cluster: { server: 'https://[::1]:6443' } }],
      users: [{ name: 'admin', user: { token: 'x' } }],
      contexts: [{ name: 'kind-gardener-local-ipv6', context: { cluster: 'kind', user: 'admin' } }],
      'current-context': currentContext,
    }),
  );
  return path;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gardener-ipv6-target-'));
  kubeconfig = writeKubeconfig('kubeconfig', 'kind-gardener-local-ipv6');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('selectE2ETarget', () => {
  it('runs against the local control plane without KUBECONFIG', () => {
    expect(selectE2ETarget({})).toEqual({
      kind: 'local-control-plane',
      ipFamily: 'ipv6',
      reason: 'KUBECONFIG is not set',
    });
    expect(selectE2ETarget({ IPFAMILY: 'dual' })).toMatchObject({
      kind: 'local-control-plane',
      reason: 'KUBECONFIG is not set (IPFAMILY=dual needs an existing cluster of that family)',
    });
  });

  it('does not follow a KUBECONFIG alone: IPFAMILY has to ask for the existing cluster', () => {
    const target = selectE2ETarget({ KUBECONFIG: kubeconfig });
    expect(target.kind).toBe('local-control-plane');
    expect(describeE2ETarget(target)).toBe(
      'running against the local control plane (KUBECONFIG is set but IPFAMILY is not: set IPFAMILY=ipv6|ipv4|dual to run against that cluster)',
    );
  });

  it.each(['ipv6', 'ipv4', 'dual', 'IPv6'])('runs against the existing cluster with IPFAMILY=%s', (family) => {
    const target = selectE2ETarget({ KUBECONFIG: kubeconfig, IPFAMILY: family });
    const expected: E2ETarget = {
      kind: 'existing-cluster',
      ipFamily: family.toLowerCase() as IPFamilySelection,
      kubeconfig,
      server: 'https://[::1]:6443',
    };
    expect(target).toEqual(expected);
    expect(describeE2ETarget(target)).toBe(
      `running against the existing ${family.toLowerCase()} cluster https://[::1]:6443 (KUBECONFIG=${kubeconfig})`,
    );
  });

  it.each([
    [{ IPFAMILY: 'ipv5' }, 'IPFAMILY=ipv5 is not one of ipv6, ipv4, dual'],
    [{ KUBECONFIG: '/nonexistent/kubeconfig', IPFAMILY: 'ipv6' }, 'KUBECONFIG=/nonexistent/kubeconfig: no such file'],
    [{ KUBECONFIG: 'a:b', IPFAMILY: 'ipv6' }, 'KUBECONFIG=a:b lists several files; point it at one kubeconfig file'],
  ])('refuses %o', (env, message) => {
    expect(() => selectE2ETarget(env)).toThrow(new TargetError(message));
  });

  it('refuses a kubeconfig without a current cluster', () => {
    const path = writeKubeconfig('no-context', '');
    expect(() => selectE2ETarget({ KUBECONFIG: path, IPFAMILY: 'ipv4' })).toThrow(
      `KUBECONFIG=${path} has no current context with a cluster`,
    );
  });
});

describe('clusterIPFamilies', () => {
  it('puts IPv6 first for dual, as the kind config does', () => {
    expect(clusterIPFamilies('ipv4')).toEqual(['IPv4']);
    expect(clusterIPFamilies('ipv6')).toEqual(['IPv6']);
    expect(clusterIPFamilies('dual')).toEqual(['IPv6', 'IPv4']);
  });
});
