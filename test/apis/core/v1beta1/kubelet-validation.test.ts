/**
 * The kubelet settings of a Shoot (`spec.kubernetes.kubelet`) and of its pools, through `admit()`: refused values
 * name their field; Gardener's IPv6 example's settings pass.
 */
import { describe, expect, it } from 'vitest';
import { admit } from '../../../../src/apis/admission.js';
import type { KubeletConfig, Shoot } from '../../../../src/apis/core/v1beta1/shoot.js';
import { parseGoDuration } from '../../../../src/apis/core/v1beta1/validation/kubelet.js';
import { causesOf, gateSets, ipv6ShootObject, type Cause } from '../../../fixtures/objects.js';

const KUBELET = 'spec.kubernetes.kubelet';
const POOL_KUBELET = 'spec.provider.workers[0].kubernetes.kubelet';

function withKubelet(shootWide: KubeletConfig | undefined, pool?: KubeletConfig): Shoot {
  const shoot = ipv6ShootObject();
  if (shootWide) shoot.spec.kubernetes = { ...shoot.spec.kubernetes, kubelet: shootWide };
  if (pool) shoot.spec.provider!.workers![0]!.kubernetes = { kubelet: pool };
  return shoot;
}

function causes(shoot: Shoot): Cause[] {
  return causesOf(admit({ object: shoot, gates: gateSets.ipv6 }).errors);
}

describe('kubelet settings', () => {
  it("accepts Gardener's IPv6 example and the documented fields", () => {
    const example: KubeletConfig = {
      seccompDefault: true,
      serializeImagePulls: false,
      registryPullQPS: 10,
      registryBurst: 20,
      protectKernelDefaults: true,
      streamingConnectionIdleTimeout: '5m',
    };
    expect(causes(withKubelet(example))).toEqual([]);
    const full: KubeletConfig = {
      maxPods: 64,
      podPidsLimit: 1000,
      failSwapOn: true,
      evictionHard: { memoryAvailable: '100Mi', imageFSAvailable: '5%', nodeFSAvailable: '5%' },
      evictionSoft: { memoryAvailable: '200Mi' },
      evictionSoftGracePeriod: { memoryAvailable: '1m30s' },
      evictionMinimumReclaim: { memoryAvailable: '0Mi' },
      imageGCHighThresholdPercent: 90,
      imageGCLowThresholdPercent: 80,
      cpuManagerPolicy: 'static',
      kubeReserved: { cpu: '100m', memory: '1Gi', ephemeralStorage: '1Gi', pid: '1000' },
      maxParallelImagePulls: 3,
    };
    expect(causes(withKubelet(undefined, full))).toEqual([]);
    const swap: KubeletConfig = {
      failSwapOn: false,
      featureGates: { NodeSwap: true },
      memorySwap: { swapBehavior: 'LimitedSwap' },
    };
    expect(causes(withKubelet(swap))).toEqual([]);
  });

  it('refuses systemReserved from Kubernetes 1.31 on (the pool version counts), as Gardener does', () => {
    const reserved: KubeletConfig = { systemReserved: { memory: '100Mi' } };
    const refused = causes(withKubelet(undefined, reserved));
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ field: `${POOL_KUBELET}.systemReserved`, reason: 'FieldValueInvalid' });
    expect(refused[0]!.message).toMatch(
      /systemReserved is no longer supported by Gardener starting from Kubernetes 1.31$/,
    );
    // A pool of Kubernetes 1.30 may still reserve for the system.
    const older = withKubelet(undefined, reserved);
    older.spec.provider!.workers![0]!.kubernetes = { version: '1.30.4', kubelet: reserved };
    expect(causes(older).filter((c) => c.field.endsWith('systemReserved'))).toEqual([]);
  });

  it.each<[string, KubeletConfig, Cause[]]>([
    [
      'swap with failSwapOn',
      { failSwapOn: true, featureGates: { NodeSwap: true }, memorySwap: { swapBehavior: 'LimitedSwap' } },
      [
        {
          field: `${KUBELET}.memorySwap`,
          reason: 'FieldValueForbidden',
          message:
            "Forbidden: configuring swap behaviour is not available when the kubelet is configured with 'FailSwapOn=true'",
        },
      ],
    ],
    [
      'a swap behaviour without the NodeSwap gate',
      { failSwapOn: false, memorySwap: { swapBehavior: 'LimitedSwap' } },
      [
        {
          field: `${KUBELET}.memorySwap`,
          reason: 'FieldValueForbidden',
          message:
            "Forbidden: configuring swap behaviour is not available when kubelet's 'NodeSwap' feature gate is not set",
        },
      ],
    ],
    [
      'a swap behaviour the kubelet no longer has',
      { failSwapOn: false, featureGates: { NodeSwap: true }, memorySwap: { swapBehavior: 'UnlimitedSwap' } },
      [
        {
          field: `${KUBELET}.memorySwap.swapBehavior`,
          reason: 'FieldValueNotSupported',
          message: 'Unsupported value: "UnlimitedSwap": supported values: "NoSwap", "LimitedSwap"',
        },
      ],
    ],
  ])('refuses %s, naming the field', (_, kubelet, expected) => {
    expect(causes(withKubelet(kubelet))).toEqual(expected);
  });

  it.each<[string, KubeletConfig, Cause]>([
    [
      'a negative maxPods',
      { maxPods: -1 },
      {
        field: `${KUBELET}.maxPods`,
        reason: 'FieldValueInvalid',
        message: 'Invalid value: -1: must be greater than or equal to 0',
      },
    ],
    [
      'containerLogMaxFiles below 2',
      { containerLogMaxFiles: 1 },
      {
        field: `${KUBELET}.containerLogMaxFiles`,
        reason: 'FieldValueInvalid',
        message: 'Invalid value: 1: value must be >= 2.',
      },
    ],
    [
      'podPidsLimit below 100',
      { podPidsLimit: 10 },
      {
        field: `${KUBELET}.podPidsLimit`,
        reason: 'FieldValueInvalid',
        message: 'Invalid value: 10: podPidsLimit value must be at least 100',
      },
    ],
    [
      'an unknown CPU manager policy',
      { cpuManagerPolicy: 'dynamic' },
      {
        field: `${KUBELET}.cpuManagerPolicy`,
        reason: 'FieldValueNotSupported',
        message: 'Unsupported value: "dynamic": supported values: "none", "static"',
      },
    ],
    [
      'the static CPU manager policy without reserved CPU',
      { cpuManagerPolicy: 'static', kubeReserved: { memory: '1Gi' } },
      {
        field: `${KUBELET}.cpuManagerPolicy`,
        reason: 'FieldValueInvalid',
        message:
          'Invalid value: "static": the static CPU manager policy needs kubeReserved.cpu or systemReserved.cpu ' +
          'greater than 0 (the kubelet refuses to start without)',
      },
    ],
    [
      'imageGC low not below high',
      { imageGCHighThresholdPercent: 50, imageGCLowThresholdPercent: 50 },
      {
        field: `${KUBELET}.imageGCLowThresholdPercent`,
        reason: 'FieldValueForbidden',
        message: 'Forbidden: imageGCLowThresholdPercent must be less than imageGCHighThresholdPercent',
      },
    ],
    [
      'imageGC high over 100',
      { imageGCHighThresholdPercent: 101 },
      {
        field: `${KUBELET}.imageGCHighThresholdPercent`,
        reason: 'FieldValueInvalid',
        message: 'Invalid value: 101: value must be in [0,100]',
      },
    ],
    [
      'a negative registryPullQPS',
      { registryPullQPS: -1 },
      {
        field: `${KUBELET}.registryPullQPS`,
        reason: 'FieldValueInvalid',
        message: 'Invalid value: -1: must be greater than or equal to 0',
      },
    ],
    [
      'streamingConnectionIdleTimeout below 30s',
      { streamingConnectionIdleTimeout: '10s' },
      {
        field: `${KUBELET}.streamingConnectionIdleTimeout`,
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "10s": value must be between 30s and 4h',
      },
    ],
    [
      'streamingConnectionIdleTimeout not a duration',
      { streamingConnectionIdleTimeout: '5 minutes' },
      {
        field: `${KUBELET}.streamingConnectionIdleTimeout`,
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "5 minutes": must be a duration such as 90s, 5m or 1h30m',
      },
    ],
    [
      'an eviction threshold over 100%',
      { evictionHard: { nodeFSAvailable: '150%' } },
      {
        field: `${KUBELET}.evictionHard.nodeFSAvailable`,
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "150%": must be a percentage between 0% and 100% or a quantity',
      },
    ],
    [
      'an eviction threshold that is no quantity',
      { evictionSoft: { memoryAvailable: 'lots' } },
      {
        field: `${KUBELET}.evictionSoft.memoryAvailable`,
        reason: 'FieldValueInvalid',
        message:
          'Invalid value: "lots": quantities must match the regular expression ' +
          "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
      },
    ],
    [
      'a negative kubeReserved memory',
      { kubeReserved: { memory: '-1Gi' } },
      {
        field: `${KUBELET}.kubeReserved.memory`,
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "-1Gi": must be greater than or equal to 0',
      },
    ],
    [
      'parallel pulls with serialized pulls',
      { serializeImagePulls: true, maxParallelImagePulls: 2 },
      {
        field: `${KUBELET}.maxParallelImagePulls`,
        reason: 'FieldValueForbidden',
        message: 'Forbidden: maxParallelImagePulls must not be set when serializeImagePulls is true',
      },
    ],
  ])('refuses %s, naming the field', (_, kubelet, cause) => {
    expect(causes(withKubelet(kubelet))).toEqual([cause]);
  });

  it("names a pool's field under spec.provider.workers[i].kubernetes.kubelet", () => {
    expect(causes(withKubelet({ maxPods: 20 }, { maxPods: -3, imageGCLowThresholdPercent: 120 }))).toEqual([
      {
        field: `${POOL_KUBELET}.maxPods`,
        reason: 'FieldValueInvalid',
        message: 'Invalid value: -3: must be greater than or equal to 0',
      },
      {
        field: `${POOL_KUBELET}.imageGCLowThresholdPercent`,
        reason: 'FieldValueInvalid',
        message: 'Invalid value: 120: value must be in [0,100]',
      },
    ]);
  });

  it('parses Go durations', () => {
    expect(parseGoDuration('1m30s')).toBe(90);
    expect(parseGoDuration('1.5h')).toBe(5400);
    expect(parseGoDuration('500ms')).toBe(0.5);
    expect(parseGoDuration('0')).toBe(0);
    expect(parseGoDuration('-2m')).toBe(-120);
    expect(parseGoDuration('5')).toBeUndefined();
    expect(parseGoDuration('m')).toBeUndefined();
  });
});
