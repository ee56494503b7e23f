/**
 * What a shoot needs before machines can join it, written into the shoot by the gardenlet as Gardener's shoot-system
 * components are: the bootstrap token (secrets.ts keeps it in the seed namespace) as a Secret, the RBAC of TLS
 * bootstrapping (bootstrappers may ask for node client certificates, which kube-controller-manager approves and
 * signs; nodes may renew theirs), `system:nodes` bound to `system:node-proxier` (the machine's kube-proxy and its
 * overlay read Services, EndpointSlices and Nodes with the node's certificate), the read access of the machines'
 * NetworkPolicy enforcers (Pods, Namespaces, NetworkPolicies) and the Leases of the overlay's control plane peers.
 * CoreDNS is a component of its own (coredns.ts).
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Shoot } from '../../../apis/core/v1beta1/shoot.js';
import { type ResourceClient } from '../../../runtime/client.js';
import { Refs, type ResourceRef } from '../../../apis/refs.js';
import type { ComponentContext, DeployWaiter } from '../../component.js';
import { FIELD_MANAGER, VPN_SEED } from '../../../apis/core/v1beta1/names.js';
import { shootAdminClient } from '../shoot-client.js';

/** The group the token's users are in besides `system:bootstrappers`. */
export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers:gardener-ipv6:machines';

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

/** The token's Secret in the shoot's kube-system and the bindings of TLS bootstrapping. */
export function machineBootstrapObjects(token: {
  id: string;
  secret: string;
}): { ref: ResourceRef; object: KubernetesObject }[] {
  const binding = (name: string, role: string, group: string) => ({
    ref: Refs.clusterRoleBinding,
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
    // kube-apiserver's sidecar into the overlay lists the Nodes (controlplane/seed-workloads.ts).
    {
      ref: Refs.clusterRoleBinding,
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
      ref: Refs.clusterRole,
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
      ref: Refs.clusterRoleBinding,
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

/** The bootstrap token (from the shoot's secrets, secrets.ts) and the RBAC in the shoot. */
export class MachineBootstrap implements DeployWaiter {
  constructor(
    private readonly client: ResourceClient,
    private readonly shoot: Shoot,
    /** `<id>.<secret>` */
    private readonly bootstrapToken: string,
  ) {}

  async deploy(ctx: ComponentContext): Promise<void> {
    const [id, tokenSecret] = this.bootstrapToken.split('.') as [string, string];
    const shootClient = await shootAdminClient(this.client, this.shoot, ctx);
    try {
      for (const { ref, object } of machineBootstrapObjects({ id, secret: tokenSecret })) {
        await shootClient.apply(ref, object, { fieldManager: FIELD_MANAGER, force: true, signal: ctx.signal });
      }
    } finally {
      shootClient.close();
    }
  }

  /** Nothing to remove: it goes with the shoot's API server. */
  async destroy(): Promise<void> {}
}
