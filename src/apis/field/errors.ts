import type { FieldPath } from './path.js';

/** The Kubernetes field error kinds this project emits, as they appear in `Status.details.causes[].reason`. */
export const ErrorType = {
  Invalid: 'FieldValueInvalid',
  NotFound: 'FieldValueNotFound',
  Required: 'FieldValueRequired',
  NotSupported: 'FieldValueNotSupported',
  Duplicate: 'FieldValueDuplicate',
  Forbidden: 'FieldValueForbidden',
  TooLong: 'FieldValueTooLong',
} as const;
export type ErrorType = (typeof ErrorType)[keyof typeof ErrorType];

/** One validation failure, tied to the field it concerns (k8s.io/apimachinery/pkg/util/validation/field.Error). */
export interface FieldError {
  readonly type: ErrorType;
  readonly field: string;
  readonly badValue?: unknown;
  readonly detail: string;
}

export type ErrorList = FieldError[];

/** Formats a bad value the way Go's `%#v`-ish rendering in apimachinery does for the types we meet. */
export function formatBadValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  try {
    const json = JSON.stringify(value);
    return json.length > 200 ? `${json.slice(0, 200)}...` : json;
  } catch {
    return '<unprintable>';
  }
}

/** The message body of a field error, without the field path (what `Status` causes carry). */
export function errorBody(error: FieldError): string {
  switch (error.type) {
    case ErrorType.Invalid:
      return `Invalid value: ${formatBadValue(error.badValue)}${error.detail ? `: ${error.detail}` : ''}`;
    case ErrorType.NotFound:
      return `Not found: ${formatBadValue(error.badValue)}`;
    case ErrorType.NotSupported:
      return `Unsupported value: ${formatBadValue(error.badValue)}${error.detail ? `: ${error.detail}` : ''}`;
    case ErrorType.Duplicate:
      return `Duplicate value: ${formatBadValue(error.badValue)}`;
    case ErrorType.Required:
      return error.detail ? `Required value: ${error.detail}` : 'Required value';
    case ErrorType.Forbidden:
      return error.detail ? `Forbidden: ${error.detail}` : 'Forbidden';
    case ErrorType.TooLong:
      return error.detail ? `Too long: ${error.detail}` : 'Too long';
  }
}

/** `field: body`, as `kubectl` prints it. */
export function errorString(error: FieldError): string {
  return `${error.field}: ${errorBody(error)}`;
}

export function invalid(path: FieldPath, badValue: unknown, detail: string): FieldError {
  return { type: ErrorType.Invalid, field: path.toString(), badValue, detail };
}

/** apimachinery's `field.NotFound`: the value names something that does not exist. */
export function notFound(path: FieldPath, badValue: unknown): FieldError {
  return { type: ErrorType.NotFound, field: path.toString(), badValue, detail: '' };
}

export function required(path: FieldPath, detail: string): FieldError {
  return { type: ErrorType.Required, field: path.toString(), detail };
}

export function notSupported(path: FieldPath, badValue: unknown, supported: readonly string[]): FieldError {
  const detail = supported.length > 0 ? `supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}` : '';
  return { type: ErrorType.NotSupported, field: path.toString(), badValue, detail };
}

export function duplicate(path: FieldPath, badValue: unknown): FieldError {
  return { type: ErrorType.Duplicate, field: path.toString(), badValue, detail: '' };
}

export function forbidden(path: FieldPath, detail: string): FieldError {
  return { type: ErrorType.Forbidden, field: path.toString(), detail };
}

/** apimachinery's `field.TooLong`: the value is longer than `maxLength` bytes. */
export function tooLong(path: FieldPath, badValue: unknown, maxLength: number): FieldError {
  const detail = `may not be more than ${maxLength} ${maxLength === 1 ? 'byte' : 'bytes'}`;
  return { type: ErrorType.TooLong, field: path.toString(), badValue, detail };
}
