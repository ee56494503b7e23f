/**
 * Domain name checks of k8s.io/apimachinery/pkg/util/validation, with the same messages.
 */
import { invalid, required, type ErrorList, type FieldPath } from '../field/index.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_MESSAGE =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end " +
  "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is " +
  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start " +
  "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is " +
  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

export function dns1123SubdomainErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 253) errors.push('must be no more than 253 characters');
  if (!DNS1123_SUBDOMAIN.test(value)) errors.push(SUBDOMAIN_MESSAGE);
  return errors;
}

export function dns1123LabelErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 63) errors.push('must be no more than 63 characters');
  if (!DNS1123_LABEL.test(value)) errors.push(LABEL_MESSAGE);
  return errors;
}

/** `IsFullyQualifiedDomainName`: at least two labels, a trailing dot allowed. */
export function validateFullyQualifiedDomainName(path: FieldPath, value: string): ErrorList {
  if (value.length === 0) return [required(path, '')];
  const name = value.endsWith('.') ? value.slice(0, -1) : value;
  const subdomainErrors = dns1123SubdomainErrors(name);
  if (subdomainErrors.length > 0) return [invalid(path, name, subdomainErrors.join(','))];
  const labels = name.split('.');
  if (labels.length < 2) {
    return [invalid(path, name, 'should be a domain with at least two segments separated by dots')];
  }
  for (const label of labels) {
    const labelErrors = dns1123LabelErrors(label);
    if (labelErrors.length > 0) return [invalid(path, label, labelErrors.join(','))];
  }
  return [];
}
