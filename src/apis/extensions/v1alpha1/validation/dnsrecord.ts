/**
 * DNSRecord (extensions.gardener.cloud/v1alpha1) validation, as docs/api-reference.md ("Validation rules") states it.
 */
import { FieldPath, invalid, notSupported, required, type ErrorList } from '../../../field/index.js';
import { parseIP } from '../../../../net/cidr.js';
import { validateFullyQualifiedDomainName } from '../../../validation/dns-name.js';
import { DNS_RECORD_TYPES, type DNSRecord } from '../dnsrecord.js';

const SPEC = FieldPath.root('spec');
const FIELD_REQUIRED = 'field is required';
const MAX_TTL = 2147483647;

export function validateDNSRecord(record: DNSRecord): ErrorList {
  const errors: ErrorList = [];
  const spec = record.spec;
  if (!spec.type) errors.push(required(SPEC.child('type'), FIELD_REQUIRED));
  if (!spec.secretRef?.name) errors.push(required(SPEC.child('secretRef', 'name'), FIELD_REQUIRED));
  errors.push(...validateSecretNamespace(record));
  for (const name of ['zone', 'region'] as const) {
    if (spec[name] === '') errors.push(invalid(SPEC.child(name), '', 'field cannot be empty if specified'));
  }

  const name = spec.name ?? '';
  errors.push(...validateFullyQualifiedDomainName(SPEC.child('name'), name.startsWith('*.') ? name.slice(2) : name));

  const recordType = spec.recordType ?? '';
  const knownType = (DNS_RECORD_TYPES as readonly string[]).includes(recordType);
  if (!knownType) errors.push(notSupported(SPEC.child('recordType'), recordType, DNS_RECORD_TYPES));

  const values = spec.values ?? [];
  if (values.length === 0) errors.push(required(SPEC.child('values'), FIELD_REQUIRED));
  if (recordType === 'CNAME' && values.length > 1) {
    errors.push(invalid(SPEC.child('values'), values, 'CNAME records must have a single value'));
  }
  values.forEach((value, i) => errors.push(...validateValue(recordType, value, SPEC.child('values').index(i))));

  if (spec.ttl !== undefined && (spec.ttl < 0 || spec.ttl > MAX_TTL)) {
    errors.push(invalid(SPEC.child('ttl'), spec.ttl, `must be between 0 and ${MAX_TTL}, inclusive`));
  }
  return errors;
}

/**
 * The secret must be in the DNSRecord's namespace (empty means that one): with another namespace's secret, one
 * shoot's DNSRecord would publish with another shoot's credentials. Without `metadata.namespace` (a file for the
 * CLI) the namespace is decided on creation, where the webhook checks it.
 */
function validateSecretNamespace(record: DNSRecord): ErrorList {
  const namespace = record.metadata.namespace;
  const secretNamespace = record.spec.secretRef?.namespace;
  if (!namespace || !secretNamespace || secretNamespace === namespace) return [];
  return [
    invalid(
      SPEC.child('secretRef', 'namespace'),
      secretNamespace,
      `must be the DNSRecord's namespace ${JSON.stringify(namespace)}: a DNSRecord may only use a secret of its own namespace`,
    ),
  ];
}

function validateValue(recordType: string, value: string, path: FieldPath): ErrorList {
  switch (recordType) {
    case 'A':
      return parseIP(value)?.family === 'IPv4' ? [] : [invalid(path, value, 'must be a valid IPv4 address')];
    case 'AAAA':
      // Any IPv6 text is fine (publishing writes it canonically), but an IPv4-mapped address (`::ffff:a.b.c.d`)
      // counts as IPv4, as everywhere else in the API rules.
      return parseIP(value)?.family === 'IPv6' ? [] : [invalid(path, value, 'must be a valid IPv6 address')];
    case 'CNAME':
      return validateFullyQualifiedDomainName(path, value);
    default:
      return [];
  }
}

export function validateDNSRecordUpdate(next: DNSRecord, prev: DNSRecord): ErrorList {
  const errors = validateDNSRecord(next);
  for (const name of ['type', 'name', 'recordType'] as const) {
    if (next.spec[name] !== prev.spec[name]) {
      errors.push(invalid(SPEC.child(name), next.spec[name] ?? null, 'field is immutable'));
    }
  }
  return errors;
}
