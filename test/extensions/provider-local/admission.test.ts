/**
 * provider-local's admission through `admit()` with the app's extension admission (what `validate` runs) and the webhook's review: load-balancer
 * networks and node ranges too small for the shoot's machines.
 */
import { describe, expect, it } from 'vitest';
import { admit } from '../../../src/apis/admission.js';
import type { Seed } from '../../../src/apis/core/v1beta1/seed.js';
import type { Shoot } from '../../../src/apis/core/v1beta1/shoot.js';
import { handleAdmissionReview } from '../../../src/admission/review.js';
import { extensionAdmission } from '../../../src/app/extension-admission.js';
import {
  DEFAULT_LOCAL_ADMISSION_CONFIG,
  DEFAULT_MAX_MACHINES_PER_POOL,
  DEFAULT_MAX_MACHINES_PER_SHOOT,
  type LocalAdmissionConfig,
} from '../../../src/extensions/provider-local/admission.js';
import type { FeatureGates } from '../../../src/featuregate/featuregate.js';
import {
  gateSets,
  ipv4ShootObject,
  ipv6ShootObject,
  seedIPv6Networks,
  seedObject,
  shootObject,
} from '../../fixtures/objects.js';

const NET = 'spec.networking';
const LB_DETAIL = "whose addresses are the shoots' API servers";

function messages(object: unknown, gates: FeatureGates = gateSets.ipv6, providerLocal?: LocalAdmissionConfig) {
  return admit({ object, gates, extensionAdmission: extensionAdmission(providerLocal) }).errors.map(
    (e) => `${e.field}: ${e.detail}`,
  );
}

/** A shoot whose one pool holds `machines` machines (minimum and maximum). */
function withMachines(shoot: Shoot, machines: number): Shoot {
  const workers = shoot.spec.provider!.workers!.map((w) => ({ ...w, minimum: machines, maximum: machines }));
  return { ...shoot, spec: { ...shoot.spec, provider: { ...shoot.spec.provider!, workers } } };
}

describe('provider-local admission: the load-balancer networks', () => {
  it.each([
    ['nodes', 'fd00:ff::/64'],
    ['pods', 'fd00:ff::/56'],
    ['services', 'fd00:ff::ff00/120'],
  ] as const)('an IPv6 shoot with %s %s in fd00:ff::/64 is refused', (field, value) => {
    expect(messages(ipv6ShootObject({ [field]: value }))).toEqual([
      `${NET}.${field}: must not overlap with the load-balancer network fd00:ff::/64, ${LB_DETAIL}`,
    ]);
  });

  it('an IPv4 shoot with pods around 172.18.255.0/24 is refused', () => {
    expect(messages(ipv4ShootObject({ pods: '172.16.0.0/12' }), gateSets.none)).toEqual([
      `${NET}.pods: must not overlap with the load-balancer network 172.18.255.0/24, ${LB_DETAIL}`,
    ]);
  });

  it('checks the installation’s networks, not the defaults, when it has others', () => {
    const providerLocal = { ...DEFAULT_LOCAL_ADMISSION_CONFIG, loadBalancerNetworks: { IPv6: 'fd00:30::/64' } };
    expect(messages(ipv6ShootObject({ nodes: 'fd00:ff::/64' }), gateSets.ipv6, providerLocal)).toEqual([]);
    expect(messages(ipv6ShootObject({ nodes: 'fd00:30::/64' }), gateSets.ipv6, providerLocal)).toEqual([
      `${NET}.nodes: must not overlap with the load-balancer network fd00:30::/64, ${LB_DETAIL}`,
    ]);
  });

  it('leaves shoots of another provider type to their provider', () => {
    const shoot = ipv6ShootObject({ nodes: 'fd00:ff::/64' });
    shoot.spec.provider!.type = 'other';
    expect(messages(shoot)).toEqual([]);
  });

  it('refuses a Seed whose pods, services or shoot defaults are in them, not its nodes holding them', () => {
    const seed = (networks: Partial<NonNullable<Seed['spec']['networks']>>) =>
      seedObject(networks, { base: seedIPv6Networks });
    expect(messages(seed({ pods: 'fd00:ff::/56' }))).toEqual([
      `spec.networks.pods: must not overlap with the load-balancer network fd00:ff::/64, ${LB_DETAIL}`,
    ]);
    expect(messages(seed({ shootDefaults: { pods: 'fd00:10:3::/56', services: 'fd00:ff::/112' } }))).toEqual([
      `spec.networks.shootDefaults.services: must not overlap with the load-balancer network fd00:ff::/64, ${LB_DETAIL}`,
    ]);
    // kind's seed: its node network 172.18.0.0/16 holds the IPv4 load balancers, as a cloud's subnet does
    expect(messages(seedObject({ nodes: '172.18.0.0/16' }), gateSets.none)).toEqual([]);
  });

  it('the webhook refuses the same, with the field in the Status', async () => {
    const answer = await handleAdmissionReview(
      {
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        request: { uid: 'u1', operation: 'CREATE', object: ipv6ShootObject({ services: 'fd00:ff::/112' }) },
      },
      { gates: gateSets.ipv6, lookupSeed: () => undefined, extensionAdmission: extensionAdmission() },
      'validate',
    );
    expect(answer.response.allowed).toBe(false);
    expect(answer.response.status?.details?.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: `${NET}.services`,
        message: `Invalid value: "fd00:ff::/112": must not overlap with the load-balancer network fd00:ff::/64, ${LB_DETAIL}`,
      },
    ]);
  });
});

describe('provider-local admission: node ranges that hold the machines', () => {
  it.each([
    ['fd00:20:1:100::/127', 1, 2n],
    ['fd00:20:1:100::/128', 1, 1n],
    ['fd00:20:1:100::/125', 1, 8n],
  ])('IPv6 nodes %s with %i machine is refused', (nodes, machines, has) => {
    expect(messages(withMachines(ipv6ShootObject({ nodes }), machines))).toEqual([
      `${NET}.nodes: too small for the shoot's machines: machine i gets address 10 + i of the node range, so ` +
        `${machines} machine needs ${10 + machines} addresses (the range has ${has})`,
    ]);
  });

  it.each([
    ['10.180.0.0/31', 2n],
    ['10.180.0.0/32', 1n],
  ])('IPv4 nodes %s is refused even for a pool of minimum 0', (nodes, has) => {
    const shoot = withMachines(ipv4ShootObject({ nodes }), 0);
    expect(messages(shoot, gateSets.none)).toEqual([
      `${NET}.nodes: too small for the shoot's machines: machine i gets address 10 + i of the node range, so ` +
        `1 machine needs 11 addresses (the range has ${has})`,
    ]);
  });

  it('counts every pool’s larger of minimum and maximum: a /124 holds 6 machines, not 7', () => {
    const twoPools = (second: number): Shoot => {
      const shoot = ipv6ShootObject({ nodes: 'fd00:20:1:100::/124', workers: 2 });
      shoot.spec.provider!.workers = [
        { ...shoot.spec.provider!.workers![0]!, minimum: 1, maximum: 3 },
        { ...shoot.spec.provider!.workers![1]!, minimum: second, maximum: second },
      ];
      return shoot;
    };
    expect(messages(twoPools(3))).toEqual([]);
    expect(messages(twoPools(4))).toEqual([
      `${NET}.nodes: too small for the shoot's machines: machine i gets address 10 + i of the node range, so ` +
        '7 machines need 17 addresses (the range has 16)',
    ]);
  });

  it('a workerless shoot has no node range to check', () => {
    expect(messages(shootObject({ workers: 0, services: 'fd00:20:2::/112', ipFamilies: ['IPv6'] }))).toEqual([]);
  });
});

describe('provider-local admission: machines within the installation’s limits', () => {
  const WORKERS = 'spec.provider.workers';
  const poolLimit = (n: number) => `must not be greater than ${n}, the most machines of a pool this installation runs`;
  const shootLimit = (n: number) =>
    "the pools' machines (the sum of each pool's larger of minimum and maximum) must not be more than " +
    `${n}, the most machines of a shoot this installation runs`;
  /** A shoot with a pool per entry: [minimum, maximum]. */
  const shootWithPools = (...pools: [number, number][]): Shoot => {
    const shoot = ipv6ShootObject({ workers: pools.length });
    shoot.spec.provider!.workers = shoot.spec.provider!.workers!.map((w, i) => ({
      ...w,
      minimum: pools[i]![0],
      maximum: pools[i]![1],
    }));
    return shoot;
  };

  it('defaults to 10 per pool and 20 per shoot', () => {
    expect([DEFAULT_MAX_MACHINES_PER_POOL, DEFAULT_MAX_MACHINES_PER_SHOOT]).toEqual([10, 20]);
    expect(messages(shootWithPools([10, 10], [0, 10]))).toEqual([]);
  });

  it('refuses a pool whose minimum or maximum is above the per-pool limit, on that field', () => {
    expect(messages(shootWithPools([1, 2], [11, 11]))).toEqual([
      `${WORKERS}[1].minimum: ${poolLimit(10)}`,
      `${WORKERS}[1].maximum: ${poolLimit(10)}`,
    ]);
    expect(messages(shootWithPools([1, 15]))).toEqual([`${WORKERS}[0].maximum: ${poolLimit(10)}`]);
  });

  it('refuses a shoot whose pools together are above the per-shoot limit', () => {
    expect(messages(shootWithPools([5, 8], [10, 10], [1, 3]))).toEqual([`${WORKERS}: ${shootLimit(20)}`]);
  });

  it('takes the installation’s limits', () => {
    const config = { ...DEFAULT_LOCAL_ADMISSION_CONFIG, maxMachinesPerPool: 2, maxMachinesPerShoot: 3 };
    expect(messages(shootWithPools([1, 2], [1, 1]), gateSets.ipv6, config)).toEqual([]);
    expect(messages(shootWithPools([1, 3]), gateSets.ipv6, config)).toEqual([`${WORKERS}[0].maximum: ${poolLimit(2)}`]);
    expect(messages(shootWithPools([2, 2], [2, 2]), gateSets.ipv6, config)).toEqual([`${WORKERS}: ${shootLimit(3)}`]);
  });

  it('a pool of 1000 machines is refused before the node range is sized for it', () => {
    const errors = messages(shootWithPools([1000, 1000]));
    expect(errors).toEqual([
      `${WORKERS}[0].minimum: ${poolLimit(10)}`,
      `${WORKERS}[0].maximum: ${poolLimit(10)}`,
      `${WORKERS}: ${shootLimit(20)}`,
    ]);
  });
});
