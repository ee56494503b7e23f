/**
 * The shoot's control plane: its CA and service-account key in Secrets of the seed namespace (created once, kept
 * for the shoot's life, as Gardener's secrets manager does), the `<shoot>.ca-cluster` ConfigMap in the project
 * namespace for users, the `<shoot>.ca-client` InternalSecret there for the garden's `shoots/adminkubeconfig` (the
 * seed may be another cluster), and the control plane itself at the load-balancer addresses: workloads in the seed
 * (control-plane-workloads.ts).
 */
import type { V1ConfigMap, V1Secret, V1Service } from '@kubernetes/client-node';
import type { NetworkingStatus, Shoot } from '../../../apis/core/v1beta1/shoot.js';
import { shootIPFamilies } from '../../../apis/core/v1beta1/helpers.js';
import { isIPFamily } from '../../../apis/validation/ip-families.js';
import type { ControlPlaneSpec } from './controlplane/args.js';
import type { ControlPlaneSecrets } from './controlplane/certificates.js';
import type { IPFamily } from '../../../net/cidr.js';
import { cidrsByFamilies } from '../../../apis/core/v1beta1/networks.js';
import { createCA, createSigningKeyPair, type CertificatePair } from '../../../pki/certificates.js';
import { type ResourceClient } from '../../../runtime/client.js';
import { isAlreadyExists } from '../../../runtime/errors.js';
import { applyAll, deleteAll } from '../../apply.js';
import { NotReadyError, type ComponentContext, type DeployWaiter } from '../../component.js';
import {
  apiServerDomain,
  CA_SECRET_NAME,
  ETCD_CA_SECRET_NAME,
  SERVICE_ACCOUNT_KEY_SECRET_NAME,
  seedNamespaceName,
  shootLabels,
} from '../../../apis/core/v1beta1/names.js';
import { Refs } from '../../../apis/refs.js';
import { caClientName, type InternalSecret } from '../../../apis/core/v1beta1/internalsecret.js';
import { ingressIPsByFamily } from './apiserver-service.js';
import { ShootControlPlaneWorkloads } from './control-plane-workloads.js';

export { CA_SECRET_NAME, SERVICE_ACCOUNT_KEY_SECRET_NAME };

/** Removes what the shoot's control plane put into its project namespace: `<shoot>.ca-cluster` and `<shoot>.ca-client`. */
export async function deleteGardenCAObjects(
  garden: ResourceClient,
  shoot: Shoot,
  ctx: ComponentContext,
): Promise<void> {
  await deleteAll(garden, Refs.configMap, [caClusterName(shoot)], shoot.metadata.namespace, ctx);
  await deleteAll(
    garden,
    Refs.internalSecret,
    [caClientName(shoot.metadata.name ?? '')],
    shoot.metadata.namespace,
    ctx,
  );
}
/** How long a shoot's CA lives (Gardener's: ten years). */
const CA_VALIDITY_MS = 10 * 365 * 24 * 3600_000;

export function caClusterName(shoot: Shoot): string {
  return `${shoot.metadata.name ?? ''}.ca-cluster`;
}

/** The `<shoot>.ca-cluster` ConfigMap in the project namespace: the CA a kubeconfig for the shoot trusts. */
export function desiredCAClusterConfigMap(shoot: Shoot, caPEM: string): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: caClusterName(shoot),
      namespace: shoot.metadata.namespace ?? 'default',
      labels: { ...shootLabels(shoot), 'gardener.cloud/purpose': 'ca-cluster' },
    },
    data: { 'ca.crt': caPEM },
  };
}

/** The `<shoot>.ca-client` InternalSecret in the project namespace: the client CA the garden signs admin kubeconfigs with. */
export function desiredCAClientInternalSecret(shoot: Shoot, ca: CertificatePair): InternalSecret {
  return {
    apiVersion: 'core.gardener.cloud/v1beta1',
    kind: 'InternalSecret',
    metadata: {
      name: caClientName(shoot.metadata.name ?? ''),
      namespace: shoot.metadata.namespace ?? 'default',
      labels: { ...shootLabels(shoot), 'gardener.cloud/purpose': 'ca-client' },
    },
    type: 'Opaque',
    data: { 'ca.crt': b64(ca.certPEM), 'ca.key': b64(ca.keyPEM) },
  };
}

/** The IPv6 node mask in effect, and the IPv4 one, per family, as docs/api-reference.md ("Defaulting") defines them. */
export function nodeMaskSizes(shoot: Shoot): Partial<Record<IPFamily, number>> {
  const kcm = shoot.spec.kubernetes?.kubeControllerManager;
  const families = shootIPFamilies(shoot).filter(isIPFamily);
  const masks: Partial<Record<IPFamily, number>> = {};
  if (families.length === 1 && families[0] === 'IPv6') {
    masks.IPv6 = kcm?.nodeCIDRMaskSizeIPv6 ?? kcm?.nodeCIDRMaskSize ?? 64;
    return masks;
  }
  if (kcm?.nodeCIDRMaskSize !== undefined) masks.IPv4 = kcm.nodeCIDRMaskSize;
  if (families.includes('IPv6')) masks.IPv6 = kcm?.nodeCIDRMaskSizeIPv6 ?? 64;
  return masks;
}

/** The provider's input: the shoot's ranges (from its networking status) and its load-balancer addresses. */
export function controlPlaneSpec(
  shoot: Shoot,
  networking: NetworkingStatus,
  service: V1Service,
  domain: string,
): ControlPlaneSpec {
  const families = shootIPFamilies(shoot).filter(isIPFamily);
  const ingress = ingressIPsByFamily(service);
  const addresses: Partial<Record<IPFamily, string>> = {};
  for (const family of families) {
    const ip = ingress[family][0];
    if (ip === undefined) throw new NotReadyError(`the kube-apiserver service has no ${family} address yet`);
    addresses[family] = ip;
  }
  const workers = (shoot.spec.provider?.workers?.length ?? 0) > 0;
  return {
    name: seedNamespaceName(shoot),
    families,
    addresses,
    serviceCIDRs: cidrsByFamilies(networking.services, families),
    podCIDRs: workers ? cidrsByFamilies(networking.pods, families) : [],
    nodeCIDRMaskSizes: nodeMaskSizes(shoot),
    externalDomain: apiServerDomain(shoot, 'external', domain),
    internalDomain: apiServerDomain(shoot, 'internal', domain),
  };
}

const b64 = (text: string) => Buffer.from(text).toString('base64');
const unb64 = (text: string | undefined) => Buffer.from(text ?? '', 'base64').toString('utf8');

/** Reads a Secret, or creates it with `make()`'s data when it doesn't exist yet; never replaces one. */
export async function getOrCreateSecret(
  client: ResourceClient,
  shoot: Shoot,
  name: string,
  make: () => Promise<Record<string, string>>,
  ctx: ComponentContext,
): Promise<Record<string, string>> {
  const namespace = seedNamespaceName(shoot);
  const read = async () => (await client.get<V1Secret>(Refs.secret, name, namespace, { signal: ctx.signal }))?.data;
  const existing = await read();
  if (existing) return existing;
  const data = Object.fromEntries(Object.entries(await make()).map(([k, v]) => [k, b64(v)]));
  const secret: V1Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, labels: { ...shootLabels(shoot), 'gardener.cloud/purpose': name } },
    type: 'Opaque',
    data,
  };
  try {
    await client.create(Refs.secret, secret, { signal: ctx.signal });
    return data;
  } catch (e) {
    // Another reconcile created it first: that one counts.
    if (!isAlreadyExists(e)) throw e;
    return (await read()) ?? data;
  }
}

/** A CA kept in the Secret `name` of the seed namespace (`ca.crt`, `ca.key`), created on first use. */
async function getOrCreateCA(
  client: ResourceClient,
  shoot: Shoot,
  name: string,
  commonNamePrefix: string,
  ctx: ComponentContext,
): Promise<CertificatePair> {
  const data = await getOrCreateSecret(
    client,
    shoot,
    name,
    async () => {
      const pair = await createCA(`${commonNamePrefix}-${seedNamespaceName(shoot)}`, {
        notAfter: new Date(Date.now() + CA_VALIDITY_MS),
      });
      return { 'ca.crt': pair.certPEM, 'ca.key': pair.keyPEM };
    },
    ctx,
  );
  return { certPEM: unb64(data['ca.crt']), keyPEM: unb64(data['ca.key']) };
}

/** The shoot's CA and service-account key pair, created on first use. */
export async function ensureControlPlaneSecrets(
  client: ResourceClient,
  shoot: Shoot,
  ctx: ComponentContext,
): Promise<ControlPlaneSecrets> {
  const [ca, sa] = await Promise.all([
    getOrCreateCA(client, shoot, CA_SECRET_NAME, 'shoot-ca', ctx),
    getOrCreateSecret(
      client,
      shoot,
      SERVICE_ACCOUNT_KEY_SECRET_NAME,
      async () => {
        const pair = await createSigningKeyPair();
        return { id_rsa: pair.privatePEM, 'id_rsa.pub': pair.publicPEM };
      },
      ctx,
    ),
  ]);
  return { ca, serviceAccount: { privatePEM: unb64(sa.id_rsa), publicPEM: unb64(sa['id_rsa.pub']) } };
}

/** etcd's CA (`ca-etcd`), created on first use and kept for the shoot's life. */
export function ensureEtcdCA(client: ResourceClient, shoot: Shoot, ctx: ComponentContext): Promise<CertificatePair> {
  return getOrCreateCA(client, shoot, ETCD_CA_SECRET_NAME, 'etcd-ca', ctx);
}

/** Where the control plane runs: workloads in the seed (which has Nodes), of the seed's IP families. */
export interface ControlPlaneRuntime {
  readonly seedFamilies: readonly IPFamily[];
}

export class ShootControlPlane implements DeployWaiter {
  constructor(
    private readonly client: ResourceClient,
    /** The garden, where the `<shoot>.ca-cluster` ConfigMap goes. */
    private readonly garden: ResourceClient,
    private readonly shoot: Shoot,
    private readonly runtime: ControlPlaneRuntime,
    /** The networks and load-balancer service, known once the flow got that far (not needed to destroy). */
    private readonly inputs?: { networking: NetworkingStatus; service: V1Service; domain: string },
  ) {}

  private spec(): ControlPlaneSpec {
    if (this.inputs === undefined) throw new Error('the control plane needs the networks and the load balancer');
    return controlPlaneSpec(this.shoot, this.inputs.networking, this.inputs.service, this.inputs.domain);
  }

  private workloads(): ShootControlPlaneWorkloads {
    return new ShootControlPlaneWorkloads(this.client, this.shoot, this.runtime.seedFamilies);
  }

  async deploy(ctx: ComponentContext): Promise<void> {
    const spec = this.spec();
    const [secrets, etcdCA] = await Promise.all([
      ensureControlPlaneSecrets(this.client, this.shoot, ctx),
      ensureEtcdCA(this.client, this.shoot, ctx),
    ]);
    await applyAll(this.garden, Refs.configMap, [desiredCAClusterConfigMap(this.shoot, secrets.ca.certPEM)], ctx);
    await applyAll(this.garden, Refs.internalSecret, [desiredCAClientInternalSecret(this.shoot, secrets.ca)], ctx);
    await this.workloads().deploy(spec, { ...secrets, etcdCA }, ctx);
  }

  /** Ready once rolled out, the API server answers /readyz at its load-balancer address and the controllers lead. */
  async wait(ctx: ComponentContext): Promise<void> {
    const secrets = await ensureControlPlaneSecrets(this.client, this.shoot, ctx);
    await this.workloads().wait(this.spec(), secrets.ca, ctx);
  }

  /** Scales the control plane to zero for hibernation, keeping its data; NotReadyError until its pods are gone. */
  async hibernate(ctx: ComponentContext): Promise<void> {
    await this.workloads().hibernate(seedNamespaceName(this.shoot), ctx);
  }

  /** Until no control plane pod is left and etcd's data is gone from the seed's Nodes. */
  async waitCleanup(ctx: ComponentContext): Promise<void> {
    await this.workloads().waitCleanup(seedNamespaceName(this.shoot), ctx);
  }

  async destroy(ctx: ComponentContext): Promise<void> {
    const namespace = seedNamespaceName(this.shoot);
    await this.workloads().destroy(namespace, ctx);
    await deleteGardenCAObjects(this.garden, this.shoot, ctx);
  }
}
