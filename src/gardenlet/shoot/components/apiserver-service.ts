import type { V1Service } from '@kubernetes/client-node';
import { ingressIPsByFamily } from '../../../net/load-balancer.js';
import { shootIPFamilies } from '../../../apis/core/v1beta1/helpers.js';
import type { Shoot } from '../../../apis/core/v1beta1/shoot.js';
import { API_SERVER_SERVICE_NAME, seedNamespaceName, shootLabels } from '../../../apis/core/v1beta1/names.js';

import type { ResourceClient } from '../../../runtime/client.js';
import type { Clock } from '../../../runtime/clock.js';
import { applyAll, deleteAll, waitGone } from '../../apply.js';
import { NotReadyError, retryWhileNotReady, type ComponentContext, type DeployWaiter } from '../../component.js';
import { Refs } from '../../../apis/refs.js';
import type { IPFamily } from '../../../net/cidr.js';
// Defined below the components (admission issues kubeconfigs with them too); the gardenlet's take them from here.
export { API_SERVER_SERVICE_NAME };
export { ingressIPsByFamily };

export const API_SERVER_PORT = 443;

/**
 * The LoadBalancer Service in front of the shoot's API server, of the shoot's IP families. Its ingress addresses,
 * filled by the provider-local service controller, are what the DNS records publish.
 */
export function desiredAPIServerService(shoot: Shoot): V1Service {
  const families = shootIPFamilies(shoot);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: API_SERVER_SERVICE_NAME,
      namespace: seedNamespaceName(shoot),
      labels: { ...shootLabels(shoot), app: 'kubernetes', role: 'apiserver' },
    },
    spec: {
      type: 'LoadBalancer',
      ipFamilies: families,
      ipFamilyPolicy: families.length > 1 ? 'RequireDualStack' : 'SingleStack',
      selector: { app: 'kubernetes', role: 'apiserver' },
      ports: [{ name: 'kube-apiserver', protocol: 'TCP', port: API_SERVER_PORT, targetPort: API_SERVER_PORT }],
    },
  };
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
