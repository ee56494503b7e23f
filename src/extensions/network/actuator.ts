/**
 * What the calico Network extension makes of a Network, as pure functions: the rendered manifests in a Secret, the
 * ManagedResource `extension-networking-calico` that hands them to the shoot, and the Network's status.
 */
import { managedResourceObjects, type ManifestSecret } from '../../apis/resources/v1alpha1/manifests.js';
import type { Network } from '../../apis/extensions/v1alpha1/network.js';
import { errorString, type ErrorList } from '../../apis/field/index.js';
import { IP_FAMILIES, type IPFamily } from '../../net/cidr.js';
import { extensionStatusPatch } from '../common/status.js';
import { CALICO_TYPE } from '../../apis/calico/v1alpha1/config.js';
import { API_VERSION as CALICO_API_VERSION, decodeNetworkConfig } from '../../apis/calico/v1alpha1/config.js';
import { renderCalicoManifests, type CalicoChart, type ChartDefaults, type Manifest } from './manifests.js';
import type { ManagedResource } from '../../apis/resources/v1alpha1/managedresource.js';
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
export type { ManifestSecret } from '../../apis/resources/v1alpha1/manifests.js';

export interface NetworkResourcesOptions {
  /** See {@link CalicoValuesOptions.secondFamilyPodCIDR}. */
  readonly secondFamilyPodCIDR?: string;
  /** What the extension reads from the Network's Shoot. */
  readonly shoot?: ShootNetworking;
  /** Overrides of the chart defaults (images). */
  readonly chartValues?: Partial<ChartDefaults>;
  readonly chart?: CalicoChart;
  /**
   * The images the shoot's machines can run; workloads with any other image are withheld from the ManagedResource
   * and reported. @default every image is available
   */
  readonly availableImages?: readonly string[];
}

/** A workload of the manifests that is not handed to the shoot, and the images it lacks. */
export interface WithheldWorkload {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly images: readonly string[];
}

export interface NetworkResources {
  readonly values: CalicoValues;
  readonly manifests: readonly Manifest[];
  readonly secret: ManifestSecret;
  readonly managedResource: ManagedResource;
  /** The families in effect, IPv4 before IPv6: what `status.ipFamilies` reports. */
  readonly ipFamilies: readonly IPFamily[];
  /** Workloads left out because the machines can't run their images (see `availableImages`). */
  readonly withheld: readonly WithheldWorkload[];
}

const WORKLOAD_KINDS = new Set(['DaemonSet', 'Deployment', 'StatefulSet', 'Job', 'CronJob', 'Pod']);

/** The images of a workload's pod template (containers and init containers). */
export function workloadImages(manifest: Manifest): string[] {
  const spec = manifest as {
    spec?: {
      template?: { spec?: PodSpecImages };
      jobTemplate?: { spec?: { template?: { spec?: PodSpecImages } } };
    } & PodSpecImages;
  };
  const pod =
    manifest.kind === 'Pod' ? spec.spec : (spec.spec?.template?.spec ?? spec.spec?.jobTemplate?.spec?.template?.spec);
  return [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])].map((c) => c.image ?? '').filter(Boolean);
}

interface PodSpecImages {
  containers?: { image?: string }[];
  initContainers?: { image?: string }[];
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
  const rendered = renderCalicoManifests({ ...options.chartValues, ...values }, options.chart);
  const available = options.availableImages !== undefined ? new Set(options.availableImages) : undefined;
  const withheld: WithheldWorkload[] = [];
  const manifests = rendered.filter((m) => {
    if (available === undefined || !WORKLOAD_KINDS.has(m.kind)) return true;
    const missing = [...new Set(workloadImages(m).filter((image) => !available.has(image)))];
    if (missing.length === 0) return true;
    withheld.push({ kind: m.kind, namespace: m.metadata.namespace ?? '', name: m.metadata.name, images: missing });
    return false;
  });
  const { secret, managedResource } = managedResourceObjects(
    network.metadata.namespace ?? '',
    MANAGED_RESOURCE_NAME,
    manifests,
    { [MANAGED_BY_LABEL]: MANAGED_BY },
  );
  return {
    values,
    manifests,
    secret,
    managedResource: managedResource as ManagedResource,
    ipFamilies: IP_FAMILIES.filter((family) => values.ipFamilies.includes(family)),
    withheld,
  };
}

/** The Secret data of the ManagedResource (the resource manager's registry format). */
export {
  manifestSecretData as secretData,
  manifestSecretKey as secretDataKey,
} from '../../apis/resources/v1alpha1/manifests.js';

/** What a reconcile of a Network ended with. */
export type NetworkOutcome =
  | {
      readonly state: 'Succeeded';
      readonly ipFamilies: readonly IPFamily[];
      readonly description: string;
      /** The health of what the extension hands to the shoot: `status.conditions` SystemComponentsHealthy. */
      readonly health?: ComponentsHealth;
    }
  | { readonly state: 'Processing'; readonly progress: number; readonly description: string }
  | { readonly state: 'Error'; readonly description: string; readonly codes?: readonly string[] };

/** SystemComponentsHealthy of a Network: its ManagedResource's health, False while workloads are withheld. */
export interface ComponentsHealth {
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
}

export const CONDITION_SYSTEM_COMPONENTS_HEALTHY = 'SystemComponentsHealthy';

/** The health to report: withheld workloads first (they never run), else the ManagedResource's ResourcesHealthy. */
export function componentsHealth(
  withheld: readonly WithheldWorkload[],
  resourcesHealthy: { status?: string; reason?: string; message?: string } | undefined,
): ComponentsHealth {
  if (withheld.length > 0) {
    const list = withheld.map((w) => `${w.kind} ${w.namespace}/${w.name} (${w.images.join(', ')})`).join(', ');
    return {
      status: 'False',
      reason: 'ComponentsNotDeployed',
      message: `not deployed, their images are not available to the shoot's machines: ${list}`,
    };
  }
  if (resourcesHealthy?.status === 'True' || resourcesHealthy?.status === 'False') {
    return {
      status: resourcesHealthy.status,
      reason: resourcesHealthy.reason ?? 'ResourcesHealthy',
      message: resourcesHealthy.message ?? '',
    };
  }
  return {
    status: 'Unknown',
    reason: 'ResourcesPending',
    message: `ManagedResource ${MANAGED_RESOURCE_NAME} not checked yet`,
  };
}

/** `status.providerStatus` of a reconciled Network, as networking-calico writes it (it has no fields). */
export const NETWORK_STATUS = { apiVersion: CALICO_API_VERSION, kind: 'NetworkStatus' } as const;

/**
 * The status merge patch for an outcome at time `now` (ms since the epoch): lastOperation, observedGeneration,
 * `ipFamilies` and `providerStatus` on success (IPv4 before IPv6), lastError set on Error and cleared (null) on
 * success.
 */
export function networkStatusPatch(network: Network, outcome: NetworkOutcome, now: number): Record<string, unknown> {
  const common = extensionStatusPatch(network, outcome, now);
  const status: Record<string, unknown> = common;
  if (outcome.state !== 'Succeeded') return status;
  status.ipFamilies = IP_FAMILIES.filter((family) => outcome.ipFamilies.includes(family));
  status.providerStatus = NETWORK_STATUS;
  if (outcome.health !== undefined) {
    const { lastUpdateTime } = common.lastOperation;
    const previous = network.status?.conditions?.find((c) => c.type === CONDITION_SYSTEM_COMPONENTS_HEALTHY);
    const others = (network.status?.conditions ?? []).filter((c) => c.type !== CONDITION_SYSTEM_COMPONENTS_HEALTHY);
    status.conditions = [
      ...others,
      {
        type: CONDITION_SYSTEM_COMPONENTS_HEALTHY,
        ...outcome.health,
        lastTransitionTime:
          previous?.status === outcome.health.status && previous.lastTransitionTime
            ? previous.lastTransitionTime
            : lastUpdateTime,
        lastUpdateTime,
      },
    ];
  }
  return status;
}
