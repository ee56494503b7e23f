/**
 * Gardener's SeedRestriction, for the garden: a gardenlet's credentials (user `gardener.cloud:system:seed:<name>`,
 * group `gardener.cloud:system:seeds`) write only what belongs to its own seed. RBAC (the ClusterRole of
 * src/app/seed-access.ts) grants every gardenlet the same verbs on Shoots, Seeds, Leases, Secrets, ConfigMaps and
 * InternalSecrets; this check, called by the API server for those users only (the webhook's matchConditions),
 * narrows them to:
 * - Shoots (and their subresources): updated or deleted only while the stored Shoot's `spec.seedName` or
 *   `status.seedName` names the seed, and never moved to another seed; never created;
 * - Seeds: its own;
 * - Leases: its own in `gardener-system-seed-lease`;
 * - Secrets, ConfigMaps and InternalSecrets: `<shoot>.<purpose>` in a namespace whose Shoot `<shoot>` is on the
 *   seed (the `<shoot>.ca-cluster` ConfigMap and `<shoot>.ca-client` InternalSecret, as Gardener's gardenlet writes).
 * A denial answers 403 Forbidden, as Gardener's SeedAuthorizer would.
 */
import { failureStatus, type Status } from '../apis/field/index.js';
import { SEED_LEASE_NAMESPACE } from '../apis/core/v1beta1/seed-lease.js';

/** The fields of an AdmissionRequest (review.ts) the check reads. */
export interface SeedRestrictionRequest {
  readonly uid: string;
  readonly resource?: { group: string; version: string; resource: string };
  readonly name?: string;
  readonly namespace?: string;
  readonly operation?: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  readonly userInfo?: { username?: string; groups?: string[] };
  readonly object?: unknown;
  readonly oldObject?: unknown;
}

/** Its answer, an SeedRestrictionResponse (review.ts). */
export interface SeedRestrictionResponse {
  uid: string;
  allowed: boolean;
  status?: Status;
}

type MaybePromise<T> = T | Promise<T>;

/** The user name prefix of a gardenlet's garden credentials; the seed's name follows it. */
export const SEED_USER_PREFIX = 'gardener.cloud:system:seed:';
/** The group every gardenlet's garden credentials carry. */
export const SEEDS_GROUP = 'gardener.cloud:system:seeds';

/** The seed a request's user is the gardenlet of, or undefined for any other user. */
export function seedOfUser(userInfo: SeedRestrictionRequest['userInfo']): string | undefined {
  const username = userInfo?.username ?? '';
  if (!username.startsWith(SEED_USER_PREFIX) || !(userInfo?.groups ?? []).includes(SEEDS_GROUP)) return undefined;
  const seed = username.slice(SEED_USER_PREFIX.length);
  return seed === '' ? undefined : seed;
}

interface ShootLike {
  metadata?: { name?: string; namespace?: string };
  spec?: { seedName?: string };
  status?: { seedName?: string };
}

/** Whether a Shoot is on the seed: scheduled to it, or still running there (a shoot that moves). */
function onSeed(shoot: ShootLike | undefined, seed: string): boolean {
  return shoot?.spec?.seedName === seed || shoot?.status?.seedName === seed;
}

export interface SeedRestrictionLookups {
  /** The Shoot of that namespace and name, from the cache; undefined when there is none. */
  shoot(namespace: string, name: string): MaybePromise<unknown>;
}

function forbidden(uid: string, message: string): SeedRestrictionResponse {
  return { uid, allowed: false, status: failureStatus(403, 'Forbidden', message) };
}

function nameOf(request: SeedRestrictionRequest): string {
  const object = (request.operation === 'DELETE' ? request.oldObject : request.object) as ShootLike | undefined;
  return request.name || object?.metadata?.name || '';
}

/** The admission answer for a request; any user but a gardenlet is allowed as is. */
export function seedRestriction(
  request: SeedRestrictionRequest,
  lookups: SeedRestrictionLookups,
): MaybePromise<SeedRestrictionResponse> {
  const { uid } = request;
  const seed = seedOfUser(request.userInfo);
  if (seed === undefined) return { uid, allowed: true };
  const resource = request.resource?.resource ?? '';
  const group = request.resource?.group ?? '';
  const name = nameOf(request);
  const namespace = request.namespace ?? '';
  const who = `seed "${seed}"`;
  const allowed: SeedRestrictionResponse = { uid, allowed: true };

  if (group === 'core.gardener.cloud' && resource === 'shoots') {
    if (request.operation === 'CREATE') return forbidden(uid, `${who} may not create Shoots`);
    const stored = request.oldObject as ShootLike | undefined;
    if (!onSeed(stored, seed)) {
      return forbidden(uid, `${who} may not write Shoot ${namespace}/${name}: it is not on this seed`);
    }
    const updated = request.object as ShootLike | undefined;
    if (request.operation === 'UPDATE' && updated?.spec?.seedName !== stored?.spec?.seedName) {
      return forbidden(uid, `${who} may not change spec.seedName of Shoot ${namespace}/${name}`);
    }
    return allowed;
  }
  if (group === 'core.gardener.cloud' && resource === 'seeds') {
    return name === seed ? allowed : forbidden(uid, `${who} may write its own Seed only, not "${name}"`);
  }
  if (group === 'coordination.k8s.io' && resource === 'leases') {
    return namespace === SEED_LEASE_NAMESPACE && name === seed
      ? allowed
      : forbidden(uid, `${who} may write its own Lease ${SEED_LEASE_NAMESPACE}/${seed} only, not ${namespace}/${name}`);
  }
  const ownShootObject =
    (group === '' && (resource === 'secrets' || resource === 'configmaps')) ||
    (group === 'core.gardener.cloud' && resource === 'internalsecrets');
  if (ownShootObject) {
    const kind = resource === 'secrets' ? 'Secret' : resource === 'configmaps' ? 'ConfigMap' : 'InternalSecret';
    const dot = name.indexOf('.');
    const shootName = dot > 0 ? name.slice(0, dot) : '';
    if (shootName === '' || namespace === '') {
      return forbidden(uid, `${who} may write a ${kind} only as <shoot>.<purpose> of one of its Shoots, not "${name}"`);
    }
    const judge = (shoot: unknown) =>
      onSeed(shoot as ShootLike | undefined, seed)
        ? allowed
        : forbidden(uid, `${who} may not write ${kind} ${namespace}/${name}: Shoot ${shootName} is not on this seed`);
    const shoot = lookups.shoot(namespace, shootName);
    return shoot instanceof Promise ? shoot.then(judge) : judge(shoot);
  }
  return forbidden(uid, `${who} may not write ${resource}${group ? `.${group}` : ''}`);
}
