/**
 * The shoot's control plane, from the shoot's secrets (secrets.ts, handed on by the flow): the `<shoot>.ca-cluster`
 * ConfigMap in the project namespace for users, the `<shoot>.ca-client` InternalSecret there for the garden's `shoots/adminkubeconfig` (the
 * seed may be another cluster), and the control plane itself at the load-balancer addresses: workloads in the seed
 * (seed-workloads.ts).
 */
import type { V1ConfigMap, V1Service } from '@kubernetes/client-node';
import type { NetworkingStatus, Shoot } from '../../../../apis/core/v1beta1/shoot.js';
import { shootIPFamilies } from '../../../../apis/core/v1beta1/helpers.js';
import { isIPFamily } from '../../../../apis/validation/ip-families.js';
import type { ControlPlaneSpec } from './args.js';
import type { ControlPlaneSecrets } from './certificates.js';
import type { IPFamily } from '../../../../net/cidr.js';
import { cidrsByFamilies } from '../../../../apis/core/v1beta1/networks.js';
import type { CertificatePair } from '../../../../pki/certificates.js';
import { type ResourceClient } from '../../../../runtime/client.js';
import { applyAll, deleteAll } from '../../../apply.js';
import { NotReadyError, type ComponentContext, type DeployWaiter } from '../../../component.js';
import {
  apiServerDomain,
  CA_SECRET_NAME,
  SERVICE_ACCOUNT_KEY_SECRET_NAME,
  seedNamespaceName,
  shootLabels,
} from '../../../../apis/core/v1beta1/names.js';
import { Refs } from '../../../../apis/refs.js';
import { caClientName, type InternalSecret } from '../../../../apis/core/v1beta1/internalsecret.js';
import { ingressIPsByFamily } from '../../../../net/load-balancer.js';
import { ShootControlPlaneWorkloads } from './seed-workloads.js';

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
    /** The networks, load-balancer service and secrets, known once the flow got that far (not needed to destroy). */
    private readonly inputs?: {
      networking: NetworkingStatus;
      service: V1Service;
      domain: string;
      /** The shoot's secrets (secrets.ts, the flow's `deploy-secrets`). */
      secrets: ControlPlaneSecrets & { readonly etcdCA: CertificatePair };
    },
  ) {}

  private spec(): ControlPlaneSpec {
    if (this.inputs === undefined) throw new Error('the control plane needs the networks and the load balancer');
    return controlPlaneSpec(this.shoot, this.inputs.networking, this.inputs.service, this.inputs.domain);
  }

  private workloads(): ShootControlPlaneWorkloads {
    return new ShootControlPlaneWorkloads(this.client, this.shoot, this.runtime.seedFamilies);
  }

  private secrets(): ControlPlaneSecrets & { readonly etcdCA: CertificatePair } {
    if (this.inputs === undefined) throw new Error('the control plane needs its secrets');
    return this.inputs.secrets;
  }

  async deploy(ctx: ComponentContext): Promise<void> {
    const spec = this.spec();
    const { ca, serviceAccount, etcdCA } = this.secrets();
    await applyAll(this.garden, Refs.configMap, [desiredCAClusterConfigMap(this.shoot, ca.certPEM)], ctx);
    await applyAll(this.garden, Refs.internalSecret, [desiredCAClientInternalSecret(this.shoot, ca)], ctx);
    await this.workloads().deploy(spec, { ca, serviceAccount, etcdCA }, ctx);
  }

  /** Ready once rolled out, the API server answers /readyz at its load-balancer address and the controllers lead. */
  async wait(ctx: ComponentContext): Promise<void> {
    await this.workloads().wait(this.spec(), this.secrets().ca, ctx);
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
