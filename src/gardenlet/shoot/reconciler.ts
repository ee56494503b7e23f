/**
 * The gardenlet's Shoot reconciler: turns a Shoot scheduled on this seed into its seed namespace, API server
 * service, Network, DNS records, OperatingSystemConfig and NetworkPolicies, per its IP families, and reports the
 * outcome in the Shoot's status. Deletion runs behind the `gardener` finalizer.
 */
import { decode } from '../../apis/admission.js';
import type { Seed } from '../../apis/core/v1beta1/seed.js';
import type { NetworkingStatus, Shoot } from '../../apis/core/v1beta1/shoot.js';
import type { LastOperation } from '../../apis/meta/schemas.js';
import { Seeds, Shoots } from '../../apis/registry.js';
import type { ResourceClient } from '../../runtime/client.js';
import { realClock, type Clock } from '../../runtime/clock.js';
import type { ReconcileContext, Reconciler, Request, Result } from '../../runtime/controller.js';
import { addFinalizer, hasFinalizer, removeFinalizer } from '../../runtime/finalizers.js';
import { NotReadyError, StepError, type ComponentContext, type DeployWaiter } from '../component.js';
import { condition, lastOperation, sameIgnoringTimestamps } from '../last-operation.js';
import { SHOOT_FINALIZER } from '../names.js';
import { Refs } from '../resources.js';
import type { DNSProviderConfig } from './components/dns-records.js';
import {
  APIServerDNSRecords,
  APIServerService,
  EgressNetworkPolicies,
  NetworkExtension,
  SeedNamespace,
  shootNetworkPolicyValues,
  WorkerOperatingSystemConfig,
} from './components/deployers.js';
import { shootNetworkingStatus } from './networks.js';

export const CONDITION_TYPE = 'NetworkingReady';
/** How soon to look again while something is on its way (a load balancer address, an extension). */
export const NOT_READY_REQUEUE_MS = 1_000;

export interface ShootReconcilerOptions {
  readonly client: ResourceClient;
  readonly dns: DNSProviderConfig;
  /** Only shoots with this `spec.seedName`; every scheduled shoot when unset. */
  readonly seedName?: string;
  /** Wait for the Network and DNSRecord extensions to report success before the shoot does. @default true */
  readonly waitForExtensions?: boolean;
  readonly clock?: Clock;
}

interface Step {
  readonly name: string;
  readonly progress: number;
  run(ctx: ComponentContext): Promise<void>;
}

export class ShootReconciler implements Reconciler {
  private readonly client: ResourceClient;
  private readonly clock: Clock;

  constructor(private readonly options: ShootReconcilerOptions) {
    this.client = options.client;
    this.clock = options.clock ?? realClock;
  }

  async reconcile(req: Request, ctx: ReconcileContext): Promise<Result | void> {
    const raw = await this.client.get(Refs.shoot, req.name, req.namespace, { signal: ctx.signal });
    if (!raw) return;
    const decoded = decode(Shoots, raw);
    if (!decoded.value) {
      ctx.logger.error({ errors: decoded.errors }, 'shoot cannot be decoded, skipping');
      return;
    }
    const shoot = Shoots.default(decoded.value);
    const seedName = shoot.spec.seedName;
    if (!seedName || (this.options.seedName !== undefined && seedName !== this.options.seedName)) return;
    if (shoot.metadata.deletionTimestamp) return this.delete(shoot, ctx);

    const rawSeed = await this.client.get(Refs.seed, seedName, undefined, { signal: ctx.signal });
    const seed = rawSeed ? decode(Seeds, rawSeed).value : undefined;
    const type = operationType(shoot);
    if (!seed) {
      await this.patchStatus(shoot, { lastOperation: this.op(type, 'Error', 0, `seed "${seedName}" not found`) }, ctx);
      return { requeueAfter: 10 * NOT_READY_REQUEUE_MS };
    }
    await addFinalizer(this.client, Refs.shoot, shoot, SHOOT_FINALIZER, { signal: ctx.signal });
    return this.runFlow(shoot, Seeds.default(seed), type, ctx);
  }

  private async runFlow(shoot: Shoot, seed: Seed, type: string, ctx: ReconcileContext): Promise<Result | void> {
    const { client } = this;
    const c: ComponentContext = { signal: ctx.signal };
    const service = new APIServerService(client, shoot);
    let networking: NetworkingStatus | undefined;
    let dnsRecords: APIServerDNSRecords | undefined;
    const network = new NetworkExtension(client, shoot);
    const waitForExtensions = this.options.waitForExtensions ?? true;

    const steps: Step[] = [
      { name: 'deploying the seed namespace', progress: 10, run: (x) => new SeedNamespace(client, shoot).deploy(x) },
      { name: 'deploying the kube-apiserver service', progress: 20, run: (x) => service.deploy(x) },
      {
        name: 'waiting for the kube-apiserver load balancer',
        progress: 30,
        run: async (x) => {
          const ready = await service.ready(x);
          dnsRecords = new APIServerDNSRecords(client, shoot, this.options.dns, ready);
        },
      },
      {
        name: 'computing the shoot networks',
        progress: 40,
        run: async () => {
          networking = shootNetworkingStatus(shoot, seed);
          // Published now, not with the final status: the network extension reads the second family's pod range
          // from here before the Network can become ready, and the shoot waits for the Network.
          await this.patchStatus(shoot, { networking }, ctx);
        },
      },
      { name: 'deploying the Network', progress: 50, run: (x) => network.deploy(x) },
      { name: 'deploying the DNS records', progress: 60, run: (x) => dnsRecords!.deploy(x) },
      {
        name: 'deploying the OperatingSystemConfig',
        progress: 70,
        run: (x) => new WorkerOperatingSystemConfig(client, shoot).deploy(x),
      },
      {
        name: 'deploying the NetworkPolicies',
        progress: 80,
        run: (x) => new EgressNetworkPolicies(client, shootNetworkPolicyValues(shoot, seed, networking!)).deploy(x),
      },
      ...(waitForExtensions
        ? [
            { name: 'waiting for the Network', progress: 90, run: (x: ComponentContext) => network.wait(x) },
            { name: 'waiting for the DNS records', progress: 95, run: (x: ComponentContext) => dnsRecords!.wait(x) },
          ]
        : []),
    ];

    const previous = shoot.status?.conditions?.find((cd) => cd.type === CONDITION_TYPE);
    for (const step of steps) {
      try {
        await step.run(c);
      } catch (e) {
        const notReady = e instanceof NotReadyError;
        const description = notReady ? `${step.name}: ${e.message}` : new StepError(step.name, e).message;
        await this.patchStatus(
          shoot,
          {
            lastOperation: this.op(type, notReady ? 'Processing' : 'Error', step.progress, description),
            conditions: [
              condition(
                this.clock,
                CONDITION_TYPE,
                false,
                notReady ? 'Progressing' : 'ReconcileFailed',
                description,
                previous,
              ),
            ],
          },
          ctx,
        );
        if (notReady) return { requeueAfter: NOT_READY_REQUEUE_MS };
        throw new StepError(step.name, e);
      }
    }
    await this.patchStatus(
      shoot,
      {
        lastOperation: this.op(type, 'Succeeded', 100, 'Shoot cluster has been successfully reconciled.'),
        conditions: [
          condition(
            this.clock,
            CONDITION_TYPE,
            true,
            'Reconciled',
            'Networking of every IP family is in place.',
            previous,
          ),
        ],
        networking: networking ?? {},
        observedGeneration: shoot.metadata.generation,
      },
      ctx,
    );
  }

  private async delete(shoot: Shoot, ctx: ReconcileContext): Promise<Result | void> {
    if (!hasFinalizer(shoot, SHOOT_FINALIZER)) return;
    const { client } = this;
    const c: ComponentContext = { signal: ctx.signal };
    const seed = shoot.spec.seedName
      ? decode(Seeds, await client.get(Refs.seed, shoot.spec.seedName, undefined, c)).value
      : undefined;
    const components: [string, DeployWaiter][] = [
      ['the DNS records', new APIServerDNSRecords(client, shoot, this.options.dns, undefined)],
      ['the Network', new NetworkExtension(client, shoot)],
      ['the OperatingSystemConfig', new WorkerOperatingSystemConfig(client, shoot)],
      ['the kube-apiserver service', new APIServerService(client, shoot)],
      ...(seed
        ? [
            [
              'the NetworkPolicies',
              new EgressNetworkPolicies(client, shootNetworkPolicyValues(shoot, Seeds.default(seed), {})),
            ] as [string, DeployWaiter],
          ]
        : []),
    ];
    const namespace = new SeedNamespace(client, shoot);
    let stage = 'deleting';
    try {
      for (const [, component] of components) await component.destroy(c);
      stage = 'waiting for the deletion of';
      for (const [name, component] of components) {
        stage = `waiting for the deletion of ${name}`;
        await component.waitCleanup?.(c);
      }
      stage = 'deleting the seed namespace';
      await namespace.destroy(c);
      await namespace.waitCleanup(c);
    } catch (e) {
      const notReady = e instanceof NotReadyError;
      const description = notReady ? e.message : new StepError(stage, e).message;
      await this.patchStatus(
        shoot,
        { lastOperation: this.op('Delete', notReady ? 'Processing' : 'Error', 50, description) },
        ctx,
      );
      if (notReady) return { requeueAfter: NOT_READY_REQUEUE_MS };
      throw new StepError(stage, e);
    }
    await removeFinalizer(client, Refs.shoot, shoot, SHOOT_FINALIZER, { signal: ctx.signal });
  }

  private op(type: string, state: string, progress: number, description: string): LastOperation {
    return lastOperation(this.clock, type, state, progress, description);
  }

  /** Merge-patches the status subresource, unless nothing but timestamps would change. */
  private async patchStatus(shoot: Shoot, status: Record<string, unknown>, ctx: ReconcileContext): Promise<void> {
    const current = (shoot.status ?? {}) as Record<string, unknown>;
    if (Object.entries(status).every(([k, v]) => sameIgnoringTimestamps(current[k], v))) return;
    await this.client.mergePatch(
      Refs.shoot,
      shoot.metadata.name ?? '',
      shoot.metadata.namespace,
      { status },
      {
        subresource: 'status',
        signal: ctx.signal,
      },
    );
  }
}

/** Create until the first reconcile succeeded, Reconcile afterwards. */
function operationType(shoot: Shoot): 'Create' | 'Reconcile' {
  const op = shoot.status?.lastOperation;
  if (!op) return 'Create';
  if (op.type === 'Create' && op.state !== 'Succeeded') return 'Create';
  return 'Reconcile';
}
