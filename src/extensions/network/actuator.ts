/**
 * The calico Network extension's actuator. What it makes of a Network, as pure functions: the rendered manifests in a
 * Secret, the ManagedResource `extension-networking-calico` that hands them to the shoot, and the Network's status;
 * and the actuator that writes them (CalicoNetworkActuator). Deletion removes the ManagedResource, waits until it is
 * gone (a resource manager may hold it with its own finalizer while it cleans up the shoot), then removes the Secret.
 * The generic part (finalizer, status, retries) is the extension reconciler's (src/extensions/common/reconciler.ts).
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { managedResourceObjects, type ManifestSecret } from '../../apis/resources/v1alpha1/manifests.js';
import type { Network } from '../../apis/extensions/v1alpha1/network.js';
import { errorString, type ErrorList } from '../../apis/field/index.js';
import { Refs } from '../../apis/refs.js';
import { IP_FAMILIES, type IPFamily } from '../../net/cidr.js';
import type { ResourceClient } from '../../runtime/client.js';
import { TerminalError, type ReconcileContext } from '../../runtime/controller.js';
import type { Actuator, ActuatorOutcome } from '../common/reconciler.js';
import { ERR_CONFIGURATION_PROBLEM } from '../common/status.js';
import { CALICO_TYPE } from '../../apis/calico/v1alpha1/config.js';
import { API_VERSION as CALICO_API_VERSION, decodeNetworkConfig } from '../../apis/calico/v1alpha1/config.js';
import { ClusterShootReader, type ShootNetworkingSource } from './cluster.js';
import { renderCalicoManifests, type CalicoChart, type ChartDefaults, type Manifest } from './manifests.js';
import type { ManagedResource } from '../../apis/resources/v1alpha1/managedresource.js';
import {
  calicoValues,
  CalicoValuesError,
  MissingPodCIDRError,
  type CalicoValues,
  type ShootNetworking,
} from './values.js';

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
  if (options.shoot?.nodesMigrating && (network.spec.ipFamilies?.length ?? 0) > 1) {
    network = { ...network, spec: { ...network.spec, ipFamilies: network.spec.ipFamilies!.slice(0, 1) } };
  }
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

/** What a Network reports of a success beside lastOperation: its families and the health of its components. */
export interface NetworkResult {
  readonly ipFamilies: readonly IPFamily[];
  readonly health?: ComponentsHealth;
}

/**
 * The Network's own status fields of a success at `lastUpdateTime` (lastOperation's): `ipFamilies` (IPv4 before
 * IPv6), `providerStatus`, and the SystemComponentsHealthy condition, whose transition time stays while its status
 * does.
 */
export function networkStatusFields(
  network: Network,
  result: NetworkResult,
  lastUpdateTime: string,
): Record<string, unknown> {
  const status: Record<string, unknown> = {
    ipFamilies: IP_FAMILIES.filter((family) => result.ipFamilies.includes(family)),
    providerStatus: NETWORK_STATUS,
  };
  if (result.health !== undefined) {
    const previous = network.status?.conditions?.find((c) => c.type === CONDITION_SYSTEM_COMPONENTS_HEALTHY);
    const others = (network.status?.conditions ?? []).filter((c) => c.type !== CONDITION_SYSTEM_COMPONENTS_HEALTHY);
    status.conditions = [
      ...others,
      {
        type: CONDITION_SYSTEM_COMPONENTS_HEALTHY,
        ...result.health,
        lastTransitionTime:
          previous?.status === result.health.status && previous.lastTransitionTime
            ? previous.lastTransitionTime
            : lastUpdateTime,
        lastUpdateTime,
      },
    ];
  }
  return status;
}

/** The actuator's own status fields of an outcome: a success's {@link networkStatusFields}, nothing otherwise. */
export function calicoStatusFields(
  network: Network,
  outcome: ActuatorOutcome<NetworkResult>,
  lastUpdateTime: string,
): Record<string, unknown> {
  return outcome.state === 'Succeeded' && outcome.result
    ? networkStatusFields(network, outcome.result, lastUpdateTime)
    : {};
}

export const FIELD_MANAGER = 'extension-networking-calico';
/** How often deletion looks again whether the ManagedResource is gone. */
export const DEFAULT_DELETE_POLL_MS = 5_000;

export interface CalicoNetworkActuatorOptions {
  readonly client: ResourceClient;
  /** @default ClusterShootReader with `client` */
  readonly shoots?: ShootNetworkingSource;
  /** Overrides of the chart defaults (images). */
  readonly chartValues?: Partial<ChartDefaults>;
  /** @default DEFAULT_DELETE_POLL_MS */
  readonly deletePollMs?: number;
  /** See NetworkResourcesOptions.availableImages. */
  readonly availableImages?: readonly string[];
}

/** Writes a Network's calico manifests (Secret and ManagedResource) and removes them again. */
export class CalicoNetworkActuator implements Actuator<Network, NetworkResult> {
  private readonly client: ResourceClient;
  private readonly shoots: ShootNetworkingSource;

  constructor(private readonly opts: CalicoNetworkActuatorOptions) {
    this.client = opts.client;
    this.shoots = opts.shoots ?? new ClusterShootReader(opts.client);
  }

  async reconcile(ctx: ReconcileContext, network: Network): Promise<ActuatorOutcome<NetworkResult>> {
    let desired: NetworkResources;
    try {
      const shoot = await this.shoots.shootNetworking(network, ctx.signal);
      desired = desiredNetworkResources(network, {
        ...(shoot !== undefined ? { shoot } : {}),
        chartValues: this.opts.chartValues ?? {},
        ...(this.opts.availableImages !== undefined ? { availableImages: this.opts.availableImages } : {}),
      });
    } catch (e) {
      const terminal =
        e instanceof InvalidProviderConfigError ||
        (e instanceof CalicoValuesError && !(e instanceof MissingPodCIDRError));
      const description = errorMessage(e);
      // A broken Network is fixed by changing it, which triggers a reconcile; retrying would not help.
      return terminal
        ? {
            state: 'Error',
            description,
            codes: [ERR_CONFIGURATION_PROBLEM],
            error: new TerminalError(description, { cause: e }),
          }
        : { state: 'Error', description, error: e };
    }

    const opts = { fieldManager: FIELD_MANAGER, force: true, signal: ctx.signal };
    let applied: ManagedResource;
    try {
      await this.client.apply(Refs.secret, desired.secret as unknown as KubernetesObject, opts);
      applied = (await this.client.apply(
        Refs.managedResource,
        desired.managedResource as unknown as KubernetesObject,
        opts,
      )) as unknown as ManagedResource;
    } catch (e) {
      return { state: 'Error', description: `cannot write the calico manifests: ${errorMessage(e)}`, error: e };
    }
    const description =
      `calico deployed for ${desired.ipFamilies.join(' and ')} ` +
      `(${desired.manifests.length} objects in ManagedResource ${MANAGED_RESOURCE_NAME})`;
    const health = componentsHealth(
      desired.withheld,
      applied.status?.conditions?.find((c) => c.type === 'ResourcesHealthy'),
    );
    return { state: 'Succeeded', description, result: { ipFamilies: desired.ipFamilies, health } };
  }

  async delete(ctx: ReconcileContext, network: Network): Promise<ActuatorOutcome<NetworkResult>> {
    const namespace = network.metadata.namespace;
    const signal = ctx.signal;
    await this.client.delete(Refs.managedResource, MANAGED_RESOURCE_NAME, namespace, { signal });
    if (await this.client.get(Refs.managedResource, MANAGED_RESOURCE_NAME, namespace, { signal })) {
      return {
        state: 'Processing',
        progress: 50,
        description: `waiting until ManagedResource ${MANAGED_RESOURCE_NAME} is deleted`,
        requeueAfter: this.opts.deletePollMs ?? DEFAULT_DELETE_POLL_MS,
      };
    }
    await this.client.delete(Refs.secret, SECRET_NAME, namespace, { signal });
    return { state: 'Succeeded', description: 'calico manifests removed' };
  }

  statusFields(
    network: Network,
    outcome: ActuatorOutcome<NetworkResult>,
    lastUpdateTime: string,
  ): Record<string, unknown> {
    return calicoStatusFields(network, outcome, lastUpdateTime);
  }
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
