/**
 * What a kubelet configuration asks of the host, where the machines can't provide it: a machine is a set of
 * namespaces on a shared kernel, not a VM, so host-wide kernel parameters and swap are the host's.
 *
 * - `protectKernelDefaults: true`: the kubelet refuses to start unless these kernel parameters have the values it
 *   wants (`setupKernelTunables` of its container manager); with `false` it sets them itself.
 * - `failSwapOn: true`: the kubelet refuses to start when the host has swap on.
 */
import { readFileSync } from 'node:fs';

/** The kernel parameters the kubelet checks (k8s.io/component-helpers/node/util/sysctl) and the values it wants. */
export const KUBELET_KERNEL_DEFAULTS: Readonly<Record<string, string>> = {
  'vm.overcommit_memory': '1',
  'vm.panic_on_oom': '0',
  'kernel.panic': '10',
  'kernel.panic_on_oops': '1',
  'kernel.keys.root_maxkeys': '1000000',
  'kernel.keys.root_maxbytes': '25000000',
};

export interface HostKernel {
  /** A kernel parameter's value, undefined when it can't be read. */
  sysctl(key: string): string | undefined;
  /** Whether the host has any swap on. */
  swapOn(): boolean;
}

/** The host this process runs on: its /proc. */
export const procHostKernel: HostKernel = {
  sysctl(key) {
    try {
      return readFileSync(`/proc/sys/${key.replace(/\./g, '/')}`, 'utf8').trim();
    } catch {
      return undefined;
    }
  },
  swapOn() {
    try {
      return readFileSync('/proc/swaps', 'utf8').trim().split('\n').length > 1;
    } catch {
      return false;
    }
  },
};

/**
 * Why a kubelet with these settings would not start on this host, one line per setting, each naming the field under
 * `field` (e.g. `spec.pools[0].kubeletConfig`); empty when it would.
 */
export function kubeletHostProblems(
  config: { protectKernelDefaults?: unknown; failSwapOn?: unknown } | undefined,
  host: HostKernel,
  field: string,
): string[] {
  const problems: string[] = [];
  if (config?.protectKernelDefaults === true) {
    const wrong = Object.entries(KUBELET_KERNEL_DEFAULTS).flatMap(([key, want]) => {
      const have = host.sysctl(key);
      return have === want ? [] : [`${key} = ${have ?? '(unreadable)'} (needs ${want})`];
    });
    if (wrong.length > 0) {
      problems.push(
        `${field}.protectKernelDefaults: true, but the host's kernel has ${wrong.join(', ')}: the kubelet would ` +
          `refuse to start, and a machine can't set host-wide kernel parameters (set them on the host, or leave ` +
          `protectKernelDefaults false)`,
      );
    }
  }
  if (config?.failSwapOn === true && host.swapOn()) {
    problems.push(
      `${field}.failSwapOn: true, but the host has swap on: the kubelet would refuse to start, and a machine ` +
        `can't turn the host's swap off`,
    );
  }
  return problems;
}
