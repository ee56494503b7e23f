/**
 * Names and labels the gardenlet derives from a shoot. docs/architecture.md lists them ("Names and labels"): tests and
 * users rely on them.
 */
import type { Shoot } from './shoot.js';

export const DEFAULT_DOMAIN = 'local.gardener.cloud';
export const GARDEN_NAMESPACE = 'garden';
export const SHOOT_FINALIZER = 'gardener';
export const FIELD_MANAGER = 'gardenlet';
/** The seed namespace's Secrets of a shoot's CA and service-account key pair, kept for the shoot's life. */
export const CA_SECRET_NAME = 'ca';
export const SERVICE_ACCOUNT_KEY_SECRET_NAME = 'service-account-key';
/** etcd's own CA (Gardener's `ca-etcd`): only kube-apiserver holds a client certificate of it. */
export const ETCD_CA_SECRET_NAME = 'ca-etcd';
/** The LoadBalancer Service in front of a shoot's API server, in its seed namespace. */
export const API_SERVER_SERVICE_NAME = 'kube-apiserver';
/** The Deployment of a shoot's API server in its seed namespace (Gardener's `kube-apiserver`). */
export const API_SERVER_DEPLOYMENT_NAME = 'kube-apiserver';
/**
 * Gardener's `gardener` Secret of the seed namespace: a kubeconfig (key `kubeconfig`) of the shoot's API server at
 * its load-balancer address, with which the extensions reach the shoot (provider-local drains Nodes with it).
 */
export const SHOOT_ACCESS_SECRET_NAME = 'gardener';
export const SHOOT_ACCESS_KUBECONFIG_KEY = 'kubeconfig';

/** A worker pool's machines (their Nodes, as the kubelet registers them from the user data) carry their pool's name. */
export const WORKER_POOL_LABEL = 'worker.gardener.cloud/pool';

/** The shoot API server's sidecar into the machines' overlay: its name, and the user its certificate names. */
export const VPN_SEED = { name: 'vpn-seed', user: 'gardener-ipv6:vpn-seed' } as const;

export const Labels = {
  role: 'gardener.cloud/role',
  project: 'project.gardener.cloud/name',
  shoot: 'shoot.gardener.cloud/name',
  managedBy: 'app.kubernetes.io/managed-by',
  /** The UID of the shoot an object belongs to (Gardener's key; on the seed namespace also as an annotation). */
  shootUID: 'shoot.gardener.cloud/uid',
} as const;

export const Annotations = {
  /** Gardener's annotation on the seed namespace: the UID of the shoot that owns it. */
  shootUID: 'shoot.gardener.cloud/uid',
  /**
   * Gardener's operation annotation: `reconcile` on a Shoot runs its flow now; on an extension object, written with
   * each deploy, it asks its extension to reconcile it, and the extension removes it once it succeeded (so the wait
   * never takes an earlier success for this one's).
   */
  operation: 'gardener.cloud/operation',
} as const;

/** The operation annotation's value that asks for a reconcile. */
export const OPERATION_RECONCILE = 'reconcile';

/** The project of a shoot: its namespace is `garden-<project>` (the `garden` namespace is project `garden`). */
export function projectName(shoot: Shoot): string {
  const namespace = shoot.metadata.namespace ?? 'default';
  if (namespace === GARDEN_NAMESPACE) return GARDEN_NAMESPACE;
  return namespace.startsWith('garden-') ? namespace.slice('garden-'.length) : namespace;
}

/**
 * Whether a shoot's namespace is a project namespace (`garden` or `garden-<project>`). A shoot elsewhere (written past
 * the webhook) is never deployed: its seed namespace and DNS names would be those of project `<namespace>`'s shoot.
 */
export function inProjectNamespace(shoot: Shoot): boolean {
  const namespace = shoot.metadata.namespace ?? '';
  return namespace === GARDEN_NAMESPACE || namespace.startsWith('garden-');
}

/** The error of a shoot outside a project namespace, which is not deployed. */
export function notInProjectNamespaceMessage(shoot: Shoot): string {
  return (
    `the shoot is in namespace ${JSON.stringify(shoot.metadata.namespace ?? '')}, not in a project namespace ` +
    `("garden" or "garden-<project>"): it would take the seed namespace ${seedNamespaceName(shoot)} and the DNS ` +
    `names of project ${JSON.stringify(projectName(shoot))}; it is not deployed (create it in ` +
    `${projectNamespace(projectName(shoot))})`
  );
}

/** The namespace of a project in the garden: `garden-<project>`, or `garden` for project `garden`. */
export function projectNamespace(project: string): string {
  return project === GARDEN_NAMESPACE ? GARDEN_NAMESPACE : `garden-${project}`;
}

/** The seed namespace that holds a shoot's control plane: `shoot--<project>--<shoot>`. */
export function seedNamespaceName(shoot: Shoot): string {
  return `shoot--${projectName(shoot)}--${shoot.metadata.name ?? ''}`;
}

/**
 * The labels every object the gardenlet creates for a shoot carries, so they can be found and cleaned up, and so
 * they name their owner: the shoot's UID when it has one (a shoot read from a file for `render` has none).
 */
export function shootLabels(shoot: Shoot): Record<string, string> {
  return {
    [Labels.project]: projectName(shoot),
    [Labels.shoot]: shoot.metadata.name ?? '',
    [Labels.managedBy]: 'gardenlet',
    ...(shoot.metadata.uid ? { [Labels.shootUID]: shoot.metadata.uid } : {}),
  };
}

/** `api.<shoot>.<project>.<external|internal>.<domain>`. */
export function apiServerDomain(shoot: Shoot, visibility: 'external' | 'internal', domain: string): string {
  return `api.${shoot.metadata.name ?? ''}.${projectName(shoot)}.${visibility}.${domain}`;
}
