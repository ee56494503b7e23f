import { describe, expect, it } from 'vitest';
import {
  duplicate,
  errorBody,
  errorString,
  ErrorType,
  FieldPath,
  forbidden,
  formatBadValue,
  invalid,
  invalidStatus,
  MAX_STATUS_CAUSES,
  notFound,
  notSupported,
  required,
  statusFor,
  successStatus,
} from '../../../src/apis/field/index.js';

const ipFamilies = FieldPath.root('spec', 'networking', 'ipFamilies');
const seedId = { group: 'core.gardener.cloud', kind: 'Seed', name: 'seed-a' };

describe('FieldPath', () => {
  it('renders dotted paths with [i] for list indices', () => {
    expect(ipFamilies.toString()).toBe('spec.networking.ipFamilies');
    expect(ipFamilies.index(0).toString()).toBe('spec.networking.ipFamilies[0]');
    expect(FieldPath.root('spec').child('networks', 'shootDefaults').child('pods').toString()).toBe(
      'spec.networks.shootDefaults.pods',
    );
    expect(FieldPath.root('spec').child('values').index(12).toString()).toBe('spec.values[12]');
    expect(FieldPath.root('metadata').child('labels').key('team').toString()).toBe('metadata.labels[team]');
  });

  it('is immutable', () => {
    const spec = FieldPath.root('spec');
    spec.child('a');
    spec.index(1);
    expect(spec.toString()).toBe('spec');
  });
});

describe('field error messages', () => {
  it.each([
    [
      invalid(FieldPath.root('spec', 'networks', 'pods'), 'bogus', 'invalid CIDR address: bogus'),
      ErrorType.Invalid,
      'FieldValueInvalid',
      'Invalid value: "bogus": invalid CIDR address: bogus',
    ],
    [
      required(FieldPath.root('spec', 'networking', 'type'), 'networking type must be provided'),
      ErrorType.Required,
      'FieldValueRequired',
      'Required value: networking type must be provided',
    ],
    [
      notSupported(ipFamilies.index(0), 'IPv5', ['IPv4', 'IPv6']),
      ErrorType.NotSupported,
      'FieldValueNotSupported',
      'Unsupported value: "IPv5": supported values: "IPv4", "IPv6"',
    ],
    [duplicate(ipFamilies.index(1), 'IPv4'), ErrorType.Duplicate, 'FieldValueDuplicate', 'Duplicate value: "IPv4"'],
    [
      notFound(FieldPath.root('spec', 'cloudProfile', 'name'), 'local'),
      ErrorType.NotFound,
      'FieldValueNotFound',
      'Not found: "local"',
    ],
    [
      forbidden(FieldPath.root('spec', 'networking'), "networking cannot be set to nil if it's already set"),
      ErrorType.Forbidden,
      'FieldValueForbidden',
      "Forbidden: networking cannot be set to nil if it's already set",
    ],
  ])('%#: %s', (error, type, reason, body) => {
    expect(error.type).toBe(type);
    expect(error.type).toBe(reason);
    expect(errorBody(error)).toBe(body);
    expect(errorString(error)).toBe(`${error.field}: ${body}`);
  });

  it('renders bad values of other types', () => {
    expect(formatBadValue(24)).toBe('24');
    expect(formatBadValue(true)).toBe('true');
    expect(formatBadValue(null)).toBe('null');
    expect(formatBadValue(undefined)).toBe('null');
    expect(formatBadValue(['IPv4', 'IPv6'])).toBe('["IPv4","IPv6"]');
    expect(formatBadValue('x'.repeat(300))).toBe(JSON.stringify('x'.repeat(300)));
    expect(formatBadValue(new Array(300).fill(1))).toMatch(/^\[1,1,.*\.\.\.$/);
    expect(formatBadValue(10n)).toBe('10');
  });

  it('renders an invalid list the way the ipFamilies rules report it', () => {
    const error = invalid(ipFamilies, ['IPv4', 'IPv6'], 'dual-stack networking is not supported');
    expect(errorString(error)).toBe(
      'spec.networking.ipFamilies: Invalid value: ["IPv4","IPv6"]: dual-stack networking is not supported',
    );
  });

  it('leaves out an empty detail', () => {
    expect(errorBody(required(FieldPath.root('spec', 'name'), ''))).toBe('Required value');
    expect(errorBody(forbidden(FieldPath.root('spec'), ''))).toBe('Forbidden');
    expect(errorBody(notSupported(FieldPath.root('spec', 'x'), 'y', []))).toBe('Unsupported value: "y"');
  });
});

describe('Status', () => {
  it('is a 200 Success for a valid object', () => {
    const expected = {
      apiVersion: 'v1',
      kind: 'Status',
      metadata: {},
      status: 'Success',
      details: { name: 'seed-a', group: 'core.gardener.cloud', kind: 'Seed' },
      code: 200,
    };
    expect(successStatus(seedId)).toEqual(expected);
    expect(statusFor(seedId, [])).toEqual(expected);
    expect(successStatus({ group: 'core.gardener.cloud', kind: 'Seed' }).details).toEqual({
      group: 'core.gardener.cloud',
      kind: 'Seed',
    });
  });

  it('is a 422 Invalid Failure with one cause per field error', () => {
    const errors = [
      notSupported(FieldPath.root('spec', 'networks', 'ipFamilies').index(0), 'IPv5', ['IPv4', 'IPv6']),
      required(FieldPath.root('spec', 'networks', 'pods'), 'field is required'),
    ];
    const expected = {
      apiVersion: 'v1',
      kind: 'Status',
      metadata: {},
      status: 'Failure',
      message:
        'Seed.core.gardener.cloud "seed-a" is invalid: [spec.networks.ipFamilies[0]: Unsupported value: "IPv5": ' +
        'supported values: "IPv4", "IPv6", spec.networks.pods: Required value: field is required]',
      reason: 'Invalid',
      details: {
        name: 'seed-a',
        group: 'core.gardener.cloud',
        kind: 'Seed',
        causes: [
          {
            reason: 'FieldValueNotSupported',
            message: 'Unsupported value: "IPv5": supported values: "IPv4", "IPv6"',
            field: 'spec.networks.ipFamilies[0]',
          },
          { reason: 'FieldValueRequired', message: 'Required value: field is required', field: 'spec.networks.pods' },
        ],
      },
      code: 422,
    };
    expect(invalidStatus(seedId, errors)).toEqual(expected);
    expect(statusFor(seedId, errors)).toEqual(expected);
  });

  it('names a single error without brackets, and copes with a nameless object or an empty group', () => {
    const error = forbidden(FieldPath.root('spec'), 'cannot update network spec if deletion timestamp is set');
    expect(invalidStatus({ group: 'extensions.gardener.cloud', kind: 'Network' }, [error]).message).toBe(
      'Network.extensions.gardener.cloud "" is invalid: spec: Forbidden: cannot update network spec if deletion timestamp is set',
    );
    const status = invalidStatus({ group: '', kind: 'Thing', name: 'x' }, [error]);
    expect(status.message).toBe(
      'Thing "x" is invalid: spec: Forbidden: cannot update network spec if deletion timestamp is set',
    );
    expect(status.details).toEqual({
      name: 'x',
      group: '',
      kind: 'Thing',
      causes: [
        {
          reason: 'FieldValueForbidden',
          message: 'Forbidden: cannot update network spec if deletion timestamp is set',
          field: 'spec',
        },
      ],
    });
  });

  it.each([
    [
      'Invalid',
      invalid(FieldPath.root('spec', 'ttl'), -1, 'must be between 0 and 2147483647, inclusive'),
      'Invalid value: -1: must be between 0 and 2147483647, inclusive',
    ],
    ['Required', required(FieldPath.root('spec', 'values'), 'field is required'), 'Required value: field is required'],
    [
      'NotSupported',
      notSupported(FieldPath.root('spec', 'recordType'), 'MX', ['A', 'AAAA', 'CNAME', 'TXT']),
      'Unsupported value: "MX": supported values: "A", "AAAA", "CNAME", "TXT"',
    ],
    ['Duplicate', duplicate(FieldPath.root('spec', 'ipFamilies').index(1), 'IPv6'), 'Duplicate value: "IPv6"'],
    [
      'Forbidden',
      forbidden(
        FieldPath.root('spec', 'seedName'),
        'seed "s" does not support IP families [IPv6] of the shoot (seed: [IPv4])',
      ),
      'Forbidden: seed "s" does not support IP families [IPv6] of the shoot (seed: [IPv4])',
    ],
  ])('carries a %s cause with the message body and the field', (_, error, message) => {
    const status = invalidStatus(seedId, [error]);
    expect(status.details?.causes).toEqual([{ reason: error.type, message, field: error.field }]);
    expect(status.message).toBe(`Seed.core.gardener.cloud "seed-a" is invalid: ${error.field}: ${message}`);
  });

  it(`names the first ${MAX_STATUS_CAUSES} errors and counts the others`, () => {
    const errors = Array.from({ length: 98_000 }, (_, i) =>
      forbidden(FieldPath.root('spec').child(`k${i}`), `unknown field "k${i}"`),
    );
    const status = invalidStatus(seedId, errors);
    expect(status.details?.causes).toHaveLength(MAX_STATUS_CAUSES);
    expect(status.details?.causes?.[0]).toEqual({
      reason: 'FieldValueForbidden',
      message: 'Forbidden: unknown field "k0"',
      field: 'spec.k0',
    });
    expect(status.message).toMatch(/^Seed\.core\.gardener\.cloud "[^"]*" is invalid: \[spec\.k0: Forbidden: /);
    expect(status.message).toContain(`spec.k${MAX_STATUS_CAUSES - 1}: Forbidden`);
    expect(status.message).not.toContain(`spec.k${MAX_STATUS_CAUSES}:`);
    expect(status.message).toMatch(/, and 97900 more errors\]$/);
    expect(JSON.stringify(status).length).toBeLessThan(32 * 1024);
  });
});
