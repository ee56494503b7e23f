/**
 * The calico Network controller's reconcile, as Gardener's extension library does it: finalizer, the manifests in
 * a Secret behind the ManagedResource `extension-networking-calico`, and the Network's status. Deletion removes the
 * ManagedResource, waits until it is gone (a resource manager may hold it with its own finalizer while it cleans up
 * the shoot), removes the Secret and then the finalizer.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Shoot } from '../../apis/core/v1beta1/shoot.js';
import type { Network } from '../../apis/extensions/v1alpha1/network.js';
import { patchStatusIfChanged } from '../../runtime/status.js';
import { GARDEN_NAMESPACE, Labels } from '../../apis/core/v1beta1/names.js';
import { Refs, type ResourceRef } from '../../apis/refs.js';
import { type ResourceClient } from '../../runtime/client.js';
import { realClock, type Clock } from '../../runtime/clock.js';
import {
  TerminalError,
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
} from '../../runtime/controller.js';
import { addFinalizer, hasFinalizer, removeFinalizer } from '../../runtime/finalizers.js';
import { shootNetworkingOf } from './cluster.js';
import {
  componentsHealth,
  desiredNetworkResources,
  EXTENSION_TYPE,
  InvalidProviderConfigError,
  MANAGED_RESOURCE_NAME,
  networkStatusPatch,
  SECRET_NAME,
  type NetworkOutcome,
} from './actuator.js';
import type { ChartDefaults } from './manifests.js';
import { type ManagedResource } from '../../apis/resources/v1alpha1/managedresource.js';
import { CalicoValuesError, MissingPodCIDRError, type ShootNetworking } from './values.js';

export const FINALIZER = 'extensions.gardener.cloud/calico';
export const FIELD_MANAGER = 'extension-networking-calico';
/** How often deletion looks again whether the ManagedResource is gone. */
export const DEFAULT_DELETE_POLL_MS = 5_000;

export const networkRef: ResourceRef = Refs.network;

/** Gardener's error code for a problem only a change of the object fixes. */
export const ERR_CONFIGURATION_PROBLEM = 'ERR_CONFIGURATION_PROBLEM';

/** True for Networks this extension serves. */
export function isCalicoNetwork(network: object): boolean {
  return (network as { spec?: { type?: unknown } }).spec?.type === EXTENSION_TYPE;
}

/** Our zod types keep timestamps as strings; client-node's KubernetesObject has Dates. They are the same JSON. */
function asObject(object: object): KubernetesObject {
  return object as KubernetesObject;
}

/**
 * Where the extension gets the networking of a Network's Shoot (node ranges, the pod ranges of a dual-stack Network,
 * kube-proxy): as Gardener hands it over, in the shoot's Cluster resource of the seed (the garden may be another
 * cluster, which extensions never reach).
 */
export interface ShootNetworkingSource {
  shootNetworking(network: Network, signal: AbortSignal): Promise<ShootNetworking | undefined>;
}

/** The Shoot a Network belongs to: from the gardenlet's labels, else from the namespace `shoot--<project>--<name>`. */
export function shootOf(network: Network): { namespace: string; name: string } | undefined {
  const labels = network.metadata.labels ?? {};
  let project = labels[Labels.project];
  let name = labels[Labels.shoot];
  if (!project || !name) {
    const match = /^shoot--([^-]+(?:-[^-]+)*)--(.+)$/.exec(network.metadata.namespace ?? '');
    if (!match) return undefined;
    [, project, name] = match as unknown as [string, string, string];
  }
  return { namespace: project === GARDEN_NAMESPACE ? GARDEN_NAMESPACE : `garden-${project}`, name };
}

/**
 * The Shoot a Cluster embeds (the gardenlet names the Cluster after the seed namespace), when it is the Network's:
 * in the Network's namespace and of the Network's shoot.
 */
export function shootOfCluster(network: Network, cluster: KubernetesObject | undefined): Shoot | undefined {
  const id = shootOf(network);
  const shoot = (cluster as { spec?: { shoot?: Shoot } } | undefined)?.spec?.shoot;
  if (!id || !shoot?.metadata || shoot.metadata.name !== id.name || shoot.metadata.namespace !== id.namespace) {
    return undefined;
  }
  return shoot;
}

/** Reads the Network's Shoot from the seed namespace's Cluster with the client. */
export class ClusterShootReader implements ShootNetworkingSource {
  constructor(private readonly client: ResourceClient) {}

  async shootNetworking(network: Network, signal: AbortSignal): Promise<ShootNetworking | undefined> {
    const namespace = network.metadata.namespace;
    if (!namespace) return undefined;
    const cluster = await this.client.get(Refs.cluster, namespace, undefined, { signal });
    const shoot = shootOfCluster(network, cluster);
    // A Network of another shoot of the same name (a former one, or one whose seed namespace collides) is not this.
    const uid = network.metadata.labels?.[Labels.shootUID];
    if (uid !== undefined && shoot?.metadata.uid !== undefined && shoot.metadata.uid !== uid) return undefined;
    return shoot ? shootNetworkingOf(shoot) : undefined;
  }
}

export interface NetworkReconcilerOptions {
  readonly client: ResourceClient;
  readonly clock?: Clock;
  /** @default ClusterShootReader with `client` */
  readonly shoots?: ShootNetworkingSource;
  /** Overrides of the chart defaults (images). */
  readonly chartValues?: Partial<ChartDefaults>;
  /** @default DEFAULT_DELETE_POLL_MS */
  readonly deletePollMs?: number;
  /** See NetworkResourcesOptions.availableImages. */
  readonly availableImages?: readonly string[];
}

export class NetworkReconciler implements Reconciler {
  private readonly client: ResourceClient;
  private readonly clock: Clock;
  private readonly shoots: ShootNetworkingSource;
  private readonly chartValues: Partial<ChartDefaults>;
  private readonly deletePollMs: number;
  private readonly availableImages: readonly string[] | undefined;

  constructor(opts: NetworkReconcilerOptions) {
    this.client = opts.client;
    this.clock = opts.clock ?? realClock;
    this.shoots = opts.shoots ?? new ClusterShootReader(opts.client);
    this.chartValues = opts.chartValues ?? {};
    this.deletePollMs = opts.deletePollMs ?? DEFAULT_DELETE_POLL_MS;
    this.availableImages = opts.availableImages;
  }

  async reconcile(req: Request, ctx: ReconcileContext): Promise<Result | void> {
    const network = (await this.client.get(networkRef, req.name, req.namespace, { signal: ctx.signal })) as
      Network | undefined;
    if (!network || !isCalicoNetwork(network)) return;
    if (network.metadata.deletionTimestamp) return this.delete(network, ctx);

    await addFinalizer(this.client, networkRef, network, FINALIZER, { signal: ctx.signal });
    let desired: ReturnType<typeof desiredNetworkResources>;
    try {
      const shoot = await this.shoots.shootNetworking(network, ctx.signal);
      desired = desiredNetworkResources(network, {
        ...(shoot !== undefined ? { shoot } : {}),
        chartValues: this.chartValues,
        ...(this.availableImages !== undefined ? { availableImages: this.availableImages } : {}),
      });
    } catch (e) {
      const terminal =
        e instanceof InvalidProviderConfigError ||
        (e instanceof CalicoValuesError && !(e instanceof MissingPodCIDRError));
      await this.writeStatus(
        network,
        { state: 'Error', description: errorMessage(e), ...(terminal ? { codes: [ERR_CONFIGURATION_PROBLEM] } : {}) },
        ctx,
      );
      // A broken Network is fixed by changing it, which triggers a reconcile; retrying would not help.
      if (terminal) throw new TerminalError(errorMessage(e), { cause: e });
      throw e;
    }

    const opts = { fieldManager: FIELD_MANAGER, force: true, signal: ctx.signal };
    let applied: ManagedResource;
    try {
      await this.client.apply(Refs.secret, asObject(desired.secret), opts);
      applied = (await this.client.apply(
        Refs.managedResource,
        asObject(desired.managedResource),
        opts,
      )) as unknown as ManagedResource;
    } catch (e) {
      await this.writeStatus(
        network,
        { state: 'Error', description: `cannot write the calico manifests: ${errorMessage(e)}` },
        ctx,
      );
      throw e;
    }
    const description =
      `calico deployed for ${desired.ipFamilies.join(' and ')} ` +
      `(${desired.manifests.length} objects in ManagedResource ${MANAGED_RESOURCE_NAME})`;
    const health = componentsHealth(
      desired.withheld,
      applied.status?.conditions?.find((c) => c.type === 'ResourcesHealthy'),
    );
    await this.writeStatus(network, { state: 'Succeeded', ipFamilies: desired.ipFamilies, description, health }, ctx);
    ctx.logger.debug({ ipFamilies: desired.ipFamilies }, 'calico manifests written');
  }

  private async delete(network: Network, ctx: ReconcileContext): Promise<Result | void> {
    if (!hasFinalizer(network, FINALIZER)) return;
    const namespace = network.metadata.namespace;
    const signal = ctx.signal;
    await this.client.delete(Refs.managedResource, MANAGED_RESOURCE_NAME, namespace, { signal });
    if (await this.client.get(Refs.managedResource, MANAGED_RESOURCE_NAME, namespace, { signal })) {
      await this.writeStatus(
        network,
        {
          state: 'Processing',
          progress: 50,
          description: `waiting until ManagedResource ${MANAGED_RESOURCE_NAME} is deleted`,
        },
        ctx,
      );
      return { requeueAfter: this.deletePollMs };
    }
    await this.client.delete(Refs.secret, SECRET_NAME, namespace, { signal });
    await removeFinalizer(this.client, networkRef, network, FINALIZER, { signal });
    ctx.logger.debug('calico manifests removed');
  }

  /** Merge-patches the status; skipped when nothing but timestamps would change (no needless watch events). */
  private async writeStatus(network: Network, outcome: NetworkOutcome, ctx: ReconcileContext): Promise<void> {
    const status = networkStatusPatch(network, outcome, this.clock.now());
    try {
      await patchStatusIfChanged(this.client, networkRef, network, status, { signal: ctx.signal });
    } catch (e) {
      if (outcome.state !== 'Error') throw e;
      // The reconcile error matters more; the status is written again on the retry.
      ctx.logger.warn({ err: e }, 'cannot write the error to the Network status');
    }
  }
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
