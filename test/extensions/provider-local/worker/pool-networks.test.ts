import { describe, expect, it } from 'vitest';
import { MACHINE_FAMILIES_ANNOTATION } from '../../../../src/apis/provider-local/v1alpha1/machine-user-data.js';
import type { Worker } from '../../../../src/apis/extensions/v1alpha1/worker.js';
import {
  machineFamiliesOf,
  workerMachineNetworks,
} from '../../../../src/extensions/provider-local/worker/pool-networks.js';
import type { MachineLayout } from '../../../../src/extensions/provider-local/worker/pool-plan.js';

const worker = (families?: string): Worker =>
  ({
    apiVersion: 'extensions.gardener.cloud/v1alpha1',
    kind: 'Worker',
    metadata: {
      name: 'a',
      namespace: 'shoot--p--a',
      ...(families ? { annotations: { [MACHINE_FAMILIES_ANNOTATION]: families } } : {}),
    },
    spec: { type: 'local', region: 'local', pools: [] },
  }) as unknown as Worker;

/** A shoot migrating to dual-stack: its Cluster has both families already. */
const layout: MachineLayout = {
  hibernated: false,
  nodes: '10.10.0.0/16',
  nodeCIDRs: ['10.10.0.0/16', 'fd00:fe::/64'],
  podCIDRs: ['10.3.0.0/16', 'fd00:10:3::/56'],
  resources: new Map(),
  offsets: new Map(),
};

describe("the networks a Worker's machines are built with", () => {
  it("are of the families the gardenlet wrote the user data with, not yet the shoot's new one", () => {
    expect(workerMachineNetworks(worker('IPv4'), layout)).toEqual({
      nodeCIDRs: ['10.10.0.0/16'],
      podCIDRs: ['10.3.0.0/16'],
    });
    expect(workerMachineNetworks(worker('IPv4,IPv6'), layout)).toEqual({
      nodeCIDRs: ['10.10.0.0/16', 'fd00:fe::/64'],
      podCIDRs: ['10.3.0.0/16', 'fd00:10:3::/56'],
    });
  });

  it("are the shoot's without the annotation, or with one that is not a family list", () => {
    for (const w of [worker(), worker('IPv5'), worker('IPv4,IPv4'), worker('IPv4,IPv6,IPv4'), worker('')]) {
      expect(machineFamiliesOf(w)).toBeUndefined();
      expect(workerMachineNetworks(w, layout)).toBe(layout);
    }
    expect(machineFamiliesOf(worker(' IPv6 , IPv4 '))).toEqual(['IPv6', 'IPv4']);
  });
});
