/**
 * The calico extension's admission, as gardener-extension-admission-calico does it for Shoots of type `calico`: the
 * providerConfig must decode and validate for the shoot's IP families (the same function the extension and
 * `render` call), and kube-proxy may only be off with the eBPF dataplane. Networks of type `calico` get the
 * providerConfig check under `spec.providerConfig`.
 */
import { shootIPFamilies } from '../../apis/core/v1beta1/helpers.js';
import type { Shoot } from '../../apis/core/v1beta1/shoot.js';
import type { Network } from '../../apis/extensions/v1alpha1/network.js';
import { FieldPath, forbidden, type ErrorList } from '../../apis/field/index.js';
import {
  CALICO_TYPE,
  decodeNetworkConfig,
  NETWORK_PROVIDER_CONFIG_PATH,
  SHOOT_PROVIDER_CONFIG_PATH,
  validateNetworkConfig,
} from '../../apis/calico/v1alpha1/config.js';
import { kubeProxyOf, shootNetworkingOf } from './cluster.js';
import { KUBE_PROXY_WITHOUT_EBPF, kubeProxyNeedsEBPF } from './values.js';

/** The calico field errors of a Shoot; none for Shoots of another networking type. */
export function validateCalicoShoot(shoot: Shoot): ErrorList {
  const networking = shoot.spec.networking;
  if (networking?.type !== CALICO_TYPE) return [];
  const { config, errors } = decodeNetworkConfig(
    networking.providerConfig,
    shootIPFamilies(shoot),
    SHOOT_PROVIDER_CONFIG_PATH,
  );
  if (config && kubeProxyOf(shoot) && kubeProxyNeedsEBPF(config, shootNetworkingOf(shoot))) {
    errors.push(forbidden(FieldPath.root('spec', 'kubernetes', 'kubeProxy', 'enabled'), KUBE_PROXY_WITHOUT_EBPF));
  }
  return errors;
}

/** The calico field errors of a Network; none for Networks of another type. */
export function validateCalicoNetwork(network: Network): ErrorList {
  if (network.spec.type !== CALICO_TYPE) return [];
  return validateNetworkConfig(network.spec.providerConfig, network.spec.ipFamilies, NETWORK_PROVIDER_CONFIG_PATH);
}
