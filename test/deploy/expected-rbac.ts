/**
 * What the chart's RBAC must grant each component: the API calls its code makes, read off src/. Shared by the
 * chart test (helm template) and the helm install test (SubjectAccessReviews against the real API server).
 */
import type { Component } from '../../src/app/runtime.js';
import { MANAGED_RESOURCE_NAME, SECRET_NAME as CALICO_SECRET_NAME } from '../../src/extensions/network/actuator.js';
import { Refs, type ResourceRef } from '../../src/apis/refs.js';
import { API_SERVER_SERVICE_NAME } from '../../src/gardenlet/shoot/components/apiserver-service.js';
import { DNS_SECRET_NAME } from '../../src/gardenlet/shoot/components/dns-records.js';
import { COMPONENTS, ETCD_CLIENT_SERVICE, VPN_SEED } from '../../src/gardenlet/shoot/components/controlplane/names.js';
import { CONTROL_PLANE_POLICY_NAMES } from '../../src/gardenlet/shoot/components/controlplane/policies.js';
import { MACHINE_POLICY_NAMES } from '../../src/extensions/provider-local/worker/machine-pods.js';
import { BOOTSTRAP_TOKEN_SECRET } from '../../src/gardenlet/shoot/components/secrets.js';
import { COREDNS_MANAGED_RESOURCE } from '../../src/gardenlet/shoot/components/coredns.js';
import {
  CA_SECRET_NAME,
  ETCD_CA_SECRET_NAME,
  SERVICE_ACCOUNT_KEY_SECRET_NAME,
  SHOOT_ACCESS_SECRET_NAME,
} from '../../src/apis/core/v1beta1/names.js';
import { NetworkPolicyName } from '../../src/gardenlet/shoot/components/network-policies.js';
import { EventRef } from '../../src/runtime/events.js';
import { NETWORK_POLICY, POD } from '../../src/extensions/provider-local/machine/network-policy/enforcer.js';

/** Component of the chart → the `--components` value its Deployment runs. */
export const CHART_COMPONENTS = {
  admission: 'admission',
  gardenlet: 'gardenlet',
  scheduler: 'scheduler',
  'network-calico': 'network',
  'dns-local': 'dns',
} as const satisfies Record<string, Component>;
export type ChartComponent = keyof typeof CHART_COMPONENTS;
export const CONTROLLERS: ChartComponent[] = ['gardenlet', 'scheduler', 'network-calico', 'dns-local'];

export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
  nonResourceURLs?: string[];
}

/** One permission: `group/resource[/subresource][:name] verb`, the unit the assertions compare. */
export function grants(rule: PolicyRule): string[] {
  const out: string[] = [];
  for (const group of rule.apiGroups ?? [])
    for (const resource of rule.resources ?? [])
      for (const name of rule.resourceNames?.length ? rule.resourceNames : [''])
        for (const verb of rule.verbs) out.push(`${group}/${resource}${name ? `:${name}` : ''} ${verb}`);
  return out;
}

export function allow(
  ref: Pick<ResourceRef, 'group' | 'plural'>,
  verbs: string[],
  opts: { sub?: string; names?: string[] } = {},
) {
  return grants({
    apiGroups: [ref.group],
    resources: [opts.sub ? `${ref.plural}/${opts.sub}` : ref.plural],
    ...(opts.names ? { resourceNames: opts.names } : {}),
    verbs,
  });
}

/**
 * What each component calls, read off its code. Every write is a server-side apply: a PATCH that the API server
 * authorizes as `create` when the object does not exist yet (the helm install test shows it), so writers need both.
 * Objects with fixed names are granted by name, creation included (a PATCH carries the name).
 */
export const EXPECTED_CLUSTER_GRANTS: Record<ChartComponent, string[]> = {
  // src/app/readers.ts: the Seed and CloudProfile informers (list, watch) and the GET of a cache miss
  // (src/runtime/cached-reader.ts).
  admission: [
    ...allow(Refs.seed, ['get', 'list', 'watch']),
    ...allow(Refs.cloudProfile, ['get', 'list', 'watch']),
    // Shoots: the informer whose cache provider-local's admission counts the installation's machines over (list,
    // watch; src/app/readers.ts); shoots/adminkubeconfig (src/admission/admin-kubeconfig-api.ts,
    // src/admission/admin-kubeconfig-issuer.ts): the Shoot (get), its client CA (the <shoot>.ca-client InternalSecret),
    // its seed namespace's API server Service, and the requesting user's SubjectAccessReview.
    ...allow(Refs.shoot, ['get', 'list', 'watch']),
    ...allow(Refs.internalSecret, ['get']),
    ...allow(Refs.service, ['get'], { names: [API_SERVER_SERVICE_NAME] }),
    ...allow({ group: 'authorization.k8s.io', plural: 'subjectaccessreviews' }, ['create']),
  ],
  gardenlet: [
    // informer + get in the reconciler; finalizer by merge patch (src/runtime/finalizers.ts); status merge patch.
    ...allow(Refs.shoot, ['get', 'list', 'watch', 'patch']),
    ...allow(Refs.shoot, ['patch'], { sub: 'status' }),
    // Seeds: informer; the finalizer `gardener` by merge patch, held while shoots reference the seed.
    ...allow(Refs.seed, ['get', 'list', 'watch', 'patch']),
    ...allow(Refs.seed, ['patch'], { sub: 'status' }),
    // CloudProfiles: informer; the shoot's Cluster carries its own.
    ...allow(Refs.cloudProfile, ['get', 'list', 'watch']),
    // SeedNamespace: its owner (get), create, apply, delete, waitGone (get).
    ...allow(Refs.namespace, ['get', 'create', 'patch', 'delete']),
    // Service informer (shoot and provider-local controllers), get of any LoadBalancer Service, its status.
    ...allow(Refs.service, ['get', 'list', 'watch']),
    ...allow(Refs.service, ['create', 'patch', 'delete'], { names: [API_SERVER_SERVICE_NAME] }),
    ...allow(Refs.service, ['patch'], { sub: 'status' }),
    // The DNS secret: applied, deleted, and its finalizer removed by a merge patch guarded by a get.
    ...allow(Refs.secret, ['get', 'create', 'patch', 'delete'], { names: [DNS_SECRET_NAME] }),
    ...allow(Refs.networkPolicy, ['create', 'patch', 'delete'], {
      names: [
        ...Object.values(NetworkPolicyName),
        ...CONTROL_PLANE_POLICY_NAMES,
        ...Object.values(MACHINE_POLICY_NAMES),
      ],
    }),
    // applied, deleted, waited for (get), watched for the extensions' outcome.
    ...allow(Refs.network, ['get', 'list', 'watch', 'create', 'patch', 'delete']),
    ...allow(Refs.dnsRecord, ['get', 'list', 'watch', 'create', 'patch', 'delete']),
    ...allow(Refs.operatingSystemConfig, ['get', 'list', 'create', 'patch', 'delete']),
    // The shoot's Cluster (src/gardenlet/shoot/components/cluster.ts): applied, deleted, waited for (get).
    ...allow(Refs.cluster, ['get', 'create', 'patch', 'delete']),
  ],
  // src/scheduler: informers of Shoots and Seeds, the binding and the failure status by merge patch, events;
  // src/controllermanager/seed-lifecycle.ts: GardenletReady Unknown (seeds/status), its shoots' conditions.
  scheduler: [
    ...allow(Refs.shoot, ['get', 'list', 'watch', 'patch']),
    ...allow(Refs.shoot, ['patch'], { sub: 'status' }),
    ...allow(Refs.seed, ['get', 'list', 'watch']),
    ...allow(Refs.seed, ['patch'], { sub: 'status' }),
    ...allow(EventRef, ['create']),
  ],
  'network-calico': [
    ...allow(Refs.network, ['get', 'list', 'watch', 'patch']),
    ...allow(Refs.network, ['patch'], { sub: 'status' }),
    // Cluster informer (the Shoot: node ranges, the second family's pod range) and get.
    ...allow(Refs.cluster, ['get', 'list', 'watch']),
    ...allow(Refs.secret, ['create', 'patch', 'delete'], { names: [CALICO_SECRET_NAME] }),
    ...allow(Refs.managedResource, ['get', 'create', 'patch', 'delete'], { names: [MANAGED_RESOURCE_NAME] }),
    // The ManagedResource informer: its health goes into the Network's status.
    ...allow(Refs.managedResource, ['list', 'watch']),
  ],
  'dns-local': [
    ...allow(Refs.dnsRecord, ['get', 'list', 'watch', 'patch']),
    ...allow(Refs.dnsRecord, ['patch'], { sub: 'status' }),
    // The provider secret in spec.secretRef: the one the gardenlet writes, by name (no other secret).
    ...allow(Refs.secret, ['get'], { names: [DNS_SECRET_NAME] }),
  ],
};

/**
 * What the gardenlet calls besides, when shoots run as workloads of the cluster (`controlPlaneWorkloads`, on unless
 * false): src/gardenlet/shoot/components/{controlplane/control-plane,controlplane/seed-workloads,secrets,worker,machine-bootstrap}.ts,
 * src/gardenlet/shoot/shoot-client.ts and provider-local's Worker controller (src/extensions/provider-local/worker).
 */
export const EXPECTED_WORKLOAD_GRANTS: string[] = [
  // getOrCreateSecret/getOrCreateCA and the components' certificates: read by name; created, applied, deleted.
  ...allow(Refs.secret, ['get'], {
    names: [
      CA_SECRET_NAME,
      ETCD_CA_SECRET_NAME,
      SERVICE_ACCOUNT_KEY_SECRET_NAME,
      BOOTSTRAP_TOKEN_SECRET,
      ...Object.values(COMPONENTS).map((c) => c.name),
      VPN_SEED.name,
      // The shoot's kubeconfig for the seed's controllers: written and read by the gardenlet
      // (src/gardenlet/shoot/shoot-client.ts), read by provider-local to drain Nodes (worker/shoot-access.ts).
      SHOOT_ACCESS_SECRET_NAME,
    ],
  }),
  // The per-pool user data (worker-user-data-<pool>) has no fixed name: written, never read.
  ...allow(Refs.secret, ['create', 'patch', 'delete']),
  // <shoot>.ca-cluster in the project namespace, and the <shoot>.ca-client InternalSecret beside it.
  ...allow(Refs.configMap, ['create', 'patch', 'delete']),
  ...allow(Refs.internalSecret, ['create', 'patch', 'delete']),
  ...allow(Refs.service, ['create', 'patch', 'delete'], { names: [ETCD_CLIENT_SERVICE] }),
  // Health (list), the etcd data cleanup pods (apply), provider-local's machine of an outdated template (delete).
  ...allow(Refs.pod, ['list', 'create', 'patch', 'delete']),
  // provider-local: why a machine's kubelet has not joined yet, from its agent's log.
  ...allow(Refs.pod, ['get'], { sub: 'log' }),
  ...allow(Refs.node, ['list']),
  // etcd (gardenlet), the machine pods (provider-local's informer, list by labels, apply, delete).
  ...allow(Refs.statefulSet, ['get', 'list', 'watch', 'create', 'patch', 'delete']),
  // provider-local's Cluster informer: a hibernated shoot's machines are scaled to zero.
  ...allow(Refs.cluster, ['list', 'watch']),
  ...allow(Refs.deployment, ['get', 'create', 'patch', 'delete'], {
    names: [COMPONENTS.kubeAPIServer.name, COMPONENTS.kubeControllerManager.name, COMPONENTS.kubeScheduler.name],
  }),
  ...allow(Refs.podDisruptionBudget, ['create', 'patch', 'delete'], {
    names: Object.values(COMPONENTS).map((c) => c.name),
  }),
  // The gardenlet's informer, apply, get, delete; provider-local's finalizer by merge patch and its status.
  ...allow(Refs.worker, ['get', 'list', 'watch', 'create', 'patch', 'delete']),
  ...allow(Refs.worker, ['patch'], { sub: 'status' }),
  // The resource manager (src/gardenlet/resourcemanager): its informer, finalizer and status; the gardenlet's
  // apply of shoot-core-coredns; the Secrets of the product's ManagedResources.
  ...allow(Refs.managedResource, ['get', 'list', 'watch', 'create', 'patch', 'delete']),
  ...allow(Refs.managedResource, ['patch'], { sub: 'status' }),
  ...allow(Refs.secret, ['get'], { names: [`managedresource-${COREDNS_MANAGED_RESOURCE}`, CALICO_SECRET_NAME] }),
];

/** The network-policy enforcer's: what its informers list and watch, and its Node's pod ranges; nothing else. */
export const EXPECTED_ENFORCER_GRANTS: string[] = [
  ...[POD, Refs.namespace, NETWORK_POLICY].flatMap((ref) => allow(ref, ['list', 'watch'])),
  ...allow(Refs.node, ['get']),
];

/** A grant string back as SubjectAccessReview resource attributes. */
export function grantAttributes(grant: string): {
  group: string;
  resource: string;
  subresource?: string;
  name?: string;
  verb: string;
} {
  const m = /^([^/]*)\/([^/:\s]+)(?:\/([^:\s]+))?(?::(\S+))? (\S+)$/.exec(grant);
  if (!m) throw new Error(`not a grant: ${grant}`);
  const [, group = '', resource = '', subresource, name, verb = ''] = m;
  return { group, resource, ...(subresource ? { subresource } : {}), ...(name ? { name } : {}), verb };
}
