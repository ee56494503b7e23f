/**
 * provider-local's admission through `admit()` with the app's extension admission (what `validate` runs) and the webhook's review: load-balancer
 * networks, node ranges too small for the shoot's machines, and the machines of the shoot and of the installation.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { admit } from '../../../src/apis/admission.js';
import type { Seed } from '../../../src/apis/core/v1beta1/seed.js';
import type { Shoot } from '../../../src/apis/core/v1beta1/shoot.js';
import { handleAdmissionReview } from '../../../src/admission/review.js';
import { extensionAdmission } from '../../../src/app/extension-admission.js';
import {
  DEFAULT_LOCAL_ADMISSION_CONFIG,
  DEFAULT_MAX_MACHINES,
  DEFAULT_MAX_MACHINES_PER_POOL,
  DEFAULT_MAX_MACHINES_PER_SHOOT,
  localMachineSlots,
  type LocalAdmissionConfig,
} from '../../../src/extensions/provider-local/admission.js';
import { MachineTotal } from '../../../src/admission/machine-total.js';
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

  it("checks every seed's networks when seeds have pools of their own", () => {
    const providerLocal = {
      ...DEFAULT_LOCAL_ADMISSION_CONFIG,
      loadBalancerNetworks: [{ IPv6: 'fd00:30::/64' }, { IPv6: 'fd00:31::/64', IPv4: '10.19.0.0/24' }],
    };
    expect(messages(ipv6ShootObject({ nodes: 'fd00:32::/64' }), gateSets.ipv6, providerLocal)).toEqual([]);
    expect(messages(ipv6ShootObject({ nodes: 'fd00:30::/64' }), gateSets.ipv6, providerLocal)).toEqual([
      `${NET}.nodes: must not overlap with the load-balancer network fd00:30::/64, ${LB_DETAIL}`,
    ]);
    expect(messages(ipv6ShootObject({ nodes: 'fd00:31::/64' }), gateSets.ipv6, providerLocal)).toEqual([
      `${NET}.nodes: must not overlap with the load-balancer network fd00:31::/64, ${LB_DETAIL}`,
    ]);
    expect(messages(ipv4ShootObject({ pods: '10.19.0.0/16' }), gateSets.none, providerLocal)).toEqual([
      `${NET}.pods: must not overlap with the load-balancer network 10.19.0.0/24, ${LB_DETAIL}`,
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

/** The installation's Shoots as the webhook gave them: a list counted at each review (before), or its running total. */
type ShootSource = (shoots: KubernetesObject[]) => Parameters<typeof extensionAdmission>[1];
const listed: ShootSource = (shoots) => () => shoots;
const runningTotal: ShootSource = (shoots) => {
  const total = new MachineTotal(localMachineSlots);
  const byKey = new Map<string, KubernetesObject>();
  for (const s of shoots) {
    total.set(s);
    byKey.set(`${s.metadata?.namespace}/${s.metadata?.name}`, s);
  }
  return {
    othersThan: (namespace, name) => total.othersThan(namespace, name),
    stored: (namespace, name) => byKey.get(`${namespace}/${name}`),
  };
};

describe.each([
  ['counted over the stored shoots', listed],
  ['as a running total', runningTotal],
])('provider-local admission: machines of all the installation’s shoots, %s', (_, source) => {
  const WORKERS = 'spec.provider.workers';
  const config = { ...DEFAULT_LOCAL_ADMISSION_CONFIG, maxMachines: 10 };
  const totalLimit = (others: number, own: number, max = 10) =>
    `the installation's other shoots have ${others} machine${others === 1 ? '' : 's'} and this shoot's ${own} ` +
    `would make ${others + own}, more than ${max}, the most machines this installation runs (--max-machines)`;
  /** A shoot named `name` in garden-dev whose one pool holds `machines` machines. */
  const shoot = (name: string, machines: number, type = 'local'): Shoot => {
    const object = withMachines(ipv6ShootObject({ name }), machines);
    return { ...object, spec: { ...object.spec, provider: { ...object.spec.provider!, type } } };
  };
  const stored = (...shoots: Shoot[]) => shoots as unknown as KubernetesObject[];
  /** The field errors `admit` finds with `storedShoots` in the installation (an update when `oldObject` is given). */
  const check = (object: Shoot, storedShoots: KubernetesObject[] | undefined, oldObject?: Shoot) =>
    admit({
      object,
      ...(oldObject ? { oldObject } : {}),
      gates: gateSets.ipv6,
      extensionAdmission: extensionAdmission(config, storedShoots && source(storedShoots)),
    }).errors.map((e) => `${e.field}: ${e.detail}`);

  it('defaults to 40 machines in all', () => {
    expect(DEFAULT_MAX_MACHINES).toBe(40);
    expect(DEFAULT_LOCAL_ADMISSION_CONFIG.maxMachines).toBe(40);
  });

  it('refuses a create that takes the installation past its total, naming the numbers', () => {
    const others = stored(shoot('a', 4), shoot('b', 3));
    expect(check(shoot('c', 3), others)).toEqual([]);
    expect(check(shoot('c', 4), others)).toEqual([`${WORKERS}: ${totalLimit(7, 4)}`]);
    const one = stored(shoot('a', 1));
    expect(check(shoot('c', 10), one)).toEqual([`${WORKERS}: ${totalLimit(1, 10)}`]);
  });

  it('counts hibernated shoots: they wake up with their machines', () => {
    const hibernated = shoot('a', 8);
    hibernated.spec.hibernation = { enabled: true };
    expect(check(shoot('c', 3), stored(hibernated))).toEqual([`${WORKERS}: ${totalLimit(8, 3)}`]);
  });

  it('ignores shoots of other providers and the shoot’s own stored version', () => {
    const installation = stored(shoot('a', 6), shoot('other', 10, 'other'), shoot('c', 2));
    // 6 + 4 = 10: neither the other provider's 10 nor c's stored 2 count
    expect(check(shoot('c', 4), installation, shoot('c', 2))).toEqual([]);
    expect(check(shoot('c', 4), installation)).toEqual([]);
    expect(check(shoot('c', 5), installation, shoot('c', 2))).toEqual([`${WORKERS}: ${totalLimit(6, 5)}`]);
    // the same name in another namespace is another shoot
    const elsewhere = { ...shoot('c', 4), metadata: { name: 'c', namespace: 'garden-other' } };
    expect(check(shoot('c', 1), stored(shoot('a', 6), elsewhere))).toEqual([`${WORKERS}: ${totalLimit(10, 1)}`]);
  });

  it('allows an update that does not grow its shoot, even with the installation over the total', () => {
    // 8 + 6 + 5 = 19 of 10: the limit was lowered after they were created
    const installation = stored(shoot('a', 8), shoot('b', 6), shoot('c', 5));
    expect(check(shoot('c', 5), installation, shoot('c', 5))).toEqual([]);
    expect(check(shoot('c', 2), installation, shoot('c', 5))).toEqual([]);
    expect(check(shoot('c', 6), installation, shoot('c', 5))).toEqual([`${WORKERS}: ${totalLimit(14, 6)}`]);
    // without the request's old object (one that did not decode), the cached version is the stored one
    expect(check(shoot('c', 5), installation)).toEqual([]);
    expect(check(shoot('c', 6), installation)).toEqual([`${WORKERS}: ${totalLimit(14, 6)}`]);
  });

  it('counts a stored shoot whose pools are not as expected as having none of them', () => {
    const odd = { ...shoot('a', 1), spec: { provider: { type: 'local', workers: [{ minimum: '9' }, null] } } };
    const noWorkers = { ...shoot('b', 1), spec: { provider: { type: 'local', workers: 'none' } } };
    expect(check(shoot('c', 10), [odd, noWorkers] as unknown as KubernetesObject[])).toEqual([]);
  });

  it('is not checked without stored shoots (the CLI without a cluster)', () => {
    // 10 over the 9 of shoot a is past the 10 of the installation, but no other shoot is known
    expect(check(shoot('c', 10), stored(shoot('a', 9)))).toEqual([`${WORKERS}: ${totalLimit(9, 10)}`]);
    expect(check(shoot('c', 10), undefined)).toEqual([]);
    expect(messages(shoot('c', 10), gateSets.ipv6, { ...config, maxMachines: 1 })).toEqual([]);
  });

  it('the webhook refuses a create over the total with the cause on the pools', async () => {
    const answer = await handleAdmissionReview(
      {
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        request: { uid: 'u1', operation: 'CREATE', object: shoot('c', 4) },
      },
      {
        gates: gateSets.ipv6,
        lookupSeed: () => undefined,
        extensionAdmission: extensionAdmission(config, source(stored(shoot('a', 9)))),
      },
      'validate',
    );
    expect(answer.response.allowed).toBe(false);
    expect(answer.response.status?.details?.causes).toEqual([
      { reason: 'FieldValueInvalid', field: WORKERS, message: `Invalid value: 4: ${totalLimit(9, 4)}` },
    ]);
  });
});
