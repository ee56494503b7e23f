/**
 * provider-local's admission, as a provider extension's webhook checks what only it knows (Gardener's
 * `admission-<provider>`): Shoots and Seeds of type `local` may not use the load-balancer networks its shoots' API
 * servers get their addresses from, a shoot's node range must hold its machines (provider-local's IPAM gives
 * machine i the address 10 + i of the range, see worker/node-addresses.ts), and a shoot may have only as many
 * machines as the installation can run (per pool and in all).
 */
import type { Seed } from '../../apis/core/v1beta1/seed.js';
import type { Shoot } from '../../apis/core/v1beta1/shoot.js';
import { FieldPath, forbidden, invalid, type ErrorList } from '../../apis/field/index.js';
import { cidrField, type CIDRField } from '../../apis/validation/cidr.js';
import { addressCount, formatCIDR, overlaps, type CIDR } from '../../net/cidr.js';
import {
  DEFAULT_LOAD_BALANCER_NETWORKS,
  parseLoadBalancerNetworks,
  type LoadBalancerNetworks,
} from './loadbalancer/pool.js';
import { FIRST_MACHINE_OFFSET } from './worker/node-addresses.js';
import { machineSysctlRefusal } from './sysctls.js';

export const LOCAL_PROVIDER_TYPE = 'local';

/** What provider-local's admission needs to know of the installation. */
export interface LocalAdmissionConfig {
  /** The networks provider-local takes load-balancer addresses from (`--load-balancer-networks`). */
  readonly loadBalancerNetworks: LoadBalancerNetworks;
  /** Most machines of one pool (its `minimum` and `maximum`). */
  readonly maxMachinesPerPool: number;
  /** Most machines of one shoot: the sum over its pools of the larger of `minimum` and `maximum`. */
  readonly maxMachinesPerShoot: number;
}

/**
 * Every machine is a pod running containerd, a kubelet and kube-proxy on the seed: on a 2-core host a pool of 50
 * started at once left nothing Ready after minutes, and each machine takes about 4 of the host's inotify instances
 * (128 by default, shared by root; `up` raises it to 512). Ten per pool start in four rounds of
 * MACHINES_STARTING_AT_ONCE; twenty per shoot let a few shoots share such a host. Larger hosts raise both
 * (`--max-machines-per-pool`, `--max-machines-per-shoot`).
 */
export const DEFAULT_MAX_MACHINES_PER_POOL = 10;
export const DEFAULT_MAX_MACHINES_PER_SHOOT = 20;

export type MachineLimits = Partial<Pick<LocalAdmissionConfig, 'maxMachinesPerPool' | 'maxMachinesPerShoot'>>;

/** The limits given, the defaults for the others. */
export function machineLimitsOrDefaults(
  limits: MachineLimits = {},
): Pick<LocalAdmissionConfig, 'maxMachinesPerPool' | 'maxMachinesPerShoot'> {
  return {
    maxMachinesPerPool: limits.maxMachinesPerPool ?? DEFAULT_MAX_MACHINES_PER_POOL,
    maxMachinesPerShoot: limits.maxMachinesPerShoot ?? DEFAULT_MAX_MACHINES_PER_SHOOT,
  };
}

export const DEFAULT_LOCAL_ADMISSION_CONFIG: LocalAdmissionConfig = {
  loadBalancerNetworks: DEFAULT_LOAD_BALANCER_NETWORKS,
  maxMachinesPerPool: DEFAULT_MAX_MACHINES_PER_POOL,
  maxMachinesPerShoot: DEFAULT_MAX_MACHINES_PER_SHOOT,
};

const NETWORKING = FieldPath.root('spec', 'networking');
const NETWORKS = FieldPath.root('spec', 'networks');

function loadBalancerCIDRs(config: LocalAdmissionConfig): CIDR[] {
  return Object.values(parseLoadBalancerNetworks(config.loadBalancerNetworks)).filter((c) => c !== undefined);
}

/** The error when `field` overlaps a load-balancer network, naming it. */
function loadBalancerOverlap(field: CIDRField, networks: readonly CIDR[]): ErrorList {
  const network = field.cidr && networks.find((n) => overlaps(n, field.cidr!));
  if (!network) return [];
  return [
    invalid(
      field.path,
      field.value,
      `must not overlap with the load-balancer network ${formatCIDR(network)}, whose addresses are the shoots' ` +
        'API servers',
    ),
  ];
}

/** The machines a shoot's node range must hold: every pool's `max(minimum, maximum)`, as the IPAM reserves them. */
function machineSlots(shoot: Shoot): number {
  return (shoot.spec.provider?.workers ?? []).reduce(
    (sum, pool) => sum + Math.max(0, pool.minimum ?? 0, pool.maximum ?? 0),
    0,
  );
}

function validateNodeRangeRoom(shoot: Shoot): ErrorList {
  const value = shoot.spec.networking?.nodes;
  if (value === undefined || (shoot.spec.provider?.workers ?? []).length === 0) return [];
  const field = cidrField(NETWORKING.child('nodes'), value);
  if (!field.cidr) return [];
  const machines = Math.max(1, machineSlots(shoot));
  const needed = BigInt(FIRST_MACHINE_OFFSET + machines);
  const available = addressCount(field.cidr);
  if (available >= needed) return [];
  return [
    invalid(
      field.path,
      value,
      `too small for the shoot's machines: machine i gets address ${FIRST_MACHINE_OFFSET} + i of the node range, ` +
        `so ${machines} machine${machines === 1 ? '' : 's'} need${machines === 1 ? 's' : ''} ${needed} addresses ` +
        `(the range has ${available})`,
    ),
  ];
}

/** provider-local's field errors of a Shoot; none for Shoots of another provider type. */
export function validateLocalShoot(shoot: Shoot, config: LocalAdmissionConfig): ErrorList {
  if (shoot.spec.provider?.type !== LOCAL_PROVIDER_TYPE) return [];
  const networks = loadBalancerCIDRs(config);
  const errors: ErrorList = [];
  for (const name of ['nodes', 'pods', 'services'] as const) {
    const value = shoot.spec.networking?.[name];
    if (value !== undefined) errors.push(...loadBalancerOverlap(cidrField(NETWORKING.child(name), value), networks));
  }
  errors.push(
    ...validateNodeRangeRoom(shoot),
    ...validateMachineCounts(shoot, config),
    ...validateWorkerSysctls(shoot),
  );
  return errors;
}

const WORKERS = FieldPath.root('spec', 'provider', 'workers');

/**
 * A pool's `sysctls` may only hold settings a local machine can have of its own (sysctls.ts): the node agent would
 * otherwise skip the others while the Shoot reports success.
 */
function validateWorkerSysctls(shoot: Shoot): ErrorList {
  const errors: ErrorList = [];
  (shoot.spec.provider?.workers ?? []).forEach((worker, i) => {
    const path = WORKERS.index(i).child('sysctls');
    for (const key of Object.keys(worker.sysctls ?? {})) {
      const refusal = machineSysctlRefusal(key);
      if (refusal !== undefined) errors.push(forbidden(path.key(key), refusal));
    }
  });
  return errors;
}

/** Pools and the shoot within the installation's machine limits. */
function validateMachineCounts(shoot: Shoot, config: LocalAdmissionConfig): ErrorList {
  const errors: ErrorList = [];
  const { maxMachinesPerPool: perPool, maxMachinesPerShoot: perShoot } = config;
  const pools = shoot.spec.provider?.workers ?? [];
  pools.forEach((pool, i) => {
    for (const name of ['minimum', 'maximum'] as const) {
      const value = pool[name];
      if (value !== undefined && value > perPool) {
        errors.push(
          invalid(
            WORKERS.index(i).child(name),
            value,
            `must not be greater than ${perPool}, the most machines of a pool this installation runs`,
          ),
        );
      }
    }
  });
  const total = machineSlots(shoot);
  if (total > perShoot) {
    errors.push(
      invalid(
        WORKERS,
        total,
        `the pools' machines (the sum of each pool's larger of minimum and maximum) must not be more than ` +
          `${perShoot}, the most machines of a shoot this installation runs`,
      ),
    );
  }
  return errors;
}

/**
 * provider-local's field errors of a Seed: its pod and service ranges (and the shoots' defaults) must stay out of the
 * load-balancer networks. Its node network may hold them: a seed's load balancers live on its node network (kind's
 * `172.18.0.0/16` holds `172.18.255.0/24`).
 */
export function validateLocalSeed(seed: Seed, config: LocalAdmissionConfig): ErrorList {
  if (seed.spec.provider?.type !== LOCAL_PROVIDER_TYPE) return [];
  const networks = loadBalancerCIDRs(config);
  const seedNetworks = seed.spec.networks ?? {};
  const fields: [FieldPath, string | undefined][] = [
    [NETWORKS.child('pods'), seedNetworks.pods],
    [NETWORKS.child('services'), seedNetworks.services],
    [NETWORKS.child('shootDefaults', 'pods'), seedNetworks.shootDefaults?.pods],
    [NETWORKS.child('shootDefaults', 'services'), seedNetworks.shootDefaults?.services],
  ];
  return fields.flatMap(([path, value]) =>
    value === undefined ? [] : loadBalancerOverlap(cidrField(path, value), networks),
  );
}
