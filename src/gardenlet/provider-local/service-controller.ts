/**
 * provider-local's service controller: plays the cloud load balancer for LoadBalancer Services in shoot
 * namespaces, giving each one host IP per family of the service.
 */
import type { V1Service } from '@kubernetes/client-node';
import type { ResourceClient } from '../../runtime/client.js';
import type { ReconcileContext, Reconciler, Request } from '../../runtime/controller.js';
import { Refs } from '../resources.js';
import { desiredLoadBalancerIngress, type HostIPs } from './ingress.js';

export const SHOOT_NAMESPACE_PREFIX = 'shoot--';

export function isShootLoadBalancer(service: V1Service): boolean {
  return (
    service.spec?.type === 'LoadBalancer' && (service.metadata?.namespace ?? '').startsWith(SHOOT_NAMESPACE_PREFIX)
  );
}

export class ServiceLoadBalancerReconciler implements Reconciler {
  constructor(
    private readonly client: ResourceClient,
    private readonly hostIPs: HostIPs,
  ) {}

  async reconcile(req: Request, ctx: ReconcileContext): Promise<void> {
    const service = await this.client.get<V1Service>(Refs.service, req.name, req.namespace, { signal: ctx.signal });
    if (!service || !isShootLoadBalancer(service) || service.metadata?.deletionTimestamp) return;
    const ingress = desiredLoadBalancerIngress(service, this.hostIPs);
    const current = (service.status?.loadBalancer?.ingress ?? []).map((i) => ({ ip: i.ip, ipMode: i.ipMode }));
    if (JSON.stringify(current) === JSON.stringify(ingress)) return;
    await this.client.mergePatch(
      Refs.service,
      req.name,
      req.namespace,
      { status: { loadBalancer: { ingress } } },
      {
        subresource: 'status',
        signal: ctx.signal,
      },
    );
  }
}
