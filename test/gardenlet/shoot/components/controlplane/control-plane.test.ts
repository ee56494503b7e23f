import { describe, expect, it } from 'vitest';
import type { Shoot } from '../../../../../src/apis/core/v1beta1/shoot.js';
import {
  controlPlaneSpec,
  desiredCAClusterConfigMap,
  nodeMaskSizes,
} from '../../../../../src/gardenlet/shoot/components/controlplane/control-plane.js';
import { NotReadyError } from '../../../../../src/gardenlet/component.js';
import { mergeConditions } from '../../../../../src/runtime/last-operation.js';

function shoot(networking: Record<string, unknown>, kcm?: Record<string, number>, workers = true): Shoot {
  return {
    apiVersion: 'core.gardener.cloud/v1beta1',
    kind: 'Shoot',
    metadata: { name: 's', namespace: 'garden-p' },
    spec: {
      provider: { type: 'local', ...(workers ? { workers: [{ name: 'w', minimum: 1, maximum: 1 }] } : {}) },
      networking: { type: 'calico', ...networking },
      ...(kcm ? { kubernetes: { kubeControllerManager: kcm } } : {}),
    },
  } as Shoot;
}

const service = (...ips: string[]) => ({ status: { loadBalancer: { ingress: ips.map((ip) => ({ ip })) } } });

describe('the node masks per family', () => {
  it('are the node masks in effect of each family', () => {
    expect(nodeMaskSizes(shoot({ ipFamilies: ['IPv6'] }))).toEqual({ IPv6: 64 });
    expect(nodeMaskSizes(shoot({ ipFamilies: ['IPv6'] }, { nodeCIDRMaskSize: 80 }))).toEqual({ IPv6: 80 });
    expect(nodeMaskSizes(shoot({ ipFamilies: ['IPv6'] }, { nodeCIDRMaskSizeIPv6: 72 }))).toEqual({ IPv6: 72 });
    expect(nodeMaskSizes(shoot({ ipFamilies: ['IPv4'] }, { nodeCIDRMaskSize: 24 }))).toEqual({ IPv4: 24 });
    expect(nodeMaskSizes(shoot({ ipFamilies: ['IPv4', 'IPv6'] }, { nodeCIDRMaskSize: 25 }))).toEqual({
      IPv4: 25,
      IPv6: 64,
    });
    expect(
      nodeMaskSizes(shoot({ ipFamilies: ['IPv6', 'IPv4'] }, { nodeCIDRMaskSize: 24, nodeCIDRMaskSizeIPv6: 68 })),
    ).toEqual({
      IPv4: 24,
      IPv6: 68,
    });
  });
});

describe('the control plane spec of a shoot', () => {
  it('orders ranges and addresses by the shoot families and names the API server domains', () => {
    const spec = controlPlaneSpec(
      shoot({ ipFamilies: ['IPv6', 'IPv4'] }, { nodeCIDRMaskSize: 24 }),
      { pods: ['10.3.0.0/16', 'fd00:10:3::/56'], services: ['fd00:10:4::/112', '10.4.0.0/16'] },
      service('172.18.255.2', 'fd00:ff::2'),
      'local.gardener.cloud',
    );
    expect(spec).toEqual({
      name: 'shoot--p--s',
      families: ['IPv6', 'IPv4'],
      addresses: { IPv6: 'fd00:ff::2', IPv4: '172.18.255.2' },
      serviceCIDRs: ['fd00:10:4::/112', '10.4.0.0/16'],
      podCIDRs: ['fd00:10:3::/56', '10.3.0.0/16'],
      nodeCIDRMaskSizes: { IPv4: 24, IPv6: 64 },
      externalDomain: 'api.s.p.external.local.gardener.cloud',
      internalDomain: 'api.s.p.internal.local.gardener.cloud',
    });
  });

  it('allocates no node ranges for a workerless shoot', () => {
    const spec = controlPlaneSpec(
      shoot({ ipFamilies: ['IPv6'] }, undefined, false),
      { pods: ['fd00:10:3::/56'], services: ['fd00:10:4::/112'] },
      service('fd00:ff::2'),
      'd',
    );
    expect(spec.podCIDRs).toEqual([]);
  });

  it('is not ready while a family has no load-balancer address', () => {
    expect(() =>
      controlPlaneSpec(shoot({ ipFamilies: ['IPv4', 'IPv6'] }), { services: [] }, service('172.18.255.2'), 'd'),
    ).toThrow(NotReadyError);
  });

  it('publishes its CA for users in the project namespace', () => {
    expect(desiredCAClusterConfigMap(shoot({}), 'PEM')).toMatchObject({
      metadata: { name: 's.ca-cluster', namespace: 'garden-p' },
      data: { 'ca.crt': 'PEM' },
    });
  });
});

describe('mergeConditions', () => {
  const c = (type: string, status: string) => ({ type, status, reason: 'r', message: 'm' });
  it('replaces conditions of the same type in place and appends new ones, keeping the others', () => {
    expect(mergeConditions([c('A', 'True'), c('B', 'True')], [c('B', 'False'), c('C', 'True')])).toEqual([
      c('A', 'True'),
      c('B', 'False'),
      c('C', 'True'),
    ]);
    expect(mergeConditions(undefined, [c('A', 'True')])).toEqual([c('A', 'True')]);
  });
});
