/**
 * Network (extensions.gardener.cloud/v1alpha1) validation, as docs/api-reference.md ("Validation rules") states it.
 */
import { FieldPath, forbidden, invalid, required, type ErrorList } from '../../../field/index.js';
import type { FeatureGates } from '../../../../featuregate/featuregate.js';
import { cidrField, intersects, overlapError, validateFamily, validateParse } from '../../../validation/cidr.js';
import { familyInfo, validateIPFamilies, validateIPFamiliesUpdate } from '../../../validation/ip-families.js';
import { deepEqual } from '../../../meta/objects.js';
import type { Network } from '../network.js';

const SPEC = FieldPath.root('spec');
const FIELD_REQUIRED = 'field is required';

export function validateNetwork(network: Network, gates: FeatureGates): ErrorList {
  const errors: ErrorList = [];
  const spec = network.spec;
  if (!spec.type) errors.push(required(SPEC.child('type'), FIELD_REQUIRED));

  const families = validateIPFamilies(spec.ipFamilies, SPEC.child('ipFamilies'), gates, {
    gateIPv6SingleStack: false,
  });
  errors.push(...families.errors);

  const info = familyInfo(spec.ipFamilies);
  const fields = (['podCIDR', 'serviceCIDR'] as const).map((name) => {
    const value = spec[name];
    if (value === undefined || value === '') {
      errors.push(required(SPEC.child(name), FIELD_REQUIRED));
      return undefined;
    }
    // The CIDR checks of the section stop when an ipFamilies rule fired (docs/api-reference.md, "The ipFamilies
    // rules").
    if (!families.valid) return undefined;
    const field = cidrField(SPEC.child(name), value);
    errors.push(...validateParse(field));
    if (info.singleStack) errors.push(...validateFamily(field, info.primary));
    return field;
  });
  const [pods, services] = fields;
  if (pods && services && intersects(services, pods)) errors.push(overlapError(services, pods));
  return errors;
}

export function validateNetworkUpdate(next: Network, prev: Network, gates: FeatureGates): ErrorList {
  const errors: ErrorList = [];
  if (prev.metadata.deletionTimestamp && !deepEqual(next.spec, prev.spec)) {
    return [forbidden(SPEC, 'cannot update network spec if deletion timestamp is set')];
  }
  errors.push(...validateNetwork(next, gates));
  for (const name of ['type', 'podCIDR', 'serviceCIDR'] as const) {
    if (next.spec[name] !== prev.spec[name]) {
      errors.push(invalid(SPEC.child(name), next.spec[name] ?? null, 'field is immutable'));
    }
  }
  errors.push(...validateIPFamiliesUpdate(next.spec.ipFamilies, prev.spec.ipFamilies, SPEC.child('ipFamilies'), gates));
  return errors;
}
