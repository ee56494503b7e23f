/**
 * provider-local's service controller: plays the cloud load balancer for LoadBalancer Services in shoot
 * namespaces. With address pools (the real local provider) each Service gets its own address per family from the
 * pools, kept until the Service goes; without (objects-only mode, the scale benchmark) every Service gets the same
 * host IP per family.
 */
import type { V1LoadBalancerIngress, V1Service } from '@kubernetes/client-node';
import { isIPFamily } from '../../../apis/validation/ip-families.js';
import type { ResourceClient } from '../../../runtime/client.js';
import type { ReconcileContext, Reconciler, Request, Result } from '../../../runtime/controller.js';
import { canonicalIP, type IPFamily } from '../../../net/cidr.js';
import { Refs } from '../../../apis/refs.js';
import { desiredLoadBalancerIngress, type HostIPs } from './ingress.js';
import type { AddressPool } from './pool.js';
import { NoRouteYetError, type LoadBalancerRoutes } from './routes.js';
import { metav1Time } from '../../../apis/meta/time.js';

export const SHOOT_NAMESPACE_PREFIX = 'shoot--';

export function isShootLoadBalancer(service: V1Service): boolean {
  return (
    service.spec?.type === 'LoadBalancer' && (service.metadata?.namespace ?? '').startsWith(SHOOT_NAMESPACE_PREFIX)
  );
}

/** Where load-balancer addresses come from: the same host IPs for all, or a pool. */
export type AddressSource = { readonly hostIPs: HostIPs } | { readonly pool: AddressPool };

export interface ServiceLoadBalancerOptions {
  readonly client: ResourceClient;
  readonly addresses: AddressSource;
  /** Reads a service (an informer cache). */
  readonly get: (name: string, namespace: string) => V1Service | undefined;
  /** All services (the informer cache): the addresses they hold are taken. */
  readonly list: () => readonly V1Service[];
  /** Routes the addresses to the seed's Nodes (control planes as workloads); without it they are not routed. */
  readonly routes?: LoadBalancerRoutes;
}

const key = (s: V1Service) => `${s.metadata?.namespace}/${s.metadata?.name}`;

/**
 * The Service condition that says why a load balancer has no address (an exhausted or missing pool), as cloud
 * providers' service controllers report it: the gardenlet puts its message into the shoot's status instead of a bare
 * "no address yet". Removed once the Service has its addresses.
 */
export const ADDRESS_CONDITION = 'LoadBalancerAddressAssigned';

/** How soon an address without a route is looked at again (the seed's Nodes are starting). */
export const ROUTE_RETRY_MS = 1_000;

export class ServiceLoadBalancerReconciler implements Reconciler {
  /** Addresses handed out but maybe not yet in the cache: two workers must never pick the same one. */
  private readonly reserved = new Map<string, V1LoadBalancerIngress[]>();

  constructor(private readonly options: ServiceLoadBalancerOptions) {}

  async reconcile(req: Request, ctx: ReconcileContext): Promise<Result | void> {
    const service = this.options.get(req.name, req.namespace ?? '');
    if (!service || !isShootLoadBalancer(service) || service.metadata?.deletionTimestamp) {
      // Gone (or going): its addresses are free once no status carries them.
      this.reserved.delete(`${req.namespace}/${req.name}`);
      this.options.routes?.remove(`${req.namespace}/${req.name}`);
      return;
    }
    const current = (service.status?.loadBalancer?.ingress ?? []).map((i) => ({ ip: i.ip, ipMode: i.ipMode }));
    const failed = service.status?.conditions?.find((c) => c.type === ADDRESS_CONDITION);
    let ingress: V1LoadBalancerIngress[];
    try {
      ingress = this.desired(service, current);
    } catch (e) {
      // Said on the Service (where the gardenlet reads it), then retried with backoff: a shoot deleted frees one.
      const message = (e as Error).message;
      if (failed?.message !== message) {
        const condition = {
          type: ADDRESS_CONDITION,
          status: 'False',
          reason: 'AddressPoolExhausted',
          message,
          lastTransitionTime: metav1Time(Date.now()),
          observedGeneration: service.metadata?.generation ?? 0,
        };
        await this.options.client.mergePatch(
          Refs.service,
          req.name,
          req.namespace,
          { status: { conditions: [condition] } },
          { subresource: 'status', signal: ctx.signal },
        );
      }
      throw e;
    }
    // Reserved before anything is awaited: a Service reconciled meanwhile (another worker) must not take it too.
    this.reserved.set(key(service), ingress);
    // The address is the Service's either way; its route follows once a seed Node is Ready (at start, a few seconds).
    let routed = true;
    try {
      await this.options.routes?.ensure(key(service), ingress.map((i) => i.ip ?? '').filter(Boolean));
    } catch (e) {
      if (!(e instanceof NoRouteYetError)) throw e;
      ctx.logger.debug({ reason: e.message }, 'load-balancer address not routed yet');
      routed = false;
    }
    const again = routed ? undefined : { requeueAfter: ROUTE_RETRY_MS };
    if (JSON.stringify(current) === JSON.stringify(ingress) && failed === undefined) {
      this.reserved.delete(key(service));
      return again;
    }
    await this.options.client.mergePatch(
      Refs.service,
      req.name,
      req.namespace,
      { status: { loadBalancer: { ingress }, ...(failed !== undefined ? { conditions: null } : {}) } },
      { subresource: 'status', signal: ctx.signal },
    );
    return again;
  }

  private desired(service: V1Service, current: V1LoadBalancerIngress[]): V1LoadBalancerIngress[] {
    const source = this.options.addresses;
    if ('hostIPs' in source) return desiredLoadBalancerIngress(service, source.hostIPs);
    const { pool } = source;
    const families = (service.spec?.ipFamilies ?? ['IPv4']).filter(isIPFamily);
    const own = key(service);
    const taken = new Set<string>();
    for (const other of this.options.list()) {
      if (key(other) === own) continue;
      for (const i of other.status?.loadBalancer?.ingress ?? []) if (i.ip) taken.add(canonicalIP(i.ip) ?? i.ip);
    }
    for (const [k, ingress] of this.reserved) if (k !== own) ingress.forEach((i) => i.ip && taken.add(i.ip));
    const mine = [...(this.reserved.get(own) ?? []), ...current];
    return families.map((family: IPFamily) => {
      // Keep what the service has (stable across restarts and reconciles), unless another one took it meanwhile.
      const kept = mine
        .map((i) => canonicalIP(i.ip ?? ''))
        .find((ip) => ip !== undefined && pool.owns(family, ip) && !taken.has(ip));
      const ip = kept ?? pool.allocate(family, taken);
      taken.add(ip);
      return { ip, ipMode: 'VIP' };
    });
  }
}
