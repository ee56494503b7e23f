/** What the gardenlet applies of its configured Seed: its identity, labels and spec, nothing the garden owns. */
import { describe, expect, it } from 'vitest';
import { decodeSeed } from '../../../src/apis/admission.js';
import { registeredSeed } from '../../../src/gardenlet/seed/registration.js';

const manifest = {
  apiVersion: 'core.gardener.cloud/v1beta1',
  kind: 'Seed',
  metadata: {
    name: 'dual',
    labels: { tier: 'second' },
    annotations: { note: 'an operator note' },
    resourceVersion: '42',
    uid: '00000000-0000-4000-8000-000000000001',
  },
  spec: {
    provider: { type: 'local', region: 'local' },
    networks: { nodes: '10.18.0.0/24', pods: '10.1.0.0/16', services: '10.2.0.0/16', ipFamilies: ['IPv4', 'IPv6'] },
  },
  status: { conditions: [{ type: 'GardenletReady', status: 'True' }] },
};

describe('registeredSeed', () => {
  it('keeps name, labels and the defaulted spec; leaves status, annotations and server fields to the garden', () => {
    const config = decodeSeed(manifest);
    const applied = registeredSeed(config);
    expect(applied).toEqual({
      apiVersion: 'core.gardener.cloud/v1beta1',
      kind: 'Seed',
      metadata: { name: 'dual', labels: { tier: 'second' } },
      spec: config.spec,
    });
    expect(applied.spec.networks).toEqual(expect.objectContaining(manifest.spec.networks));
  });

  it('leaves labels out when the configuration has none', () => {
    const config = decodeSeed({ ...manifest, metadata: { name: 'dual' } });
    expect(registeredSeed(config).metadata).toEqual({ name: 'dual' });
  });
});
