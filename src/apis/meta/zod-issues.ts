/**
 * zod issues as Kubernetes field errors, for the decoders that share them: the API kinds (admission.ts) and the
 * extensions' own configurations (the calico NetworkConfig).
 */
import type { z } from 'zod';
import { FieldPath, forbidden, type FieldError } from '../field/index.js';

/** `root` followed by the issue's path (`spec.provider.workers[0]`); the document's root when both are empty. */
export function issueFieldPath(path: readonly PropertyKey[], root: FieldPath = FieldPath.root('')): FieldPath {
  return path.reduce<FieldPath>(
    (p, segment) => (typeof segment === 'number' ? p.index(segment) : p.child(String(segment))),
    root,
  );
}

/** The value at a zod issue's path in the decoded input; undefined where the path leaves its own properties. */
export function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let value = raw;
  for (const segment of path) {
    if (typeof value !== 'object' || value === null || !Object.prototype.hasOwnProperty.call(value, segment)) {
      return undefined;
    }
    value = (value as Record<PropertyKey, unknown>)[segment];
  }
  return value;
}

/**
 * One error per key a strict object does not know, as the API server's strict decoding reports it: the message names
 * the field's whole path within the decoded document (`unknown field "spec.networking.ipFamily"`); the error's field
 * is that path under `root`, where the document sits in the object (the root itself for an API object).
 */
export function unknownFieldErrors(issue: z.core.$ZodIssueUnrecognizedKeys, root?: FieldPath): FieldError[] {
  const inDocument = issueFieldPath(issue.path);
  const inObject = issueFieldPath(issue.path, root);
  return issue.keys.map((key) => {
    const field = inObject.child(key);
    // An empty key at the root has an empty path: say where it is.
    const at = field.toString() === '' ? FieldPath.root('<root>') : field;
    return forbidden(at, `unknown field "${inDocument.child(key).toString()}"`);
  });
}
