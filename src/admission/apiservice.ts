/**
 * The APIService that routes `core.gardener.cloud/v1alpha1` (Gardener's `shoots/adminkubeconfig`, see
 * admin-kubeconfig-api.ts) from the API server's aggregator to the admission server, and, for a server outside the
 * cluster (`up`, `run`), the Service it names with the server's address as its endpoint. The aggregator proxies to a
 * Service only, and an endpoint can't be a loopback address: the server must listen on another address of the API
 * server's network namespace (which then runs with `--enable-aggregator-routing`: it has no kube-proxy to reach a
 * ClusterIP). The aggregator checks the serving certificate against `<service>.<namespace>.svc`.
 */
import { isIPv6 } from 'node:net';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ResourceClient } from '../runtime/client.js';
import { Refs } from '../apis/refs.js';
import { ADMIN_KUBECONFIG_API_GROUP, ADMIN_KUBECONFIG_API_VERSION } from './admin-kubeconfig-api.js';
import { FIELD_MANAGER } from './webhook-configurations.js';

export const API_SERVICE_NAME = `${ADMIN_KUBECONFIG_API_VERSION}.${ADMIN_KUBECONFIG_API_GROUP}`;
/** The Service a server outside the cluster is reached through. */
export const LOCAL_API_SERVICE_REFERENCE = { namespace: 'kube-system', name: 'gardener-ipv6-admission' } as const;
/** The DNS name the aggregator checks the serving certificate against. */
export function serviceDNSName(service: { namespace: string; name: string }): string {
  return `${service.name}.${service.namespace}.svc`;
}

export interface APIServiceOptions {
  readonly caBundle: string;
  readonly service: { readonly namespace: string; readonly name: string; readonly port: number };
}

/**
 * The group's CRD versions have priority 1000 and versions 100 and below: the same group priority, and the lowest
 * version priority, so that `v1beta1` stays the group's preferred version.
 */
export function desiredAPIService(opts: APIServiceOptions): KubernetesObject & { spec: object } {
  return {
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name: API_SERVICE_NAME },
    spec: {
      group: ADMIN_KUBECONFIG_API_GROUP,
      version: ADMIN_KUBECONFIG_API_VERSION,
      groupPriorityMinimum: 1000,
      versionPriority: 1,
      service: opts.service,
      caBundle: Buffer.from(opts.caBundle).toString('base64'),
    },
  };
}

/** The Service's port; the endpoint's is the server's. */
const SERVICE_PORT = 443;

/**
 * Registers the API for a server outside the cluster at `address` (not loopback) and `port`: the Service, its
 * endpoint (as Endpoints and as EndpointSlice: the aggregator reads one of them, depending on the version), then the
 * APIService.
 */
export async function deployLocalAPIService(
  client: Pick<ResourceClient, 'apply'>,
  opts: { caBundle: string; address: string; port: number; signal?: AbortSignal },
): Promise<void> {
  const call = { fieldManager: FIELD_MANAGER, force: true, ...(opts.signal ? { signal: opts.signal } : {}) };
  const metadata = { ...LOCAL_API_SERVICE_REFERENCE };
  await client.apply(
    Refs.service,
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata,
      spec: { ports: [{ name: 'https', port: SERVICE_PORT, targetPort: opts.port, protocol: 'TCP' }] },
    },
    call,
  );
  await client.apply(
    Refs.endpoints,
    {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata,
      subsets: [{ addresses: [{ ip: opts.address }], ports: [{ name: 'https', port: opts.port, protocol: 'TCP' }] }],
    } as KubernetesObject,
    call,
  );
  await client.apply(
    Refs.endpointSlice,
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { ...metadata, labels: { 'kubernetes.io/service-name': LOCAL_API_SERVICE_REFERENCE.name } },
      addressType: isIPv6(opts.address) ? 'IPv6' : 'IPv4',
      endpoints: [{ addresses: [opts.address], conditions: { ready: true } }],
      ports: [{ name: 'https', port: opts.port, protocol: 'TCP' }],
    } as KubernetesObject,
    call,
  );
  await client.apply(
    Refs.apiService,
    desiredAPIService({
      caBundle: opts.caBundle,
      service: { ...LOCAL_API_SERVICE_REFERENCE, port: SERVICE_PORT },
    }),
    call,
  );
}

/** Removes them; missing ones are fine. The APIService first: it must not point at a missing Service. */
export async function destroyLocalAPIService(
  client: Pick<ResourceClient, 'delete'>,
  opts: { signal?: AbortSignal } = {},
): Promise<void> {
  const call = opts.signal ? { signal: opts.signal } : {};
  const { namespace, name } = LOCAL_API_SERVICE_REFERENCE;
  await client.delete(Refs.apiService, API_SERVICE_NAME, undefined, call);
  await Promise.all([
    client.delete(Refs.endpointSlice, name, namespace, call),
    client.delete(Refs.endpoints, name, namespace, call),
    client.delete(Refs.service, name, namespace, call),
  ]);
}
