import { describe, expect, it } from 'vitest';
import {
  KUBELET_KERNEL_DEFAULTS,
  kubeletHostProblems,
  procHostKernel,
  type HostKernel,
} from '../../../../src/extensions/provider-local/machine/kubelet-host.js';

function host(values: Record<string, string>, swap = false): HostKernel {
  return { sysctl: (key) => values[key], swapOn: () => swap };
}

const FIELD = 'spec.pools[0].kubeletConfig';

describe('what a kubelet configuration asks of the host', () => {
  it('nothing for protectKernelDefaults when the host has the values the kubelet checks', () => {
    expect(kubeletHostProblems({ protectKernelDefaults: true }, host({ ...KUBELET_KERNEL_DEFAULTS }), FIELD)).toEqual(
      [],
    );
  });

  it('names the field and every kernel parameter that differs when protectKernelDefaults is true', () => {
    const kernel = host({ ...KUBELET_KERNEL_DEFAULTS, 'kernel.panic': '0', 'vm.overcommit_memory': '0' });
    expect(kubeletHostProblems({ protectKernelDefaults: true }, kernel, FIELD)).toEqual([
      `${FIELD}.protectKernelDefaults: true, but the host's kernel has vm.overcommit_memory = 0 (needs 1), ` +
        `kernel.panic = 0 (needs 10): the kubelet would refuse to start, and a machine can't set host-wide ` +
        `kernel parameters (set them on the host, or leave protectKernelDefaults false)`,
    ]);
    // With false the kubelet sets them itself: nothing to refuse.
    expect(kubeletHostProblems({ protectKernelDefaults: false }, kernel, FIELD)).toEqual([]);
    expect(kubeletHostProblems(undefined, kernel, FIELD)).toEqual([]);
  });

  it('refuses failSwapOn on a host with swap', () => {
    expect(kubeletHostProblems({ failSwapOn: true }, host({}, true), FIELD)).toEqual([
      `${FIELD}.failSwapOn: true, but the host has swap on: the kubelet would refuse to start, and a machine ` +
        `can't turn the host's swap off`,
    ]);
    expect(kubeletHostProblems({ failSwapOn: true }, host({}, false), FIELD)).toEqual([]);
  });

  it("reads this host's kernel parameters", () => {
    expect(procHostKernel.sysctl('kernel.panic')).toMatch(/^-?\d+$/);
    expect(procHostKernel.sysctl('no.such.parameter')).toBeUndefined();
    expect(typeof procHostKernel.swapOn()).toBe('boolean');
  });
});
