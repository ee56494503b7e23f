/**
 * The kind cluster configs (hack/kind) per IP family: the subnets of Gardener's local setups, one per family in the
 * family's order, holding the example seeds' ranges.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { projectRoot } from '../../src/system/project.js';
import { containsCIDR, mustParseCIDR, parseCIDR, type IPFamily } from '../../src/net/cidr.js';
import { clusterIPFamilies, IP_FAMILY_SELECTIONS, type IPFamilySelection } from '../support/target.js';

const ROOT = projectRoot();
const read = (...path: string[]) => readFileSync(join(ROOT, ...path), 'utf8');

interface KindCluster {
  kind: string;
  apiVersion: string;
  name: string;
  networking: { ipFamily: string; podSubnet: string; serviceSubnet: string; disableDefaultCNI?: boolean };
  nodes: { role: string }[];
}
/** The subnets of Gardener's local setups (dev-setup/kind/cluster and its ipv6 and dual components). */
const KIND_SUBNETS: Record<IPFamilySelection, { pods: string; services: string }> = {
  ipv4: { pods: '10.1.0.0/16', services: '10.2.0.0/16' },
  ipv6: { pods: 'fd00:10:1::/48', services: 'fd00:10:2::/112' },
  dual: { pods: 'fd00:10:1::/48,10.0.0.0/15', services: 'fd00:10:2::/112,10.2.0.0/16' },
};
/** The example Seed that hack/local/examples.sh creates on each cluster. */
const EXAMPLE_SEED: Record<IPFamilySelection, string> = {
  ipv4: 'seed-ipv4.yaml',
  ipv6: 'seed-ipv6.yaml',
  dual: 'seed-dual-stack.yaml',
};

function kindCluster(family: IPFamilySelection): KindCluster {
  return parse(read('hack', 'kind', `cluster-${family}.yaml`)) as KindCluster;
}

/** Subnet of one IP family from a comma list. */
function ofFamily(list: string, family: IPFamily): string | undefined {
  return list.split(',').find((cidr) => parseCIDR(cidr)?.family === family);
}

describe.each(IP_FAMILY_SELECTIONS)('the %s kind cluster', (family) => {
  const cluster = kindCluster(family);
  const families = clusterIPFamilies(family);

  it("has the family and the subnets of Gardener's local setup, and no default CNI", () => {
    expect(cluster.kind).toBe('Cluster');
    expect(cluster.apiVersion).toBe('kind.x-k8s.io/v1alpha4');
    expect(cluster.name).toBe(`gardener-local-${family}`);
    expect(cluster.networking).toEqual({
      ipFamily: family,
      podSubnet: KIND_SUBNETS[family].pods,
      serviceSubnet: KIND_SUBNETS[family].services,
      disableDefaultCNI: true,
    });
    expect(cluster.nodes).toEqual([{ role: 'control-plane' }]);
  });

  it('lists one subnet per family, primary first, as the e2e target expects', () => {
    const podFamilies = cluster.networking.podSubnet.split(',').map((c) => mustParseCIDR(c).family);
    const serviceFamilies = cluster.networking.serviceSubnet.split(',').map((c) => mustParseCIDR(c).family);
    expect(podFamilies).toEqual(families);
    expect(serviceFamilies).toEqual(families);
  });

  it("holds the example seed's networks", () => {
    const seed = parse(read('examples', EXAMPLE_SEED[family])) as {
      spec: { networks: { pods: string; services: string } };
    };
    const pods = mustParseCIDR(seed.spec.networks.pods);
    const kindPods = ofFamily(cluster.networking.podSubnet, pods.family);
    expect(kindPods, `a ${pods.family} pod subnet`).toBeDefined();
    expect(containsCIDR(mustParseCIDR(kindPods!), pods)).toBe(true);
    const services = mustParseCIDR(seed.spec.networks.services);
    const kindServices = ofFamily(cluster.networking.serviceSubnet, services.family);
    expect(kindServices).toBeDefined();
    expect(containsCIDR(mustParseCIDR(kindServices!), services)).toBe(true);
  });
});
