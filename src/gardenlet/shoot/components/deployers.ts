/**
 * The shoot's components with their deploy/destroy/wait steps. Each gets its desired objects from the pure
 * functions next to it and its client injected.
 */
import type { V1Service } from '@kubernetes/client-node';
import type { Seed } from '../../../apis/core/v1beta1/seed.js';
import type { NetworkingStatus, Shoot } from '../../../apis/core/v1beta1/shoot.js';
import type { ResourceClient } from '../../../runtime/client.js';
import type { Clock } from '../../../runtime/clock.js';
import { applyAll, deleteAll, waitExtensionReady, waitGone } from '../../apply.js';
import { NotReadyError, type ComponentContext, type DeployWaiter } from '../../component.js';
import { seedNamespaceName, shootLabels } from '../../names.js';
import { Refs } from '../../resources.js';
import { API_SERVER_SERVICE_NAME, desiredAPIServerService, ingressIPsByFamily } from './apiserver-service.js';
import {
  DNS_SECRET_NAME,
  dnsRecordName,
  desiredDNSRecords,
  desiredDNSSecret,
  staleDNSRecordNames,
  type DNSProviderConfig,
} from './dns-records.js';
import { desiredSeedNamespace } from './namespace.js';
import {
  desiredNetworkPolicies,
  NetworkPolicyName,
  staleNetworkPolicyNames,
  type NetworkPolicyValues,
} from './network-policies.js';
import { desiredNetwork } from './network.js';
import { desiredOperatingSystemConfig } from './operating-system-config.js';
import { shootIPFamilies } from '../../../apis/core/v1beta1/helpers.js';
import { IP_FAMILIES, type IPFamily } from '../../../net/cidr.js';

export class SeedNamespace implements DeployWaiter {
  constructor(
    private readonly client: ResourceClient,
    private readonly shoot: Shoot,
  ) {}
  deploy(ctx: ComponentContext) {
    return applyAll(this.client, Refs.namespace, [desiredSeedNamespace(this.shoot)], ctx);
  }
  destroy(ctx: ComponentContext) {
    return deleteAll(this.client, Refs.namespace, [seedNamespaceName(this.shoot)], undefined, ctx);
  }
  waitCleanup(ctx: ComponentContext) {
    return waitGone(this.client, Refs.namespace, [seedNamespaceName(this.shoot)], undefined, ctx);
  }
}

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
  async waitReady(clock: Clock, ctx: ComponentContext, timeoutMs = LOAD_BALANCER_WAIT_MS): Promise<V1Service> {
    const deadline = clock.now() + timeoutMs;
    for (;;) {
      try {
        return await this.ready();
      } catch (e) {
        if (!(e instanceof NotReadyError) || clock.now() >= deadline) throw e;
      }
      await clock.sleep(LOAD_BALANCER_POLL_MS, ctx.signal);
    }
  }
  /** The service once its load balancer has an address of each of the shoot's families. */
  async ready(): Promise<V1Service> {
    const namespace = seedNamespaceName(this.shoot);
    const service = await this.read(API_SERVER_SERVICE_NAME, namespace);
    const ips = ingressIPsByFamily(service);
    const missing = (shootIPFamilies(this.shoot) as IPFamily[]).filter((f) => ips[f].length === 0);
    if (!service || missing.length > 0) {
      throw new NotReadyError(
        `service ${namespace}/${API_SERVER_SERVICE_NAME} has no ${missing.join(', ')} load balancer address yet`,
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
    if (network) await applyAll(this.client, Refs.network, [network], ctx);
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
    return waitGone(this.client, Refs.network, [this.shoot.metadata.name ?? ''], seedNamespaceName(this.shoot), ctx);
  }
}

/** The API server's A/AAAA records (and the provider secret they reference); records of a family that left go. */
export class APIServerDNSRecords implements DeployWaiter {
  constructor(
    private readonly client: ResourceClient,
    private readonly shoot: Shoot,
    private readonly provider: DNSProviderConfig,
    private readonly service: V1Service | undefined,
  ) {}
  private allNames(): string[] {
    return IP_FAMILIES.flatMap((family) =>
      (['external', 'internal'] as const).map((v) => dnsRecordName(this.shoot, v, family)),
    );
  }
  async deploy(ctx: ComponentContext) {
    const namespace = seedNamespaceName(this.shoot);
    await applyAll(this.client, Refs.secret, [desiredDNSSecret(this.shoot, this.provider)], ctx);
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
  async destroy(ctx: ComponentContext) {
    await deleteAll(this.client, Refs.dnsRecord, this.allNames(), seedNamespaceName(this.shoot), ctx);
  }
  async waitCleanup(ctx: ComponentContext) {
    const namespace = seedNamespaceName(this.shoot);
    await waitGone(this.client, Refs.dnsRecord, this.allNames(), namespace, ctx);
    // The extension reads the secret until its records are gone: remove it last.
    await deleteAll(this.client, Refs.secret, [DNS_SECRET_NAME], namespace, ctx);
  }
}

export class WorkerOperatingSystemConfig implements DeployWaiter {
  constructor(
    private readonly client: ResourceClient,
    private readonly shoot: Shoot,
  ) {}
  private name() {
    return `${this.shoot.metadata.name ?? ''}-worker`;
  }
  async deploy(ctx: ComponentContext) {
    if ((this.shoot.spec.provider?.workers?.length ?? 0) > 0) {
      await applyAll(this.client, Refs.operatingSystemConfig, [desiredOperatingSystemConfig(this.shoot)], ctx);
    } else {
      await this.destroy(ctx);
    }
  }
  destroy(ctx: ComponentContext) {
    return deleteAll(this.client, Refs.operatingSystemConfig, [this.name()], seedNamespaceName(this.shoot), ctx);
  }
  waitCleanup(ctx: ComponentContext) {
    return waitGone(this.client, Refs.operatingSystemConfig, [this.name()], seedNamespaceName(this.shoot), ctx);
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
