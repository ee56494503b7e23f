import type { ResourceRef } from '../runtime/client.js';
import {
  CloudProfiles,
  Clusters,
  DNSRecords,
  Networks,
  OperatingSystemConfigs,
  Seeds,
  Shoots,
  Workers,
  type KindInfo,
} from '../apis/registry.js';

/** The ResourceRef of one of our kinds. */
export function refOf(kind: KindInfo<never> | KindInfo<unknown>): ResourceRef {
  const k = kind as KindInfo<unknown>;
  return { group: k.group, version: k.version, plural: k.plural, kind: k.kind, namespaced: k.scope === 'Namespaced' };
}

export const Refs = {
  shoot: refOf(Shoots),
  seed: refOf(Seeds),
  cloudProfile: refOf(CloudProfiles),
  network: refOf(Networks),
  dnsRecord: refOf(DNSRecords),
  operatingSystemConfig: refOf(OperatingSystemConfigs),
  worker: refOf(Workers),
  cluster: refOf(Clusters),
  namespace: { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false },
  service: { group: '', version: 'v1', plural: 'services', kind: 'Service', namespaced: true },
  secret: { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true },
  configMap: { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true },
  pod: { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true },
  node: { group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false },
  statefulSet: { group: 'apps', version: 'v1', plural: 'statefulsets', kind: 'StatefulSet', namespaced: true },
  deployment: { group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', namespaced: true },
  podDisruptionBudget: {
    group: 'policy',
    version: 'v1',
    plural: 'poddisruptionbudgets',
    kind: 'PodDisruptionBudget',
    namespaced: true,
  },
  networkPolicy: {
    group: 'networking.k8s.io',
    version: 'v1',
    plural: 'networkpolicies',
    kind: 'NetworkPolicy',
    namespaced: true,
  },
} as const satisfies Record<string, ResourceRef>;
