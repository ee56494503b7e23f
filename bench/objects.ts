/**
 * A realistic mix of Shoots and Seeds for benchmarks: IPv4, IPv6 and dual-stack, with workers, kubelet settings and
 * the unknown fields real manifests carry.
 */
export type Family = 'ipv4' | 'ipv6' | 'dual';

export function benchShoot(i: number, family: Family): Record<string, unknown> {
  const networking =
    family === 'ipv4'
      ? { type: 'calico', nodes: `10.${i % 200}.0.0/16`, pods: '100.96.0.0/11', services: '100.64.0.0/13' }
      : family === 'ipv6'
        ? {
            type: 'calico',
            ipFamilies: ['IPv6'],
            nodes: `fd00:10:1:${(i % 255) + 256}::/64`,
            pods: 'fd00:10:3::/56',
            services: 'fd00:10:4::/112',
            providerConfig: { ipv6: { sourceNATEnabled: true } },
          }
        : {
            type: 'calico',
            ipFamilies: ['IPv4', 'IPv6'],
            nodes: `10.${i % 200}.0.0/16`,
            pods: '100.96.0.0/11',
            services: '100.64.0.0/13',
          };
  return {
    apiVersion: 'core.gardener.cloud/v1beta1',
    kind: 'Shoot',
    metadata: { name: `shoot-${i}`, namespace: 'garden-bench', labels: { team: 'a' }, annotations: { note: 'x' } },
    spec: {
      cloudProfile: { name: 'local' },
      region: 'local',
      seedName: 'local',
      provider: {
        type: 'local',
        workers: [
          { name: 'a', machine: { type: 'local' }, minimum: 1, maximum: 3, kubernetes: { kubelet: { maxPods: 110 } } },
          { name: 'b', machine: { type: 'local' }, minimum: 1, maximum: 3 },
        ],
      },
      networking,
      kubernetes: { version: '1.33.0', kubelet: { maxPods: 110, serializeImagePulls: false } },
      maintenance: { timeWindow: { begin: '220000+0100', end: '230000+0100' } },
      addons: { nginxIngress: { enabled: false } },
    },
  };
}

export function benchSeed(i: number, family: Family): Record<string, unknown> {
  const networks =
    family === 'ipv4'
      ? { nodes: '172.18.0.0/16', pods: '10.1.0.0/16', services: '10.2.0.0/16', blockCIDRs: ['169.254.169.254/32'] }
      : family === 'ipv6'
        ? {
            ipFamilies: ['IPv6'],
            nodes: 'fd00:10::/64',
            pods: 'fd00:10:1::/56',
            services: 'fd00:10:2::/112',
            shootDefaults: { pods: 'fd00:10:3::/56', services: 'fd00:10:4::/112' },
          }
        : {
            ipFamilies: ['IPv4', 'IPv6'],
            nodes: '172.18.0.0/16',
            pods: '10.1.0.0/16',
            services: '10.2.0.0/16',
            shootDefaults: { pods: 'fd00:10:3::/56', services: 'fd00:10:4::/112' },
          };
  return {
    apiVersion: 'core.gardener.cloud/v1beta1',
    kind: 'Seed',
    metadata: { name: `seed-${i}` },
    spec: { provider: { type: 'local', region: 'local' }, networks, ingress: { domain: 'ingress.local' } },
  };
}

const FAMILIES: readonly Family[] = ['ipv4', 'ipv6', 'dual'];

export function shootMix(count: number): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => benchShoot(i, FAMILIES[i % 3]!));
}

export function seedMix(count: number): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => benchSeed(i, FAMILIES[i % 3]!));
}

/** The AdmissionReview the API server sends for creating `shoot` (as shoot-1 in garden-bench), as JSON. */
export function shootCreateReview(shoot: unknown): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: '6f1c0a00-0000-4000-8000-000000000001',
      kind: { group: 'core.gardener.cloud', version: 'v1beta1', kind: 'Shoot' },
      resource: { group: 'core.gardener.cloud', version: 'v1beta1', resource: 'shoots' },
      name: 'shoot-1',
      namespace: 'garden-bench',
      operation: 'CREATE',
      userInfo: { username: 'bench', groups: ['system:authenticated'] },
      object: shoot,
      dryRun: false,
    },
  });
}
