import { describe, expect, it } from 'vitest';
import {
  DEFAULT_REGISTERED_EXTENSION_TYPES,
  parseTypeList,
  validateShootExtensionTypes,
} from '../../src/admission/extensions.js';
import { handleAdmissionReview } from '../../src/admission/review.js';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import { causesOf, gateSets, ipv4ShootObject, shootObject } from '../fixtures/objects.js';

const fields = (shoot: Shoot) =>
  validateShootExtensionTypes(shoot, DEFAULT_REGISTERED_EXTENSION_TYPES).map((e) => e.field);

describe('extension types a Shoot may use', () => {
  it('accepts the types this installation runs', () => {
    const shoot = ipv4ShootObject();
    shoot.spec.dns = { providers: [{ type: 'local', primary: true }] };
    expect(fields(shoot)).toEqual([]);
  });

  it.each([
    ['provider', (s: Shoot) => (s.spec.provider!.type = 'aws'), ['spec.provider.type']],
    ['networking', (s: Shoot) => (s.spec.networking!.type = 'cilium'), ['spec.networking.type']],
    [
      'primary DNS provider',
      (s: Shoot) =>
        (s.spec.dns = {
          providers: [
            { type: 'unmanaged', primary: true },
            { type: 'x', primary: true },
          ],
        }),
      ['spec.dns.providers[1].type'],
    ],
    ['non-primary DNS provider (not checked)', (s: Shoot) => (s.spec.dns = { providers: [{ type: 'x' }] }), []],
  ])('refuses an unknown %s type', (_, edit, expected) => {
    const shoot = ipv4ShootObject();
    edit(shoot);
    expect(fields(shoot)).toEqual(expected);
  });

  it('does not ask a workerless shoot for provider or networking extensions, as Gardener', () => {
    const shoot = shootObject({ workers: 0 });
    shoot.spec.provider!.type = 'aws';
    expect(fields(shoot)).toEqual([]);
  });

  it('names the registered types, or none', () => {
    const shoot = ipv4ShootObject();
    shoot.spec.networking!.type = 'cilium';
    expect(causesOf(validateShootExtensionTypes(shoot, { provider: ['local'], networking: [], dns: [] }))).toEqual([
      {
        field: 'spec.networking.type',
        reason: 'FieldValueInvalid',
        message:
          'Invalid value: "cilium": given Shoot uses non-registered networking type (registered in this installation: none)',
      },
    ]);
  });

  it('is part of the validating webhook when the installation says which types it runs', async () => {
    const shoot = ipv4ShootObject();
    shoot.spec.networking!.type = 'cilium';
    const request = { uid: 'u1', operation: 'CREATE' as const, object: shoot };
    const review = { apiVersion: 'admission.k8s.io/v1' as const, kind: 'AdmissionReview' as const, request };
    const lookupSeed = async () => undefined;
    const refused = await handleAdmissionReview(
      review,
      { gates: gateSets.none, lookupSeed, extensions: DEFAULT_REGISTERED_EXTENSION_TYPES },
      'validate',
    );
    expect(refused.response.allowed).toBe(false);
    expect(refused.response.status?.details?.causes?.map((c) => c.field)).toEqual(['spec.networking.type']);
    const unchecked = await handleAdmissionReview(review, { gates: gateSets.none, lookupSeed }, 'validate');
    expect(unchecked.response.allowed).toBe(true);
  });

  it('parses the command line lists', () => {
    expect(parseTypeList(' calico, cilium ,,')).toEqual(['calico', 'cilium']);
  });
});
