/**
 * The kubelet of a provider-local machine, as the gardenlet and the machines agree on it: where the worker
 * OperatingSystemConfig carries the kubelet's configuration (Gardener's path), and the settings machines run with
 * where the Shoot says nothing. The gardenlet renders them into that file; a machine without one (`up`'s seed Nodes)
 * uses them as they are.
 */

/** Where Gardener's OperatingSystemConfig carries the kubelet's configuration file. */
export const KUBELET_CONFIG_FILE_PATH = '/var/lib/kubelet/config/kubelet';

/**
 * What the machines run with where the Shoot says nothing. They share one host's memory and disk: eviction
 * thresholds and image garbage collection of a real node would evict or collect on any busy host, and their images
 * are imported, never pulled, so there is nothing to garbage collect by age.
 */
export const MACHINE_KUBELET_DEFAULTS = {
  maxPods: 110,
  evictionHard: { 'memory.available': '50Mi', 'nodefs.available': '1%', 'imagefs.available': '1%' },
  imageGCHighThresholdPercent: 100,
  imageGCLowThresholdPercent: 99,
  protectKernelDefaults: false,
  serializeImagePulls: false,
  failSwapOn: false,
  nodeStatusReportFrequency: '10s',
  nodeStatusUpdateFrequency: '5s',
  syncFrequency: '10s',
  fileCheckFrequency: '20s',
} as const;
