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
  type InstallationMachines,
  type LocalAdmissionConfig,
  type StoredShoots,
} from '../extensions/provider-local/admission.js';

/**
 * The extensions' admission, provider-local's against `providerLocal` and the installation's Shoots: their machines
 * as a running total (the webhook's, kept by the Shoot cache's events), or the Shoots as a function returns them at
 * each review to be counted there. Without either (the CLI) the machines of all shoots together are not checked.
 */
export function extensionAdmission(
  providerLocal: LocalAdmissionConfig = DEFAULT_LOCAL_ADMISSION_CONFIG,
  storedShoots?: InstallationMachines | (() => readonly KubernetesObject[]),
): ExtensionAdmission {
  return (kind, object, old) => {
    if (kind === Shoots) {
      const stored: StoredShoots =
        storedShoots === undefined
          ? {}
          : {
              ...(typeof storedShoots === 'function' ? { shoots: storedShoots() } : { machines: storedShoots }),
              ...(old ? { old: old as Shoot } : {}),
            };
      return [...validateCalicoShoot(object as Shoot), ...validateLocalShoot(object as Shoot, providerLocal, stored)];
    }
    if (kind === Seeds) return validateLocalSeed(object as Seed, providerLocal);
    if (kind === Networks) return validateCalicoNetwork(object as Network);
    return [];
  };
}
