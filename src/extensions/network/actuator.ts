/**
 * What the calico Network extension makes of a Network, as pure functions: the rendered manifests in a Secret, the
 * ManagedResource `extension-networking-calico` that hands them to the shoot, and the Network's status.
 */
import { stringify } from 'yaml';
import type { Network } from '../../apis/extensions/v1alpha1/network.js';
import { errorString, type ErrorList } from '../../apis/field/index.js';
import type { LastOperation } from '../../apis/meta/schemas.js';
import { IP_FAMILIES, type IPFamily } from '../../net/cidr.js';
import { CALICO_TYPE } from './admission.js';
import { API_VERSION as CALICO_API_VERSION, decodeNetworkConfig } from './apis/config.js';
import { renderCalicoManifests, type CalicoChart, type ChartDefaults, type Manifest } from './manifests.js';
import { API_VERSION as MR_API_VERSION, KIND as MR_KIND, type ManagedResource } from './managedresource.js';
import { calicoValues, type CalicoValues, type ShootNetworking } from './values.js';

export const EXTENSION_TYPE = CALICO_TYPE;
export const MANAGED_RESOURCE_NAME = 'extension-networking-calico';
/** Gardener's name for the secret of a ManagedResource: `managedresource-<name>`. */
export const SECRET_NAME = `managedresource-${MANAGED_RESOURCE_NAME}`;
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'gardener-extension-networking-calico';

/** The Network's providerConfig is invalid; fixing the Network (not retrying) helps. */
export class InvalidProviderConfigError extends Error {
  override readonly name = 'InvalidProviderConfigError';
  constructor(readonly errors: ErrorList) {
    super(`invalid providerConfig: ${errors.map(errorString).join('; ')}`);
  }
}

/** A Secret as this extension writes it. */
export interface ManifestSecret {
  apiVersion: 'v1';
  kind: 'Secret';
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  type: 'Opaque';
  /** One base64-encoded YAML document per object. */
  data: Record<string, string>;
}

export interface NetworkResourcesOptions {
  /** See {@link CalicoValuesOptions.secondFamilyPodCIDR}. */
  readonly secondFamilyPodCIDR?: string;
  /** What the extension reads from the Network's Shoot. */
  readonly shoot?: ShootNetworking;
  /** Overrides of the chart defaults (images). */
  readonly chartValues?: Partial<ChartDefaults>;
  readonly chart?: CalicoChart;
}

export interface NetworkResources {
  readonly values: CalicoValues;
  readonly manifests: readonly Manifest[];
  readonly secret: ManifestSecret;
  readonly managedResource: ManagedResource;
  /** The families in effect, IPv4 before IPv6: what `status.ipFamilies` reports. */
  readonly ipFamilies: readonly IPFamily[];
}

/**
 * The objects the extension writes for `network` into its namespace. Throws InvalidProviderConfigError for an
 * invalid providerConfig, CalicoValuesError when families and ranges don't fit, ManifestError when rendering fails.
 */
export function desiredNetworkResources(network: Network, options: NetworkResourcesOptions = {}): NetworkResources {
  const { config, errors } = decodeNetworkConfig(network.spec.providerConfig, network.spec.ipFamilies);
  if (errors.length > 0) throw new InvalidProviderConfigError(errors);
  const values = calicoValues(network, config, {
    ...(options.secondFamilyPodCIDR !== undefined ? { secondFamilyPodCIDR: options.secondFamilyPodCIDR } : {}),
    ...(options.shoot !== undefined ? { shoot: options.shoot } : {}),
  });
  const manifests = renderCalicoManifests({ ...options.chartValues, ...values }, options.chart);
  const namespace = network.metadata.namespace ?? '';
  const labels = { [MANAGED_BY_LABEL]: MANAGED_BY };
  return {
    values,
    manifests,
    secret: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: SECRET_NAME, namespace, labels },
      type: 'Opaque',
      data: secretData(manifests),
    },
    managedResource: {
      apiVersion: MR_API_VERSION,
      kind: MR_KIND,
      metadata: { name: MANAGED_RESOURCE_NAME, namespace, labels },
      spec: { secretRefs: [{ name: SECRET_NAME }], keepObjects: false },
    },
    ipFamilies: IP_FAMILIES.filter((family) => values.ipFamilies.includes(family)),
  };
}

/**
 * The Secret data: one key per object, `<kind>__<namespace>__<name>.yaml` as Gardener's managed resource registry
 * names them (characters a Secret key can't hold become `_`), in the order of the manifests.
 */
export function secretData(manifests: readonly Manifest[]): Record<string, string> {
  const data: Record<string, string> = {};
  for (const manifest of manifests) {
    const key = secretDataKey(manifest);
    if (key in data) throw new Error(`two manifests map to the secret key ${key}`);
    data[key] = Buffer.from(stringify(manifest, { lineWidth: 0 }), 'utf8').toString('base64');
  }
  return data;
}

export function secretDataKey(manifest: Manifest): string {
  const raw = `${manifest.kind.toLowerCase()}__${manifest.metadata.namespace ?? ''}__${manifest.metadata.name}.yaml`;
  return raw.replace(/[^-._a-zA-Z0-9]/g, '_');
}

export type OperationType = 'Create' | 'Reconcile' | 'Delete';

/** Delete while deleting; Create until the first success; Reconcile after (Gardener's rule). */
export function operationType(network: Network): OperationType {
  if (network.metadata.deletionTimestamp) return 'Delete';
  const last = network.status?.lastOperation;
  return !last || (last.type === 'Create' && last.state !== 'Succeeded') ? 'Create' : 'Reconcile';
}

/** What a reconcile of a Network ended with. */
export type NetworkOutcome =
  | { readonly state: 'Succeeded'; readonly ipFamilies: readonly IPFamily[]; readonly description: string }
  | { readonly state: 'Processing'; readonly progress: number; readonly description: string }
  | { readonly state: 'Error'; readonly description: string; readonly codes?: readonly string[] };

/** `status.providerStatus` of a reconciled Network, as networking-calico writes it (it has no fields). */
export const NETWORK_STATUS = { apiVersion: CALICO_API_VERSION, kind: 'NetworkStatus' } as const;

/**
 * The status merge patch for an outcome at time `now` (ms since the epoch): lastOperation, observedGeneration,
 * `ipFamilies` and `providerStatus` on success (IPv4 before IPv6), lastError set on Error and cleared (null) on
 * success.
 */
export function networkStatusPatch(network: Network, outcome: NetworkOutcome, now: number): Record<string, unknown> {
  const lastUpdateTime = new Date(now).toISOString().replace(/\.\d+Z$/, 'Z');
  const type = operationType(network);
  const progress = outcome.state === 'Succeeded' ? 100 : outcome.state === 'Processing' ? outcome.progress : 50;
  const lastOperation: LastOperation = {
    type,
    state: outcome.state,
    progress,
    description: outcome.description,
    lastUpdateTime,
  };
  const status: Record<string, unknown> = { lastOperation, observedGeneration: network.metadata.generation };
  if (outcome.state === 'Succeeded') {
    status.ipFamilies = IP_FAMILIES.filter((family) => outcome.ipFamilies.includes(family));
    status.providerStatus = NETWORK_STATUS;
    status.lastError = null;
  } else if (outcome.state === 'Error') {
    status.lastError = {
      description: outcome.description,
      ...(outcome.codes && outcome.codes.length > 0 ? { codes: [...outcome.codes] } : {}),
      lastUpdateTime,
    };
  }
  return status;
}
