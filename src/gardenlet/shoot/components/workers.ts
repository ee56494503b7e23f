/**
 * The shoot's machines (Gardener's Worker): `minimum` machines per worker pool, created only once the shoot's
 * OperatingSystemConfig exists (its files are what each machine's node agent applies), then ready when every Node
 * is Ready and CoreDNS runs.
 */
import type { NetworkingStatus, Shoot } from '../../../apis/core/v1beta1/shoot.js';
import { shootIPFamilies } from '../../../apis/core/v1beta1/helpers.js';
import type { OperatingSystemConfig } from '../../../apis/extensions/v1alpha1/operatingsystemconfig.js';
import { isIPFamily } from '../../../apis/validation/ip-families.js';
import type { LocalProvider } from '../../../extensions/provider-local/provider.js';
import type { WorkerPoolSpec, WorkersSpec } from '../../../extensions/provider-local/worker/workers.js';
import { formatIP, parseCIDR, type IPFamily } from '../../../net/cidr.js';
import { cidrsByFamilies, clusterDNSAddress } from '../networks.js';
import type { ResourceClient } from '../../../runtime/client.js';
import { NotReadyError, type ComponentContext, type DeployWaiter } from '../../component.js';
import { seedNamespaceName } from '../../names.js';
import { Refs } from '../../resources.js';
import { ensureControlPlaneSecrets } from './control-plane.js';
import { desiredOperatingSystemConfig } from './operating-system-config.js';

/** The worker pools as the provider wants them: name, minimum, and the pool's `sysctls`. */
export function workerPools(shoot: Shoot): WorkerPoolSpec[] {
  return (shoot.spec.provider?.workers ?? []).map((w) => {
    const sysctls = (w as { sysctls?: unknown }).sysctls;
    return {
      name: w.name,
      minimum: w.minimum ?? 0,
      ...(sysctls && typeof sysctls === 'object'
        ? { sysctls: Object.fromEntries(Object.entries(sysctls).map(([k, v]) => [k, String(v)])) }
        : {}),
    };
  });
}

/** The networks a shoot's machines are configured with: families, ranges and the cluster DNS addresses. */
export function machineNetworking(
  shoot: Shoot,
  networking: NetworkingStatus,
): { families: IPFamily[]; podCIDRs: string[]; serviceCIDRs: string[]; clusterDNS: string[] } {
  const families = shootIPFamilies(shoot).filter(isIPFamily);
  const services = cidrsByFamilies(networking.services, families);
  return {
    families,
    podCIDRs: cidrsByFamilies(networking.pods, families),
    serviceCIDRs: services,
    // One per family, the primary first: the kubelets use the first, kube-dns serves all of them.
    clusterDNS: services.map((c) => formatIP(clusterDNSAddress(parseCIDR(c)!))),
  };
}

export class ShootWorkers implements DeployWaiter {
  constructor(
    private readonly client: ResourceClient,
    private readonly shoot: Shoot,
    private readonly provider: LocalProvider,
    private readonly networking?: NetworkingStatus,
  ) {}

  async deploy(ctx: ComponentContext): Promise<void> {
    if (this.networking === undefined) throw new Error('the machines need the shoot networks');
    const namespace = seedNamespaceName(this.shoot);
    const oscName = desiredOperatingSystemConfig(this.shoot).metadata.name ?? '';
    // As gardener-node-agent: a machine boots with the OperatingSystemConfig the seed holds, never without one.
    const osc = (await this.client.get(Refs.operatingSystemConfig, oscName, namespace, { signal: ctx.signal })) as
      OperatingSystemConfig | undefined;
    if (osc === undefined) throw new NotReadyError(`OperatingSystemConfig ${namespace}/${oscName} does not exist yet`);
    const { families, podCIDRs, serviceCIDRs, clusterDNS } = machineNetworking(this.shoot, this.networking);
    const { ca } = await ensureControlPlaneSecrets(this.client, this.shoot, ctx);
    const spec: WorkersSpec = {
      name: namespace,
      families,
      nodeCIDRs: this.networking.nodes ?? [],
      podCIDRs,
      serviceCIDRs,
      clusterDNS,
      pools: workerPools(this.shoot),
      operatingSystemConfig: { spec: { files: osc.spec.files ?? [] } },
      ca,
    };
    await this.provider.deployWorkers(spec);
  }

  async wait(): Promise<void> {
    const missing = await this.provider.workersNotReady(seedNamespaceName(this.shoot));
    if (missing !== undefined) throw new NotReadyError(missing);
  }

  async destroy(): Promise<void> {
    await this.provider.destroyWorkers(seedNamespaceName(this.shoot));
  }
}
