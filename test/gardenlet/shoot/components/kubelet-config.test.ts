/**
 * The kubelet configuration file of each pool's worker OperatingSystemConfig: the Shoot's settings, a pool's
 * replacing them, the machines' defaults where nothing is set; and the labels the kubelet registers its Node with.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { KubeletConfig, Shoot } from '../../../../src/apis/core/v1beta1/shoot.js';
import {
  KUBELET_CONFIG_FILE_PATH,
  KUBELET_NODE_LABELS_FILE_PATH,
  MACHINE_KUBELET_DEFAULTS,
  parseNodeLabels,
} from '../../../../src/apis/provider-local/v1alpha1/kubelet.js';
import { kubeletConfiguration } from '../../../../src/gardenlet/shoot/components/kubelet-config.js';
import {
  desiredOperatingSystemConfigs,
  WORKER_POOL_LABEL,
} from '../../../../src/gardenlet/shoot/components/operating-system-config.js';
import { ipv6ShootObject } from '../../../fixtures/objects.js';

function shootWith(shootWide: KubeletConfig | undefined, pools: Record<string, KubeletConfig | undefined>): Shoot {
  const shoot = ipv6ShootObject();
  const template = shoot.spec.provider!.workers![0]!;
  shoot.spec.provider!.workers = Object.entries(pools).map(([name, kubelet]) => ({
    ...template,
    name,
    ...(kubelet ? { kubernetes: { kubelet } } : {}),
  }));
  if (shootWide) shoot.spec.kubernetes = { ...shoot.spec.kubernetes, kubelet: shootWide };
  return shoot;
}

/** Each pool's OSC name and its kubelet file, parsed. */
function kubeletFiles(shoot: Shoot): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    desiredOperatingSystemConfigs(shoot).map((osc) => {
      const file = osc.spec.files!.find((f) => f.path === KUBELET_CONFIG_FILE_PATH)!;
      expect(file.permissions).toBe(0o600);
      return [osc.metadata.name, parse(file.content.inline!.data) as Record<string, unknown>];
    }),
  );
}

describe('the kubelet configuration of the worker OperatingSystemConfigs', () => {
  it('carries the machine defaults, and nothing more, when the Shoot sets nothing', () => {
    const files = kubeletFiles(shootWith(undefined, { a: undefined }));
    const name = Object.keys(files)[0]!;
    expect(name).toMatch(/-worker-a$/);
    expect(files[name]).toEqual({
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      authentication: { anonymous: { enabled: false }, webhook: { enabled: true } },
      authorization: { mode: 'Webhook' },
      readOnlyPort: 0,
      ...MACHINE_KUBELET_DEFAULTS,
    });
    expect(files[name]).not.toHaveProperty('seccompDefault');
  });

  it("maps the Shoot's settings onto every pool as Gardener names them in the kubelet", () => {
    const settings: KubeletConfig = {
      seccompDefault: true,
      protectKernelDefaults: true,
      streamingConnectionIdleTimeout: '5m',
      maxPods: 64,
      podPidsLimit: 2048,
      failSwapOn: true,
      evictionHard: { memoryAvailable: '100Mi', imageFSInodesFree: '5%' },
      evictionSoft: { nodeFSAvailable: '10%', memoryAvailable: '200Mi' },
      evictionSoftGracePeriod: { memoryAvailable: '30s' },
      imageGCHighThresholdPercent: 80,
      imageGCLowThresholdPercent: 70,
      serializeImagePulls: true,
      registryPullQPS: 5,
      registryBurst: 10,
      cpuManagerPolicy: 'static',
      kubeReserved: { cpu: '100m', memory: '1Gi', ephemeralStorage: '1Gi', pid: '1000' },
      systemReserved: { memory: '200Mi' },
    };
    const files = Object.values(kubeletFiles(shootWith(settings, { a: undefined, b: undefined })));
    expect(files).toHaveLength(2);
    for (const file of files) {
      expect(file).toMatchObject({
        seccompDefault: true,
        protectKernelDefaults: true,
        streamingConnectionIdleTimeout: '5m',
        maxPods: 64,
        podPidsLimit: 2048,
        failSwapOn: true,
        // Per signal over the defaults.
        evictionHard: {
          'memory.available': '100Mi',
          'nodefs.available': '1%',
          'imagefs.available': '1%',
          'imagefs.inodesFree': '5%',
        },
        evictionSoft: { 'nodefs.available': '10%', 'memory.available': '200Mi' },
        // A soft threshold without a grace period gets Gardener's 1m30s.
        evictionSoftGracePeriod: { 'nodefs.available': '1m30s', 'memory.available': '30s' },
        imageGCHighThresholdPercent: 80,
        imageGCLowThresholdPercent: 70,
        serializeImagePulls: true,
        registryPullQPS: 5,
        registryBurst: 10,
        cpuManagerPolicy: 'static',
        kubeReserved: { cpu: '100m', memory: '1Gi', 'ephemeral-storage': '1Gi', pid: '1000' },
        systemReserved: { memory: '200Mi' },
      });
    }
  });

  it("gives a pool with kubelet settings of its own those, replacing the Shoot's (Gardener's effective config)", () => {
    const files = kubeletFiles(shootWith({ seccompDefault: true, maxPods: 50 }, { a: undefined, b: { maxPods: 30 } }));
    const [a, b] = Object.keys(files).sort();
    expect(files[a!]).toMatchObject({ seccompDefault: true, maxPods: 50 });
    expect(files[b!]).toMatchObject({ maxPods: 30 });
    expect(files[b!]).not.toHaveProperty('seccompDefault');
  });

  it('changes the file when a setting changes, and only then', () => {
    expect(kubeletConfiguration({ seccompDefault: true })).toEqual(kubeletConfiguration({ seccompDefault: true }));
    expect(kubeletConfiguration({ maxPods: 100 })).not.toEqual(kubeletConfiguration({ maxPods: 101 }));
  });

  it("gives each pool's Nodes the pool's label through the kubelet, restarting it when the labels change", () => {
    for (const osc of desiredOperatingSystemConfigs(shootWith(undefined, { a: undefined, b: undefined }))) {
      const pool = osc.metadata.labels![WORKER_POOL_LABEL]!;
      const file = osc.spec.files!.find((f) => f.path === KUBELET_NODE_LABELS_FILE_PATH)!;
      expect(parseNodeLabels(file.content.inline!.data)).toEqual({ [WORKER_POOL_LABEL]: pool });
      expect(osc.spec.units!.find((u) => u.name === 'kubelet.service')?.filePaths).toContain(
        KUBELET_NODE_LABELS_FILE_PATH,
      );
    }
  });
});
