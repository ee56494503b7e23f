/**
 * The kind cluster configs (hack/kind) and calico overlays (hack/calico) per IP family: the subnets of Gardener's
 * local setups, calico pools inside them and equal to the example seeds' pod ranges, IPAM of the right families,
 * NAT66 for IPv6, and the overlays applied by the real kustomize (kubectl's) to a stand-in of the upstream manifest.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { ensureBinaries } from '../../src/localenv/binaries.js';
import { projectRoot } from '../../src/localenv/project.js';
import { containsCIDR, formatCIDR, mustParseCIDR, parseCIDR, type IPFamily } from '../../src/net/cidr.js';
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
interface EnvVar {
  name: string;
  value?: string;
}
interface DaemonSetPatch {
  kind: string;
  metadata: { name: string; namespace: string };
  spec: { template: { spec: { containers: { name: string; env: EnvVar[] }[] } } };
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

function calicoEnv(family: IPFamilySelection): Map<string, string | undefined> {
  const patch = parse(read('hack', 'calico', family, 'calico-node.yaml')) as DaemonSetPatch;
  expect(patch).toMatchObject({ kind: 'DaemonSet', metadata: { name: 'calico-node', namespace: 'kube-system' } });
  const container = patch.spec.template.spec.containers.find((c) => c.name === 'calico-node')!;
  return new Map(container.env.map((e) => [e.name, e.value]));
}

/** calico's install-cni fills the placeholders; after that the template is JSON. */
function cniConfig(family: IPFamilySelection): {
  plugins: { type: string; ipam?: { type: string; assign_ipv4?: string; assign_ipv6?: string } }[];
} {
  const template = read('hack', 'calico', family, 'cni_network_config.tmpl');
  return JSON.parse(template.replace('__CNI_MTU__', '1440').replace(/__[A-Z_]+__/g, 'filled-in'));
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

describe.each(IP_FAMILY_SELECTIONS)('the %s calico overlay', (family) => {
  const cluster = kindCluster(family);
  const families = clusterIPFamilies(family);
  const has = (f: IPFamily) => families.includes(f);

  it('patches the upstream base: calico-node env and the CNI config', () => {
    const kustomization = parse(read('hack', 'calico', family, 'kustomization.yaml')) as Record<string, unknown>;
    expect(kustomization).toEqual({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: ['../base'],
      generatorOptions: { disableNameSuffixHash: true },
      configMapGenerator: [
        {
          name: 'calico-config',
          namespace: 'kube-system',
          behavior: 'merge',
          files: ['cni_network_config=cni_network_config.tmpl'],
        },
      ],
      patches: [{ path: 'calico-node.yaml' }],
    });
  });

  it('has the CNI plugin assign addresses of exactly the cluster families', () => {
    const calico = cniConfig(family).plugins.find((p) => p.type === 'calico')!;
    expect(calico.ipam).toEqual({
      type: 'calico-ipam',
      assign_ipv4: String(has('IPv4')),
      assign_ipv6: String(has('IPv6')),
    });
  });

  it('makes a pool per family inside the kind pod subnet, equal to the seed pods, with outgoing NAT', () => {
    const env = calicoEnv(family);
    const seedPods = (parse(read('examples', EXAMPLE_SEED[family])) as { spec: { networks: { pods: string } } }).spec
      .networks.pods;
    for (const f of ['IPv4', 'IPv6'] as const) {
      const prefix = f === 'IPv4' ? 'CALICO_IPV4POOL' : 'CALICO_IPV6POOL';
      const pool = env.get(`${prefix}_CIDR`);
      if (!has(f)) {
        expect(pool, `${f} pool`).toBeUndefined();
        continue;
      }
      expect(pool, `${f} pool`).toBeDefined();
      const cidr = mustParseCIDR(pool!);
      expect(cidr.family).toBe(f);
      expect(formatCIDR(cidr)).toBe(pool);
      expect(containsCIDR(mustParseCIDR(ofFamily(cluster.networking.podSubnet, f)!), cidr)).toBe(true);
      // NAT66 for IPv6: fd00::/8 addresses do not leave the host un-masqueraded.
      expect(env.get(`${prefix}_NAT_OUTGOING`), `${f} NAT`).toBe('true');
      if (mustParseCIDR(seedPods).family === f) expect(pool).toBe(seedPods);
    }
    // As the network extension does for shoots (calico-ipv6.md): no IPv4 address, so a hashed BGP router id.
    expect(env.get('FELIX_IPV6SUPPORT')).toBe(String(has('IPv6')));
    expect(env.get('IP')).toBe(has('IPv4') ? 'autodetect' : 'none');
    expect(env.get('CALICO_ROUTER_ID')).toBe(has('IPv4') ? undefined : 'hash');
    if (has('IPv6')) expect(env.get('IP6')).toBe('autodetect');
    else expect(env.has('IP6')).toBe(false);
  });

  it('pins the calico release of the network extension', () => {
    const base = parse(read('hack', 'calico', 'base', 'kustomization.yaml')) as { resources: string[] };
    const version = /\/calico\/(v[\d.]+)\/manifests\/calico\.yaml$/.exec(base.resources[0]!)?.[1];
    expect(version).toBeDefined();
    const images = (parse(read('charts', 'internal', 'calico', 'values.yaml')) as { images: Record<string, string> })
      .images;
    expect(images.node).toBe(`quay.io/calico/node:${version}`);
  });
});

describe('kustomize with the overlays', () => {
  let kubectl: string;
  let dir: string;

  /** Enough of calico.yaml for the patches to land on. */
  const STAND_IN = [
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'calico-config', namespace: 'kube-system' },
      data: { veth_mtu: '0', cni_network_config: '{"upstream": true}' },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'calico-node', namespace: 'kube-system' },
      spec: {
        selector: { matchLabels: { 'k8s-app': 'calico-node' } },
        template: {
          metadata: { labels: { 'k8s-app': 'calico-node' } },
          spec: {
            containers: [
              {
                name: 'calico-node',
                image: 'quay.io/calico/node:v3.29.3',
                env: [
                  { name: 'IP', value: 'autodetect' },
                  { name: 'FELIX_IPV6SUPPORT', value: 'false' },
                  { name: 'CALICO_IPV4POOL_IPIP', value: 'Always' },
                ],
              },
            ],
          },
        },
      },
    },
  ];

  beforeAll(async () => {
    kubectl = (await ensureBinaries({ names: ['kubectl'] })).kubectl;
    dir = mkdtempSync(join(tmpdir(), 'gardener-ipv6-kustomize-'));
    mkdirSync(join(dir, 'base'));
    writeFileSync(join(dir, 'base', 'kustomization.yaml'), stringify({ resources: ['calico.yaml'] }));
    writeFileSync(join(dir, 'base', 'calico.yaml'), STAND_IN.map((o) => stringify(o)).join('---\n'));
  }, 20 * 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(IP_FAMILY_SELECTIONS)('applies the %s overlay: env merged by name, the CNI config replaced', (family) => {
    cpSync(join(ROOT, 'hack', 'calico', family), join(dir, family), { recursive: true });
    const result = spawnSync(kubectl, ['kustomize', join(dir, family)], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const objects = parseAllDocuments(result.stdout).map((d) => d.toJSON()) as Record<string, never>[];
    const configMap = objects.find((o) => o.kind === 'ConfigMap') as unknown as { data: Record<string, string> };
    expect(configMap.data.veth_mtu).toBe('0');
    expect(configMap.data.cni_network_config).toBe(read('hack', 'calico', family, 'cni_network_config.tmpl'));
    const daemonSet = objects.find((o) => o.kind === 'DaemonSet') as unknown as DaemonSetPatch;
    const env = new Map(daemonSet.spec.template.spec.containers[0]!.env.map((e) => [e.name, e.value]));
    for (const [name, value] of calicoEnv(family)) expect(env.get(name), name).toBe(value);
    expect(env.get('CALICO_IPV4POOL_IPIP')).toBe('Always');
  });
});
