/**
 * The CloudProfile `local`: what provider-local offers Shoots, as Gardener's local setup has it
 * (example/provider-local/garden/cloudprofile): the Kubernetes version the machines and control planes run (the
 * pinned binaries'), two machine types and the machine image `local` 1.0.0. `up` creates it; the kind path applies
 * examples/cloudprofile-local.yaml, which a test keeps equal to it.
 */
import type { CloudProfile } from '../../apis/core/v1beta1/cloudprofile.js';
import { API_VERSION } from '../../apis/core/v1beta1/shoot.js';
import { KUBERNETES_VERSION } from '../../imagevector/images.js';

export const PROVIDER_TYPE = 'local';
export const CLOUD_PROFILE_NAME = 'local';
export const REGION = 'local';
export const MACHINE_TYPE = 'local';
/**
 * A machine of two CPUs, for pods whose CPU limit is above one: on a cgroup v1 host a container can't have a CFS quota
 * above its machine's (the kernel refuses a nested quota above an ancestor's, where cgroup v2 caps it).
 */
export const MACHINE_TYPE_2CPU = 'local-2cpu';
export const MACHINE_IMAGE = { name: 'local', version: '1.0.0' } as const;

/** The Kubernetes version of the pinned binaries, as a CloudProfile lists it (`1.37.1`). */
export const LOCAL_KUBERNETES_VERSION = KUBERNETES_VERSION.replace(/^v/, '');

/** The zones of the region `local`: labels of the machines, which all run on the seed's Nodes. */
export const LOCAL_ZONES = ['0', '1', '2'] as const;

export function localCloudProfile(): CloudProfile {
  return {
    apiVersion: API_VERSION,
    kind: 'CloudProfile',
    metadata: { name: CLOUD_PROFILE_NAME },
    spec: {
      type: PROVIDER_TYPE,
      // Zones as Gardener's provider-local names them: a pool's machines are spread over those it lists.
      regions: [{ name: REGION, zones: LOCAL_ZONES.map((name) => ({ name })) }],
      kubernetes: { versions: [{ version: LOCAL_KUBERNETES_VERSION }] },
      // A machine is a network namespace of its seed Node, not a VM: these figures are nominal, as Gardener's.
      machineTypes: [
        { name: MACHINE_TYPE, cpu: '1', gpu: '0', memory: '8Gi' },
        { name: MACHINE_TYPE_2CPU, cpu: '2', gpu: '0', memory: '8Gi' },
      ],
      machineImages: [
        { name: MACHINE_IMAGE.name, versions: [{ version: MACHINE_IMAGE.version, cri: [{ name: 'containerd' }] }] },
      ],
    },
  };
}
