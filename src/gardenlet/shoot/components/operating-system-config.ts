import { shootIPFamilies } from '../../../apis/core/v1beta1/helpers.js';
import type { Shoot } from '../../../apis/core/v1beta1/shoot.js';
import { API_VERSION } from '../../../apis/extensions/v1alpha1/common.js';
import type { OperatingSystemConfig } from '../../../apis/extensions/v1alpha1/operatingsystemconfig.js';
import type { IPFamily } from '../../../net/cidr.js';
import { seedNamespaceName, shootLabels } from '../../names.js';

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

/** The worker `OperatingSystemConfig` `<shoot>-worker` with the kernel settings file and the unit that applies it. */
export function desiredOperatingSystemConfig(shoot: Shoot): OperatingSystemConfig {
  const worker = shoot.spec.provider?.workers?.[0];
  const image = (worker?.machine?.image as { name?: unknown } | undefined)?.name;
  return {
    apiVersion: API_VERSION,
    kind: 'OperatingSystemConfig',
    metadata: {
      name: `${shoot.metadata.name ?? ''}-worker`,
      namespace: seedNamespaceName(shoot),
      labels: shootLabels(shoot),
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
      ],
      units: [{ name: SYSCTL_UNIT, command: 'restart', enable: true, filePaths: [SYSCTL_FILE_PATH] }],
    },
  };
}
