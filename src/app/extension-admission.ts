/**
 * The extensions' admission in the admission pipeline (src/apis/admission.ts), as Gardener runs each extension's
 * webhook beside its own: the calico providerConfig of Shoots and Networks of type `calico`; provider-local's
 * ranges, machines and worker sysctls of Shoots and Seeds of type `local`.
 */
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

/** The extensions' admission, provider-local's against `providerLocal`. */
export function extensionAdmission(
  providerLocal: LocalAdmissionConfig = DEFAULT_LOCAL_ADMISSION_CONFIG,
): ExtensionAdmission {
  return (kind, object) => {
    if (kind === Shoots) {
      return [...validateCalicoShoot(object as Shoot), ...validateLocalShoot(object as Shoot, providerLocal)];
    }
    if (kind === Seeds) return validateLocalSeed(object as Seed, providerLocal);
    if (kind === Networks) return validateCalicoNetwork(object as Network);
    return [];
  };
}
