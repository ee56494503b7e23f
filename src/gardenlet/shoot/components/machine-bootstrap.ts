/**
 * What a shoot needs before machines can join it, written into the shoot by the gardenlet as Gardener's shoot-system
 * components are: a bootstrap token (its id and secret kept in the seed namespace, created once), the RBAC of TLS
 * bootstrapping (bootstrappers may ask for node client certificates, which kube-controller-manager approves and
 * signs; nodes may renew theirs), `system:nodes` bound to `system:node-proxier` (the machine's kube-proxy and its
 * overlay read Services, EndpointSlices and Nodes with the node's certificate), the read access of the machines'
 * NetworkPolicy enforcers (Pods, Namespaces, NetworkPolicies), the Leases of the overlay's control plane peers, and
 * CoreDNS.
 */
import { dnsServiceFamiliesInEffect } from '../../../apis/core/v1beta1/dual-stack-migration.js';
import type { KubernetesObject } from '@kubernetes/client-node';
import { randomInt } from 'node:crypto';
import type { NetworkingStatus, Shoot } from '../../../apis/core/v1beta1/shoot.js';
import { BOOTSTRAP_TOKEN_PATTERN } from '../../../apis/provider-local/v1alpha1/machine-user-data.js';
import { type ResourceClient } from '../../../runtime/client.js';
import { Refs, type ResourceRef } from '../../../apis/refs.js';
import type { ComponentContext, DeployWaiter } from '../../component.js';
import { FIELD_MANAGER } from '../../../apis/core/v1beta1/names.js';
import { shootAdminClient } from '../shoot-client.js';
import { getOrCreateSecret } from './control-plane.js';
import { COREDNS_NODE_RESOLVERS, coreDNSObjects, type CoreDNSOptions } from './coredns.js';
import { apiVersionOf } from '../../../runtime/paths.js';
import { seedNamespaceName } from '../../../apis/core/v1beta1/names.js';
import { managedResourceObjects, type NamedManifest } from '../../../apis/resources/v1alpha1/manifests.js';
import { VPN_SEED } from './controlplane/names.js';
import { machineNetworking } from './workers.js';

/** The seed namespace's Secret with the machines' bootstrap token. */
export const BOOTSTRAP_TOKEN_SECRET = 'machine-bootstrap-token';
/** The group the token's users are in besides `system:bootstrappers`. */
export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers:gardener-ipv6:machines';

const CLUSTER_ROLE_BINDING: ResourceRef = {
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  plural: 'clusterrolebindings',
  kind: 'ClusterRoleBinding',
  namespaced: false,
};

const ROLE: ResourceRef = {
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  plural: 'roles',
  kind: 'Role',
  namespaced: true,
};
const ROLE_BINDING: ResourceRef = { ...ROLE, plural: 'rolebindings', kind: 'RoleBinding' };

/**
 * The Leases of kube-system with which control plane pods join the machines' overlay (provider-local's overlay.ts):
 * kube-apiserver's vpn-seed writes its own, the machines (as Nodes) read them.
 */
function overlayPeerRBAC(): { ref: ResourceRef; object: KubernetesObject }[] {
  const role = (name: string, verbs: string[]) => ({
    ref: ROLE,
    object: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name, namespace: 'kube-system' },
      rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs }],
    } as KubernetesObject,
  });
  const binding = (name: string, subject: { kind: 'User' | 'Group'; name: string }) => ({
    ref: ROLE_BINDING,
    object: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name, namespace: 'kube-system' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', ...subject }],
    } as KubernetesObject,
  });
  return [
    role('gardener-ipv6:overlay-peer-writer', ['get', 'create', 'update', 'patch', 'delete']),
    binding('gardener-ipv6:overlay-peer-writer', { kind: 'User', name: VPN_SEED.user }),
    role('gardener-ipv6:overlay-peer-reader', ['get', 'list', 'watch']),
    binding('gardener-ipv6:overlay-peer-reader', { kind: 'Group', name: 'system:nodes' }),
  ];
}

const TOKEN_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

function randomToken(length: number): string {
  return Array.from({ length }, () => TOKEN_ALPHABET[randomInt(TOKEN_ALPHABET.length)]).join('');
}

/** A new bootstrap token, `<6>.<16>` of [a-z0-9]. */
export function newBootstrapToken(): { id: string; secret: string } {
  return { id: randomToken(6), secret: randomToken(16) };
}

/** The token's Secret in the shoot's kube-system and the bindings of TLS bootstrapping. */
export function machineBootstrapObjects(token: {
  id: string;
  secret: string;
}): { ref: ResourceRef; object: KubernetesObject }[] {
  const binding = (name: string, role: string, group: string) => ({
    ref: CLUSTER_ROLE_BINDING,
    object: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: `gardener-ipv6:${name}` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group }],
    } as KubernetesObject,
  });
  return [
    {
      ref: Refs.secret,
      object: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: `bootstrap-token-${token.id}`, namespace: 'kube-system' },
        type: 'bootstrap.kubernetes.io/token',
        stringData: {
          'token-id': token.id,
          'token-secret': token.secret,
          'usage-bootstrap-authentication': 'true',
          'auth-extra-groups': BOOTSTRAPPERS_GROUP,
          description: 'The machines of the shoot join with it (TLS bootstrapping); written by gardener-ipv6.',
        },
      } as KubernetesObject,
    },
    binding('node-bootstrapper', 'system:node-bootstrapper', BOOTSTRAPPERS_GROUP),
    binding(
      'node-autoapprove-bootstrap',
      'system:certificates.k8s.io:certificatesigningrequests:nodeclient',
      BOOTSTRAPPERS_GROUP,
    ),
    binding(
      'node-autoapprove-certificate-rotation',
      'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient',
      'system:nodes',
    ),
    binding('node-proxier', 'system:node-proxier', 'system:nodes'),
    // kube-apiserver's sidecar into the overlay lists the Nodes (control-plane-workloads.ts).
    {
      ref: CLUSTER_ROLE_BINDING,
      object: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'gardener-ipv6:vpn-seed' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:node-proxier' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: VPN_SEED.user }],
      } as KubernetesObject,
    },
    ...overlayPeerRBAC(),
    ...networkPolicyEnforcerRBAC(),
  ];
}

/** The ClusterRole of the machines' NetworkPolicy enforcers, bound to the nodes and kube-proxy's user. */
export const NETWORK_POLICY_ENFORCER_ROLE = 'gardener-ipv6:network-policy-enforcer';

/** The enforcers' RBAC; the seed's own Nodes (`up`) run enforcers too, with the same role in the garden cluster. */
export function networkPolicyEnforcerRBAC(): { ref: ResourceRef; object: KubernetesObject }[] {
  return [
    {
      ref: { ...CLUSTER_ROLE_BINDING, plural: 'clusterroles', kind: 'ClusterRole' },
      object: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: NETWORK_POLICY_ENFORCER_ROLE },
        rules: [
          { apiGroups: [''], resources: ['pods', 'namespaces'], verbs: ['get', 'list', 'watch'] },
          { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: ['get', 'list', 'watch'] },
        ],
      } as KubernetesObject,
    },
    {
      ref: CLUSTER_ROLE_BINDING,
      object: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: NETWORK_POLICY_ENFORCER_ROLE },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: NETWORK_POLICY_ENFORCER_ROLE },
        subjects: [
          { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:nodes' },
          { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:kube-proxy' },
        ],
      } as KubernetesObject,
    },
  ];
}

/** The shoot's bootstrap token (`<id>.<secret>`), created on first use and kept in the seed namespace. */
export async function ensureBootstrapToken(
  client: ResourceClient,
  shoot: Shoot,
  ctx: ComponentContext,
): Promise<string> {
  const data = await getOrCreateSecret(
    client,
    shoot,
    BOOTSTRAP_TOKEN_SECRET,
    async () => {
      const token = newBootstrapToken();
      return { 'token-id': token.id, 'token-secret': token.secret };
    },
    ctx,
  );
  const text = (key: string) => Buffer.from(data[key] ?? '', 'base64').toString('utf8');
  const token = `${text('token-id')}.${text('token-secret')}`;
  if (!BOOTSTRAP_TOKEN_PATTERN.test(token))
    throw new Error(`Secret ${BOOTSTRAP_TOKEN_SECRET} holds no valid bootstrap token`);
  return token;
}

/** The bootstrap token and the RBAC in the shoot; CoreDNS's ManagedResource in the seed namespace. */
export class MachineBootstrap implements DeployWaiter {
  constructor(
    private readonly client: ResourceClient,
    private readonly shoot: Shoot,
    private readonly networking: NetworkingStatus,
  ) {}

  async deploy(ctx: ComponentContext): Promise<void> {
    const [id, tokenSecret] = (await ensureBootstrapToken(this.client, this.shoot, ctx)).split('.') as [string, string];
    const shootClient = await shootAdminClient(this.client, this.shoot, ctx);
    try {
      for (const { ref, object } of machineBootstrapObjects({ id, secret: tokenSecret })) {
        await shootClient.apply(ref, object, { fieldManager: FIELD_MANAGER, force: true, signal: ctx.signal });
      }
    } finally {
      shootClient.close();
    }
    // CoreDNS and its policy go through the resource manager, as Gardener's shoot-core ManagedResources do.
    const networks = machineNetworking(this.shoot, this.networking);
    // During a dual-stack migration the Service keeps the primary family until the network runs both.
    const families = dnsServiceFamiliesInEffect(networks.families, this.shoot);
    const clusterDNS = networks.clusterDNS.slice(0, families.length);
    const machines = (this.shoot.spec.provider?.workers ?? []).reduce((n, w) => n + (w.minimum ?? 0), 0);
    const { secret, managedResource } = coreDNSManagedResource(seedNamespaceName(this.shoot), {
      clusterIPs: clusterDNS,
      families,
      replicas: Math.min(2, Math.max(1, machines)),
      // As Gardener's: names outside the cluster go to the machine's own resolvers (CoreDNS runs with dnsPolicy
      // Default, so /etc/resolv.conf is the kubelet's resolvConf, which lists them).
      upstreams: [COREDNS_NODE_RESOLVERS],
    });
    await this.client.apply(Refs.secret, secret, { fieldManager: FIELD_MANAGER, force: true, signal: ctx.signal });
    await this.client.apply(Refs.managedResource, managedResource, {
      fieldManager: FIELD_MANAGER,
      force: true,
      signal: ctx.signal,
    });
  }

  /** Nothing to remove: it goes with the shoot's API server. */
  async destroy(): Promise<void> {}
}

/** The ManagedResource (and its Secret) of the shoot's CoreDNS, Gardener's `shoot-core-coredns`. */
export const COREDNS_MANAGED_RESOURCE = 'shoot-core-coredns';

/**
 * CoreDNS's objects and the NetworkPolicy `gardener.cloud--allow-dns` (DNS queries to CoreDNS from anywhere, so
 * that policies elsewhere never cut it off and nothing else reaches it), as a Secret of manifests and the
 * ManagedResource that hands them to the shoot.
 */
export function coreDNSManagedResource(
  seedNamespace: string,
  opts: CoreDNSOptions,
): { secret: KubernetesObject; managedResource: KubernetesObject } {
  const objects: KubernetesObject[] = coreDNSObjects(opts).map(({ ref, object }) => ({
    apiVersion: apiVersionOf(ref),
    kind: ref.kind,
    ...object,
  }));
  objects.push({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'gardener.cloud--allow-dns', namespace: 'kube-system' },
    spec: {
      podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
      policyTypes: ['Ingress'],
      ingress: [
        {
          ports: [
            { protocol: 'UDP', port: 53 },
            { protocol: 'TCP', port: 53 },
          ],
        },
      ],
    },
  } as KubernetesObject);
  const { secret, managedResource } = managedResourceObjects(
    seedNamespace,
    COREDNS_MANAGED_RESOURCE,
    objects as unknown as NamedManifest[],
  );
  return { secret: secret as KubernetesObject, managedResource: managedResource as KubernetesObject };
}
