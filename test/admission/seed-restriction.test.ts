import { describe, expect, it } from 'vitest';
import {
  seedOfUser,
  seedRestriction,
  SEEDS_GROUP,
  type SeedRestrictionRequest,
} from '../../src/admission/seed-restriction.js';

const gardenlet = (seed: string) => ({ username: `gardener.cloud:system:seed:${seed}`, groups: [SEEDS_GROUP] });
const shoot = (name: string, seedName?: string, statusSeed?: string) => ({
  apiVersion: 'core.gardener.cloud/v1beta1',
  kind: 'Shoot',
  metadata: { name, namespace: 'garden-dev' },
  spec: seedName ? { seedName } : {},
  ...(statusSeed ? { status: { seedName: statusSeed } } : {}),
});
const SHOOTS = { six: shoot('six', 'ipv6'), both: shoot('both', 'dual'), moving: shoot('moving', 'ipv6', 'dual') };
const lookups = { shoot: (_ns: string, name: string) => SHOOTS[name as keyof typeof SHOOTS] };

function request(overrides: Partial<SeedRestrictionRequest>): SeedRestrictionRequest {
  return { uid: 'u', userInfo: gardenlet('dual'), operation: 'UPDATE', namespace: 'garden-dev', ...overrides };
}

const SHOOTS_RESOURCE = { group: 'core.gardener.cloud', version: 'v1beta1', resource: 'shoots' };
const answer = (r: SeedRestrictionRequest) => seedRestriction(r, lookups) as { allowed: boolean; status?: object };

describe('seedOfUser', () => {
  it.each([
    [gardenlet('dual'), 'dual'],
    [{ username: 'gardener.cloud:system:seed:dual', groups: [] }, undefined],
    [{ username: 'gardener.cloud:system:seed:', groups: [SEEDS_GROUP] }, undefined],
    [{ username: 'system:admin', groups: [SEEDS_GROUP] }, undefined],
    [undefined, undefined],
  ])('%j → %s', (userInfo, seed) => {
    expect(seedOfUser(userInfo)).toBe(seed);
  });
});

describe('seedRestriction', () => {
  it('lets any other user through untouched', () => {
    expect(answer(request({ userInfo: { username: 'alice', groups: [] }, resource: SHOOTS_RESOURCE }))).toEqual({
      uid: 'u',
      allowed: true,
    });
  });

  it("writes only its own seed's Shoots (spec or status), never creates or moves one", () => {
    const update = (name: keyof typeof SHOOTS, object: object = SHOOTS[name]) =>
      answer(request({ resource: SHOOTS_RESOURCE, name, oldObject: SHOOTS[name], object }));
    expect(update('both').allowed).toBe(true);
    expect(update('moving').allowed).toBe(true);
    expect(update('six')).toMatchObject({
      allowed: false,
      status: {
        code: 403,
        reason: 'Forbidden',
        message: 'seed "dual" may not write Shoot garden-dev/six: it is not on this seed',
      },
    });
    expect(update('both', shoot('both', 'ipv6'))).toMatchObject({
      allowed: false,
      status: { code: 403, message: expect.stringContaining('may not change spec.seedName') },
    });
    expect(
      answer(request({ resource: SHOOTS_RESOURCE, operation: 'DELETE', name: 'six', oldObject: SHOOTS.six })).allowed,
    ).toBe(false);
    expect(
      answer(request({ resource: SHOOTS_RESOURCE, operation: 'CREATE', name: 'new', object: shoot('new', 'dual') })),
    ).toMatchObject({ allowed: false, status: { message: 'seed "dual" may not create Shoots' } });
  });

  it('writes only its own Seed and its own Lease', () => {
    const seeds = { group: 'core.gardener.cloud', version: 'v1beta1', resource: 'seeds' };
    expect(answer(request({ resource: seeds, name: 'dual', namespace: '' })).allowed).toBe(true);
    expect(answer(request({ resource: seeds, name: 'ipv6', namespace: '' })).allowed).toBe(false);
    const leases = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' };
    expect(answer(request({ resource: leases, name: 'dual', namespace: 'gardener-system-seed-lease' })).allowed).toBe(
      true,
    );
    expect(answer(request({ resource: leases, name: 'ipv6', namespace: 'gardener-system-seed-lease' })).allowed).toBe(
      false,
    );
    expect(answer(request({ resource: leases, name: 'dual', namespace: 'kube-system' })).allowed).toBe(false);
  });

  it("writes Secrets and ConfigMaps named <shoot>.<purpose> of its own shoots only, the name from the object's", () => {
    const secrets = { group: '', version: 'v1', resource: 'secrets' };
    const configmaps = { group: '', version: 'v1', resource: 'configmaps' };
    const create = (resource: typeof secrets, name: string) =>
      answer(request({ resource, operation: 'CREATE', object: { metadata: { name } } }));
    expect(create(secrets, 'both.ssh-keypair').allowed).toBe(true);
    expect(create(configmaps, 'both.ca-cluster').allowed).toBe(true);
    expect(create(secrets, 'six.ssh-keypair')).toMatchObject({
      allowed: false,
      status: { message: expect.stringContaining('Shoot six is not on this seed') },
    });
    expect(create(secrets, 'unknown.ca-cluster').allowed).toBe(false);
    const internalSecrets = { group: 'core.gardener.cloud', version: 'v1beta1', resource: 'internalsecrets' };
    expect(create(internalSecrets, 'both.ca-client').allowed).toBe(true);
    expect(create(internalSecrets, 'six.ca-client')).toMatchObject({
      allowed: false,
      status: { message: expect.stringContaining('InternalSecret garden-dev/six.ca-client') },
    });
    expect(create(secrets, 'plain')).toMatchObject({
      allowed: false,
      status: { message: expect.stringContaining('only as <shoot>.<purpose>') },
    });
    expect(
      answer(request({ resource: secrets, operation: 'DELETE', name: 'six.kubeconfig', oldObject: {} })).allowed,
    ).toBe(false);
  });

  it('waits for a lookup that takes I/O', async () => {
    const slow = { shoot: async () => SHOOTS.both };
    const r = request({
      resource: { group: '', version: 'v1', resource: 'secrets' },
      operation: 'CREATE',
      object: { metadata: { name: 'both.x' } },
    });
    const result = seedRestriction(r, slow);
    expect(result).toBeInstanceOf(Promise);
    expect((await result).allowed).toBe(true);
  });

  it('refuses what a gardenlet never writes', () => {
    const pods = { group: '', version: 'v1', resource: 'pods' };
    expect(answer(request({ resource: pods, name: 'x' }))).toMatchObject({
      allowed: false,
      status: { code: 403, message: 'seed "dual" may not write pods' },
    });
  });
});
