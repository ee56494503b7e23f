import { shootIPFamilies } from '../../../apis/core/v1beta1/helpers.js';
import { stringify } from 'yaml';
import type { Shoot, Worker } from '../../../apis/core/v1beta1/shoot.js';
import { API_VERSION } from '../../../apis/extensions/v1alpha1/common.js';
import type { OperatingSystemConfig } from '../../../apis/extensions/v1alpha1/operatingsystemconfig.js';
import {
  KUBELET_CONFIG_FILE_PATH,
  KUBELET_NODE_LABELS_FILE_PATH,
  nodeLabelsFile,
} from '../../../apis/provider-local/v1alpha1/kubelet.js';
import type { IPFamily } from '../../../net/cidr.js';
import { seedNamespaceName, shootLabels, WORKER_POOL_LABEL } from '../../../apis/core/v1beta1/names.js';
import { effectiveKubeletConfig, KUBELET_UNIT, kubeletConfiguration } from './kubelet-config.js';
import { operatingSystemConfigName, operatingSystemConfigPrefix } from './workers.js';
import type { ResourceClient } from '../../../runtime/client.js';
import { applyAll, deleteAll, waitExtensionsGone } from '../../apply.js';
import type { ComponentContext, DeployWaiter } from '../../component.js';
import { Refs } from '../../../apis/refs.js';

/** The label of a worker OperatingSystemConfig with its pool's name, as Gardener's `worker.gardener.cloud/pool`. */
export { WORKER_POOL_LABEL };

export const SYSCTL_FILE_PATH = '/etc/sysctl.d/99-k8s-general.conf';
export const SYSCTL_UNIT = 'systemd-sysctl.service';

/** Nodes route pod traffic: forwarding on for every family the shoot has, and only those. */
const FORWARDING_SYSCTLS: Readonly<Record<IPFamily, readonly string[]>> = {
  IPv4: ['net.ipv4.conf.all.forwarding', 'net.ipv4.conf.default.forwarding'],
  IPv6: ['net.ipv6.conf.all.forwarding', 'net.ipv6.conf.default.forwarding'],
};

/** `key = value` lines, keys sorted. */
export function sysctlLines(families: readonly IPFamily[]): string[] {
  return families
    .flatMap((family) => FORWARDING_SYSCTLS[family])
    .sort()
    .map((key) => `${key} = 1`);
}

export { operatingSystemConfigName, operatingSystemConfigPrefix };

/**
 * A pool's worker `OperatingSystemConfig`, one per pool as Gardener's: the kernel settings file and the unit that
 * applies it, and the kubelet's configuration file (the pool's kubelet settings, kubelet-config.ts) and the labels it
 * registers its Node with (the pool's `worker.gardener.cloud/pool`, by which the gardenlet finds the pool's Nodes),
 * with the unit the node agent restarts when they change.
 */
export function desiredOperatingSystemConfig(shoot: Shoot, worker: Worker): OperatingSystemConfig {
  const image = (worker.machine?.image as { name?: unknown } | undefined)?.name;
  const kubelet = kubeletConfiguration(effectiveKubeletConfig(shoot, worker));
  return {
    apiVersion: API_VERSION,
    kind: 'OperatingSystemConfig',
    metadata: {
      name: operatingSystemConfigName(shoot, worker.name),
      namespace: seedNamespaceName(shoot),
      labels: { ...shootLabels(shoot), [WORKER_POOL_LABEL]: worker.name },
    },
    spec: {
      type: typeof image === 'string' ? image : 'local',
      purpose: 'reconcile',
      files: [
        {
          path: SYSCTL_FILE_PATH,
          permissions: 0o644,
          content: {
            inline: { encoding: '', data: `${sysctlLines(shootIPFamilies(shoot) as IPFamily[]).join('\n')}\n` },
          },
        },
        {
          path: KUBELET_CONFIG_FILE_PATH,
          permissions: 0o600,
          content: { inline: { encoding: '', data: stringify(kubelet) } },
        },
        {
          path: KUBELET_NODE_LABELS_FILE_PATH,
          permissions: 0o644,
          content: { inline: { encoding: '', data: nodeLabelsFile({ [WORKER_POOL_LABEL]: worker.name }) } },
        },
      ],
      units: [
        { name: SYSCTL_UNIT, command: 'restart', enable: true, filePaths: [SYSCTL_FILE_PATH] },
        {
          name: KUBELET_UNIT,
          command: 'restart',
          enable: true,
          filePaths: [KUBELET_CONFIG_FILE_PATH, KUBELET_NODE_LABELS_FILE_PATH],
        },
      ],
    },
  };
}

/** Every pool's worker OperatingSystemConfig. */
export function desiredOperatingSystemConfigs(shoot: Shoot): OperatingSystemConfig[] {
  return (shoot.spec.provider?.workers ?? []).map((worker) => desiredOperatingSystemConfig(shoot, worker));
}

/**
 * The worker OperatingSystemConfigs, one per pool (`<shoot>-worker-<pool>`); those of pools the shoot no longer has
 * go, and so does every one when it has no workers.
 */
export class WorkerOperatingSystemConfig implements DeployWaiter {
  constructor(
    private readonly client: ResourceClient,
    private readonly shoot: Shoot,
  ) {}
  /** The names of the shoot's worker OSCs the seed namespace holds. */
  private async present(ctx: ComponentContext): Promise<string[]> {
    const prefix = operatingSystemConfigPrefix(this.shoot);
    const list = await this.client.list(Refs.operatingSystemConfig, {
      namespace: seedNamespaceName(this.shoot),
      signal: ctx.signal,
    });
    return list.items.map((o) => o.metadata?.name ?? '').filter((name) => name.startsWith(prefix));
  }
  async deploy(ctx: ComponentContext) {
    const desired = desiredOperatingSystemConfigs(this.shoot);
    await applyAll(this.client, Refs.operatingSystemConfig, desired, ctx);
    const wanted = new Set(desired.map((o) => o.metadata.name));
    const stale = (await this.present(ctx)).filter((name) => !wanted.has(name));
    await deleteAll(this.client, Refs.operatingSystemConfig, stale, seedNamespaceName(this.shoot), ctx);
  }
  async destroy(ctx: ComponentContext) {
    await deleteAll(
      this.client,
      Refs.operatingSystemConfig,
      await this.present(ctx),
      seedNamespaceName(this.shoot),
      ctx,
    );
  }
  async waitCleanup(ctx: ComponentContext) {
    const namespace = seedNamespaceName(this.shoot);
    await waitExtensionsGone(this.client, Refs.operatingSystemConfig, await this.present(ctx), namespace, ctx);
  }
}
