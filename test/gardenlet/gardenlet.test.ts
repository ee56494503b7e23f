import { describe, expect, it } from 'vitest';
import { shootRequestsForSeedNamespace, shootRequestsForSeedObject } from '../../src/gardenlet/gardenlet.js';

describe('the shoots an object of a seed namespace maps to', () => {
  it('is the one shoot the namespace names when no name contains "--"', () => {
    expect(shootRequestsForSeedNamespace('shoot--dev--alpha')).toEqual([{ namespace: 'garden-dev', name: 'alpha' }]);
    expect(shootRequestsForSeedNamespace('shoot--garden--alpha')).toEqual([{ namespace: 'garden', name: 'alpha' }]);
    expect(shootRequestsForSeedNamespace('shoot--my-project--a-b')).toEqual([
      { namespace: 'garden-my-project', name: 'a-b' },
    ]);
  });

  it('is every reading of an ambiguous namespace', () => {
    expect(shootRequestsForSeedNamespace('shoot--local--x--yy')).toEqual([
      { namespace: 'garden-local', name: 'x--yy' },
      { namespace: 'garden-local--x', name: 'yy' },
    ]);
  });

  it('is none for other namespaces', () => {
    for (const namespace of ['garden', 'kube-system', 'shoot--', 'shoot--dev', undefined]) {
      expect(shootRequestsForSeedNamespace(namespace)).toEqual([]);
    }
  });

  it("is the shoot the object's labels name, exactly", () => {
    const object = {
      metadata: {
        namespace: 'shoot--local--x--yy',
        labels: { 'project.gardener.cloud/name': 'local--x', 'shoot.gardener.cloud/name': 'yy' },
      },
    };
    expect(shootRequestsForSeedObject(object)).toEqual([{ namespace: 'garden-local--x', name: 'yy' }]);
    expect(shootRequestsForSeedObject({ metadata: { namespace: 'shoot--dev--a' } })).toEqual([
      { namespace: 'garden-dev', name: 'a' },
    ]);
  });
});
