/**
 * The shoot's components with their deploy/destroy/wait steps. Each gets its desired objects from the pure
 * functions next to it and its client injected.
 */
import type { KubernetesObject, V1Service } from '@kubernetes/client-node';
import type { Seed } from '../../../apis/core/v1beta1/seed.js';
import type { NetworkingStatus, Shoot } from '../../../apis/core/v1beta1/shoot.js';
import type { DNSRecord } from '../../../apis/extensions/v1alpha1/dnsrecord.js';
import { type ResourceClient } from '../../../runtime/client.js';
import { isAlreadyExists } from '../../../runtime/errors.js';
import { removeFinalizer } from '../../../runtime/finalizers.js';
import type { Clock } from '../../../runtime/clock.js';
import { applyAll, deleteAll, waitExtensionReady, waitExtensionsGone, waitGone } from '../../apply.js';
import { NotReadyError, retryWhileNotReady, type ComponentContext, type DeployWaiter } from '../../component.js';
import {
  Annotations,
  OPERATION_RECONCILE,
  inProjectNamespace,
  notInProjectNamespaceMessage,
  seedNamespaceName,
  shootLabels,
} from '../../../apis/core/v1beta1/names.js';
import { Refs } from '../../../apis/refs.js';
import { API_SERVER_SERVICE_NAME, desiredAPIServerService, ingressIPsByFamily } from './apiserver-service.js';
import {
  DNS_SECRET_FINALIZER,
  DNS_SECRET_NAME,
  desiredDNSRecords,
  desiredDNSSecret,
  staleDNSRecordNames,
  type DNSProviderConfig,
} from './dns-records.js';
import { desiredSeedNamespace } from './namespace.js';
import { describeOwner, SeedNamespaceOwnedError, seedNamespaceOwnership } from '../ownership.js';
import {
  desiredNetworkPolicies,
  NetworkPolicyName,
  staleNetworkPolicyNames,
  type NetworkPolicyValues,
} from './network-policies.js';
import { desiredNetwork } from './network.js';
import { desiredOperatingSystemConfigs, operatingSystemConfigPrefix } from './operating-system-config.js';
import { shootIPFamilies } from '../../../apis/core/v1beta1/helpers.js';
import type { IPFamily } from '../../../net/cidr.js';

/**
 * The seed namespace, the shoot's own only: one another shoot owns is neither adopted nor deleted (see
 * ownership.ts). One that is being deleted is waited for (and created again once it is gone).
 */
export class SeedNamespace implements DeployWaiter {
  constructor(
    private readonly client: ResourceClient,
    /** Where the shoot that owns a namespace is looked up. */
    private readonly garden: ResourceClient,
    private readonly shoot: Shoot,
  ) {}
  async deploy(ctx: ComponentContext) {
    const name = seedNamespaceName(this.shoot);
    if (!inProjectNamespace(this.shoot)) throw new Error(notInProjectNamespaceMessage(this.shoot));
    const ownership = await seedNamespaceOwnership(this.client, this.garden, this.shoot, ctx);
    switch (ownership.kind) {
      case 'absent':
        try {
          await this.client.create(Refs.namespace, desiredSeedNamespace(this.shoot), { signal: ctx.signal });
        } catch (e) {
          // Created meanwhile (by whom decides the next look).
          if (isAlreadyExists(e)) throw new NotReadyError(`the seed namespace ${name} was created meanwhile`);
          throw e;
        }
        return;
      case 'foreign':
        if (ownership.terminating) {
          throw new NotReadyError(`the seed namespace ${name} of ${describeOwner(ownership.owner)} is being deleted`);
        }
        throw new SeedNamespaceOwnedError(name, ownership.owner);
      default:
        if (ownership.terminating) {
          // Deleted under the shoot: its DNS records go with it, and they need their secret until then.
          await releaseDNSSecret(this.client, name, ctx);
          throw new NotReadyError(`the seed namespace ${name} is being deleted; it is created again once it is gone`);
        }
        await applyAll(this.client, Refs.namespace, [desiredSeedNamespace(this.shoot)], ctx);
    }
  }
  /** Deletes the namespace when it is the shoot's (exactly the one checked: a UID precondition). */
  async destroy(ctx: ComponentContext) {
    const ownership = await seedNamespaceOwnership(this.client, this.garden, this.shoot, ctx);
    if (ownership.kind !== 'own' && ownership.kind !== 'orphaned') return;
    if (ownership.terminating) return;
    await this.client.delete(Refs.namespace, seedNamespaceName(this.shoot), undefined, {
      signal: ctx.signal,
      ...(ownership.uid ? { preconditions: { uid: ownership.uid } } : {}),
    });
  }
  waitCleanup(ctx: ComponentContext) {
    return waitGone(this.client, Refs.namespace, [seedNamespaceName(this.shoot)], undefined, ctx);
  }
}

/** The Service condition by which a load-balancer provider says why it gave no address (provider-local sets it). */
export const LOAD_BALANCER_ADDRESS_CONDITION = 'LoadBalancerAddressAssigned';

/** The API server's LoadBalancer service; `wait` returns once every family has an ingress address. */
/** How long a reconcile waits for the load balancer address before it requeues, and how often it looks. */
export const LOAD_BALANCER_WAIT_MS = 2_000;
export const LOAD_BALANCER_POLL_MS = 50;

export class APIServerService implements DeployWaiter {
  constructor(
    private readonly client: ResourceClient,
    private readonly shoot: Shoot,
    /** Where the service is read from when waiting (an informer cache); the server by default. */
    private readonly read: (name: string, namespace: string) => Promise<V1Service | undefined> = (name, namespace) =>
      client.get<V1Service>(Refs.service, name, namespace),
  ) {}
  deploy(ctx: ComponentContext) {
    return applyAll(this.client, Refs.service, [desiredAPIServerService(this.shoot)], ctx);
  }
  async wait(): Promise<void> {
    await this.ready();
  }
  /**
   * `ready`, retried for a little while: reads come from the informer cache, so waiting for provider-local to set
   * the address costs the server nothing and spares the whole reconcile a second pass.
   */
  waitReady(clock: Clock, ctx: ComponentContext, timeoutMs = LOAD_BALANCER_WAIT_MS): Promise<V1Service> {
    return retryWhileNotReady(() => this.ready(), {
      clock,
      forMs: timeoutMs,
      intervalMs: LOAD_BALANCER_POLL_MS,
      signal: ctx.signal,
    });
  }
  /** The service once its load balancer has an address of each of the shoot's families. */
  async ready(): Promise<V1Service> {
    const namespace = seedNamespaceName(this.shoot);
    const service = await this.read(API_SERVER_SERVICE_NAME, namespace);
    const ips = ingressIPsByFamily(service);
    const missing = (shootIPFamilies(this.shoot) as IPFamily[]).filter((f) => ips[f].length === 0);
    if (!service || missing.length > 0) {
      // The provider's reason, when it gave one (provider-local: an exhausted address pool).
      const reason = service?.status?.conditions?.find(
        (c) => c.type === LOAD_BALANCER_ADDRESS_CONDITION && c.status === 'False',
      )?.message;
      throw new NotReadyError(
        `service ${namespace}/${API_SERVER_SERVICE_NAME} has no ${missing.join(', ')} load balancer address yet` +
          (reason ? `: ${reason}` : ''),
      );
    }
    return service;
  }
  destroy(ctx: ComponentContext) {
    return deleteAll(this.client, Refs.service, [API_SERVER_SERVICE_NAME], seedNamespaceName(this.shoot), ctx);
  }
  waitCleanup(ctx: ComponentContext) {
    return waitGone(this.client, Refs.service, [API_SERVER_SERVICE_NAME], seedNamespaceName(this.shoot), ctx);
  }
}

export class NetworkExtension implements DeployWaiter {
  constructor(
    private readonly client: ResourceClient,
    private readonly shoot: Shoot,
  ) {}
  async deploy(ctx: ComponentContext) {
    const network = desiredNetwork(this.shoot);
    if (!network) return;
    // The extension reads the shoot from its Cluster too (a dual-stack migration's stage): reconciled at each deploy.
    network.metadata.annotations = { ...network.metadata.annotations, [Annotations.operation]: OPERATION_RECONCILE };
    await applyAll(this.client, Refs.network, [network], ctx);
  }
  async wait(ctx: ComponentContext) {
    if (desiredNetwork(this.shoot)) {
      await waitExtensionReady(
        this.client,
        Refs.network,
        this.shoot.metadata.name ?? '',
        seedNamespaceName(this.shoot),
        ctx,
      );
    }
  }
  destroy(ctx: ComponentContext) {
    return deleteAll(this.client, Refs.network, [this.shoot.metadata.name ?? ''], seedNamespaceName(this.shoot), ctx);
  }
  waitCleanup(ctx: ComponentContext) {
    const name = this.shoot.metadata.name ?? '';
    return waitExtensionsGone(this.client, Refs.network, [name], seedNamespaceName(this.shoot), ctx);
  }
}

/**
 * The API server's A/AAAA records and the provider secret they reference; records of a family that left go. The
 * secret carries a finalizer of the gardenlet's as long as a DNSRecord of the namespace references it: however the
 * records go (the shoot's deletion, or the namespace deleted under it), the DNS extension can still read the
 * secret to remove them, and no record is left with a finalizer nobody can remove.
 */
export class APIServerDNSRecords implements DeployWaiter {
  constructor(
    private readonly client: ResourceClient,
    private readonly shoot: Shoot,
    private readonly provider: DNSProviderConfig,
    private readonly service: V1Service | undefined,
  ) {}
  async deploy(ctx: ComponentContext) {
    const namespace = seedNamespaceName(this.shoot);
    const secret = desiredDNSSecret(this.shoot, this.provider);
    secret.metadata = { ...secret.metadata, finalizers: [DNS_SECRET_FINALIZER] };
    await applyAll(this.client, Refs.secret, [secret], ctx);
    await applyAll(
      this.client,
      Refs.dnsRecord,
      desiredDNSRecords(this.shoot, ingressIPsByFamily(this.service), this.provider),
      ctx,
    );
    await deleteAll(this.client, Refs.dnsRecord, staleDNSRecordNames(this.shoot), namespace, ctx);
  }
  async wait(ctx: ComponentContext) {
    const namespace = seedNamespaceName(this.shoot);
    for (const record of desiredDNSRecords(this.shoot, ingressIPsByFamily(this.service), this.provider)) {
      await waitExtensionReady(this.client, Refs.dnsRecord, record.metadata.name ?? '', namespace, ctx);
    }
    await waitGone(this.client, Refs.dnsRecord, staleDNSRecordNames(this.shoot), namespace, ctx);
  }
  /** Deletes every DNSRecord of the seed namespace: the namespace is the shoot's, and they all need the secret. */
  async destroy(ctx: ComponentContext) {
    const namespace = seedNamespaceName(this.shoot);
    const records = await this.client.list(Refs.dnsRecord, { namespace, signal: ctx.signal });
    const names = records.items.map((r) => r.metadata?.name ?? '');
    await deleteAll(this.client, Refs.dnsRecord, names, namespace, ctx);
  }
  async waitCleanup(ctx: ComponentContext) {
    const namespace = seedNamespaceName(this.shoot);
    await waitExtensionsGone(this.client, Refs.dnsRecord, 'all', namespace, ctx);
    // The extension reads the secret until the records are gone: remove it last.
    await releaseDNSSecret(this.client, namespace, ctx);
    await deleteAll(this.client, Refs.secret, [DNS_SECRET_NAME], namespace, ctx);
  }
}

/**
 * Removes the gardenlet's finalizer from the namespace's DNS secret once no DNSRecord of the namespace references
 * it any more (until then it keeps it).
 */
export async function releaseDNSSecret(client: ResourceClient, namespace: string, ctx: ComponentContext) {
  const records = await client.list<DNSRecord & KubernetesObject>(Refs.dnsRecord, { namespace, signal: ctx.signal });
  if (records.items.some((r) => usesSecret(r, namespace, DNS_SECRET_NAME))) return;
  const secret = { metadata: { name: DNS_SECRET_NAME, namespace } };
  await removeFinalizer(client, Refs.secret, secret, DNS_SECRET_FINALIZER, { signal: ctx.signal });
}

function usesSecret(record: DNSRecord, namespace: string, name: string): boolean {
  const ref = record.spec?.secretRef;
  return ref?.name === name && (ref.namespace ?? record.metadata.namespace ?? namespace) === namespace;
}

/**
 * The worker OperatingSystemConfigs, one per pool (`<shoot>-worker-<pool>`); those of pools the shoot no longer has
 * go, and so does every one when it has no workers.
 */
export class WorkerOperatingSystemConfig implements DeployWaiter {
  constructor(
    private readonly client: ResourceClient,
    private readonly shoot: Shoot,
  ) {}
  /** The names of the shoot's worker OSCs the seed namespace holds. */
  private async present(ctx: ComponentContext): Promise<string[]> {
    const prefix = operatingSystemConfigPrefix(this.shoot);
    const list = await this.client.list(Refs.operatingSystemConfig, {
      namespace: seedNamespaceName(this.shoot),
      signal: ctx.signal,
    });
    return list.items.map((o) => o.metadata?.name ?? '').filter((name) => name.startsWith(prefix));
  }
  async deploy(ctx: ComponentContext) {
    const desired = desiredOperatingSystemConfigs(this.shoot);
    await applyAll(this.client, Refs.operatingSystemConfig, desired, ctx);
    const wanted = new Set(desired.map((o) => o.metadata.name));
    const stale = (await this.present(ctx)).filter((name) => !wanted.has(name));
    await deleteAll(this.client, Refs.operatingSystemConfig, stale, seedNamespaceName(this.shoot), ctx);
  }
  async destroy(ctx: ComponentContext) {
    await deleteAll(
      this.client,
      Refs.operatingSystemConfig,
      await this.present(ctx),
      seedNamespaceName(this.shoot),
      ctx,
    );
  }
  async waitCleanup(ctx: ComponentContext) {
    const namespace = seedNamespaceName(this.shoot);
    await waitExtensionsGone(this.client, Refs.operatingSystemConfig, await this.present(ctx), namespace, ctx);
  }
}

/** The egress NetworkPolicies of a namespace (a shoot's, or `garden` for the seed). */
export class EgressNetworkPolicies implements DeployWaiter {
  constructor(
    private readonly client: ResourceClient,
    private readonly values: NetworkPolicyValues,
  ) {}
  async deploy(ctx: ComponentContext) {
    await applyAll(this.client, Refs.networkPolicy, desiredNetworkPolicies(this.values), ctx);
    await deleteAll(this.client, Refs.networkPolicy, staleNetworkPolicyNames(this.values), this.values.namespace, ctx);
  }
  destroy(ctx: ComponentContext) {
    return destroyNetworkPolicies(this.client, this.values.namespace, ctx);
  }
}

/** Deletes the policies this component manages, by name: no seed needed. */
export function destroyNetworkPolicies(
  client: ResourceClient,
  namespace: string,
  ctx: ComponentContext,
): Promise<void> {
  return deleteAll(client, Refs.networkPolicy, Object.values(NetworkPolicyName), namespace, ctx);
}

export function shootNetworkPolicyValues(shoot: Shoot, seed: Seed, networking: NetworkingStatus): NetworkPolicyValues {
  return { namespace: seedNamespaceName(shoot), seed, shootNetworks: networking, labels: shootLabels(shoot) };
}
