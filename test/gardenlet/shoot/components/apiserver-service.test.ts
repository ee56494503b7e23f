import type { V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  APIServerService,
  LOAD_BALANCER_ADDRESS_CONDITION,
} from '../../../../src/gardenlet/shoot/components/apiserver-service.js';
import type { ResourceClient } from '../../../../src/runtime/client.js';
import { shootObject } from '../../../fixtures/objects.js';

describe("the API server's LoadBalancer Service", () => {
  const shoot = shootObject({ ipFamilies: ['IPv6', 'IPv4'] });
  shoot.metadata = { name: 'a', namespace: 'garden-dev' };
  const serviceWith = (status: V1Service['status']) =>
    new APIServerService({} as ResourceClient, shoot, async () => ({ metadata: {}, status }) as V1Service);

  it('is not ready without an address of each family, and says which', async () => {
    await expect(serviceWith({ loadBalancer: { ingress: [{ ip: 'fd00:ff::2' }] } }).ready()).rejects.toThrow(
      'service shoot--dev--a/kube-apiserver has no IPv4 load balancer address yet',
    );
  });

  it("carries the provider's reason when it gave one", async () => {
    const status: V1Service['status'] = {
      loadBalancer: { ingress: [{ ip: 'fd00:ff::2' }] },
      conditions: [
        {
          type: LOAD_BALANCER_ADDRESS_CONDITION,
          status: 'False',
          reason: 'AddressPoolExhausted',
          message: 'the IPv4 load-balancer network 10.9.0.0/30 has no free address left',
          lastTransitionTime: new Date(),
        },
      ],
    };
    await expect(serviceWith(status).ready()).rejects.toThrow(
      'service shoot--dev--a/kube-apiserver has no IPv4 load balancer address yet: ' +
        'the IPv4 load-balancer network 10.9.0.0/30 has no free address left',
    );
  });

  it('is ready with both', async () => {
    const service = serviceWith({ loadBalancer: { ingress: [{ ip: 'fd00:ff::2' }, { ip: '10.9.0.2' }] } });
    await expect(service.ready()).resolves.toBeDefined();
  });
});
