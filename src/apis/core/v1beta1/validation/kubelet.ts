/**
 * A Shoot's kubelet settings (`spec.kubernetes.kubelet`, a pool's `kubernetes.kubelet`), checked as Gardener's
 * `ValidateKubeletConfig` checks them, plus what the kubelet itself would refuse at start (so a machine never runs a
 * kubelet that exits on its configuration).
 */
import type { FieldPath } from '../../../field/index.js';
import { forbidden, invalid, notSupported, type ErrorList } from '../../../field/index.js';
import { quantitySign, QUANTITY_DETAIL } from '../../../validation/quantity.js';
import type { KubeletConfig } from '../shoot.js';
import { compareSemVer, parseSemVer } from '../versions.js';

/** The CPU manager policies the kubelet has. */
export const CPU_MANAGER_POLICIES = ['none', 'static'] as const;
/** Gardener's lower bound of `podPidsLimit`: fewer PIDs than this break the pod's own runtime. */
export const MIN_POD_PIDS_LIMIT = 100;
/** Gardener's bounds of `streamingConnectionIdleTimeout`. */
const STREAMING_IDLE_TIMEOUT_SECONDS = { min: 30, max: 4 * 3600 };
const EVICTION_SIGNALS = [
  'memoryAvailable',
  'imageFSAvailable',
  'imageFSInodesFree',
  'nodeFSAvailable',
  'nodeFSInodesFree',
];

const GO_DURATION_UNITS: Readonly<Record<string, number>> = {
  ns: 1e-9,
  us: 1e-6,
  µs: 1e-6,
  ms: 1e-3,
  s: 1,
  m: 60,
  h: 3600,
};

/** A Go duration (`1m30s`, `1.5h`, `0`) in seconds; undefined when it is not one. */
export function parseGoDuration(text: string): number | undefined {
  if (text === '0') return 0;
  const match = /^([+-]?)((?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))+)$/.exec(text);
  if (!match) return undefined;
  let seconds = 0;
  for (const [, amount, unit] of match[2]!.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/g)) {
    seconds += Number(amount) * GO_DURATION_UNITS[unit!]!;
  }
  return match[1] === '-' ? -seconds : seconds;
}

/** A Go duration, not negative (metav1.Duration fields). */
export function validateDuration(path: FieldPath, value: string | undefined): ErrorList {
  if (value === undefined) return [];
  const seconds = parseGoDuration(value);
  if (seconds === undefined) return [invalid(path, value, 'must be a duration such as 90s, 5m or 1h30m')];
  if (seconds < 0) return [invalid(path, value, 'must not be negative')];
  return [];
}

function validateNonNegative(path: FieldPath, value: number | undefined): ErrorList {
  return value !== undefined && value < 0 ? [invalid(path, value, 'must be greater than or equal to 0')] : [];
}

function validateNonNegativeQuantity(path: FieldPath, value: string | number | undefined): ErrorList {
  if (value === undefined) return [];
  const sign = quantitySign(value);
  if (sign === undefined) return [invalid(path, value, QUANTITY_DETAIL)];
  return sign < 0 ? [invalid(path, value, 'must be greater than or equal to 0')] : [];
}

/** An eviction threshold: a quantity (`100Mi`) or a percentage (`5%`) of at most 100. */
function validateQuantityOrPercent(path: FieldPath, value: string | undefined): ErrorList {
  if (value === undefined) return [];
  if (value.endsWith('%')) {
    const percent = Number(value.slice(0, -1));
    if (!/^\d+(\.\d+)?%$/.test(value) || percent > 100) {
      return [invalid(path, value, 'must be a percentage between 0% and 100% or a quantity')];
    }
    return [];
  }
  return validateNonNegativeQuantity(path, value);
}

/** The swap behaviours the kubelet has from Kubernetes 1.30 on, and before. */
export const SWAP_BEHAVIORS = ['NoSwap', 'LimitedSwap'] as const;
const SWAP_BEHAVIORS_BEFORE_1_30 = ['LimitedSwap', 'UnlimitedSwap'] as const;

/**
 * Whether `version` (the shoot's or the pool's Kubernetes version) is at least 1.`minor`; a version not known yet
 * (defaulted from the CloudProfile later) counts as the newest, as every version this environment runs does.
 */
function atLeast(version: string | undefined, minor: number): boolean {
  const parsed = version === undefined ? undefined : parseSemVer(version);
  if (parsed === undefined) return true;
  return compareSemVer({ ...parsed, prerelease: undefined }, { major: 1, minor, patch: 0 }) >= 0;
}

/**
 * `path` is `spec.kubernetes.kubelet` or `spec.provider.workers[i].kubernetes.kubelet`; `version` the Kubernetes
 * version the kubelet runs (the pool's, else the shoot's).
 */
export function validateKubeletConfig(config: KubeletConfig | undefined, path: FieldPath, version?: string): ErrorList {
  if (config === undefined) return [];
  const errors: ErrorList = [];
  // Paths are made only for the fields that are set: most are not, and a kubelet configuration is checked for the
  // shoot and every pool at each review.
  if (config.maxPods !== undefined) errors.push(...validateNonNegative(path.child('maxPods'), config.maxPods));
  if (config.podPidsLimit !== undefined && config.podPidsLimit < MIN_POD_PIDS_LIMIT) {
    errors.push(
      invalid(
        path.child('podPidsLimit'),
        config.podPidsLimit,
        `podPidsLimit value must be at least ${MIN_POD_PIDS_LIMIT}`,
      ),
    );
  }
  if (
    config.cpuManagerPolicy !== undefined &&
    !(CPU_MANAGER_POLICIES as readonly string[]).includes(config.cpuManagerPolicy)
  ) {
    errors.push(notSupported(path.child('cpuManagerPolicy'), config.cpuManagerPolicy, CPU_MANAGER_POLICIES));
  }
  if (config.cpuManagerPolicy === 'static') {
    // The kubelet exits at start with the static policy and no reserved CPU: it needs CPUs the pods may not use.
    const reserved = [config.kubeReserved?.cpu, config.systemReserved?.cpu].some((cpu) =>
      cpu ? quantitySign(cpu) === 1 : false,
    );
    if (!reserved) {
      errors.push(
        invalid(
          path.child('cpuManagerPolicy'),
          'static',
          'the static CPU manager policy needs kubeReserved.cpu or systemReserved.cpu greater than 0 (the kubelet refuses to start without)',
        ),
      );
    }
  }
  for (const name of ['imageGCHighThresholdPercent', 'imageGCLowThresholdPercent'] as const) {
    const value = config[name];
    if (value !== undefined && (value < 0 || value > 100)) {
      errors.push(invalid(path.child(name), value, 'value must be in [0,100]'));
    }
  }
  const high = config.imageGCHighThresholdPercent;
  const low = config.imageGCLowThresholdPercent;
  if (high !== undefined && low !== undefined && low >= high) {
    errors.push(
      forbidden(
        path.child('imageGCLowThresholdPercent'),
        'imageGCLowThresholdPercent must be less than imageGCHighThresholdPercent',
      ),
    );
  }
  if (config.containerLogMaxFiles !== undefined && config.containerLogMaxFiles < 2) {
    errors.push(invalid(path.child('containerLogMaxFiles'), config.containerLogMaxFiles, 'value must be >= 2.'));
  }
  for (const name of ['registryPullQPS', 'registryBurst', 'evictionMaxPodGracePeriod'] as const) {
    if (config[name] !== undefined) errors.push(...validateNonNegative(path.child(name), config[name]));
  }
  if (config.maxParallelImagePulls !== undefined) {
    if (config.maxParallelImagePulls < 1) {
      errors.push(invalid(path.child('maxParallelImagePulls'), config.maxParallelImagePulls, 'must be greater than 0'));
    } else if (config.serializeImagePulls === true && config.maxParallelImagePulls > 1) {
      errors.push(
        forbidden(
          path.child('maxParallelImagePulls'),
          'maxParallelImagePulls must not be set when serializeImagePulls is true',
        ),
      );
    }
  }
  const timeout = config.streamingConnectionIdleTimeout;
  const timeoutErrors =
    timeout === undefined ? [] : validateDuration(path.child('streamingConnectionIdleTimeout'), timeout);
  errors.push(...timeoutErrors);
  if (timeout !== undefined && timeoutErrors.length === 0) {
    const seconds = parseGoDuration(timeout)!;
    if (seconds < STREAMING_IDLE_TIMEOUT_SECONDS.min || seconds > STREAMING_IDLE_TIMEOUT_SECONDS.max) {
      errors.push(invalid(path.child('streamingConnectionIdleTimeout'), timeout, 'value must be between 30s and 4h'));
    }
  }
  for (const name of ['evictionPressureTransitionPeriod', 'imageMinimumGCAge', 'imageMaximumGCAge'] as const) {
    if (config[name] !== undefined) errors.push(...validateDuration(path.child(name), config[name]));
  }
  for (const name of ['evictionHard', 'evictionSoft'] as const) {
    for (const signal of EVICTION_SIGNALS) {
      const value = (config[name] as Record<string, string | undefined> | undefined)?.[signal];
      if (value !== undefined) errors.push(...validateQuantityOrPercent(path.child(name, signal), value));
    }
  }
  for (const signal of EVICTION_SIGNALS) {
    const grace = (config.evictionSoftGracePeriod as Record<string, string | undefined> | undefined)?.[signal];
    if (grace !== undefined) errors.push(...validateDuration(path.child('evictionSoftGracePeriod', signal), grace));
    const reclaim = (config.evictionMinimumReclaim as Record<string, string | number | undefined> | undefined)?.[
      signal
    ];
    if (reclaim !== undefined) {
      errors.push(...validateNonNegativeQuantity(path.child('evictionMinimumReclaim', signal), reclaim));
    }
  }
  for (const name of ['kubeReserved', 'systemReserved'] as const) {
    for (const [resource, value] of Object.entries(config[name] ?? {})) {
      errors.push(...validateNonNegativeQuantity(path.child(name, resource), value));
    }
  }
  if (config.containerLogMaxSize !== undefined) {
    errors.push(...validateNonNegativeQuantity(path.child('containerLogMaxSize'), config.containerLogMaxSize));
  }
  // Gardener reserves for the system through kubeReserved only.
  if (config.systemReserved !== undefined && atLeast(version, 31)) {
    errors.push(
      invalid(
        path.child('systemReserved'),
        config.systemReserved,
        'systemReserved is no longer supported by Gardener starting from Kubernetes 1.31',
      ),
    );
  }
  errors.push(...validateMemorySwap(config, path, version));
  return errors;
}

/** Swap, as Gardener allows it: not with `failSwapOn: true`, a behaviour only with the `NodeSwap` gate on. */
function validateMemorySwap(config: KubeletConfig, path: FieldPath, version: string | undefined): ErrorList {
  if (config.memorySwap === undefined) return [];
  const errors: ErrorList = [];
  const at = path.child('memorySwap');
  if (config.failSwapOn === true) {
    errors.push(
      forbidden(
        at,
        "configuring swap behaviour is not available when the kubelet is configured with 'FailSwapOn=true'",
      ),
    );
  }
  const behavior = config.memorySwap.swapBehavior;
  if (behavior !== undefined) {
    if (config.featureGates?.NodeSwap !== true) {
      errors.push(
        forbidden(at, "configuring swap behaviour is not available when kubelet's 'NodeSwap' feature gate is not set"),
      );
    }
    const supported: readonly string[] = atLeast(version, 30) ? SWAP_BEHAVIORS : SWAP_BEHAVIORS_BEFORE_1_30;
    if (!supported.includes(behavior)) errors.push(notSupported(at.child('swapBehavior'), behavior, supported));
  }
  return errors;
}
