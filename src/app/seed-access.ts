/**
 * A gardenlet's access to the garden, as Gardener grants it: its own credentials (user
 * `gardener.cloud:system:seed:<seed>`, group `gardener.cloud:system:seeds`), one ClusterRole for every gardenlet with
 * what the gardenlet's code reads and writes in the garden, and the seed restriction of the admission webhook
 * (src/admission/seed-restriction.ts) narrowing those writes to the gardenlet's own seed.
 *
 * The credentials are a client certificate of the garden's CA: `up` holds that CA and issues them; Gardener's
 * bootstrap (a token, then a CertificateSigningRequest approved by gardener-controller-manager) is not built.
 */
import { writeFile } from 'node:fs/promises';
import { KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { SEED_USER_PREFIX, SEEDS_GROUP } from '../admission/seed-restriction.js';
import { SEED_LEASE_NAMESPACE } from '../apis/core/v1beta1/seed-lease.js';
import { Refs, type ResourceRef } from '../apis/refs.js';
import type { ResourceClient } from '../runtime/client.js';

/** The ClusterRole and ClusterRoleBinding every gardenlet's credentials get in the garden. */
export const SEEDS_CLUSTER_ROLE = 'gardener.cloud:system:seeds';

const RBAC = 'rbac.authorization.k8s.io';

/**
 * What the gardenlet's code does in the garden (src/gardenlet with a separate garden): watch Shoots, Seeds and
 * CloudProfiles; write Shoots' finalizers, annotations and status, its Seed and its status, its Lease, and the
 * `<shoot>.ca-cluster` ConfigMaps and `<shoot>.ca-client` InternalSecrets (Secrets of that form too, as Gardener's
 * gardenlet writes). No Secret is read.
 */
export function seedsClusterRole(): KubernetesObject {
  return {
    apiVersion: `${RBAC}/v1`,
    kind: 'ClusterRole',
    metadata: { name: SEEDS_CLUSTER_ROLE },
    rules: [
      {
        apiGroups: ['core.gardener.cloud'],
        resources: ['shoots', 'seeds', 'cloudprofiles'],
        verbs: ['get', 'list', 'watch'],
      },
      {
        apiGroups: ['core.gardener.cloud'],
        resources: ['shoots', 'shoots/status', 'seeds', 'seeds/status'],
        verbs: ['update', 'patch'],
      },
      { apiGroups: ['core.gardener.cloud'], resources: ['seeds'], verbs: ['create'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'create', 'update', 'patch', 'delete'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['create', 'delete', 'patch'] },
      { apiGroups: ['core.gardener.cloud'], resources: ['internalsecrets'], verbs: ['create', 'delete', 'patch'] },
      { apiGroups: [''], resources: ['namespaces'], verbs: ['get'] },
      { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
    ],
  } as KubernetesObject;
}

/** The objects that let gardenlets in: the ClusterRole, its binding to the group, and the namespace of the Leases. */
export function seedAccessObjects(): { ref: ResourceRef; object: KubernetesObject }[] {
  return [
    {
      ref: Refs.namespace,
      object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SEED_LEASE_NAMESPACE } } as KubernetesObject,
    },
    { ref: Refs.clusterRole, object: seedsClusterRole() },
    {
      ref: Refs.clusterRoleBinding,
      object: {
        apiVersion: `${RBAC}/v1`,
        kind: 'ClusterRoleBinding',
        metadata: { name: SEEDS_CLUSTER_ROLE },
        roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: SEEDS_CLUSTER_ROLE },
        subjects: [{ apiGroup: RBAC, kind: 'Group', name: SEEDS_GROUP }],
      } as KubernetesObject,
    },
  ];
}

/** Applies {@link seedAccessObjects} to the garden (idempotent). */
export async function deploySeedAccess(garden: ResourceClient, opts: { signal?: AbortSignal } = {}): Promise<void> {
  for (const { ref, object } of seedAccessObjects()) {
    await garden.apply(ref, object, { fieldManager: 'gardener-ipv6-garden', force: true, ...opts });
  }
}

/** The subject a gardenlet's client certificate names. */
export function seedSubject(seedName: string): { commonName: string; organizations: string[] } {
  return { commonName: `${SEED_USER_PREFIX}${seedName}`, organizations: [SEEDS_GROUP] };
}

/** A kubeconfig for the garden at `server` with a gardenlet's client certificate, written with mode 0600. */
export async function writeSeedKubeconfig(
  path: string,
  opts: { server: string; caPEM: string; seedName: string; certPEM: string; keyPEM: string },
): Promise<KubeConfig> {
  const name = `garden--${opts.seedName}`;
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'garden', cluster: { server: opts.server, 'certificate-authority-data': b64(opts.caPEM) } }],
    users: [{ name, user: { 'client-certificate-data': b64(opts.certPEM), 'client-key-data': b64(opts.keyPEM) } }],
    contexts: [{ name, context: { cluster: 'garden', user: name } }],
    'current-context': name,
  };
  const text = stringify(config);
  await writeFile(path, text, { mode: 0o600 });
  const kc = new KubeConfig();
  kc.loadFromString(text);
  return kc;
}
