/**
 * The kubelet of a provider-local machine, as the gardenlet and the machines agree on it: where the worker
 * OperatingSystemConfig carries the kubelet's configuration (Gardener's path), and the settings machines run with
 * where the Shoot says nothing. The gardenlet renders them into that file; a machine without one (`up`'s seed Nodes)
 * uses them as they are.
 */
import { labelValueErrors, qualifiedNameErrors } from '../../validation/object-meta.js';

/** Where Gardener's OperatingSystemConfig carries the kubelet's configuration file. */
export const KUBELET_CONFIG_FILE_PATH = '/var/lib/kubelet/config/kubelet';

/**
 * The labels the kubelet registers its Node with (its `--node-labels`, which its configuration file can't hold), one
 * `key=value` per line: the pool's `worker.gardener.cloud/pool`, by which the gardenlet finds a pool's Nodes, as
 * Gardener's kubelet unit sets it. They are a registration's: a Node registered already keeps the labels it has.
 */
export const KUBELET_NODE_LABELS_FILE_PATH = '/var/lib/kubelet/config/node-labels';

/** The labels of a node-labels file; throws on a line that is not `key=value` with a valid label key and value. */
export function parseNodeLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    const [key, value] = eq < 0 ? [line, undefined] : [line.slice(0, eq), line.slice(eq + 1)];
    const problems = value === undefined ? ['no "="'] : [...qualifiedNameErrors(key), ...labelValueErrors(value)];
    if (problems.length > 0) {
      throw new Error(
        `${KUBELET_NODE_LABELS_FILE_PATH}: line ${i + 1} (${JSON.stringify(line)}): ${problems.join('; ')}`,
      );
    }
    labels[key] = value!;
  }
  return labels;
}

/** A node-labels file's text for `labels`, keys sorted. */
export function nodeLabelsFile(labels: Readonly<Record<string, string>>): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}\n`)
    .join('');
}

/**
 * The most processes and threads of one pod where the Shoot says nothing (`podPidsLimit`): the machines share one
 * host's PIDs (`kernel.pid_max` is 32768 on a small host), so a fork bomb in a pod ends at its own limit, and its
 * machine's kubelet and containerd can still start threads.
 */
export const MACHINE_POD_PIDS_LIMIT = 2048;

/**
 * The most processes and threads of one pod on a seed Node (its kubelet's `podPidsLimit`, in `up` and the kind seeds
 * of hack/local/kind-up.sh): a machine pod with everything it runs for its shoot, so that no machine takes more than an
 * eighth of a small host's 32768 PIDs.
 */
export const SEED_POD_PIDS_LIMIT = 4096;

/**
 * What the machines run with where the Shoot says nothing. They share one host's memory, disk and PIDs: eviction
 * thresholds and image garbage collection of a real node would evict or collect on any busy host, and their images
 * are imported, never pulled, so there is nothing to garbage collect by age. They share its CPU too: the kubelet's
 * periodic work is upstream's (a full pod sync every minute, the Node's status computed every 10 s and written when it
 * changes, at least every minute; its Lease says it is alive every 10 s), which is what lets many shoots share a host.
 */
export const MACHINE_KUBELET_DEFAULTS = {
  maxPods: 110,
  podPidsLimit: MACHINE_POD_PIDS_LIMIT,
  evictionHard: { 'memory.available': '50Mi', 'nodefs.available': '1%', 'imagefs.available': '1%' },
  imageGCHighThresholdPercent: 100,
  imageGCLowThresholdPercent: 99,
  protectKernelDefaults: false,
  serializeImagePulls: false,
  failSwapOn: false,
  nodeStatusReportFrequency: '1m',
  nodeStatusUpdateFrequency: '10s',
  syncFrequency: '1m',
  fileCheckFrequency: '20s',
} as const;
