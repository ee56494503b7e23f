/**
 * The kubelet configuration of a worker pool's machines, as Gardener's OperatingSystemConfig component renders it
 * (the file `/var/lib/kubelet/config/kubelet` of the pool's OSC): the Shoot's kubelet settings (the pool's
 * `kubernetes.kubelet` when it has one, else `spec.kubernetes.kubelet`, as Gardener's
 * `CalculateEffectiveKubeletConfiguration`) mapped onto a `KubeletConfiguration`, over defaults for machines that
 * share a host. What only the machine can know (its paths, addresses, cgroup and runtime settings, the cluster DNS
 * it was given) it sets itself (provider-local's machine config.ts).
 */
import type { KubeletConfig, Shoot, Worker } from '../../../apis/core/v1beta1/shoot.js';
import { MACHINE_KUBELET_DEFAULTS } from '../../../apis/provider-local/v1alpha1/kubelet.js';
/** The unit the node agent restarts when the kubelet's file changed. */
export const KUBELET_UNIT = 'kubelet.service';

/** The pool's kubelet settings: its own when it has them (they replace the shoot's as a whole), else the shoot's. */
export function effectiveKubeletConfig(shoot: Shoot, worker: Worker | undefined): KubeletConfig | undefined {
  return worker?.kubernetes?.kubelet ?? shoot.spec.kubernetes?.kubelet;
}

/** Gardener's eviction signal fields and the kubelet's names of them. */
const EVICTION_SIGNALS: Readonly<Record<string, string>> = {
  memoryAvailable: 'memory.available',
  imageFSAvailable: 'imagefs.available',
  imageFSInodesFree: 'imagefs.inodesFree',
  nodeFSAvailable: 'nodefs.available',
  nodeFSInodesFree: 'nodefs.inodesFree',
};

/** Gardener's grace period of a soft eviction threshold nobody gave one (the kubelet refuses one without). */
const DEFAULT_EVICTION_SOFT_GRACE_PERIOD = '1m30s';

function evictionMap(values: Readonly<Record<string, unknown>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [field, value] of Object.entries(values ?? {})) {
    const signal = EVICTION_SIGNALS[field];
    if (signal !== undefined && value !== undefined) out[signal] = String(value);
  }
  return out;
}

function reservedMap(values: KubeletConfig['kubeReserved']): Record<string, string> {
  const names: Readonly<Record<string, string>> = {
    cpu: 'cpu',
    memory: 'memory',
    ephemeralStorage: 'ephemeral-storage',
    pid: 'pid',
  };
  const out: Record<string, string> = {};
  for (const [field, value] of Object.entries(values ?? {}))
    if (value !== undefined) out[names[field]!] = String(value);
  return out;
}

/** Only the keys whose value is set. */
function defined(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined));
}

/**
 * The `KubeletConfiguration` (kubelet.config.k8s.io/v1beta1) of the settings, with the machines' defaults for what
 * they leave out. Eviction thresholds are merged per signal over the defaults, as Gardener does; a soft threshold
 * without a grace period gets Gardener's 1m30s.
 */
export function kubeletConfiguration(config: KubeletConfig | undefined): Record<string, unknown> {
  const c = config ?? {};
  const evictionSoft = evictionMap(c.evictionSoft);
  const softGrace = {
    ...Object.fromEntries(Object.keys(evictionSoft).map((signal) => [signal, DEFAULT_EVICTION_SOFT_GRACE_PERIOD])),
    ...evictionMap(c.evictionSoftGracePeriod),
  };
  const evictionMinimumReclaim = evictionMap(c.evictionMinimumReclaim);
  const kubeReserved = reservedMap(c.kubeReserved);
  const systemReserved = reservedMap(c.systemReserved);
  return {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    // As Gardener's kubelets: the kubelet API (logs, exec) authenticates clients by a certificate of the cluster's
    // CA or a token the API server vouches for, and asks the API server whether each may do what it asks.
    authentication: { anonymous: { enabled: false }, webhook: { enabled: true } },
    authorization: { mode: 'Webhook' },
    readOnlyPort: 0,
    ...MACHINE_KUBELET_DEFAULTS,
    evictionHard: { ...MACHINE_KUBELET_DEFAULTS.evictionHard, ...evictionMap(c.evictionHard) },
    ...defined({
      maxPods: c.maxPods,
      podPidsLimit: c.podPidsLimit,
      failSwapOn: c.failSwapOn,
      memorySwap: c.memorySwap?.swapBehavior !== undefined ? { swapBehavior: c.memorySwap.swapBehavior } : undefined,
      seccompDefault: c.seccompDefault,
      protectKernelDefaults: c.protectKernelDefaults,
      streamingConnectionIdleTimeout: c.streamingConnectionIdleTimeout,
      imageGCHighThresholdPercent: c.imageGCHighThresholdPercent,
      imageGCLowThresholdPercent: c.imageGCLowThresholdPercent,
      imageMinimumGCAge: c.imageMinimumGCAge,
      imageMaximumGCAge: c.imageMaximumGCAge,
      serializeImagePulls: c.serializeImagePulls,
      maxParallelImagePulls: c.maxParallelImagePulls,
      registryPullQPS: c.registryPullQPS,
      registryBurst: c.registryBurst,
      cpuManagerPolicy: c.cpuManagerPolicy,
      cpuCFSQuota: c.cpuCFSQuota,
      kubeReserved: Object.keys(kubeReserved).length > 0 ? kubeReserved : undefined,
      systemReserved: Object.keys(systemReserved).length > 0 ? systemReserved : undefined,
      evictionSoft: Object.keys(evictionSoft).length > 0 ? evictionSoft : undefined,
      evictionSoftGracePeriod: Object.keys(softGrace).length > 0 ? softGrace : undefined,
      evictionMinimumReclaim: Object.keys(evictionMinimumReclaim).length > 0 ? evictionMinimumReclaim : undefined,
      evictionPressureTransitionPeriod: c.evictionPressureTransitionPeriod,
      evictionMaxPodGracePeriod: c.evictionMaxPodGracePeriod,
      containerLogMaxSize: c.containerLogMaxSize !== undefined ? String(c.containerLogMaxSize) : undefined,
      containerLogMaxFiles: c.containerLogMaxFiles,
      singleProcessOOMKill: c.singleProcessOOMKill,
      featureGates: c.featureGates !== undefined && Object.keys(c.featureGates).length > 0 ? c.featureGates : undefined,
      imagePullCredentialsVerificationPolicy: c.imagePullCredentialsVerificationPolicy,
      preloadedImagesVerificationAllowlist: c.preloadedImagesVerificationAllowlist,
    }),
  };
}
