import type { Shoot } from '../../../apis/core/v1beta1/shoot.js';
import { shootIPFamilies } from '../../../apis/core/v1beta1/helpers.js';
import { API_VERSION } from '../../../apis/extensions/v1alpha1/common.js';
import type { Network } from '../../../apis/extensions/v1alpha1/network.js';
import { seedNamespaceName, shootLabels } from '../../../apis/core/v1beta1/names.js';

import type { ResourceClient } from '../../../runtime/client.js';
import { applyAll, deleteAll, waitExtensionReady, waitExtensionsGone } from '../../apply.js';
import type { ComponentContext, DeployWaiter } from '../../component.js';
import { Annotations, OPERATION_RECONCILE } from '../../../apis/core/v1beta1/names.js';
import { Refs } from '../../../apis/refs.js';
export class MissingNetworkError extends Error {}

/**
 * The `Network` extension resource `<shoot>`: the networking type, pod and service CIDRs and the IP families copied
 * from the shoot, its providerConfig passed through. Workerless shoots have none.
 */
export function desiredNetwork(shoot: Shoot): Network | undefined {
  const networking = shoot.spec.networking;
  if ((shoot.spec.provider?.workers?.length ?? 0) === 0 || !networking) return undefined;
  for (const field of ['type', 'pods', 'services'] as const) {
    if (!networking[field]) throw new MissingNetworkError(`spec.networking.${field} is not set`);
  }
  return {
    apiVersion: API_VERSION,
    kind: 'Network',
    metadata: { name: shoot.metadata.name ?? '', namespace: seedNamespaceName(shoot), labels: shootLabels(shoot) },
    spec: {
      type: networking.type,
      podCIDR: networking.pods,
      serviceCIDR: networking.services,
      ipFamilies: shootIPFamilies(shoot),
      ...(networking.providerConfig !== undefined ? { providerConfig: networking.providerConfig } : {}),
    },
  };
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
