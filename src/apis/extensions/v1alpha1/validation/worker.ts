/**
 * Worker (extensions.gardener.cloud/v1alpha1) validation: Gardener's `ValidateWorker` and `ValidateWorkerUpdate`,
 * with the pool rules of its Shoot validation that a Worker's pools need as much (names, sizes, rolling update
 * bounds).
 */
import {
  duplicate,
  FieldPath,
  forbidden,
  invalid,
  notSupported,
  required,
  type ErrorList,
} from '../../../field/index.js';
import type { IntOrString } from '../../../meta/schemas.js';
import { deepEqual } from '../../../meta/objects.js';
import { dns1123LabelErrors } from '../../../validation/dns-name.js';
import { QUANTITY_DETAIL, quantitySign } from '../../../validation/quantity.js';
import type { Worker, WorkerPool } from '../worker.js';

const SPEC = FieldPath.root('spec');
const FIELD_REQUIRED = 'field is required';
const NON_NEGATIVE = 'must be greater than or equal to 0';

/** The CPU architectures Gardener knows (`v1beta1constants.ValidArchitectures`). */
export const ARCHITECTURES: readonly string[] = ['amd64', 'arm64'];

const PERCENT = /^[0-9]+%$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function validateWorker(worker: Worker): ErrorList {
  const errors: ErrorList = [];
  const spec = worker.spec;
  if (!spec.type) errors.push(required(SPEC.child('type'), FIELD_REQUIRED));
  if (!spec.region) errors.push(required(SPEC.child('region'), FIELD_REQUIRED));
  if (!spec.secretRef?.name) errors.push(required(SPEC.child('secretRef', 'name'), FIELD_REQUIRED));
  if (spec.sshPublicKey !== undefined) errors.push(...validateBytes(spec.sshPublicKey, SPEC.child('sshPublicKey')));

  const seen = new Set<string>();
  (spec.pools ?? []).forEach((pool, i) => {
    const path = SPEC.child('pools').index(i);
    errors.push(...validateWorkerPool(pool, path));
    if (pool.name) {
      if (seen.has(pool.name)) errors.push(duplicate(path.child('name'), pool.name));
      seen.add(pool.name);
    }
  });
  return errors;
}

function validateWorkerPool(pool: WorkerPool, path: FieldPath): ErrorList {
  const errors: ErrorList = [];
  if (!pool.name) errors.push(required(path.child('name'), FIELD_REQUIRED));
  else for (const msg of dns1123LabelErrors(pool.name)) errors.push(invalid(path.child('name'), pool.name, msg));
  if (!pool.machineType) errors.push(required(path.child('machineType'), FIELD_REQUIRED));
  if (!pool.machineImage?.name) errors.push(required(path.child('machineImage', 'name'), FIELD_REQUIRED));
  if (!pool.machineImage?.version) errors.push(required(path.child('machineImage', 'version'), FIELD_REQUIRED));
  if (pool.architecture !== undefined && !ARCHITECTURES.includes(pool.architecture)) {
    errors.push(notSupported(path.child('architecture'), pool.architecture, ARCHITECTURES));
  }

  const minimum = pool.minimum ?? 0;
  const maximum = pool.maximum ?? 0;
  if (minimum < 0) errors.push(invalid(path.child('minimum'), minimum, NON_NEGATIVE));
  if (maximum < 0) errors.push(invalid(path.child('maximum'), maximum, NON_NEGATIVE));
  if (maximum < minimum) {
    errors.push(forbidden(path.child('maximum'), 'maximum value must not be less than minimum value'));
  }
  for (const name of ['maxSurge', 'maxUnavailable'] as const) {
    const value = pool[name];
    if (value !== undefined) errors.push(...validateIntOrPercent(value, path.child(name)));
  }

  const ref = pool.userDataSecretRef;
  if (ref !== undefined) {
    if (!ref.name) errors.push(required(path.child('userDataSecretRef', 'name'), FIELD_REQUIRED));
    if (!ref.key) errors.push(required(path.child('userDataSecretRef', 'key'), FIELD_REQUIRED));
  }
  if (pool.userData !== undefined) errors.push(...validateBytes(pool.userData, path.child('userData')));

  for (const [resource, quantity] of Object.entries(pool.nodeTemplate?.capacity ?? {})) {
    const at = path.child('nodeTemplate', 'capacity', resource);
    const sign = quantitySign(quantity);
    if (sign === undefined) errors.push(invalid(at, quantity, QUANTITY_DETAIL));
    else if (sign < 0) errors.push(invalid(at, quantity, NON_NEGATIVE));
  }
  return errors;
}

/** `ValidatePositiveIntOrPercent`: a number ≥ 0, or a string like `25%`. */
function validateIntOrPercent(value: IntOrString, path: FieldPath): ErrorList {
  if (typeof value === 'string') {
    return PERCENT.test(value) ? [] : [invalid(path, value, "must be an integer or percentage (e.g '5%')")];
  }
  return value < 0 ? [invalid(path, value, NON_NEGATIVE)] : [];
}

/** A `[]byte` field must be base64, or Go (and the CRD's `format: byte`) cannot decode it. */
function validateBytes(value: string, path: FieldPath): ErrorList {
  return BASE64.test(value) ? [] : [invalid(path, value, 'must be base64-encoded')];
}

export function validateWorkerUpdate(next: Worker, prev: Worker): ErrorList {
  if (prev.metadata.deletionTimestamp && !deepEqual(next.spec, prev.spec)) {
    return [forbidden(SPEC, 'cannot update worker spec if deletion timestamp is set')];
  }
  const errors: ErrorList = [];
  for (const name of ['type', 'region'] as const) {
    if (next.spec[name] !== prev.spec[name]) {
      errors.push(invalid(SPEC.child(name), next.spec[name] ?? null, 'field is immutable'));
    }
  }
  errors.push(...validateWorker(next));
  return errors;
}
