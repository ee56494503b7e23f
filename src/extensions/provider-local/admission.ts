/**
 * provider-local's admission, as a provider extension's webhook checks what only it knows (Gardener's
 * `admission-<provider>`): Shoots and Seeds of type `local` may not use the load-balancer networks its shoots' API
 * servers get their addresses from, a shoot's node range must hold its machines (provider-local's IPAM gives
 * machine i the address 10 + i of the range, see worker/node-addresses.ts), and a shoot may have only as many
 * machines as the installation can run (per pool, per shoot, and with the installation's other shoots).
 */
import type { KubernetesObject } from '@kubernetes/client-node';
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
  /**
   * The networks provider-local takes load-balancer addresses from (`--load-balancer-networks`); with several seeds
   * of their own pools, each seed's.
   */
  readonly loadBalancerNetworks: LoadBalancerNetworks | readonly LoadBalancerNetworks[];
  /** Most machines of one pool (its `minimum` and `maximum`). */
  readonly maxMachinesPerPool: number;
  /** Most machines of one shoot: the sum over its pools of the larger of `minimum` and `maximum`. */
  readonly maxMachinesPerShoot: number;
  /** Most machines of all the installation's shoots of type `local` together, counted as per shoot. */
  readonly maxMachines: number;
}

/**
 * Every machine is a pod running containerd, a kubelet and kube-proxy on the seed: on a 2-core host a pool of 50
 * started at once left nothing Ready after minutes, and each machine takes about 4 of the host's inotify instances
 * (128 by default, shared by root; `up` raises it to 512). Ten per pool start in four rounds of
 * MACHINES_STARTING_AT_ONCE; twenty per shoot let a few shoots share such a host. Forty in all: the per-shoot
 * limits alone let ~14 small shoots run the host out of inotify instances and CPU, and 40 machines take ~160 of the
 * 512 instances `up` sets, leaving the rest to the control planes and the host. Larger hosts raise them
 * (`--max-machines-per-pool`, `--max-machines-per-shoot`, `--max-machines`).
 */
export const DEFAULT_MAX_MACHINES_PER_POOL = 10;
export const DEFAULT_MAX_MACHINES_PER_SHOOT = 20;
export const DEFAULT_MAX_MACHINES = 40;

type MachineLimitKey = 'maxMachinesPerPool' | 'maxMachinesPerShoot' | 'maxMachines';

export type MachineLimits = Partial<Pick<LocalAdmissionConfig, MachineLimitKey>>;

/** The limits given, the defaults for the others. */
export function machineLimitsOrDefaults(limits: MachineLimits = {}): Pick<LocalAdmissionConfig, MachineLimitKey> {
  return {
    maxMachinesPerPool: limits.maxMachinesPerPool ?? DEFAULT_MAX_MACHINES_PER_POOL,
    maxMachinesPerShoot: limits.maxMachinesPerShoot ?? DEFAULT_MAX_MACHINES_PER_SHOOT,
    maxMachines: limits.maxMachines ?? DEFAULT_MAX_MACHINES,
  };
}

export const DEFAULT_LOCAL_ADMISSION_CONFIG: LocalAdmissionConfig = {
  loadBalancerNetworks: DEFAULT_LOAD_BALANCER_NETWORKS,
  ...machineLimitsOrDefaults(),
};

const NETWORKING = FieldPath.root('spec', 'networking');
const NETWORKS = FieldPath.root('spec', 'networks');

/** The load-balancer networks by configuration: parsed once, not at every review. */
const loadBalancerCIDRsByConfig = new WeakMap<
  LoadBalancerNetworks | readonly LoadBalancerNetworks[],
  readonly CIDR[]
>();

function loadBalancerCIDRs(config: LocalAdmissionConfig): readonly CIDR[] {
  const known = loadBalancerCIDRsByConfig.get(config.loadBalancerNetworks);
  if (known) return known;
  const all: readonly LoadBalancerNetworks[] = Array.isArray(config.loadBalancerNetworks)
    ? config.loadBalancerNetworks
    : [config.loadBalancerNetworks as LoadBalancerNetworks];
  const cidrs = all.flatMap((networks) =>
    Object.values(parseLoadBalancerNetworks(networks)).filter((c) => c !== undefined),
  );
  loadBalancerCIDRsByConfig.set(config.loadBalancerNetworks, cidrs);
  return cidrs;
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

/**
 * The machines a shoot's node range must hold: every pool's `max(minimum, maximum)`, as the IPAM reserves them. Also
 * of a Shoot as stored (not decoded): a count that is not a number counts as none.
 */
function machineSlots(shoot: Shoot | KubernetesObject): number {
  const workers: unknown = (shoot as { spec?: { provider?: { workers?: unknown } } }).spec?.provider?.workers;
  if (!Array.isArray(workers)) return 0;
  const count = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) ? n : 0);
  return (workers as unknown[]).reduce<number>((sum, pool) => {
    const { minimum, maximum } = (pool ?? {}) as { minimum?: unknown; maximum?: unknown };
    return sum + Math.max(0, count(minimum), count(maximum));
  }, 0);
}

/**
 * What a stored Shoot counts toward the installation's machines (`--max-machines`): its machine slots when it is of
 * type `local`, hibernated or not; 0 for other providers. What the webhook's running total (MachineTotal) counts.
 */
export function localMachineSlots(shoot: KubernetesObject): number {
  const type = (shoot as { spec?: { provider?: { type?: unknown } } }).spec?.provider?.type;
  return type === LOCAL_PROVIDER_TYPE ? machineSlots(shoot) : 0;
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

/** What provider-local's admission knows of the installation's Shoots, where it knows them (the webhook). */
export interface StoredShoots {
  /**
   * The Shoots as stored (the webhook's cache), of every type, the one under review among them on an update. Unset
   * where none are known (the CLI's `validate` without a cluster): the installation's total is then not checked.
   */
  readonly shoots?: readonly KubernetesObject[];
  /**
   * The same count kept as the Shoots change (the webhook's running total), read in constant time at each review;
   * used instead of `shoots` when set.
   */
  readonly machines?: InstallationMachines;
  /** The stored version of the Shoot under review, on an update (decoded and defaulted). */
  readonly old?: Shoot;
}

/** The installation's machines as counted over its stored Shoots (src/admission/machine-total.ts keeps them). */
export interface InstallationMachines {
  /** The {@link localMachineSlots} of the stored Shoots other than the one of that namespace and name. */
  othersThan(namespace: string | undefined, name: string | undefined): number;
  /** The stored Shoot of that namespace and name, of any type (undefined when none is stored). */
  stored(namespace: string | undefined, name: string | undefined): KubernetesObject | undefined;
}

/** provider-local's field errors of a Shoot; none for Shoots of another provider type. */
export function validateLocalShoot(shoot: Shoot, config: LocalAdmissionConfig, stored: StoredShoots = {}): ErrorList {
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
    ...(stored.machines
      ? validateInstallationMachineTotal(shoot, stored.machines, config.maxMachines, stored.old)
      : stored.shoots
        ? validateInstallationMachines(shoot, stored.shoots, config.maxMachines, stored.old)
        : []),
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

const machines = (n: number) => `${n} machine${n === 1 ? '' : 's'}`;

/**
 * The installation's machines within `maxMachines`: the machine slots (as per shoot) of the stored Shoots of type
 * `local` other than `shoot` (same namespace and name), and `shoot`'s own. Hibernated shoots count: they wake up with
 * their machines; so do shoots being deleted, whose machines run until they are gone. Only a review that raises the
 * total is refused, a create or an update that gives the shoot more slots than its stored version (`old`, else the
 * one among `storedShoots`): an installation over the limit (after it was lowered) still updates its shoots and
 * deletes them. The count is as fresh as the cache: two creates at the same moment may both pass.
 */
export function validateInstallationMachines(
  shoot: Shoot,
  storedShoots: readonly KubernetesObject[],
  maxMachines: number,
  old?: Shoot,
): ErrorList {
  const { name, namespace } = shoot.metadata ?? {};
  let others = 0;
  let stored: KubernetesObject | undefined;
  for (const object of storedShoots) {
    if (name !== undefined && object.metadata?.name === name && object.metadata.namespace === namespace) {
      stored = object;
    } else if ((object as { spec?: { provider?: { type?: unknown } } }).spec?.provider?.type === LOCAL_PROVIDER_TYPE) {
      others += machineSlots(object);
    }
  }
  return installationMachineErrors(shoot, others, old ?? stored, maxMachines);
}

/**
 * {@link validateInstallationMachines} with the other shoots' machines and the stored Shoot read from `machines`
 * (the webhook's running total) rather than counted over every stored Shoot: the same errors.
 */
export function validateInstallationMachineTotal(
  shoot: Shoot,
  machines: InstallationMachines,
  maxMachines: number,
  old?: Shoot,
): ErrorList {
  const { name, namespace } = shoot.metadata ?? {};
  const stored = name !== undefined ? machines.stored(namespace, name) : undefined;
  // A Shoot without a name is none of the stored ones: all of them are the others.
  return installationMachineErrors(shoot, machines.othersThan(namespace, name), old ?? stored, maxMachines);
}

function installationMachineErrors(
  shoot: Shoot,
  others: number,
  before: Shoot | KubernetesObject | undefined,
  maxMachines: number,
): ErrorList {
  const own = machineSlots(shoot);
  if (before !== undefined && own <= machineSlots(before)) return [];
  const total = others + own;
  if (total <= maxMachines) return [];
  return [
    invalid(
      WORKERS,
      own,
      `the installation's other shoots have ${machines(others)} and this shoot's ${own} would make ${total}, ` +
        `more than ${maxMachines}, the most machines this installation runs (--max-machines)`,
    ),
  ];
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
