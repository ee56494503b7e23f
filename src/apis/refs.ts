/**
 * What each resource this project reads or writes is, for a client: its group, version, plural, kind and scope. One
 * table for the project's own kinds (the registry serves them under these names), Gardener's ManagedResource and
 * the built-in kinds.
 */

/** Which resource a call is about; works the same for core, built-in and custom resources. */
export interface ResourceRef {
  /** API group; `''` for the core group (served under `/api`). */
  readonly group: string;
  readonly version: string;
  /** Lower-case plural, as in the URL (`configmaps`). */
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

const CORE = 'core.gardener.cloud';
const EXTENSIONS = 'extensions.gardener.cloud';

export const Refs = {
  shoot: { group: CORE, version: 'v1beta1', plural: 'shoots', kind: 'Shoot', namespaced: true },
  seed: { group: CORE, version: 'v1beta1', plural: 'seeds', kind: 'Seed', namespaced: false },
  cloudProfile: { group: CORE, version: 'v1beta1', plural: 'cloudprofiles', kind: 'CloudProfile', namespaced: false },
  internalSecret: {
    group: CORE,
    version: 'v1beta1',
    plural: 'internalsecrets',
    kind: 'InternalSecret',
    namespaced: true,
  },
  network: { group: EXTENSIONS, version: 'v1alpha1', plural: 'networks', kind: 'Network', namespaced: true },
  dnsRecord: { group: EXTENSIONS, version: 'v1alpha1', plural: 'dnsrecords', kind: 'DNSRecord', namespaced: true },
  operatingSystemConfig: {
    group: EXTENSIONS,
    version: 'v1alpha1',
    plural: 'operatingsystemconfigs',
    kind: 'OperatingSystemConfig',
    namespaced: true,
  },
  worker: { group: EXTENSIONS, version: 'v1alpha1', plural: 'workers', kind: 'Worker', namespaced: true },
  cluster: { group: EXTENSIONS, version: 'v1alpha1', plural: 'clusters', kind: 'Cluster', namespaced: false },
  managedResource: {
    group: 'resources.gardener.cloud',
    version: 'v1alpha1',
    plural: 'managedresources',
    kind: 'ManagedResource',
    namespaced: true,
  },
  namespace: { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false },
  service: { group: '', version: 'v1', plural: 'services', kind: 'Service', namespaced: true },
  secret: { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true },
  configMap: { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true },
  pod: { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true },
  node: { group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false },
  event: { group: '', version: 'v1', plural: 'events', kind: 'Event', namespaced: true },
  lease: { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease', namespaced: true },
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
  validatingWebhookConfiguration: {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    plural: 'validatingwebhookconfigurations',
    kind: 'ValidatingWebhookConfiguration',
    namespaced: false,
  },
  mutatingWebhookConfiguration: {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    plural: 'mutatingwebhookconfigurations',
    kind: 'MutatingWebhookConfiguration',
    namespaced: false,
  },
  endpoints: { group: '', version: 'v1', plural: 'endpoints', kind: 'Endpoints', namespaced: true },
  endpointSlice: {
    group: 'discovery.k8s.io',
    version: 'v1',
    plural: 'endpointslices',
    kind: 'EndpointSlice',
    namespaced: true,
  },
  serviceAccount: { group: '', version: 'v1', plural: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true },
  clusterRole: {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    plural: 'clusterroles',
    kind: 'ClusterRole',
    namespaced: false,
  },
  clusterRoleBinding: {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    plural: 'clusterrolebindings',
    kind: 'ClusterRoleBinding',
    namespaced: false,
  },
  subjectAccessReview: {
    group: 'authorization.k8s.io',
    version: 'v1',
    plural: 'subjectaccessreviews',
    kind: 'SubjectAccessReview',
    namespaced: false,
  },
  apiService: {
    group: 'apiregistration.k8s.io',
    version: 'v1',
    plural: 'apiservices',
    kind: 'APIService',
    namespaced: false,
  },
} as const satisfies Record<string, ResourceRef>;

/** The names a served kind has in the registry: its ResourceRef's, with the scope as a CRD states it. */
export function servedAs(ref: ResourceRef) {
  return {
    group: ref.group,
    version: ref.version,
    kind: ref.kind,
    plural: ref.plural,
    scope: ref.namespaced ? ('Namespaced' as const) : ('Cluster' as const),
  };
}
