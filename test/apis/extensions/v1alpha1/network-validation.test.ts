import { describe, expect, it } from 'vitest';
import { admit } from '../../../../src/apis/admission.js';
import type { Network } from '../../../../src/apis/extensions/v1alpha1/network.js';
import { validateNetwork, validateNetworkUpdate } from '../../../../src/apis/extensions/v1alpha1/validation/network.js';
import { errorString, type ErrorList } from '../../../../src/apis/field/index.js';
import { featureGates } from '../../../../src/featuregate/featuregate.js';
import { networkObject } from '../../../fixtures/objects.js';

const OFF = featureGates();
const DUAL = featureGates({ DualStack: true });
const messages = (errors: ErrorList) => errors.map(errorString);
const validate = (network: Network, gates = OFF) => messages(validateNetwork(network, gates));
const update = (next: Network, prev: Network, gates = OFF) => messages(validateNetworkUpdate(next, prev, gates));

const ipv6 = { ipFamilies: ['IPv6'], podCIDR: 'fd00:10:3:100::/56', serviceCIDR: 'fd00:10:4::/112' };
const dual = { ipFamilies: ['IPv4', 'IPv6'], podCIDR: '100.96.0.0/11', serviceCIDR: 'fd00:10:4::/112' };

describe('Network validation', () => {
  describe('valid networks', () => {
    it('accepts an IPv4 network', () => {
      expect(validate(networkObject())).toEqual([]);
    });
    it('accepts an IPv6 network without any gate (no IPv6SingleStack rule for Network)', () => {
      expect(validate(networkObject(ipv6))).toEqual([]);
    });
    it('accepts a dual-stack network with DualStack', () => {
      expect(validate(networkObject(dual), DUAL)).toEqual([]);
      expect(validate(networkObject({ ...dual, ipFamilies: ['IPv6', 'IPv4'] }), DUAL)).toEqual([]);
    });
    it('accepts a network without ipFamilies (IPv4)', () => {
      expect(validate(networkObject({ ipFamilies: undefined }))).toEqual([]);
      expect(validate(networkObject({ ipFamilies: [] }))).toEqual([]);
    });
  });

  it('requires spec.type', () => {
    expect(validate(networkObject({ type: undefined }))).toEqual(['spec.type: Required value: field is required']);
    expect(validate(networkObject({ type: '' }))).toEqual(['spec.type: Required value: field is required']);
  });

  describe('ipFamilies rules 1–3', () => {
    it('rule 1: NotSupported at the index', () => {
      expect(validate(networkObject({ ipFamilies: ['IPv4', 'IPv7'] }), DUAL)).toEqual([
        'spec.ipFamilies[1]: Unsupported value: "IPv7": supported values: "IPv4", "IPv6"',
      ]);
    });
    it('rule 2: Duplicate at the index', () => {
      expect(validate(networkObject({ ipFamilies: ['IPv4', 'IPv4'] }))).toEqual([
        'spec.ipFamilies[1]: Duplicate value: "IPv4"',
      ]);
    });
    it('rule 3: dual-stack needs DualStack', () => {
      expect(validate(networkObject(dual))).toEqual([
        'spec.ipFamilies: Invalid value: ["IPv4","IPv6"]: dual-stack networking is not supported',
      ]);
    });
    it('no rule 4', () => {
      expect(validate(networkObject({ ...dual, ipFamilies: ['IPv6', 'IPv4'] }), DUAL)).toEqual([]);
    });
    it('stops the CIDR checks when a rule fires, but still reports missing fields', () => {
      const broken = { podCIDR: 'bogus', serviceCIDR: '100.96.0.0/12' };
      expect(validate(networkObject({ ...broken, ipFamilies: ['IPv5'] }))).toEqual([
        'spec.ipFamilies[0]: Unsupported value: "IPv5": supported values: "IPv4", "IPv6"',
      ]);
      expect(validate(networkObject({ ...broken, ipFamilies: ['IPv4', 'IPv6'] }))).toEqual([
        'spec.ipFamilies: Invalid value: ["IPv4","IPv6"]: dual-stack networking is not supported',
      ]);
      expect(validate(networkObject({ podCIDR: undefined, ipFamilies: ['IPv6', 'IPv6'] }))).toEqual([
        'spec.ipFamilies[1]: Duplicate value: "IPv6"',
        'spec.podCIDR: Required value: field is required',
      ]);
    });
  });

  describe('podCIDR and serviceCIDR', () => {
    it.each(['podCIDR', 'serviceCIDR'] as const)('%s is required', (name) => {
      expect(validate(networkObject({ [name]: undefined }))).toEqual([
        `spec.${name}: Required value: field is required`,
      ]);
      expect(validate(networkObject({ [name]: '' }))).toEqual([`spec.${name}: Required value: field is required`]);
    });

    it('reports every missing field', () => {
      expect(validate(networkObject({ type: undefined, podCIDR: undefined, serviceCIDR: undefined }))).toEqual([
        'spec.type: Required value: field is required',
        'spec.podCIDR: Required value: field is required',
        'spec.serviceCIDR: Required value: field is required',
      ]);
    });

    it('must parse', () => {
      expect(validate(networkObject({ podCIDR: '100.96.0.0', serviceCIDR: '100.64.0.0/33' }))).toEqual([
        'spec.podCIDR: Invalid value: "100.96.0.0": invalid CIDR address: 100.96.0.0',
        'spec.serviceCIDR: Invalid value: "100.64.0.0/33": invalid CIDR address: 100.64.0.0/33',
      ]);
    });

    it('no canonical check', () => {
      expect(validate(networkObject({ podCIDR: '100.96.1.2/11', serviceCIDR: '100.64.0.9/13' }))).toEqual([]);
    });

    it('family check against the single family, network address as bad value', () => {
      expect(validate(networkObject({ podCIDR: 'fd00:10:3::1/56' }))).toEqual([
        'spec.podCIDR: Invalid value: "fd00:10:3::": must be a valid IPv4 address',
      ]);
      expect(validate(networkObject({ ipFamilies: undefined, serviceCIDR: 'fd00:10:4::/112' }))).toEqual([
        'spec.serviceCIDR: Invalid value: "fd00:10:4::": must be a valid IPv4 address',
      ]);
      expect(validate(networkObject({ ...ipv6, serviceCIDR: '100.64.0.5/13' }))).toEqual([
        'spec.serviceCIDR: Invalid value: "100.64.0.0": must be a valid IPv6 address',
      ]);
    });

    it('no family check on dual-stack', () => {
      expect(
        validate(networkObject({ ...dual, podCIDR: 'fd00:10:3::/56', serviceCIDR: '100.64.0.0/13' }), DUAL),
      ).toEqual([]);
    });

    it('serviceCIDR must not overlap podCIDR (error on serviceCIDR)', () => {
      expect(validate(networkObject({ serviceCIDR: '100.100.0.0/16' }))).toEqual([
        'spec.serviceCIDR: Invalid value: "100.100.0.0/16": must not overlap with "spec.podCIDR" ("100.96.0.0/11")',
      ]);
      expect(validate(networkObject({ serviceCIDR: '100.0.0.0/8' }))).toEqual([
        'spec.serviceCIDR: Invalid value: "100.0.0.0/8": must not overlap with "spec.podCIDR" ("100.96.0.0/11")',
      ]);
      expect(validate(networkObject({ ...ipv6, serviceCIDR: 'fd00:10:3:1ff::/112' }))).toEqual([
        'spec.serviceCIDR: Invalid value: "fd00:10:3:1ff::/112": must not overlap with "spec.podCIDR" ("fd00:10:3:100::/56")',
      ]);
    });

    it('ranges of different families never overlap', () => {
      expect(validate(networkObject({ ...dual, podCIDR: '0.0.0.0/0', serviceCIDR: '::/0' }), DUAL)).toEqual([]);
    });
  });

  describe('update', () => {
    it('accepts an unchanged network and mutable changes', () => {
      expect(update(networkObject(), networkObject())).toEqual([]);
      expect(update(networkObject({ providerConfig: { mtu: 1400 } }), networkObject())).toEqual([]);
    });

    it.each([
      ['type', 'cilium'],
      ['podCIDR', '100.128.0.0/11'],
      ['serviceCIDR', '100.72.0.0/13'],
    ] as const)('%s is immutable', (name, value) => {
      expect(update(networkObject({ [name]: value }), networkObject())).toEqual([
        `spec.${name}: Invalid value: "${value}": field is immutable`,
      ]);
    });

    it('ipFamilies are immutable without DualStack', () => {
      expect(update(networkObject(ipv6), networkObject(ipv6))).toEqual([]);
      expect(update(networkObject({ ipFamilies: undefined }), networkObject({ ipFamilies: [] }))).toEqual([]);
      expect(
        update(networkObject({ ...dual, podCIDR: '100.96.0.0/11', serviceCIDR: '100.64.0.0/13' }), networkObject()),
      ).toEqual([
        'spec.ipFamilies: Invalid value: ["IPv4","IPv6"]: dual-stack networking is not supported',
        'spec.ipFamilies: Invalid value: ["IPv4","IPv6"]: field is immutable',
      ]);
    });

    it('with DualStack, a second family may be added, and [IPv4, IPv6] go back to [IPv4]', () => {
      const v4 = networkObject();
      const v4v6 = networkObject({ ipFamilies: ['IPv4', 'IPv6'] });
      expect(update(v4v6, v4, DUAL)).toEqual([]);
      expect(update(v4, v4v6, DUAL)).toEqual([]);
      expect(update(networkObject({ ipFamilies: ['IPv6', 'IPv4'] }), v4, DUAL)).toEqual([
        'spec.ipFamilies: Forbidden: unsupported IP family update: oldIPFamilies=[IPv4], newIPFamilies=[IPv6 IPv4]',
      ]);
      expect(update(networkObject({ ...ipv6, ipFamilies: ['IPv6', 'IPv4'] }), networkObject(ipv6), DUAL)).toEqual([]);
      expect(update(networkObject(ipv6), networkObject({ ...ipv6, ipFamilies: ['IPv6', 'IPv4'] }), DUAL)).toEqual([
        'spec.ipFamilies: Forbidden: unsupported IP family update: oldIPFamilies=[IPv6 IPv4], newIPFamilies=[IPv6]',
      ]);
      expect(
        update(networkObject({ ...ipv6, podCIDR: '100.96.0.0/11', serviceCIDR: '100.64.0.0/13' }), v4, DUAL),
      ).toEqual([
        'spec.podCIDR: Invalid value: "100.96.0.0": must be a valid IPv6 address',
        'spec.serviceCIDR: Invalid value: "100.64.0.0": must be a valid IPv6 address',
        'spec.ipFamilies: Forbidden: unsupported IP family update: oldIPFamilies=[IPv4], newIPFamilies=[IPv6]',
      ]);
    });

    it('an empty list is [] in the Forbidden detail', () => {
      const errors = validateNetworkUpdate(
        networkObject({ ipFamilies: ['IPv4', 'IPv6'] }),
        networkObject({ ipFamilies: undefined }),
        DUAL,
      );
      expect(errors).toEqual([
        expect.objectContaining({
          type: 'FieldValueForbidden',
          field: 'spec.ipFamilies',
          detail: 'unsupported IP family update: oldIPFamilies=[], newIPFamilies=[IPv4 IPv6]',
        }),
      ]);
    });

    describe('deletionTimestamp', () => {
      const deleting = (spec: Parameters<typeof networkObject>[0] = {}) =>
        networkObject(spec, { deletionTimestamp: '2025-01-01T00:00:00Z' });

      it('forbids any spec change once set', () => {
        for (const change of [{ providerConfig: { mtu: 1400 } }, { class: 'shoot' }, { podCIDR: '100.128.0.0/11' }]) {
          const errors = validateNetworkUpdate(deleting(change), deleting(), OFF);
          expect(errors).toEqual([expect.objectContaining({ type: 'FieldValueForbidden', field: 'spec' })]);
        }
      });

      it('allows an update that leaves the spec alone', () => {
        expect(update(deleting(), deleting())).toEqual([]);
        expect(
          update(networkObject({}, { deletionTimestamp: '2025-01-01T00:00:00Z', labels: { a: 'b' } }), deleting()),
        ).toEqual([]);
      });

      it('compares the spec by value, not by key order', () => {
        const next = deleting({ providerConfig: { a: 1, b: { c: [1, 2] } } });
        const prev = deleting({ providerConfig: { b: { c: [1, 2] }, a: 1 } });
        expect(update(next, prev)).toEqual([]);
        const reordered = networkObject({}, { deletionTimestamp: '2025-01-01T00:00:00Z' });
        reordered.spec = Object.fromEntries(Object.entries(reordered.spec).reverse()) as Network['spec'];
        expect(update(reordered, deleting())).toEqual([]);
      });

      it('applies through admit', () => {
        const old = deleting();
        const result = admit({ object: deleting({ providerConfig: { vethMTU: '1400' } }), oldObject: old, gates: OFF });
        expect(result.errors.map((e) => [e.type, e.field])).toEqual([['FieldValueForbidden', 'spec']]);
      });
    });
  });

  describe('admission', () => {
    it('does not default ipFamilies', () => {
      const result = admit({ object: networkObject({ ipFamilies: undefined }), gates: OFF });
      expect(result.errors).toEqual([]);
      expect((result.object as Network).spec.ipFamilies).toBeUndefined();
      expect(result.id).toEqual({ group: 'extensions.gardener.cloud', kind: 'Network', name: 'shoot--dev--a' });
    });
  });
});
