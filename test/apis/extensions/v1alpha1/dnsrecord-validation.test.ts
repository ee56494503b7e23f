import { describe, expect, it } from 'vitest';
import { admit } from '../../../../src/apis/admission.js';
import { defaultDNSRecord } from '../../../../src/apis/extensions/v1alpha1/defaults.js';
import type { DNSRecord } from '../../../../src/apis/extensions/v1alpha1/dnsrecord.js';
import {
  validateDNSRecord,
  validateDNSRecordUpdate,
} from '../../../../src/apis/extensions/v1alpha1/validation/dnsrecord.js';
import { errorString, type ErrorList } from '../../../../src/apis/field/index.js';
import { featureGates } from '../../../../src/featuregate/featuregate.js';
import { dnsRecordObject } from '../../../fixtures/objects.js';

const messages = (errors: ErrorList) => errors.map(errorString);
const validate = (record: DNSRecord) => messages(validateDNSRecord(record));
const fields = (record: DNSRecord) => validateDNSRecord(record).map((e) => [e.type, e.field]);

describe('DNSRecord validation', () => {
  describe('valid records', () => {
    it.each([
      ['A', ['203.0.113.10']],
      ['A', ['203.0.113.10', '203.0.113.11', '10.0.0.1']],
      ['AAAA', ['2001:db8::1']],
      ['AAAA', ['2001:DB8:0:0::1', '2001:0db8:0000:0000:0000:0000:0000:0002', 'fd00::a']],
      ['CNAME', ['lb.provider.example.com']],
      ['TXT', ['v=spf1 -all', 'anything goes: "quoted", spaces, ünïcödé']],
    ] as const)('%s %j', (recordType, values) => {
      expect(validate(dnsRecordObject({ recordType, values: [...values] }))).toEqual([]);
    });

    it('accepts a zone and a region', () => {
      expect(validate(dnsRecordObject({ zone: 'Z0123456789', region: 'eu-west-1' }))).toEqual([]);
    });
  });

  describe('required fields', () => {
    it('spec.type', () => {
      expect(fields(dnsRecordObject({ type: undefined }))).toEqual([['FieldValueRequired', 'spec.type']]);
      expect(fields(dnsRecordObject({ type: '' }))).toEqual([['FieldValueRequired', 'spec.type']]);
    });

    it('spec.secretRef.name', () => {
      expect(fields(dnsRecordObject({ secretRef: undefined }))).toEqual([
        ['FieldValueRequired', 'spec.secretRef.name'],
      ]);
      expect(fields(dnsRecordObject({ secretRef: { namespace: 'shoot--dev--a' } }))).toEqual([
        ['FieldValueRequired', 'spec.secretRef.name'],
      ]);
      expect(fields(dnsRecordObject({ secretRef: { name: '' } }))).toEqual([
        ['FieldValueRequired', 'spec.secretRef.name'],
      ]);
    });

    it('spec.values', () => {
      expect(fields(dnsRecordObject({ values: undefined }))).toEqual([['FieldValueRequired', 'spec.values']]);
      expect(fields(dnsRecordObject({ values: [] }))).toEqual([['FieldValueRequired', 'spec.values']]);
    });
  });

  describe('zone and region', () => {
    it.each(['zone', 'region'] as const)('%s set but empty is Invalid', (name) => {
      expect(validate(dnsRecordObject({ [name]: '' }))).toEqual([
        `spec.${name}: Invalid value: "": field cannot be empty if specified`,
      ]);
    });
  });

  describe('spec.name', () => {
    it.each([
      'api.example.com',
      'api.example.com.',
      'a.b',
      '*.ingress.a.dev.example.com',
      '*.example.com',
      'x-1.example-2.com',
    ])('accepts %j', (name) => {
      expect(validate(dnsRecordObject({ name }))).toEqual([]);
    });

    it.each([
      'example',
      '*.com',
      'API.example.com',
      'api..example.com',
      '-api.example.com',
      'api.example.com-',
      'a.*.example.com',
      '**.example.com',
      '*example.com',
      'api_1.example.com',
      'api example.com',
      `${'a'.repeat(64)}.example.com`,
      `${'a.'.repeat(127)}com`,
    ])('rejects %j', (name) => {
      expect(fields(dnsRecordObject({ name }))).toEqual([['FieldValueInvalid', 'spec.name']]);
    });

    it('an empty or missing name is Required', () => {
      expect(fields(dnsRecordObject({ name: '' }))).toEqual([['FieldValueRequired', 'spec.name']]);
      expect(fields(dnsRecordObject({ name: undefined }))).toEqual([['FieldValueRequired', 'spec.name']]);
    });
  });

  describe('spec.recordType', () => {
    it.each(['MX', 'a', 'SRV', ''])('%j is NotSupported, listing A, AAAA, CNAME, TXT in that order', (recordType) => {
      expect(validate(dnsRecordObject({ recordType }))).toEqual([
        `spec.recordType: Unsupported value: "${recordType}": supported values: "A", "AAAA", "CNAME", "TXT"`,
      ]);
    });

    it('a missing recordType is NotSupported too', () => {
      expect(fields(dnsRecordObject({ recordType: undefined }))).toEqual([
        ['FieldValueNotSupported', 'spec.recordType'],
      ]);
    });
  });

  describe('spec.values', () => {
    it('CNAME records have a single value', () => {
      expect(validate(dnsRecordObject({ recordType: 'CNAME', values: ['a.example.com', 'b.example.com'] }))).toEqual([
        'spec.values: Invalid value: ["a.example.com","b.example.com"]: CNAME records must have a single value',
      ]);
    });

    it.each(['2001:db8::1', '::ffff:1.2.3.4x', '010.0.0.1', '256.1.1.1', '10.0.0', 'example.com', '', ' 10.0.0.1'])(
      'A rejects %j',
      (value) => {
        expect(validate(dnsRecordObject({ recordType: 'A', values: ['203.0.113.10', value] }))).toEqual([
          `spec.values[1]: Invalid value: ${JSON.stringify(value)}: must be a valid IPv4 address`,
        ]);
      },
    );

    it.each([
      '192.0.2.1',
      '::ffff:192.0.2.1',
      '::FFFF:192.0.2.1',
      '::ffff:c000:201',
      '0:0:0:0:0:ffff:192.0.2.1',
      'fe80::1%eth0',
      '2001:db8::g',
      '2001:db8:::1',
      '1:2:3:4:5:6:7:8:9',
      'example.com',
      '',
    ])('AAAA rejects %j (an IPv4-mapped address counts as IPv4)', (value) => {
      expect(validate(dnsRecordObject({ recordType: 'AAAA', values: [value] }))).toEqual([
        `spec.values[0]: Invalid value: ${JSON.stringify(value)}: must be a valid IPv6 address`,
      ]);
    });

    it.each(['::1', '::', '2001:db8:0:0:1:0:0:1', '64:ff9b::192.0.2.1', '::192.0.2.1', 'FE80::ABCD'])(
      'AAAA accepts any valid IPv6 text form: %j',
      (value) => {
        expect(validate(dnsRecordObject({ recordType: 'AAAA', values: [value] }))).toEqual([]);
      },
    );

    it('CNAME values must be domain names', () => {
      expect(fields(dnsRecordObject({ recordType: 'CNAME', values: ['not a domain'] }))).toEqual([
        ['FieldValueInvalid', 'spec.values[0]'],
      ]);
      expect(fields(dnsRecordObject({ recordType: 'CNAME', values: ['localhost'] }))).toEqual([
        ['FieldValueInvalid', 'spec.values[0]'],
      ]);
    });

    it('reports each bad value at its index', () => {
      expect(fields(dnsRecordObject({ values: ['1.1.1.1', 'x', '2.2.2.2', 'y'] }))).toEqual([
        ['FieldValueInvalid', 'spec.values[1]'],
        ['FieldValueInvalid', 'spec.values[3]'],
      ]);
    });

    it('does not check values against an unsupported record type', () => {
      expect(fields(dnsRecordObject({ recordType: 'MX', values: ['10 mail.example.com'] }))).toEqual([
        ['FieldValueNotSupported', 'spec.recordType'],
      ]);
    });
  });

  describe('spec.ttl', () => {
    it.each([0, 1, 120, 2147483647])('accepts %d', (ttl) => {
      expect(validate(dnsRecordObject({ ttl }))).toEqual([]);
    });
    it.each([-1, 2147483648, -2147483648])('rejects %d', (ttl) => {
      expect(fields(dnsRecordObject({ ttl }))).toEqual([['FieldValueInvalid', 'spec.ttl']]);
    });
    it('rejects a non-integer ttl when decoding', () => {
      const result = admit({ object: dnsRecordObject({ ttl: 1.5 }), gates: featureGates() });
      expect(result.errors.map((e) => [e.type, e.field])).toEqual([['FieldValueInvalid', 'spec.ttl']]);
    });
  });

  describe('defaulting', () => {
    it('defaults ttl to 120 without touching the input', () => {
      const input = dnsRecordObject();
      expect(defaultDNSRecord(input).spec.ttl).toBe(120);
      expect(input.spec.ttl).toBeUndefined();
    });
    it('keeps a set ttl, 0 included', () => {
      expect(defaultDNSRecord(dnsRecordObject({ ttl: 0 })).spec.ttl).toBe(0);
      expect(defaultDNSRecord(dnsRecordObject({ ttl: 3600 })).spec.ttl).toBe(3600);
    });
    it('admit returns the defaulted record', () => {
      const result = admit({ object: dnsRecordObject(), gates: featureGates() });
      expect(result.errors).toEqual([]);
      expect((result.object as DNSRecord).spec.ttl).toBe(120);
    });
  });

  describe('the secret of another namespace', () => {
    it("refuses spec.secretRef.namespace other than the DNSRecord's, in validation and in admission", () => {
      const hijack = dnsRecordObject(
        { secretRef: { name: 'dnsrecord-local', namespace: 'shoot--dev--a' } },
        { name: 'intruder', namespace: 'shoot--evil--b' },
      );
      const message =
        'spec.secretRef.namespace: Invalid value: "shoot--dev--a": must be the DNSRecord\'s namespace ' +
        '"shoot--evil--b": a DNSRecord may only use a secret of its own namespace';
      expect(validate(hijack)).toEqual([message]);
      expect(messages(admit({ object: hijack, gates: featureGates() }).errors)).toEqual([message]);
      expect(update(hijack, dnsRecordObject({}, { name: 'intruder', namespace: 'shoot--evil--b' }))).toEqual([message]);
    });

    it('accepts its own namespace, an empty one, and any when the object has no namespace yet (a CLI file)', () => {
      expect(validate(dnsRecordObject({ secretRef: { name: 's', namespace: 'shoot--dev--a' } }))).toEqual([]);
      expect(validate(dnsRecordObject({ secretRef: { name: 's' } }))).toEqual([]);
      expect(validate(dnsRecordObject({ secretRef: { name: 's', namespace: '' } }))).toEqual([]);
      const file = dnsRecordObject({ secretRef: { name: 's', namespace: 'elsewhere' } });
      expect(validate({ ...file, metadata: { name: 'r' } })).toEqual([]);
    });
  });

  const update = (next: DNSRecord, prev: DNSRecord) => messages(validateDNSRecordUpdate(next, prev));

  describe('update', () => {
    it('values, ttl, zone and secretRef may change', () => {
      const changed = dnsRecordObject({
        values: ['203.0.113.20'],
        ttl: 60,
        zone: 'Z1',
        secretRef: { name: 'other', namespace: 'shoot--dev--a' },
      });
      expect(update(changed, dnsRecordObject())).toEqual([]);
    });

    it.each([
      ['type', 'aws-route53'],
      ['name', 'api.b.dev.example.com'],
      ['recordType', 'CNAME'],
    ] as const)('%s is immutable', (name, value) => {
      const next = dnsRecordObject({ [name]: value, ...(name === 'recordType' ? { values: ['lb.example.com'] } : {}) });
      expect(update(next, dnsRecordObject())).toEqual([`spec.${name}: Invalid value: "${value}": field is immutable`]);
    });

    it('A ⇄ AAAA is a change of the record type, so it is refused', () => {
      const aaaa = dnsRecordObject({ recordType: 'AAAA', values: ['2001:db8::1'] });
      expect(update(aaaa, dnsRecordObject())).toEqual(['spec.recordType: Invalid value: "AAAA": field is immutable']);
    });

    it('also validates the new object', () => {
      expect(update(dnsRecordObject({ values: ['nope'] }), dnsRecordObject())).toEqual([
        'spec.values[0]: Invalid value: "nope": must be a valid IPv4 address',
      ]);
    });

    it('runs through admit', () => {
      const result = admit({
        object: dnsRecordObject({ name: 'x.example.com' }),
        oldObject: dnsRecordObject(),
        gates: featureGates(),
      });
      expect(messages(result.errors)).toEqual(['spec.name: Invalid value: "x.example.com": field is immutable']);
    });
  });
});
