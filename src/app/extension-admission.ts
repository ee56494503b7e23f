/**
 * The extensions' admission in the admission pipeline (src/apis/admission.ts), as Gardener runs each extension's
 * webhook beside its own: the calico providerConfig of Shoots and Networks of type `calico`; provider-local's
 * ranges, machines (with the installation's other shoots) and worker sysctls of Shoots and Seeds of type `local`.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ExtensionAdmission } from '../apis/admission.js';
import type { Seed } from '../apis/core/v1beta1/seed.js';
import type { Shoot } from '../apis/core/v1beta1/shoot.js';
import type { Network } from '../apis/extensions/v1alpha1/network.js';
import { Networks, Seeds, Shoots } from '../apis/registry.js';
import { validateCalicoNetwork, validateCalicoShoot } from '../extensions/network/admission.js';
import {
  DEFAULT_LOCAL_ADMISSION_CONFIG,
  validateLocalSeed,
  validateLocalShoot,
  type LocalAdmissionConfig,
} from '../extensions/provider-local/admission.js';

/**
 * The extensions' admission, provider-local's against `providerLocal` and the installation's Shoots as
 * `storedShoots` returns them at each review (the webhook's cache). Without it (the CLI) the machines of all shoots
 * together are not checked.
 */
export function extensionAdmission(
  providerLocal: LocalAdmissionConfig = DEFAULT_LOCAL_ADMISSION_CONFIG,
  storedShoots?: () => readonly KubernetesObject[],
): ExtensionAdmission {
  return (kind, object, old) => {
    if (kind === Shoots) {
      const stored = storedShoots ? { shoots: storedShoots(), ...(old ? { old: old as Shoot } : {}) } : {};
      return [...validateCalicoShoot(object as Shoot), ...validateLocalShoot(object as Shoot, providerLocal, stored)];
    }
    if (kind === Seeds) return validateLocalSeed(object as Seed, providerLocal);
    if (kind === Networks) return validateCalicoNetwork(object as Network);
    return [];
  };
}
