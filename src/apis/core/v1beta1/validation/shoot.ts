/**
 * Shoot validation (create, update, and in the context of its seed), as docs/api-reference.md ("Validation
 * rules") states it.
 *
 * Kept as one file (over 400 lines): as Gardener's `validation/shoot.go`, the rules of one object, whose create, update
 * and seed checks share the field paths and network checks at its top.
 */
import { duplicate, FieldPath, forbidden, invalid, required, tooLong, type ErrorList } from '../../../field/index.js';
import type { FeatureGates } from '../../../../featuregate/featuregate.js';
import { parseCIDR, type CIDR } from '../../../../net/cidr.js';
import {
  cidrField,
  intersects,
  overlappedVPNRange,
  validateCanonical,
  validateFamily,
  validateParse,
  validateUsable,
  type CIDRField,
} from '../../../validation/cidr.js';
import {
  familyInfo,
  isIPv6SingleStack,
  validateIPFamilies,
  validateIPFamiliesUpdate,
  type FamilyInfo,
} from '../../../validation/ip-families.js';
import { dns1123LabelErrors } from '../../../validation/dns-name.js';
import { validateDuration, validateKubeletConfig } from './kubelet.js';
import {
  hasWorkers,
  highestMaxPods,
  ipv6ShootGainsIPv4,
  ipv6SingleStackNodeMask,
  shootIPFamilies,
} from '../helpers.js';
import { CONSTRAINT_HIBERNATION_POSSIBLE, cronError, hibernationEnabled, validTimeZone } from '../hibernation.js';
import type { Seed } from '../seed.js';
import type { Shoot } from '../shoot.js';

const WORKERLESS_DETAIL = 'this field should not be set for workerless Shoot clusters';
const NETWORKING = FieldPath.root('spec', 'networking');
const KCM = FieldPath.root('spec', 'kubernetes', 'kubeControllerManager');
/** The largest service ranges kube-apiserver accepts for `--service-cluster-ip-range` (20 host bits). */
const MAX_SERVICE_PREFIX: Readonly<Record<string, number>> = { IPv4: 12, IPv6: 108 };
/** kube-controller-manager refuses a node mask more than 16 bits longer than the cluster CIDR. */
const MAX_NODE_MASK_DIFF = 16;

/** The shoot's networking CIDRs that passed parsing and the family and canonical checks. */
interface ShootCIDRs {
  nodes?: CIDRField;
  pods?: CIDRField;
  services?: CIDRField;
}

/** Gardener's limit of project name plus shoot name: both end up in the seed namespace and in domain names. */
export const SHOOT_AND_PROJECT_NAME_MAX_LENGTH = 21;
/** Gardener's limit of a worker pool name (it ends up in machine and node names). */
export const WORKER_NAME_MAX_LENGTH = 15;
const CONSECUTIVE_HYPHENS = 'name may not contain two consecutive hyphens';
/**
 * Shoots live in project namespaces only, as Gardener's Projects own them: the seed namespace and DNS names are made
 * from the project, so a shoot in namespace `local` would get those of project `local`'s (in `garden-local`).
 */
const NOT_A_PROJECT_NAMESPACE =
  'a Shoot must be in a project namespace: "garden" or "garden-<project>" (its seed namespace ' +
  '"shoot--<project>--<name>" and DNS names are made from the project)';

/** The project of a project namespace: `garden` for `garden`, `x` for `garden-x`; undefined for other namespaces. */
export function projectOfNamespace(namespace: string | undefined): string | undefined {
  if (namespace === 'garden') return 'garden';
  return namespace?.startsWith('garden-') ? namespace.slice('garden-'.length) : undefined;
}

/**
 * Gardener's name rules beyond the API server's (which `validateObjectMeta` checks): no `--` in shoot and project
 * names (the seed namespace `shoot--<project>--<shoot>` must name one shoot), and a limit on both names together.
 */
function validateShootNames(shoot: Shoot): ErrorList {
  const errors: ErrorList = [];
  const name = shoot.metadata.name ?? '';
  const namePath = FieldPath.root('metadata', 'name');
  if (name.includes('--')) errors.push(invalid(namePath, name, CONSECUTIVE_HYPHENS));
  const namespace = shoot.metadata.namespace;
  const project = projectOfNamespace(namespace);
  const namespacePath = FieldPath.root('metadata', 'namespace');
  // Without a namespace (a file for `validate`), the API server takes it from the request: checked there.
  if (namespace !== undefined && project === undefined) {
    errors.push(invalid(namespacePath, namespace, NOT_A_PROJECT_NAMESPACE));
  }
  if (project === undefined) return errors;
  if (project.includes('--') || project.startsWith('-')) {
    errors.push(invalid(namespacePath, namespace, `project ${JSON.stringify(project)}: ${CONSECUTIVE_HYPHENS}`));
  }
  for (const msg of dns1123LabelErrors(project)) {
    errors.push(invalid(namespacePath, namespace, `project ${JSON.stringify(project)}: ${msg}`));
  }
  if (name && project.length + name.length > SHOOT_AND_PROJECT_NAME_MAX_LENGTH) {
    errors.push(
      invalid(
        namePath,
        name,
        `the length of the shoot name and the project name must not exceed ${SHOOT_AND_PROJECT_NAME_MAX_LENGTH} ` +
          `characters (project: ${project}; shoot: ${name})`,
      ),
    );
  }
  return errors;
}

/** What Gardener requires of every Shoot outside networking; the Kubernetes version may come from the profile. */
function validateShootRequiredFields(shoot: Shoot): ErrorList {
  const errors: ErrorList = [];
  const spec = FieldPath.root('spec');
  if (!shoot.spec.provider?.type) errors.push(required(spec.child('provider', 'type'), 'must specify a provider type'));
  if (!shoot.spec.region) errors.push(required(spec.child('region'), 'must specify a region'));
  if (!shoot.spec.cloudProfileName && !shoot.spec.cloudProfile?.name) {
    errors.push(required(spec.child('cloudProfile', 'name'), 'must specify a cloud profile'));
  }
  if (shoot.spec.seedName === '') {
    errors.push(invalid(spec.child('seedName'), '', 'seed name must not be empty when providing the key'));
  }
  return errors;
}

function validateWorkerNames(shoot: Shoot): ErrorList {
  const errors: ErrorList = [];
  const seen = new Set<string>();
  (shoot.spec.provider?.workers ?? []).forEach((worker, i) => {
    const path = FieldPath.root('spec', 'provider', 'workers').index(i).child('name');
    const name = worker.name;
    for (const msg of dns1123LabelErrors(name)) errors.push(invalid(path, name, msg));
    if (name.length > WORKER_NAME_MAX_LENGTH) errors.push(tooLong(path, name, WORKER_NAME_MAX_LENGTH));
    if (seen.has(name)) errors.push(duplicate(path, name));
    seen.add(name);
  });
  return errors;
}

/**
 * Pool sizes as Gardener checks them: minimum and maximum not negative, maximum not below minimum nor below the count
 * of the pool's zones, each zone named once. (Pools that are all empty are allowed: such a shoot succeeds without
 * Nodes.)
 */
function validateWorkerSizes(shoot: Shoot): ErrorList {
  const errors: ErrorList = [];
  const workers = shoot.spec.provider?.workers ?? [];
  const path = FieldPath.root('spec', 'provider', 'workers');
  workers.forEach((worker, i) => {
    const minimum = worker.minimum ?? 0;
    const maximum = worker.maximum ?? 0;
    if (minimum < 0)
      errors.push(invalid(path.index(i).child('minimum'), minimum, 'must be greater than or equal to 0'));
    if (maximum < 0)
      errors.push(invalid(path.index(i).child('maximum'), maximum, 'must be greater than or equal to 0'));
    if (maximum < minimum) {
      errors.push(forbidden(path.index(i).child('maximum'), 'maximum value must not be less than minimum value'));
    }
    const zones = worker.zones ?? [];
    // A pool's machines are spread over its zones, at least one in each.
    if (maximum > 0 && maximum < zones.length) {
      errors.push(forbidden(path.index(i).child('maximum'), 'maximum value must not be less than the number of zones'));
    }
    const seen = new Set<string>();
    zones.forEach((zone, j) => {
      if (seen.has(zone)) errors.push(duplicate(path.index(i).child('zones').index(j), zone));
      seen.add(zone);
    });
  });
  return errors;
}

/** The durations of MachineControllerManagerSettings that provider-local uses or that a user may set. */
const MCM_DURATIONS = [
  'machineDrainTimeout',
  'machineHealthTimeout',
  'machineCreationTimeout',
  'inPlaceUpdateTimeout',
  'machinePreserveTimeout',
] as const;

/**
 * A pool's `machineControllerManager` settings as Gardener checks them: durations that parse and are not negative
 * (the drain of a machine that goes waits `machineDrainTimeout`), counts not negative.
 */
function validateMachineControllerManagerSettings(shoot: Shoot): ErrorList {
  const errors: ErrorList = [];
  (shoot.spec.provider?.workers ?? []).forEach((worker, i) => {
    const settings = worker.machineControllerManager;
    if (settings === undefined) return;
    const path = FieldPath.root('spec', 'provider', 'workers').index(i).child('machineControllerManager');
    for (const name of MCM_DURATIONS) errors.push(...validateDuration(path.child(name), settings[name]));
    for (const name of ['maxEvictRetries', 'autoPreserveFailedMachineMax'] as const) {
      const value = settings[name];
      if (value !== undefined && value < 0) {
        errors.push(invalid(path.child(name), value, 'must be greater than or equal to 0'));
      }
    }
  });
  return errors;
}

export function validateShoot(shoot: Shoot, gates: FeatureGates): ErrorList {
  const errors: ErrorList = [...validateShootNames(shoot), ...validateShootRequiredFields(shoot)];
  const workers = hasWorkers(shoot);
  const networking = shoot.spec.networking;
  errors.push(
    ...validateWorkerNames(shoot),
    ...validateWorkerSizes(shoot),
    ...validateMachineControllerManagerSettings(shoot),
  );

  if (!networking) {
    if (workers) errors.push(required(NETWORKING, 'networking should not be nil for a Shoot with workers'));
  } else {
    if (workers && !networking.type) {
      errors.push(required(NETWORKING.child('type'), 'networking type must be provided'));
    }
    if (!workers) {
      for (const name of ['type', 'providerConfig', 'pods', 'nodes'] as const) {
        if (networking[name] !== undefined) errors.push(forbidden(NETWORKING.child(name), WORKERLESS_DETAIL));
      }
    }
    const families = validateIPFamilies(networking.ipFamilies, NETWORKING.child('ipFamilies'), gates, {
      gateIPv6SingleStack: true,
    });
    errors.push(...families.errors);
    if (families.valid) errors.push(...validateShootCIDRs(shoot, familyInfo(networking.ipFamilies)).errors);
  }

  errors.push(...validateStatusNetworking(shoot));
  errors.push(...validateKubeControllerManager(shoot, workers));
  errors.push(...validateKubeletConfigs(shoot));
  errors.push(...validateHibernationSchedules(shoot));
  return errors;
}

/**
 * Gardener's hibernation schedule rules: each schedule has a start or an end, each a cron expression (the standard
 * five fields or a descriptor) used once across all schedules, and a location that is a known time zone.
 */
function validateHibernationSchedules(shoot: Shoot): ErrorList {
  const errors: ErrorList = [];
  const seen = new Set<string>();
  const path = FieldPath.root('spec', 'hibernation', 'schedules');
  (shoot.spec.hibernation?.schedules ?? []).forEach((schedule, i) => {
    const at = path.index(i);
    if (schedule.start === undefined && schedule.end === undefined) {
      errors.push(required(at.child('start/end'), 'either start or end has to be provided'));
    }
    for (const key of ['start', 'end'] as const) {
      const spec = schedule[key];
      if (spec === undefined) continue;
      const problem = cronError(spec);
      if (problem !== undefined) errors.push(invalid(at.child(key), spec, `not a valid cron spec: ${problem}`));
      else if (seen.has(spec)) errors.push(duplicate(at.child(key), spec));
      else seen.add(spec);
    }
    const location = schedule.location;
    if (location !== undefined && !validTimeZone(location)) {
      errors.push(invalid(at.child('location'), location, `not a valid location: unknown time zone ${location}`));
    }
  });
  return errors;
}

/** The shoot-wide kubelet settings and each pool's (which replace them for its machines). */
function validateKubeletConfigs(shoot: Shoot): ErrorList {
  const version = shoot.spec.kubernetes?.version;
  const errors = validateKubeletConfig(
    shoot.spec.kubernetes?.kubelet,
    FieldPath.root('spec', 'kubernetes', 'kubelet'),
    version,
  );
  (shoot.spec.provider?.workers ?? []).forEach((worker, i) => {
    const path = FieldPath.root('spec', 'provider', 'workers').index(i).child('kubernetes', 'kubelet');
    errors.push(...validateKubeletConfig(worker.kubernetes?.kubelet, path, worker.kubernetes?.version ?? version));
  });
  return errors;
}

function validateShootCIDRs(shoot: Shoot, info: FamilyInfo): { errors: ErrorList; cidrs: ShootCIDRs } {
  const errors: ErrorList = [];
  const cidrs: ShootCIDRs = {};
  const networking = shoot.spec.networking ?? {};
  for (const name of ['nodes', 'pods', 'services'] as const) {
    const value = networking[name];
    if (value === undefined) continue;
    const field = cidrField(NETWORKING.child(name), value);
    const fieldErrors = [
      ...validateParse(field),
      ...(info.singleStack ? validateFamily(field, info.primary) : []),
      ...validateCanonical(field),
      ...validateUsable(field),
    ];
    errors.push(...fieldErrors);
    if (fieldErrors.length === 0) cidrs[name] = field;
  }

  const { pods, nodes, services } = cidrs;
  if (services?.cidr && services.cidr.prefix < (MAX_SERVICE_PREFIX[services.cidr.family] ?? 0)) {
    const limit = MAX_SERVICE_PREFIX[services.cidr.family];
    errors.push(invalid(services.path, services.value, `cannot be larger than /${limit}`));
  }
  if (intersects(pods, services) && services) {
    errors.push(invalid(services.path, services.value, 'shoot pod network intersects with shoot service network'));
  }
  if (intersects(pods, nodes) && pods) {
    errors.push(invalid(pods.path, pods.value, 'shoot pod network intersects with shoot node network'));
  }
  if (intersects(services, nodes) && services) {
    errors.push(invalid(services.path, services.value, 'shoot service network intersects with shoot node network'));
  }
  return { errors, cidrs };
}

function validateStatusNetworking(shoot: Shoot): ErrorList {
  const errors: ErrorList = [];
  const status = shoot.status?.networking;
  if (!status) return errors;
  const path = FieldPath.root('status', 'networking');
  for (const name of ['nodes', 'pods', 'services', 'egressCIDRs'] as const) {
    (status[name] ?? []).forEach((value, i) => {
      const field = cidrField(path.child(name).index(i), value);
      errors.push(...validateParse(field), ...validateCanonical(field));
    });
  }
  return errors;
}

function validateKubeControllerManager(shoot: Shoot, workers: boolean): ErrorList {
  const errors: ErrorList = [];
  const kcm = shoot.spec.kubernetes?.kubeControllerManager;
  if (!kcm) return errors;
  const { nodeCIDRMaskSize: mask, nodeCIDRMaskSizeIPv6: maskIPv6 } = kcm;
  if (!workers) {
    if (mask !== undefined) errors.push(forbidden(KCM.child('nodeCIDRMaskSize'), WORKERLESS_DETAIL));
    if (maskIPv6 !== undefined) errors.push(forbidden(KCM.child('nodeCIDRMaskSizeIPv6'), WORKERLESS_DETAIL));
    return errors;
  }

  const families = shootIPFamilies(shoot);
  const ipv6SingleStack = isIPv6SingleStack(families);
  const ipv4SingleStack = families.length === 1 && families[0] === 'IPv4';
  if (ipv6SingleStack && mask !== undefined && maskIPv6 !== undefined) {
    errors.push(
      forbidden(
        KCM.child('nodeCIDRMaskSize'),
        'only one of nodeCIDRMaskSize or nodeCIDRMaskSizeIPv6 can be set for single-stack clusters',
      ),
    );
  }
  if (mask !== undefined) {
    if (ipv4SingleStack && (mask < 16 || mask > 28)) {
      errors.push(invalid(KCM.child('nodeCIDRMaskSize'), mask, 'nodeCIDRMaskSize must be between 16 and 28'));
    } else if (ipv6SingleStack && (mask < 64 || mask > 124)) {
      errors.push(
        invalid(
          KCM.child('nodeCIDRMaskSize'),
          mask,
          'nodeCIDRMaskSize must be between 64 and 124 for IPv6 single-stack clusters',
        ),
      );
    }
    errors.push(...validateMaskLeavesRoomForPods(mask, highestMaxPods(shoot), ipv6SingleStack ? 128 : 32));
  }
  if (maskIPv6 !== undefined) {
    if (ipv4SingleStack) {
      errors.push(
        forbidden(
          KCM.child('nodeCIDRMaskSizeIPv6'),
          'nodeCIDRMaskSizeIPv6 cannot be set for IPv4 single-stack clusters',
        ),
      );
    } else if (maskIPv6 < 64 || maskIPv6 > 124) {
      errors.push(
        invalid(KCM.child('nodeCIDRMaskSizeIPv6'), maskIPv6, 'nodeCIDRMaskSizeIPv6 must be between 64 and 124'),
      );
    }
  }
  errors.push(...validateIPv6NodeMaskAgainstPods(shoot, ipv6SingleStack));
  return errors;
}

function validateMaskLeavesRoomForPods(mask: number, maxPods: number, addressBits: number): ErrorList {
  const path = KCM.child('nodeCIDRMaskSize');
  const free = addressBits - mask;
  if (free < 0) {
    return [invalid(path, mask, `nodeCIDRMaskSize ${mask} is larger than the address length ${addressBits}`)];
  }
  const usable = (1n << BigInt(free)) - 2n;
  if (usable >= BigInt(maxPods)) return [];
  return [
    invalid(
      path,
      mask,
      `kubelet or kube-controller-manager configuration incorrect: the nodeCIDRMaskSize of ${mask} only supports ` +
        `${usable} IP addresses. The highest maxPod setting is ${maxPods} (of the shoot or any of its worker pools). ` +
        `Please choose a nodeCIDRMaskSize that supports at least ${maxPods} IP addresses`,
    ),
  ];
}

/** kube-controller-manager cuts node ranges out of the pod range: the mask must fit in it, at most 16 bits longer. */
function validateIPv6NodeMaskAgainstPods(shoot: Shoot, ipv6SingleStack: boolean): ErrorList {
  const podsValue = shoot.spec.networking?.pods;
  const pods = podsValue === undefined ? undefined : cidrField(NETWORKING.child('pods'), podsValue).cidr;
  if (!pods || pods.family !== 'IPv6') return [];
  const kcm = shoot.spec.kubernetes?.kubeControllerManager ?? {};
  const [name, mask] =
    kcm.nodeCIDRMaskSizeIPv6 !== undefined
      ? (['nodeCIDRMaskSizeIPv6', kcm.nodeCIDRMaskSizeIPv6] as const)
      : (['nodeCIDRMaskSize', ipv6SingleStack ? kcm.nodeCIDRMaskSize : undefined] as const);
  if (mask === undefined) return [];
  if (mask >= pods.prefix && mask - pods.prefix <= MAX_NODE_MASK_DIFF) return [];
  return [
    invalid(
      KCM.child(name),
      mask,
      `must be at least the pods prefix length and at most ${MAX_NODE_MASK_DIFF} bits longer than the pods prefix ` +
        `(pods: "${podsValue}")`,
    ),
  ];
}

/** Update rules, on top of validating the new object. Both objects are expected to be defaulted. */
export function validateShootUpdate(next: Shoot, prev: Shoot, gates: FeatureGates): ErrorList {
  const errors = validateShoot(next, gates);
  const newNet = next.spec.networking;
  const oldNet = prev.spec.networking;
  if (oldNet && !newNet) {
    errors.push(forbidden(NETWORKING, "networking cannot be set to nil if it's already set"));
  }
  if (oldNet && newNet) {
    // `type` is immutable outright (as in Gardener); `pods` and `services` only once set.
    if (newNet.type !== oldNet.type) {
      errors.push(invalid(NETWORKING.child('type'), newNet.type ?? null, 'field is immutable'));
    }
    for (const name of ['pods', 'services'] as const) {
      const before = oldNet[name];
      if (before !== undefined && before !== '' && newNet[name] !== before) {
        errors.push(invalid(NETWORKING.child(name), newNet[name] ?? null, 'field is immutable'));
      }
    }
    errors.push(
      ...validateIPFamiliesUpdate(newNet.ipFamilies, oldNet.ipFamilies, NETWORKING.child('ipFamilies'), gates),
    );
  }
  const newKCM = next.spec.kubernetes?.kubeControllerManager ?? {};
  const oldKCM = prev.spec.kubernetes?.kubeControllerManager ?? {};
  // `nodeCIDRMaskSize` is immutable outright (as in Gardener), but where an IPv6 single-stack shoot gains IPv4: its
  // IPv6 node mask moves to `nodeCIDRMaskSizeIPv6` and `nodeCIDRMaskSize` becomes the IPv4 one (defaults.ts,
  // defaultShootUpdate). `nodeCIDRMaskSizeIPv6` is immutable once set.
  const movingIPv6Mask =
    ipv6ShootGainsIPv4(next, prev) &&
    newKCM.nodeCIDRMaskSizeIPv6 !== undefined &&
    newKCM.nodeCIDRMaskSizeIPv6 === ipv6SingleStackNodeMask(prev);
  if (newKCM.nodeCIDRMaskSize !== oldKCM.nodeCIDRMaskSize && !movingIPv6Mask) {
    errors.push(invalid(KCM.child('nodeCIDRMaskSize'), newKCM.nodeCIDRMaskSize ?? null, 'field is immutable'));
  }
  // The way back from dual-stack drops the IPv6 family, and with it the IPv6 node mask (else the migration the
  // spec allows could never pass: the mask is forbidden on IPv4 single-stack).
  const droppingIPv6 =
    shootIPFamilies(prev).includes('IPv6') &&
    !shootIPFamilies(next).includes('IPv6') &&
    newKCM.nodeCIDRMaskSizeIPv6 === undefined;
  if (
    oldKCM.nodeCIDRMaskSizeIPv6 !== undefined &&
    newKCM.nodeCIDRMaskSizeIPv6 !== oldKCM.nodeCIDRMaskSizeIPv6 &&
    !droppingIPv6
  ) {
    errors.push(invalid(KCM.child('nodeCIDRMaskSizeIPv6'), newKCM.nodeCIDRMaskSizeIPv6 ?? null, 'field is immutable'));
  }
  errors.push(...validateHibernationPossible(next, prev));
  return errors;
}

/**
 * As Gardener's admission: hibernating a shoot whose HibernationPossible constraint is False or Unknown is refused
 * with the constraint's message (a webhook in the shoot would keep it from waking up); absent, it is allowed.
 */
function validateHibernationPossible(next: Shoot, prev: Shoot): ErrorList {
  if (hibernationEnabled(prev) || !hibernationEnabled(next)) return [];
  const constraint = (next.status ?? prev.status)?.constraints?.find((c) => c.type === CONSTRAINT_HIBERNATION_POSSIBLE);
  if (constraint === undefined || constraint.status === 'True') return [];
  return [
    forbidden(
      FieldPath.root('spec', 'hibernation', 'enabled'),
      `'${CONSTRAINT_HIBERNATION_POSSIBLE}' constraint is '${constraint.status}': ${constraint.message ?? ''}`,
    ),
  ];
}

const SHOOT_KINDS = [
  ['nodes', 'node'],
  ['services', 'service'],
  ['pods', 'pod'],
] as const;
const SEED_NAME = FieldPath.root('spec', 'seedName');
const SEED_KINDS = [
  ['services', 'service'],
  ['pods', 'pod'],
  ['nodes', 'node'],
] as const;

/**
 * Rules for a shoot scheduled on a seed. The shoot is expected to have gone through `applySeedShootDefaults`.
 */
export function validateShootAgainstSeed(shoot: Shoot, seed: Seed): ErrorList {
  const errors: ErrorList = [];
  const seedName = SEED_NAME;
  const seedFamilies = seed.spec.networks?.ipFamilies?.length ? seed.spec.networks.ipFamilies : ['IPv4'];
  const shootFamilies = shootIPFamilies(shoot);
  if (!shootFamilies.every((family) => seedFamilies.includes(family))) {
    errors.push(
      forbidden(
        seedName,
        `seed "${seed.metadata.name ?? ''}" does not support IP families [${shootFamilies.join(' ')}] of the shoot ` +
          `(seed: [${seedFamilies.join(' ')}])`,
      ),
    );
  }

  const networking = shoot.spec.networking;
  if (hasWorkers(shoot)) {
    if (networking?.pods === undefined) errors.push(required(NETWORKING.child('pods'), 'pods is required'));
    if (networking?.services === undefined) {
      errors.push(required(NETWORKING.child('services'), 'services is required'));
    }
  }
  if (!networking) return errors;

  const seedNetworks = seed.spec.networks ?? {};
  const seedCIDRs: Record<string, CIDR | undefined> = {};
  for (const [name] of SEED_KINDS) {
    const value = seedNetworks[name];
    seedCIDRs[name] = value === undefined ? undefined : parseCIDR(value);
  }
  for (const [name, kind] of SHOOT_KINDS) {
    const value = networking[name];
    if (value === undefined) continue;
    const field = cidrField(NETWORKING.child(name), value);
    if (!field.cidr) continue;
    for (const [seedField, seedKind] of SEED_KINDS) {
      if (intersects(field, seedCIDRs[seedField])) {
        errors.push(invalid(field.path, value, `shoot ${kind} network intersects with seed ${seedKind} network`));
      }
    }
    const vpn = overlappedVPNRange(field);
    if (vpn)
      errors.push(invalid(field.path, value, `shoot ${kind} network intersects with default vpn network (${vpn})`));
  }
  return errors;
}
