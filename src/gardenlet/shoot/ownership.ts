/**
 * Which shoot a seed namespace belongs to. `shoot--<project>--<shoot>` names one shoot only while neither name
 * contains `--`: validation enforces that, but a Shoot can get past it (written while the webhook was down, or
 * before the rule existed), and then shoot `x--yy` of project `local` and shoot `yy` of project `local--x` share a
 * namespace. So the namespace records its owner, as Gardener's does (the `shoot.gardener.cloud/uid` annotation),
 * and the gardenlet neither adopts nor deletes a namespace, or anything in it or keyed by its name (provider-local's
 * control plane, machines and load balancers), that another shoot owns.
 */
import type { V1Namespace } from '@kubernetes/client-node';
import type { Shoot } from '../../apis/core/v1beta1/shoot.js';
import type { ResourceClient } from '../../runtime/client.js';
import type { ComponentContext } from '../component.js';
import {
  Annotations,
  Labels,
  projectName,
  projectNamespace,
  seedNamespaceName,
} from '../../apis/core/v1beta1/names.js';
import { Refs } from '../../apis/refs.js';

/** The owner a seed namespace names: its labels (project, shoot) and its owner's UID, as far as present. */
export interface NamespaceOwner {
  readonly project?: string;
  readonly name?: string;
  readonly uid?: string;
}

export type SeedNamespaceOwnership =
  /** No such namespace: the shoot may create it. */
  | { readonly kind: 'absent' }
  /**
   * The shoot's own: it carries the shoot's UID, or (written before UIDs were recorded) the shoot's project and
   * name, or no owner at all. `terminating`: the namespace is being deleted.
   */
  | { readonly kind: 'own'; readonly uid: string | undefined; readonly terminating: boolean }
  /** Another shoot's, and that shoot still exists. */
  | { readonly kind: 'foreign'; readonly owner: NamespaceOwner; readonly terminating: boolean }
  /** It names another shoot that no longer exists (its deletion was cut short): the shoot may adopt it. */
  | {
      readonly kind: 'orphaned';
      readonly owner: NamespaceOwner;
      readonly uid: string | undefined;
      readonly terminating: boolean;
    };

export function namespaceOwner(namespace: V1Namespace): NamespaceOwner {
  const labels = namespace.metadata?.labels ?? {};
  const uid = namespace.metadata?.annotations?.[Annotations.shootUID] ?? labels[Labels.shootUID];
  const project = labels[Labels.project];
  const name = labels[Labels.shoot];
  return {
    ...(project ? { project } : {}),
    ...(name ? { name } : {}),
    ...(uid ? { uid } : {}),
  };
}

/**
 * Whether `namespace` is the shoot's own, by what it says of its owner alone (a pure function; `foreign` may still
 * turn out `orphaned`, see {@link seedNamespaceOwnership}).
 */
export function classifySeedNamespace(namespace: V1Namespace | undefined, shoot: Shoot): SeedNamespaceOwnership {
  if (!namespace) return { kind: 'absent' };
  const terminating = Boolean(namespace.metadata?.deletionTimestamp);
  const uid = namespace.metadata?.uid;
  const owner = namespaceOwner(namespace);
  const own = { kind: 'own', uid, terminating } as const;
  if (owner.uid !== undefined && shoot.metadata.uid !== undefined) {
    return owner.uid === shoot.metadata.uid ? own : { kind: 'foreign', owner, terminating };
  }
  // No UID to compare (a namespace written before UIDs were recorded): the labels decide.
  if (owner.project === undefined && owner.name === undefined) return own;
  const same = owner.project === projectName(shoot) && owner.name === shoot.metadata.name;
  return same ? own : { kind: 'foreign', owner, terminating };
}

/** `shoot "yy" of project "local--x" (uid …)`, as far as the namespace says. */
export function describeOwner(owner: NamespaceOwner): string {
  const who =
    owner.name !== undefined
      ? `shoot ${JSON.stringify(owner.name)}${owner.project !== undefined ? ` of project ${JSON.stringify(owner.project)}` : ''}`
      : 'another shoot';
  return owner.uid !== undefined ? `${who} (uid ${owner.uid})` : who;
}

/** The seed namespace belongs to another shoot: nothing of it may be written or deleted for this one. */
export class SeedNamespaceOwnedError extends Error {
  constructor(
    readonly namespace: string,
    readonly owner: NamespaceOwner,
  ) {
    super(
      `the seed namespace ${namespace} belongs to ${describeOwner(owner)}: project and shoot names containing "--" ` +
        'map two shoots to one namespace; this shoot is not deployed (rename it, or delete it)',
    );
  }
}

/**
 * The ownership of the shoot's seed namespace, read from the server. A namespace that names another shoot is
 * `orphaned` only when that shoot is gone for sure: read from the server, not a cache that may lag behind.
 */
export async function seedNamespaceOwnership(
  seed: ResourceClient,
  garden: ResourceClient,
  shoot: Shoot,
  ctx: ComponentContext,
): Promise<SeedNamespaceOwnership> {
  const namespace = await seed.get<V1Namespace>(Refs.namespace, seedNamespaceName(shoot), undefined, {
    signal: ctx.signal,
  });
  const ownership = classifySeedNamespace(namespace, shoot);
  if (ownership.kind !== 'foreign') return ownership;
  const { owner, terminating } = ownership;
  if (owner.project === undefined || owner.name === undefined) return ownership;
  const other = await garden.get(Refs.shoot, owner.name, projectNamespace(owner.project), { signal: ctx.signal });
  const alive = other !== undefined && (owner.uid === undefined || other.metadata?.uid === owner.uid);
  return alive ? ownership : { kind: 'orphaned', owner, uid: namespace?.metadata?.uid, terminating };
}
