/**
 * The gardenlet's Shoot reconciler: the wiring around the shoot's flows. It decides whether a request runs anything
 * (a shoot scheduled on this seed whose inputs changed, an operation annotation, the sync period), runs the reconcile
 * flow (reconcile-flow.ts: seed namespace, API server service, Network, DNS records, OperatingSystemConfig,
 * NetworkPolicies, control plane and Worker, per its IP families; hibernation included) or, behind the `gardener`
 * finalizer, the delete flow (delete-flow.ts), and reports the outcome in the Shoot's status as Gardener does: the
 * task not ready yet or failed, and the flow's progress, in `lastOperation`, a failure in `lastErrors` too.
 *
 * Kept as one file (over 400 lines): the decision whether to run, the flow and the status it reports share the
 * reconcile's state (the operation's type, its progress, the last errors) and read best together.
 */
import type { V1Service } from '@kubernetes/client-node';
import { decode } from '../../apis/admission.js';
import type { Seed } from '../../apis/core/v1beta1/seed.js';
import type { Shoot } from '../../apis/core/v1beta1/shoot.js';
import type { LastOperation } from '../../apis/meta/schemas.js';
import { Seeds, Shoots } from '../../apis/registry.js';
import type { ResourceClient } from '../../runtime/client.js';
import { realClock, type Clock } from '../../runtime/clock.js';
import {
  requestKey,
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
} from '../../runtime/controller.js';
import { addFinalizer, hasFinalizer, removeFinalizer } from '../../runtime/finalizers.js';
import { errorCodesOf, NotReadyError, StepError } from '../component.js';
import type { Flow, Outputs } from '../flow.js';
import { patchStatusIfChanged } from '../../runtime/status.js';
import { condition, lastOperation, mergeConditions } from '../../runtime/last-operation.js';
import {
  Annotations,
  apiServerDomain,
  inProjectNamespace,
  SHOOT_FINALIZER,
  seedNamespaceName,
} from '../../apis/core/v1beta1/names.js';
import { Refs } from '../../apis/refs.js';
import type { DNSProviderConfig } from './components/dns-records.js';
import { deleteGardenCAObjects, type ControlPlaneRuntime } from './components/controlplane/control-plane.js';
import { isIPFamily } from '../../apis/validation/ip-families.js';
import { API_SERVER_SERVICE_NAME } from './components/apiserver-service.js';
import { hibernationPlan } from './hibernation.js';
import { seedNamespaceOwnership } from './ownership.js';
import { reconcileFlow } from './reconcile-flow.js';
import { deleteFlow } from './delete-flow.js';
import { startDualStackMigration } from './dual-stack-migration.js';
import { workerPools } from './components/workers.js';

export const CONDITION_TYPE = 'NetworkingReady';
/** How soon to look again while something is on its way (a load balancer address, an extension). */
export const NOT_READY_REQUEUE_MS = 1_000;
/**
 * How long a flow task that is not ready yet looks again in place (every NOT_READY_REQUEUE_MS) before the reconcile
 * reports the wait and requeues: the other tasks don't run again meanwhile, and the shoot's status says where it
 * stands at least this often.
 */
export const NOT_READY_RETRY_MS = 10_000;
/** Gardener's shoot sync period (gardenlet's default): an up-to-date shoot is reconciled again after this long. */
export const DEFAULT_SYNC_PERIOD_MS = 60 * 60_000;
/** Gardener's operation annotation: `reconcile` (or `retry`) runs the flow now; the gardenlet removes it. */
export const OPERATION_ANNOTATION = Annotations.operation;
const RUN_NOW_OPERATIONS: readonly string[] = ['reconcile', 'retry'];

/** Reads of the objects the controller watches; the manager's informer caches, or the server. */
export interface ShootReader {
  shoot(name: string, namespace: string | undefined): Promise<unknown>;
  seed(name: string): Promise<unknown>;
  /** The CloudProfile, which the shoot's Cluster carries for the extensions (its machine types, for provider-local). */
  cloudProfile(name: string): Promise<unknown>;
  service(name: string, namespace: string): Promise<V1Service | undefined>;
}

/** Reads from the API server (no cache). */
export function serverReader(seed: ResourceClient, garden: ResourceClient = seed): ShootReader {
  return {
    shoot: (name, namespace) => garden.get(Refs.shoot, name, namespace),
    seed: (name) => garden.get(Refs.seed, name),
    cloudProfile: (name) => garden.get(Refs.cloudProfile, name),
    service: (name, namespace) => seed.get<V1Service>(Refs.service, name, namespace),
  };
}

export interface ShootReconcilerOptions {
  /** The seed's client: the shoot's seed namespace and everything in it. */
  readonly client: ResourceClient;
  /**
   * The garden's client: the Shoot (finalizer, operation annotation, status) and its `<shoot>.ca-cluster` ConfigMap.
   * @default `client` (the gardenlet runs in the garden, which is its seed)
   */
  readonly garden?: ResourceClient;
  /** Where watched objects are read from. @default the API server */
  readonly reader?: ShootReader;
  readonly dns: DNSProviderConfig;
  /** Only shoots with this `spec.seedName`; every scheduled shoot when unset. */
  readonly seedName?: string;
  /** Wait for the Network and DNSRecord extensions to report success before the shoot does. @default true */
  readonly waitForExtensions?: boolean;
  /**
   * Run the shoots' control planes as workloads of the seed (etcd, kube-apiserver, kube-controller-manager,
   * kube-scheduler in the seed namespace) and their machines through Workers. Needs a seed with Nodes; without it
   * the gardenlet writes the seed objects only (objects-only mode, for the scale benchmark).
   */
  readonly controlPlaneWorkloads?: boolean;
  readonly clock?: Clock;
  /** An up-to-date shoot is reconciled again after this long. @default DEFAULT_SYNC_PERIOD_MS */
  readonly syncPeriodMs?: number;
  /** How long a task that is not ready yet is retried in place; 0: the reconcile requeues at once. @default NOT_READY_RETRY_MS */
  readonly notReadyRetryMs?: number;
}

/**
 * The last operation of a shoot reconciled without a control plane (no seed Nodes, no provider processes): what
 * the user must know, since the API server its records point at does not exist.
 */
export const OBJECTS_ONLY_DESCRIPTION =
  'Shoot objects have been reconciled in objects-only mode: no control plane runs for the shoot (the gardenlet ' +
  'does not run on a seed with Nodes), so its API server does not answer.';

/** What a reconcile that succeeded in this process ran on, and when it ended. */
interface Reconciled {
  readonly inputs: string;
  readonly at: number;
}

export class ShootReconciler implements Reconciler {
  private readonly client: ResourceClient;
  private readonly garden: ResourceClient;
  private readonly reader: ShootReader;
  private readonly clock: Clock;
  private readonly syncPeriodMs: number;
  private readonly notReadyRetryMs: number;
  /**
   * Per shoot (request key), the inputs of its last successful reconcile in this process. As Gardener's shoot
   * controller, a request for a shoot whose inputs are unchanged runs nothing until the sync period is over: events
   * of its dependents (an extension's status, the Service) that arrive while a reconcile runs would otherwise run
   * the flow again right after it succeeded, relabelling the operation `Reconcile`. Kept in memory on purpose: a
   * restarted gardenlet reconciles every shoot once.
   */
  private readonly reconciled = new Map<string, Reconciled>();

  constructor(private readonly options: ShootReconcilerOptions) {
    this.client = options.client;
    this.garden = options.garden ?? options.client;
    this.reader = options.reader ?? serverReader(options.client, this.garden);
    this.clock = options.clock ?? realClock;
    this.syncPeriodMs = options.syncPeriodMs ?? DEFAULT_SYNC_PERIOD_MS;
    this.notReadyRetryMs = options.notReadyRetryMs ?? NOT_READY_RETRY_MS;
  }

  async reconcile(req: Request, ctx: ReconcileContext): Promise<Result | void> {
    const key = requestKey(req);
    const raw = await this.reader.shoot(req.name, req.namespace);
    if (!raw) {
      this.reconciled.delete(key);
      return;
    }
    const decoded = decode(Shoots, raw);
    if (!decoded.value) {
      ctx.logger.error({ errors: decoded.errors }, 'shoot cannot be decoded, skipping');
      return;
    }
    const shoot = Shoots.default(decoded.value);
    const seedName = shoot.spec.seedName;
    if (!seedName || (this.options.seedName !== undefined && seedName !== this.options.seedName)) {
      this.reconciled.delete(key);
      return;
    }
    if (shoot.metadata.deletionTimestamp) {
      this.reconciled.delete(key);
      return this.delete(shoot, ctx);
    }

    const rawSeed = await this.reader.seed(seedName);
    const seed = rawSeed ? decode(Seeds, rawSeed).value : undefined;
    const type = operationType(shoot);
    if (!seed) {
      await this.patchStatus(shoot, { lastOperation: this.op(type, 'Error', 0, `seed "${seedName}" not found`) }, ctx);
      return { requeueAfter: 10 * NOT_READY_REQUEUE_MS };
    }
    const operation = shoot.metadata.annotations?.[OPERATION_ANNOTATION];
    const runNow = operation !== undefined && RUN_NOW_OPERATIONS.includes(operation);
    const last = this.reconciled.get(key);
    let reason: string;
    if (runNow) reason = `operation annotation ${operation}`;
    else if (!last) reason = 'not reconciled by this gardenlet yet';
    else if (last.inputs !== (await this.inputsOf(shoot, seed))) {
      reason = 'generation, seed, cloud profile or load balancer changed';
    } else {
      const due = last.at + this.syncPeriodMs - this.clock.now();
      if (due > 0) {
        ctx.logger.debug({ nextSyncInMs: due }, 'shoot is up to date');
        return { requeueAfter: due };
      }
      reason = 'sync period';
    }
    // At debug: a flow waiting for something runs again every second.
    ctx.logger.debug({ operation: type, reason }, 'reconciling shoot');
    this.reconciled.delete(key);
    if (!hasFinalizer(shoot, SHOOT_FINALIZER)) {
      await addFinalizer(this.garden, Refs.shoot, shoot, SHOOT_FINALIZER, { signal: ctx.signal });
    }
    if (runNow) {
      // As Gardener: the annotation is taken away when the operation starts, so that setting it again asks again.
      await this.garden.mergePatch(
        Refs.shoot,
        req.name,
        req.namespace,
        { metadata: { annotations: { [OPERATION_ANNOTATION]: null } } },
        { signal: ctx.signal },
      );
    }
    const pending = await this.runFlow(shoot, Seeds.default(seed), type, ctx);
    if (pending) return pending;
    // The inputs as the flow left them: the load balancer address it waited for is part of them.
    this.reconciled.set(key, { inputs: await this.inputsOf(shoot, seed), at: this.clock.now() });
    ctx.logger.info({ operation: type, reason, nextSyncInMs: this.syncPeriodMs }, 'shoot reconciled');
    return { requeueAfter: this.syncPeriodMs };
  }

  /**
   * What a reconcile of the shoot depends on besides its dependents' state: the shoot's uid and generation, the
   * seed's and the CloudProfile's generations (the Cluster carries both) and the API server's load balancer addresses
   * (the DNS records and the control plane's certificates follow them).
   */
  private async inputsOf(shoot: Shoot, seed: { metadata?: { generation?: number } }): Promise<string> {
    const service = await this.reader.service(API_SERVER_SERVICE_NAME, seedNamespaceName(shoot));
    const cloudProfile = (await this.cloudProfileOf(shoot)) as { metadata?: { generation?: number } } | undefined;
    return JSON.stringify([
      shoot.metadata.uid,
      shoot.metadata.generation,
      seed.metadata?.generation,
      cloudProfile?.metadata?.generation ?? null,
      service?.status?.loadBalancer?.ingress ?? null,
    ]);
  }

  /** The shoot's CloudProfile, or undefined when there is none of its name. */
  private async cloudProfileOf(shoot: Shoot): Promise<unknown> {
    const name = shoot.spec.cloudProfile?.name ?? shoot.spec.cloudProfileName;
    return name ? this.reader.cloudProfile(name) : undefined;
  }

  /** Where the shoots' control planes run; the seed's families matter to workloads only (not to destroy them). */
  private controlPlaneRuntime(seed: Seed | undefined): ControlPlaneRuntime | undefined {
    if (!this.options.controlPlaneWorkloads) return undefined;
    return { seedFamilies: (seed?.spec.networks?.ipFamilies ?? ['IPv4']).filter(isIPFamily) };
  }

  private async runFlow(shoot: Shoot, seed: Seed, type: string, ctx: ReconcileContext): Promise<Result | undefined> {
    shoot = await this.begin(shoot, type, ctx);
    const runtime = this.controlPlaneRuntime(seed);
    const plan = hibernationPlan(shoot, runtime !== undefined);
    const machinesRun = plan.machines === 'deploy' && workerPools(shoot).some((p) => p.minimum > 0);
    shoot = await startDualStackMigration(this.client, this.garden, shoot, machinesRun, this.clock, ctx.signal);
    const advertisedAddresses = (['external', 'internal'] as const).map((name) => ({
      name,
      url: `https://${apiServerDomain(shoot, name, this.options.dns.domain)}`,
    }));
    const { flow, networks } = reconcileFlow({
      client: this.client,
      garden: this.garden,
      clock: this.clock,
      shoot,
      seed,
      cloudProfile: await this.cloudProfileOf(shoot),
      dns: this.options.dns,
      service: (name, namespace) => this.reader.service(name, namespace),
      waitForExtensions: this.options.waitForExtensions ?? true,
      runtime,
      plan,
      // Published now, not with the final status: the network extension reads the second family's pod range from
      // here before the Network can become ready, and the shoot waits for the Network. The addresses too: a user can
      // fetch a kubeconfig as soon as the API server answers.
      publishNetworks: (networking) => this.patchStatus(shoot, { networking, advertisedAddresses }, ctx),
    });
    const previous = shoot.status?.conditions?.find((cd) => cd.type === CONDITION_TYPE);
    const outcome = await this.runAndReport(shoot, type, flow, ctx, (notReady, description) => ({
      conditions: mergeConditions(shoot.status?.conditions, [
        condition(
          this.clock,
          CONDITION_TYPE,
          false,
          notReady ? 'Progressing' : 'ReconcileFailed',
          description,
          previous,
        ),
      ]),
    }));
    if (outcome.pending) return outcome.pending;
    await this.patchStatus(
      shoot,
      {
        lastOperation: this.op(
          type,
          'Succeeded',
          100,
          runtime ? 'Shoot cluster has been successfully reconciled.' : OBJECTS_ONLY_DESCRIPTION,
        ),
        lastErrors: null,
        conditions: mergeConditions(shoot.status?.conditions, [
          condition(
            this.clock,
            CONDITION_TYPE,
            true,
            'Reconciled',
            'Networking of every IP family is in place.',
            previous,
          ),
        ]),
        networking: outcome.output(networks),
        advertisedAddresses,
        // Set when the operation succeeded, as Gardener's: a shoot waking up is hibernated until it is awake.
        hibernated: plan.hibernated,
        // As Gardener's gardenlet: the seed the shoot now runs on (its authorizer and a migration go by it).
        seedName: seed.metadata.name,
        observedGeneration: shoot.metadata.generation,
      },
      ctx,
    );
  }

  private async delete(shoot: Shoot, ctx: ReconcileContext): Promise<Result | void> {
    if (!hasFinalizer(shoot, SHOOT_FINALIZER)) return;
    const { client, garden } = this;
    const namespace = seedNamespaceName(shoot);
    // A shoot outside a project namespace was never deployed: its names are those of a project's shoot.
    const ownership = inProjectNamespace(shoot)
      ? await seedNamespaceOwnership(client, garden, shoot, { signal: ctx.signal })
      : undefined;
    if (ownership === undefined || ownership.kind === 'foreign') {
      // The namespace, what is in it and what is keyed by its name (provider-local's control plane, machines and
      // load balancers) are the other shoot's: this one was refused before it wrote any of it.
      if (ownership) {
        ctx.logger.info({ namespace, owner: ownership.owner }, 'seed namespace belongs to another shoot, left alone');
      }
      await deleteGardenCAObjects(garden, shoot, { signal: ctx.signal });
      await removeFinalizer(garden, Refs.shoot, shoot, SHOOT_FINALIZER, { signal: ctx.signal });
      return;
    }
    shoot = await this.begin(shoot, 'Delete', ctx);
    const flow = deleteFlow({
      client,
      garden,
      shoot,
      dns: this.options.dns,
      runtime: this.controlPlaneRuntime(undefined),
    });
    const outcome = await this.runAndReport(shoot, 'Delete', flow, ctx);
    if (outcome.pending) return outcome.pending;
    await removeFinalizer(garden, Refs.shoot, shoot, SHOOT_FINALIZER, { signal: ctx.signal });
  }

  /**
   * As Gardener's: an operation says it began (Processing, 0 %) before its flow runs, whose tasks may wait in place
   * a while; the shoot as it is now written, for the patches that follow.
   */
  private async begin(shoot: Shoot, type: string, ctx: ReconcileContext): Promise<Shoot> {
    const last = shoot.status?.lastOperation;
    if (last?.type === type && last.state === 'Processing') return shoot;
    const what = type === 'Delete' ? 'Deletion' : 'Reconciliation';
    const lastOperation = this.op(type, 'Processing', 0, `${what} of Shoot cluster initialized.`);
    await this.patchStatus(shoot, { lastOperation }, ctx);
    return { ...shoot, status: { ...shoot.status, lastOperation } };
  }

  /**
   * Runs the flow. A task that is not ready yet reports Processing with the flow's progress and returns the requeue;
   * any other failure reports Error naming the task (plus `failureStatus`) and is rethrown.
   */
  private async runAndReport(
    shoot: Shoot,
    type: string,
    flow: Flow,
    ctx: ReconcileContext,
    failureStatus: (notReady: boolean, description: string) => Record<string, unknown> = () => ({}),
  ): Promise<{ pending: Result; output?: undefined } | { pending?: undefined; output: Outputs }> {
    const outcome = await flow.run(
      { signal: ctx.signal },
      this.notReadyRetryMs > 0
        ? {
            retryNotReady: {
              forMs: this.notReadyRetryMs,
              intervalMs: NOT_READY_REQUEUE_MS,
              clock: this.clock,
              ...(ctx.stopping ? { until: ctx.stopping } : {}),
            },
          }
        : {},
    );
    if (!outcome.failure) return { output: outcome.output };
    const { error, progress } = outcome.failure;
    const notReady = error instanceof NotReadyError;
    const description = error.message;
    const operation = this.op(type, notReady ? 'Processing' : 'Error', progress, description);
    // As Gardener: the failed task's error in lastErrors as well, until an operation succeeds.
    const codes = errorCodesOf(error);
    const lastErrors =
      error instanceof StepError
        ? {
            lastErrors: [
              {
                description,
                taskID: error.step,
                ...(codes.length > 0 ? { codes: [...codes] } : {}),
                lastUpdateTime: operation.lastUpdateTime,
              },
            ],
          }
        : {};
    await this.patchStatus(
      shoot,
      { lastOperation: operation, ...lastErrors, ...failureStatus(notReady, description) },
      ctx,
    );
    if (notReady) return { pending: { requeueAfter: NOT_READY_REQUEUE_MS } };
    throw error;
  }

  private op(type: string, state: string, progress: number, description: string): LastOperation {
    return lastOperation(this.clock, type, state, progress, description);
  }

  /** Merge-patches the status subresource, unless nothing but timestamps would change. */
  private async patchStatus(shoot: Shoot, status: Record<string, unknown>, ctx: ReconcileContext): Promise<void> {
    await patchStatusIfChanged(this.garden, Refs.shoot, shoot, status, { signal: ctx.signal });
  }
}

/** Create until the first reconcile succeeded, Reconcile afterwards. */
function operationType(shoot: Shoot): 'Create' | 'Reconcile' {
  const op = shoot.status?.lastOperation;
  if (!op) return 'Create';
  if (op.type === 'Create' && op.state !== 'Succeeded') return 'Create';
  return 'Reconcile';
}
