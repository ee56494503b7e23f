/**
 * CoreDNS of a local shoot, in its kube-system namespace as Gardener deploys it: a Deployment of the `coredns`
 * binary (in an image built here, see provider-local's machine/images.ts), a `kube-dns` Service on the cluster DNS address the
 * kubelets use (the 10th address of the primary service range), for the shoot's families, and the RBAC to read
 * Services and EndpointSlices. Names outside the cluster's zones go to the `upstreams`: for a shoot the node's own
 * resolvers ({@link COREDNS_NODE_RESOLVERS}, as Gardener's Corefile); without upstreams they get NXDOMAIN. The shoot's
 * is the component {@link ShootCoreDNS}: a ManagedResource the resource manager applies to the shoot.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { dnsServiceFamiliesInEffect } from '../../../apis/core/v1beta1/dual-stack-migration.js';
import { shootIPFamilies } from '../../../apis/core/v1beta1/helpers.js';
import { FIELD_MANAGER, seedNamespaceName } from '../../../apis/core/v1beta1/names.js';
import type { NetworkingStatus, Shoot } from '../../../apis/core/v1beta1/shoot.js';
import { managedResourceObjects, type NamedManifest } from '../../../apis/resources/v1alpha1/manifests.js';
import { type ResourceClient } from '../../../runtime/client.js';
import { apiVersionOf } from '../../../runtime/paths.js';
import { Refs, type ResourceRef } from '../../../apis/refs.js';
import type { IPFamily } from '../../../net/cidr.js';
import { IMAGES } from '../../../imagevector/images.js';
import { NotReadyError, type ComponentContext, type DeployWaiter } from '../../component.js';
import { shootAdminClient } from '../shoot-client.js';
import { machineNetworking, workerPools } from './workers.js';

export const COREDNS_NAMESPACE = 'kube-system';
/** On CoreDNS's pod template: the IP families of its Service. */
export const COREDNS_FAMILIES_ANNOTATION = 'networking.gardener.cloud/ip-families';
export const COREDNS_FIELD_MANAGER = 'gardener-ipv6-provider-local';
/** The upstream that is the node's resolvers: CoreDNS runs with `dnsPolicy: Default`, its resolv.conf the node's. */
export const COREDNS_NODE_RESOLVERS = '/etc/resolv.conf';

export interface CoreDNSOptions {
  /** The Service's ClusterIP(s): the cluster DNS address first, a second family's address optional. */
  clusterIPs: string[];
  families: IPFamily[];
  /** @default cluster.local */
  clusterDomain?: string;
  /** @default 1 */
  replicas?: number;
  /** @default IMAGES.coredns */
  image?: string;
  /** Resolvers for names outside the cluster domain (addresses, or a resolv.conf's path). @default none */
  upstreams?: string[];
}

export const COREDNS_RESOURCES = {
  serviceAccount: Refs.serviceAccount,
  configMap: Refs.configMap,
  service: Refs.service,
  clusterRole: Refs.clusterRole,
  clusterRoleBinding: Refs.clusterRoleBinding,
  deployment: Refs.deployment,
} as const satisfies Record<string, ResourceRef>;

/**
 * With upstreams, one server for everything: the cluster's zones, the rest forwarded. Without, the cluster's zones
 * in one server and every other name answered NXDOMAIN at once by a second: a name outside the cluster then ends a
 * resolver's search list quickly (a SERVFAIL would stop the search before `<name>.<namespace>.svc...` was tried,
 * and log an error per query).
 */
export function corefile(opts: Pick<CoreDNSOptions, 'clusterDomain' | 'upstreams'>): string {
  const domain = opts.clusterDomain ?? 'cluster.local';
  const upstreams = opts.upstreams ?? [];
  const clusterZones = [
    '    errors',
    '    health {',
    '        lameduck 5s',
    '    }',
    '    ready',
    `    kubernetes ${domain} in-addr.arpa ip6.arpa {`,
    '        pods insecure',
    // Reverse lookups of addresses outside the cluster go on to the upstreams when there are some.
    ...(upstreams.length > 0 ? ['        fallthrough in-addr.arpa ip6.arpa'] : []),
    '        ttl 30',
    '    }',
  ];
  if (upstreams.length > 0) {
    return [
      '.:53 {',
      ...clusterZones,
      `    forward . ${upstreams.join(' ')}`,
      '    cache 30',
      '    loop',
      '    loadbalance',
      '}',
      '',
    ].join('\n');
  }
  return [
    `${domain}:53 in-addr.arpa:53 ip6.arpa:53 {`,
    ...clusterZones,
    '    cache 30',
    '    loadbalance',
    '}',
    '.:53 {',
    '    template ANY ANY {',
    '        rcode NXDOMAIN',
    '    }',
    '}',
    '',
  ].join('\n');
}

const LABELS = { 'k8s-app': 'kube-dns' };

/** The objects, in apply order. */
export function coreDNSObjects(opts: CoreDNSOptions): { ref: ResourceRef; object: KubernetesObject }[] {
  const ns = COREDNS_NAMESPACE;
  const meta = (name: string, namespaced = true) => ({
    name,
    ...(namespaced ? { namespace: ns } : {}),
    labels: LABELS,
  });
  return [
    { ref: COREDNS_RESOURCES.serviceAccount, object: { metadata: meta('coredns') } },
    {
      ref: COREDNS_RESOURCES.clusterRole,
      object: {
        metadata: meta('system:coredns', false),
        rules: [
          { apiGroups: [''], resources: ['endpoints', 'services', 'pods', 'namespaces'], verbs: ['list', 'watch'] },
          { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
        ],
      } as KubernetesObject,
    },
    {
      ref: COREDNS_RESOURCES.clusterRoleBinding,
      object: {
        metadata: meta('system:coredns', false),
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:coredns' },
        subjects: [{ kind: 'ServiceAccount', name: 'coredns', namespace: ns }],
      } as KubernetesObject,
    },
    {
      ref: COREDNS_RESOURCES.configMap,
      object: { metadata: meta('coredns'), data: { Corefile: corefile(opts) } } as KubernetesObject,
    },
    {
      ref: COREDNS_RESOURCES.deployment,
      object: {
        metadata: meta('coredns'),
        spec: {
          replicas: opts.replicas ?? 1,
          selector: { matchLabels: LABELS },
          template: {
            // Its pods are replaced when the Service gains a family (a dual-stack migration), so that every one
            // has an address of each (a pod's addresses are those of the Node it started on).
            metadata: { labels: LABELS, annotations: { [COREDNS_FAMILIES_ANNOTATION]: opts.families.join(',') } },
            spec: {
              serviceAccountName: 'coredns',
              // CoreDNS must not resolve through itself.
              dnsPolicy: 'Default',
              containers: [
                {
                  name: 'coredns',
                  image: opts.image ?? IMAGES.coredns,
                  imagePullPolicy: 'IfNotPresent',
                  args: ['-conf', '/etc/coredns/Corefile'],
                  ports: [
                    { name: 'dns', containerPort: 53, protocol: 'UDP' },
                    { name: 'dns-tcp', containerPort: 53, protocol: 'TCP' },
                  ],
                  readinessProbe: { httpGet: { path: '/ready', port: 8181 }, periodSeconds: 2 },
                  livenessProbe: {
                    httpGet: { path: '/health', port: 8080 },
                    initialDelaySeconds: 10,
                    periodSeconds: 10,
                  },
                  volumeMounts: [{ name: 'config', mountPath: '/etc/coredns', readOnly: true }],
                },
              ],
              volumes: [{ name: 'config', configMap: { name: 'coredns' } }],
            },
          },
        },
      } as KubernetesObject,
    },
    {
      ref: COREDNS_RESOURCES.service,
      object: {
        metadata: meta('kube-dns'),
        spec: {
          selector: LABELS,
          clusterIP: opts.clusterIPs[0],
          clusterIPs: opts.clusterIPs,
          ipFamilies: opts.families,
          ipFamilyPolicy: opts.families.length > 1 ? 'RequireDualStack' : 'SingleStack',
          ports: [
            { name: 'dns', port: 53, targetPort: 53, protocol: 'UDP' },
            { name: 'dns-tcp', port: 53, targetPort: 53, protocol: 'TCP' },
          ],
        },
      } as KubernetesObject,
    },
  ];
}

/** Applies the objects (server-side apply, so re-running it converges). */
export async function deployCoreDNS(client: ResourceClient, opts: CoreDNSOptions): Promise<void> {
  for (const { ref, object } of coreDNSObjects(opts)) {
    await client.apply(ref, object, { fieldManager: COREDNS_FIELD_MANAGER, force: true });
  }
}

/** Whether all replicas of the Deployment are available. */
export async function coreDNSReady(client: ResourceClient): Promise<boolean> {
  const d = await client.get<
    KubernetesObject & { spec?: { replicas?: number }; status?: { availableReplicas?: number } }
  >(COREDNS_RESOURCES.deployment, 'coredns', COREDNS_NAMESPACE);
  return d !== undefined && (d.status?.availableReplicas ?? 0) >= (d.spec?.replicas ?? 1);
}

/**
 * Why CoreDNS does not serve `families` families yet (its Service short of a ClusterIP per family, its Deployment not
 * rolled out to available pods of its current template), or undefined once it does.
 */
export async function coreDNSNotServing(
  client: ResourceClient,
  families: number,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const opts = signal ? { signal } : {};
  const service = await client.get<KubernetesObject & { spec?: { clusterIPs?: string[] } }>(
    COREDNS_RESOURCES.service,
    'kube-dns',
    COREDNS_NAMESPACE,
    opts,
  );
  const ips = service?.spec?.clusterIPs?.length ?? 0;
  if (ips < families) return `CoreDNS's Service has ${ips} of ${families} ClusterIPs yet`;
  const d = await client.get<
    KubernetesObject & {
      spec?: { replicas?: number };
      status?: { observedGeneration?: number; replicas?: number; updatedReplicas?: number; availableReplicas?: number };
    }
  >(COREDNS_RESOURCES.deployment, 'coredns', COREDNS_NAMESPACE, opts);
  const want = d?.spec?.replicas ?? 1;
  const rolled =
    d !== undefined &&
    (d.status?.observedGeneration ?? 0) >= (d.metadata?.generation ?? 1) &&
    (d.status?.updatedReplicas ?? 0) >= want &&
    (d.status?.availableReplicas ?? 0) >= want &&
    (d.status?.replicas ?? 0) === want;
  return rolled ? undefined : 'CoreDNS is not available yet';
}

/** The ManagedResource (and its Secret) of the shoot's CoreDNS, Gardener's `shoot-core-coredns`. */
export const COREDNS_MANAGED_RESOURCE = 'shoot-core-coredns';

/**
 * CoreDNS's objects and the NetworkPolicy `gardener.cloud--allow-dns` (DNS queries to CoreDNS from anywhere, so
 * that policies elsewhere never cut it off and nothing else reaches it), as a Secret of manifests and the
 * ManagedResource that hands them to the shoot.
 */
export function coreDNSManagedResource(
  seedNamespace: string,
  opts: CoreDNSOptions,
): { secret: KubernetesObject; managedResource: KubernetesObject } {
  const objects: KubernetesObject[] = coreDNSObjects(opts).map(({ ref, object }) => ({
    apiVersion: apiVersionOf(ref),
    kind: ref.kind,
    ...object,
  }));
  objects.push({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'gardener.cloud--allow-dns', namespace: 'kube-system' },
    spec: {
      podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
      policyTypes: ['Ingress'],
      ingress: [
        {
          ports: [
            { protocol: 'UDP', port: 53 },
            { protocol: 'TCP', port: 53 },
          ],
        },
      ],
    },
  } as KubernetesObject);
  const { secret, managedResource } = managedResourceObjects(
    seedNamespace,
    COREDNS_MANAGED_RESOURCE,
    objects as unknown as NamedManifest[],
  );
  return { secret: secret as KubernetesObject, managedResource: managedResource as KubernetesObject };
}

/**
 * The shoot's CoreDNS through the resource manager, as Gardener's shoot-core ManagedResources: deployed once the
 * control plane answers, ready once it serves the shoot's families in effect (during a dual-stack migration its
 * Service keeps the primary family until the network runs both).
 */
export class ShootCoreDNS implements DeployWaiter {
  constructor(
    private readonly client: ResourceClient,
    private readonly shoot: Shoot,
    private readonly networking: NetworkingStatus,
    /** A client of the shoot's API server, closed after use. */
    private readonly shootClient: (ctx: ComponentContext) => Promise<ResourceClient> = (ctx) =>
      shootAdminClient(client, shoot, ctx),
  ) {}

  async deploy(ctx: ComponentContext): Promise<void> {
    const networks = machineNetworking(this.shoot, this.networking);
    const families = dnsServiceFamiliesInEffect(networks.families, this.shoot);
    const machines = (this.shoot.spec.provider?.workers ?? []).reduce((n, w) => n + (w.minimum ?? 0), 0);
    const { secret, managedResource } = coreDNSManagedResource(seedNamespaceName(this.shoot), {
      clusterIPs: networks.clusterDNS.slice(0, families.length),
      families,
      replicas: Math.min(2, Math.max(1, machines)),
      // As Gardener's: names outside the cluster go to the machine's own resolvers (CoreDNS runs with dnsPolicy
      // Default, so /etc/resolv.conf is the kubelet's resolvConf, which lists them).
      upstreams: [COREDNS_NODE_RESOLVERS],
    });
    const opts = { fieldManager: FIELD_MANAGER, force: true, signal: ctx.signal };
    await this.client.apply(Refs.secret, secret, opts);
    await this.client.apply(Refs.managedResource, managedResource, opts);
  }

  /**
   * Serving the shoot's families in effect. Pools at minimum 0 (to be scaled up later): CoreDNS has nowhere to run
   * until then, and the care controller's SystemComponentsHealthy says so.
   */
  async wait(ctx: ComponentContext): Promise<void> {
    if (workerPools(this.shoot).every((p) => p.minimum <= 0)) return;
    const families = dnsServiceFamiliesInEffect(shootIPFamilies(this.shoot), this.shoot).length;
    const shootClient = await this.shootClient(ctx);
    try {
      const why = await coreDNSNotServing(shootClient, families, ctx.signal);
      if (why !== undefined) throw new NotReadyError(why);
    } finally {
      shootClient.close();
    }
  }

  /** Nothing to remove: the ManagedResource goes with the seed namespace, CoreDNS with the shoot. */
  async destroy(): Promise<void> {}
}
