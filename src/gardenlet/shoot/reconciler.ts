/**
 * The gardenlet's Shoot reconciler: turns a Shoot scheduled on this seed into its seed namespace, API server
 * service, Network, DNS records, OperatingSystemConfig and NetworkPolicies, per its IP families, and reports the
 * outcome in the Shoot's status. A shoot with `spec.hibernation.enabled` has its machines stopped and its control
 * plane scaled to zero (its data kept), and `status.hibernated` set; waking up deploys it all again. Deletion runs
 * behind the `gardener` finalizer.
 */
import type { V1Service } from '@kubernetes/client-node';
import { decode } from '../../apis/admission.js';
import type { Seed } from '../../apis/core/v1beta1/seed.js';
import type { NetworkingStatus, Shoot } from '../../apis/core/v1beta1/shoot.js';
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
import { deleteAll } from '../apply.js';
import { NotReadyError, StepError, type ComponentContext, type DeployWaiter } from '../component.js';
import { patchStatusIfChanged } from '../../runtime/status.js';
import { condition, lastOperation, mergeConditions } from '../../runtime/last-operation.js';
import {
  apiServerDomain,
  inProjectNamespace,
  SHOOT_FINALIZER,
  seedNamespaceName,
} from '../../apis/core/v1beta1/names.js';
import { Refs } from '../../apis/refs.js';
import type { DNSProviderConfig } from './components/dns-records.js';
import { caClusterName, ShootControlPlane, type ControlPlaneRuntime } from './components/control-plane.js';
import { isIPFamily } from '../../apis/validation/ip-families.js';
import { ShootCluster } from './components/cluster.js';
import { ShootWorker } from './components/worker.js';
import { MachineBootstrap } from './components/machine-bootstrap.js';
import { API_SERVER_SERVICE_NAME } from './components/apiserver-service.js';
import {
  APIServerDNSRecords,
  APIServerService,
  destroyNetworkPolicies,
  EgressNetworkPolicies,
  NetworkExtension,
  SeedNamespace,
  shootNetworkPolicyValues,
  WorkerOperatingSystemConfig,
} from './components/deployers.js';
import { shootNetworkingStatus } from '../../apis/core/v1beta1/networks.js';
import { hibernationPlan } from './hibernation.js';
import { seedNamespaceOwnership } from './ownership.js';

export const CONDITION_TYPE = 'NetworkingReady';
/** How soon to look again while something is on its way (a load balancer address, an extension). */
export const NOT_READY_REQUEUE_MS = 1_000;
/** Gardener's shoot sync period (gardenlet's default): an up-to-date shoot is reconciled again after this long. */
export const DEFAULT_SYNC_PERIOD_MS = 60 * 60_000;
/** Gardener's operation annotation: `reconcile` (or `retry`) runs the flow now; the gardenlet removes it. */
export const OPERATION_ANNOTATION = 'gardener.cloud/operation';
const RUN_NOW_OPERATIONS: readonly string[] = ['reconcile', 'retry'];

/** Reads of the objects the controller watches; the manager's informer caches, or the server. */
export interface ShootReader {
  shoot(name: string, namespace: string | undefined): Promise<unknown>;
  seed(name: string): Promise<unknown>;
  service(name: string, namespace: string): Promise<V1Service | undefined>;
}

/** Reads from the API server (no cache). */
export function serverReader(client: ResourceClient): ShootReader {
  return {
    shoot: (name, namespace) => client.get(Refs.shoot, name, namespace),
    seed: (name) => client.get(Refs.seed, name),
    service: (name, namespace) => client.get<V1Service>(Refs.service, name, namespace),
  };
}

export interface ShootReconcilerOptions {
  readonly client: ResourceClient;
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

interface Step {
  readonly name: string;
  readonly progress: number;
  run(ctx: ComponentContext): Promise<void>;
}

export class ShootReconciler implements Reconciler {
  private readonly client: ResourceClient;
  private readonly reader: ShootReader;
  private readonly clock: Clock;
  private readonly syncPeriodMs: number;
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
    this.reader = options.reader ?? serverReader(options.client);
    this.clock = options.clock ?? realClock;
    this.syncPeriodMs = options.syncPeriodMs ?? DEFAULT_SYNC_PERIOD_MS;
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
    else if (last.inputs !== (await this.inputsOf(shoot, seed))) reason = 'generation, seed or load balancer changed';
    else {
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
      await addFinalizer(this.client, Refs.shoot, shoot, SHOOT_FINALIZER, { signal: ctx.signal });
    }
    if (runNow) {
      // As Gardener: the annotation is taken away when the operation starts, so that setting it again asks again.
      await this.client.mergePatch(
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
   * seed's generation and the API server's load balancer addresses (the DNS records and the control plane's
   * certificates follow them).
   */
  private async inputsOf(shoot: Shoot, seed: { metadata?: { generation?: number } }): Promise<string> {
    const service = await this.reader.service(API_SERVER_SERVICE_NAME, seedNamespaceName(shoot));
    return JSON.stringify([
      shoot.metadata.uid,
      shoot.metadata.generation,
      seed.metadata?.generation,
      service?.status?.loadBalancer?.ingress ?? null,
    ]);
  }

  /** Where the shoots' control planes run; the seed's families matter to workloads only (not to destroy them). */
  private controlPlaneRuntime(seed: Seed | undefined): ControlPlaneRuntime | undefined {
    if (!this.options.controlPlaneWorkloads) return undefined;
    return { seedFamilies: (seed?.spec.networks?.ipFamilies ?? ['IPv4']).filter(isIPFamily) };
  }

  private async runFlow(shoot: Shoot, seed: Seed, type: string, ctx: ReconcileContext): Promise<Result | undefined> {
    const { client } = this;
    const service = new APIServerService(client, shoot, (name, namespace) => this.reader.service(name, namespace));
    let networking: NetworkingStatus | undefined;
    let dnsRecords: APIServerDNSRecords | undefined;
    const network = new NetworkExtension(client, shoot);
    const waitForExtensions = this.options.waitForExtensions ?? true;
    const advertisedAddresses = (['external', 'internal'] as const).map((name) => ({
      name,
      url: `https://${apiServerDomain(shoot, name, this.options.dns.domain)}`,
    }));
    let controlPlane: ShootControlPlane | undefined;
    const runtime = this.controlPlaneRuntime(seed);
    // Hibernation, as Gardener's: the machines stop (the provider reads it from the Cluster), then the control plane
    // scales to zero with its data kept; the namespace, the Services, the DNS records and the extensions stay.
    // On a seed with Nodes, machines are machine pods through the Worker extension object.
    const plan = hibernationPlan(shoot, runtime !== undefined);
    const controlPlaneUp = plan.controlPlane === 'deploy';
    const worker = () => new ShootWorker(client, shoot, networking!);
    const waitName = [
      ...(controlPlaneUp ? ['the control plane'] : []),
      ...(waitForExtensions ? ['the Network', 'the DNS records'] : []),
    ]
      .join(', ')
      .replace(/, ([^,]*)$/, ' and $1');

    // A small task graph, as Gardener's flows: what needs no load balancer address goes first (by then the
    // provider has usually set it), independent components deploy in parallel.
    const steps: Step[] = [
      {
        name: 'deploying the seed namespace',
        progress: 10,
        run: async (x) => {
          await new SeedNamespace(client, shoot).deploy(x);
          await new ShootCluster(client, shoot, seed).deploy(x);
        },
      },
      { name: 'deploying the kube-apiserver service', progress: 20, run: (x) => service.deploy(x) },
      {
        name: 'computing the shoot networks',
        progress: 30,
        run: async () => {
          networking = shootNetworkingStatus(shoot, seed);
          // Published now, not with the final status: the network extension reads the second family's pod range
          // from here before the Network can become ready, and the shoot waits for the Network. The addresses
          // too: a user can fetch a kubeconfig as soon as the API server answers.
          await this.patchStatus(shoot, { networking, advertisedAddresses }, ctx);
        },
      },
      {
        // Everything at once: what needs the load balancer address (DNS records, the control plane) waits for it
        // while the rest is written; the control plane's processes start as early as they can.
        name: controlPlaneUp
          ? 'deploying the Network, the OperatingSystemConfig, the NetworkPolicies, the DNS records and the control plane'
          : 'deploying the Network, the OperatingSystemConfig, the NetworkPolicies and the DNS records',
        progress: 60,
        run: (x) =>
          inParallel(x, [
            ['deploying the Network', (y) => network.deploy(y)],
            ['deploying the OperatingSystemConfig', (y) => new WorkerOperatingSystemConfig(client, shoot).deploy(y)],
            [
              'deploying the NetworkPolicies',
              (y) => new EgressNetworkPolicies(client, shootNetworkPolicyValues(shoot, seed, networking!)).deploy(y),
            ],
            [
              'waiting for the kube-apiserver load balancer',
              async (y) => {
                const ready = await service.waitReady(this.clock, y);
                dnsRecords = new APIServerDNSRecords(client, shoot, this.options.dns, ready);
                if (runtime && controlPlaneUp) {
                  controlPlane = new ShootControlPlane(client, shoot, runtime, {
                    networking: networking!,
                    service: ready,
                    domain: this.options.dns.domain,
                  });
                }
                await inParallel(y, [
                  ['deploying the DNS records', (z) => dnsRecords!.deploy(z)],
                  ...(controlPlaneUp
                    ? [['deploying the control plane', (z: ComponentContext) => controlPlane!.deploy(z)] as const]
                    : []),
                ]);
              },
            ],
          ]),
      },
      ...(waitForExtensions || controlPlaneUp
        ? [
            {
              name: waitName,
              progress: 90,
              run: (x: ComponentContext) =>
                inParallel(x, [
                  ...(controlPlaneUp
                    ? [['waiting for the control plane', (y: ComponentContext) => controlPlane!.wait(y)] as const]
                    : []),
                  ...(waitForExtensions
                    ? ([
                        ['waiting for the Network', (y: ComponentContext) => network.wait(y)],
                        ['waiting for the DNS records', (y: ComponentContext) => dnsRecords!.wait(y)],
                      ] as const)
                    : []),
                ]),
            },
          ]
        : []),
      ...(plan.machines === 'hibernate'
        ? [
            {
              name: 'waiting for the machines to stop',
              progress: 92,
              run: (x: ComponentContext) => worker().waitHibernated(x),
            },
          ]
        : []),
      ...(runtime && plan.controlPlane === 'hibernate'
        ? [
            {
              name: 'hibernating the control plane',
              progress: 95,
              run: (x: ComponentContext) => new ShootControlPlane(client, shoot, runtime).hibernate(x),
            },
          ]
        : []),
      ...(plan.machines === 'deploy'
        ? [
            {
              name: 'deploying the machine bootstrap and the Worker',
              progress: 92,
              run: async (x: ComponentContext) => {
                await new MachineBootstrap(client, shoot, networking!).deploy(x);
                await worker().deploy(x);
              },
            },
            { name: 'waiting for the Worker', progress: 95, run: (x: ComponentContext) => worker().wait(x) },
          ]
        : []),
    ];

    const previous = shoot.status?.conditions?.find((cd) => cd.type === CONDITION_TYPE);
    const pending = await this.runSteps(shoot, type, steps, ctx, (notReady, description) => ({
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
    if (pending) return pending;
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
        networking: networking ?? {},
        advertisedAddresses,
        // Set when the operation succeeded, as Gardener's: a shoot waking up is hibernated until it is awake.
        hibernated: plan.hibernated,
        observedGeneration: shoot.metadata.generation,
      },
      ctx,
    );
  }

  private async delete(shoot: Shoot, ctx: ReconcileContext): Promise<Result | void> {
    if (!hasFinalizer(shoot, SHOOT_FINALIZER)) return;
    const { client } = this;
    const namespace = seedNamespaceName(shoot);
    // A shoot outside a project namespace was never deployed: its names are those of a project's shoot.
    const ownership = inProjectNamespace(shoot)
      ? await seedNamespaceOwnership(client, shoot, { signal: ctx.signal })
      : undefined;
    if (ownership === undefined || ownership.kind === 'foreign') {
      // The namespace, what is in it and what is keyed by its name (provider-local's control plane, machines and
      // load balancers) are the other shoot's: this one was refused before it wrote any of it.
      if (ownership) {
        ctx.logger.info({ namespace, owner: ownership.owner }, 'seed namespace belongs to another shoot, left alone');
      }
      await deleteAll(client, Refs.configMap, [caClusterName(shoot)], shoot.metadata.namespace, { signal: ctx.signal });
      await removeFinalizer(client, Refs.shoot, shoot, SHOOT_FINALIZER, { signal: ctx.signal });
      return;
    }
    const components: [string, DeployWaiter][] = [
      ['the DNS records', new APIServerDNSRecords(client, shoot, this.options.dns, undefined)],
      ['the Network', new NetworkExtension(client, shoot)],
      ['the OperatingSystemConfig', new WorkerOperatingSystemConfig(client, shoot)],
      ['the kube-apiserver service', new APIServerService(client, shoot)],
      ['the NetworkPolicies', { deploy: async () => {}, destroy: (x) => destroyNetworkPolicies(client, namespace, x) }],
      ...(this.controlPlaneRuntime(undefined)
        ? [
            ['the control plane', new ShootControlPlane(client, shoot, this.controlPlaneRuntime(undefined)!)] as [
              string,
              DeployWaiter,
            ],
          ]
        : []),
    ];
    const seedNamespace = new SeedNamespace(client, shoot);
    // The machines stop first, while their API server still answers their kubelets.
    const worker = this.options.controlPlaneWorkloads ? new ShootWorker(client, shoot, {}) : undefined;
    const steps: Step[] = [
      ...(worker
        ? [
            {
              name: 'deleting the Worker',
              progress: 20,
              run: async (x: ComponentContext) => {
                await worker.destroy(x);
                await worker.waitCleanup(x);
              },
            },
          ]
        : []),
      {
        name: 'deleting the seed objects',
        progress: 30,
        run: (x) =>
          inParallel(
            x,
            components.map(([name, component]) => [`deleting ${name}`, (y) => component.destroy(y)]),
          ),
      },
      {
        name: 'waiting for the seed objects to be gone',
        progress: 60,
        run: (x) =>
          inParallel(
            x,
            components.map(([name, component]) => [
              `waiting for the deletion of ${name}`,
              async (y) => component.waitCleanup?.(y),
            ]),
          ),
      },
      {
        name: 'deleting the seed namespace',
        progress: 90,
        run: async (x) => {
          await seedNamespace.destroy(x);
          await seedNamespace.waitCleanup(x);
          const cluster = new ShootCluster(client, shoot, undefined);
          await cluster.destroy(x);
          await cluster.waitCleanup(x);
        },
      },
    ];
    const pending = await this.runSteps(shoot, 'Delete', steps, ctx);
    if (pending) return pending;
    await removeFinalizer(client, Refs.shoot, shoot, SHOOT_FINALIZER, { signal: ctx.signal });
  }

  /**
   * Runs the steps in order. A step that is not ready yet reports Processing with its progress and returns the
   * requeue; any other failure reports Error naming the step (plus `failureStatus`) and is rethrown.
   */
  private async runSteps(
    shoot: Shoot,
    type: string,
    steps: readonly Step[],
    ctx: ReconcileContext,
    failureStatus: (notReady: boolean, description: string) => Record<string, unknown> = () => ({}),
  ): Promise<Result | undefined> {
    const c: ComponentContext = { signal: ctx.signal };
    for (const step of steps) {
      try {
        await step.run(c);
      } catch (e) {
        const notReady = e instanceof NotReadyError;
        const failed = e instanceof StepError ? e : new StepError(step.name, e);
        const description = notReady ? `${step.name}: ${e.message}` : failed.message;
        const state = notReady ? 'Processing' : 'Error';
        const operation = this.op(type, state, step.progress, description);
        // As Gardener: the failed task's error in lastErrors as well, until an operation succeeds.
        const lastErrors = notReady
          ? {}
          : { lastErrors: [{ description, taskID: failed.step, lastUpdateTime: operation.lastUpdateTime }] };
        await this.patchStatus(
          shoot,
          { lastOperation: operation, ...lastErrors, ...failureStatus(notReady, description) },
          ctx,
        );
        if (notReady) return { requeueAfter: NOT_READY_REQUEUE_MS };
        throw failed;
      }
    }
    return undefined;
  }

  private op(type: string, state: string, progress: number, description: string): LastOperation {
    return lastOperation(this.clock, type, state, progress, description);
  }

  /** Merge-patches the status subresource, unless nothing but timestamps would change. */
  private async patchStatus(shoot: Shoot, status: Record<string, unknown>, ctx: ReconcileContext): Promise<void> {
    await patchStatusIfChanged(this.client, Refs.shoot, shoot, status, { signal: ctx.signal });
  }
}

/**
 * Runs independent tasks at once. A failure wins over "not ready yet" and is reported with its own task's name;
 * otherwise the first NotReadyError is rethrown.
 */
async function inParallel(
  ctx: ComponentContext,
  tasks: readonly (readonly [string, (ctx: ComponentContext) => Promise<void>])[],
): Promise<void> {
  const results = await Promise.allSettled(tasks.map(([, run]) => run(ctx)));
  const failures = results.flatMap((r, i) => (r.status === 'rejected' ? [[tasks[i]![0], r.reason] as const] : []));
  const failure = failures.find(([, reason]) => !(reason instanceof NotReadyError));
  // A nested task's StepError already names the innermost step.
  if (failure) throw failure[1] instanceof StepError ? failure[1] : new StepError(failure[0], failure[1]);
  if (failures[0]) throw failures[0][1];
}

/** Create until the first reconcile succeeded, Reconcile afterwards. */
function operationType(shoot: Shoot): 'Create' | 'Reconcile' {
  const op = shoot.status?.lastOperation;
  if (!op) return 'Create';
  if (op.type === 'Create' && op.state !== 'Succeeded') return 'Create';
  return 'Reconcile';
}
