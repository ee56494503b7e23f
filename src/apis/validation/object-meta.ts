/**
 * `metadata` as the API server checks it (k8s.io/apimachinery `ValidateObjectMeta`, `ValidateLabels`,
 * `ValidateAnnotations`, finalizer names), with the same field paths and messages. The name rule is the kind's:
 * `NameIsDNSSubdomain` for most, `NameIsDNSLabel` for Shoots.
 */
import { FieldPath, forbidden, invalid, required, tooLong, type ErrorList } from '../field/index.js';
import type { ObjectMeta } from '../meta/schemas.js';
import { dns1123LabelErrors, dns1123SubdomainErrors } from './dns-name.js';

/** Messages for a name, or for a `generateName` prefix (`prefix`: a trailing dash is allowed). */
export type NameRule = (name: string, prefix: boolean) => string[];

const withoutTrailingDash = (name: string, prefix: boolean) => (prefix && name.endsWith('-') ? `${name}a` : name);
export const nameIsDNSSubdomain: NameRule = (name, prefix) => dns1123SubdomainErrors(withoutTrailingDash(name, prefix));
export const nameIsDNSLabel: NameRule = (name, prefix) => dns1123LabelErrors(withoutTrailingDash(name, prefix));

/** Sum of the annotations' keys and values the API server allows. */
export const TOTAL_ANNOTATION_SIZE_LIMIT_BYTES = 256 * 1024;
const LABEL_VALUE_MAX_LENGTH = 63;
const QUALIFIED_NAME_MAX_LENGTH = 63;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const QUALIFIED_NAME_MESSAGE =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MESSAGE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and " +
  "end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is " +
  "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/** `IsQualifiedName`: `[prefix/]name`, the prefix a DNS subdomain. */
export function qualifiedNameErrors(value: string): string[] {
  const parts = value.split('/');
  let name: string;
  const errors: string[] = [];
  if (parts.length === 1) {
    name = parts[0]!;
  } else if (parts.length === 2) {
    const [prefix, rest] = parts as [string, string];
    name = rest;
    if (prefix.length === 0) errors.push('prefix part must be non-empty');
    else for (const msg of dns1123SubdomainErrors(prefix)) errors.push(`prefix part ${msg}`);
  } else {
    return [`a qualified name ${QUALIFIED_NAME_MESSAGE}`];
  }
  if (name.length === 0) errors.push('name part must be non-empty');
  else if (name.length > QUALIFIED_NAME_MAX_LENGTH) {
    errors.push(`name part must be no more than ${QUALIFIED_NAME_MAX_LENGTH} characters`);
  }
  if (name.length > 0 && !QUALIFIED_NAME.test(name)) errors.push(`name part ${QUALIFIED_NAME_MESSAGE}`);
  return errors;
}

export function labelValueErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > LABEL_VALUE_MAX_LENGTH) errors.push(`must be no more than ${LABEL_VALUE_MAX_LENGTH} characters`);
  if (!LABEL_VALUE.test(value)) errors.push(LABEL_VALUE_MESSAGE);
  return errors;
}

export interface ObjectMetaRules {
  readonly namespaced: boolean;
  /** @default nameIsDNSSubdomain */
  readonly name?: NameRule;
}

export function validateObjectMeta(
  meta: ObjectMeta | undefined,
  rules: ObjectMetaRules,
  path: FieldPath = FieldPath.root('metadata'),
): ErrorList {
  const errors: ErrorList = [];
  const m = meta ?? {};
  const nameRule = rules.name ?? nameIsDNSSubdomain;
  if (m.generateName) {
    for (const msg of nameRule(m.generateName, true))
      errors.push(invalid(path.child('generateName'), m.generateName, msg));
  }
  if (!m.name) {
    if (!m.generateName) errors.push(required(path.child('name'), 'name or generateName is required'));
  } else {
    for (const msg of nameRule(m.name, false)) errors.push(invalid(path.child('name'), m.name, msg));
  }
  // A namespaced object without a namespace is fine: the API server takes it from the request (kubectl's default).
  if (rules.namespaced && m.namespace) {
    for (const msg of dns1123LabelErrors(m.namespace)) errors.push(invalid(path.child('namespace'), m.namespace, msg));
  } else if (!rules.namespaced && m.namespace) {
    errors.push(forbidden(path.child('namespace'), 'not allowed on this type'));
  }
  if (m.generation !== undefined && m.generation < 0) {
    errors.push(invalid(path.child('generation'), m.generation, 'must be greater than or equal to 0'));
  }
  for (const [key, value] of Object.entries(m.labels ?? {})) {
    for (const msg of qualifiedNameErrors(key)) errors.push(invalid(path.child('labels'), key, msg));
    for (const msg of labelValueErrors(value)) errors.push(invalid(path.child('labels'), value, msg));
  }
  // Their size in UTF-8 is at most 3 bytes per UTF-16 code unit: counted (a call into C++ per string) only when
  // that bound is over the limit.
  let annotationUnits = 0;
  for (const [key, value] of Object.entries(m.annotations ?? {})) {
    for (const msg of qualifiedNameErrors(key.toLowerCase())) errors.push(invalid(path.child('annotations'), key, msg));
    annotationUnits += key.length + value.length;
  }
  if (
    3 * annotationUnits > TOTAL_ANNOTATION_SIZE_LIMIT_BYTES &&
    annotationBytes(m.annotations ?? {}) > TOTAL_ANNOTATION_SIZE_LIMIT_BYTES
  ) {
    errors.push(tooLong(path.child('annotations'), '', TOTAL_ANNOTATION_SIZE_LIMIT_BYTES));
  }
  (m.finalizers ?? []).forEach((finalizer, i) => {
    for (const msg of qualifiedNameErrors(finalizer))
      errors.push(invalid(path.child('finalizers').index(i), finalizer, msg));
  });
  return errors;
}

function annotationBytes(annotations: Record<string, string>): number {
  let bytes = 0;
  for (const [key, value] of Object.entries(annotations)) bytes += Buffer.byteLength(key) + Buffer.byteLength(value);
  return bytes;
}
