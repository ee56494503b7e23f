/**
 * Seed validation (`spec.networks`), as docs/api-reference.md ("Validation rules") states it.
 */
import { FieldPath, invalid, required, type ErrorList } from '../../../field/index.js';
import type { FeatureGates } from '../../../../featuregate/featuregate.js';
import {
  cidrField,
  overlappedVPNRange,
  validateDisjoint,
  validateFamily,
  validateParse,
  validateUsable,
  type CIDRField,
} from '../../../validation/cidr.js';
import { familyInfo, sameList, validateIPFamilies } from '../../../validation/ip-families.js';
import { formatCIDR, mustParseCIDR, overlaps, type CIDR } from '../../../../net/cidr.js';
import type { Seed } from '../seed.js';

const NETWORKS = FieldPath.root('spec', 'networks');
const IPV4_MAX_SERVICES_PREFIX = 8;

/** Gardener's reserved IPv4 ranges, which it maps networks into; a seed's IPv4 ranges must stay out of them. */
export const RESERVED_IPV4_RANGES: readonly { readonly cidr: CIDR; readonly name: string }[] = [
  ['240.0.0.0/8', 'kube-apiserver mapping range'],
  ['241.0.0.0/8', 'seed pod network mapping range'],
  ['242.0.0.0/8', 'shoot node network mapping range'],
  ['243.0.0.0/8', 'shoot service network mapping range'],
  ['244.0.0.0/8', 'shoot pod network mapping range'],
].map(([cidr, name]) => ({ cidr: mustParseCIDR(cidr!), name: name! }));

/** The five seed ranges in the order overlaps are reported, with the kind their VPN error names. */
function seedCIDRFields(seed: Seed): { field: CIDRField; kind: string }[] {
  const networks = seed.spec.networks ?? {};
  const candidates: [FieldPath, string | undefined, string][] = [
    [NETWORKS.child('pods'), networks.pods, 'pod'],
    [NETWORKS.child('services'), networks.services, 'service'],
    [NETWORKS.child('nodes'), networks.nodes, 'node'],
    [NETWORKS.child('shootDefaults', 'pods'), networks.shootDefaults?.pods, 'pod'],
    [NETWORKS.child('shootDefaults', 'services'), networks.shootDefaults?.services, 'service'],
  ];
  return candidates
    .filter((c): c is [FieldPath, string, string] => c[1] !== undefined)
    .map(([path, value, kind]) => ({ field: cidrField(path, value), kind }));
}

export function validateSeed(seed: Seed, gates: FeatureGates): ErrorList {
  const errors: ErrorList = [];
  const networks = seed.spec.networks;
  if (!networks) return [required(NETWORKS, 'field is required')];

  const families = validateIPFamilies(networks.ipFamilies, NETWORKS.child('ipFamilies'), gates, {
    gateIPv6SingleStack: true,
  });
  errors.push(...families.errors);
  // blockCIDRs are independent of the other ranges: a bad one doesn't stop their checks.
  const blockErrors = validateBlockCIDRs(networks.blockCIDRs);
  if (!families.valid) return [...errors, ...blockErrors];

  for (const name of ['pods', 'services'] as const) {
    if (networks[name] === undefined || networks[name] === '') {
      errors.push(required(NETWORKS.child(name), 'field is required'));
    }
  }
  const info = familyInfo(networks.ipFamilies);
  const fields = seedCIDRFields(seed);
  for (const { field } of fields) {
    errors.push(...validateParse(field), ...(info.singleStack ? validateFamily(field, info.primary) : []));
  }
  if (errors.length > 0) return [...errors, ...blockErrors];

  errors.push(...validateDisjoint(fields.map((f) => f.field)));
  for (const { field } of fields) errors.push(...validateUsable(field));
  for (const { field, kind } of fields) {
    const vpn = overlappedVPNRange(field);
    if (vpn)
      errors.push(invalid(field.path, field.value, `${kind} network intersects with default vpn network (${vpn})`));
  }
  for (const { field, kind } of fields) {
    if (field.cidr?.family !== 'IPv4') continue;
    for (const reserved of RESERVED_IPV4_RANGES) {
      if (!overlaps(field.cidr, reserved.cidr)) continue;
      const detail = `${kind} network intersects with reserved ${reserved.name} (${formatCIDR(reserved.cidr)})`;
      errors.push(invalid(field.path, field.value, detail));
    }
  }
  const services = fields.find((f) => f.field.path.toString() === NETWORKS.child('services').toString())?.field;
  if (services?.cidr?.family === 'IPv4' && services.cidr.prefix < IPV4_MAX_SERVICES_PREFIX) {
    errors.push(invalid(services.path, services.value, `cannot be larger than /${IPV4_MAX_SERVICES_PREFIX}`));
  }
  return [...errors, ...blockErrors];
}

function validateBlockCIDRs(blockCIDRs: readonly string[] | undefined): ErrorList {
  return (blockCIDRs ?? []).flatMap((value, i) =>
    validateParse(cidrField(NETWORKS.child('blockCIDRs').index(i), value)),
  );
}

export function validateSeedUpdate(next: Seed, prev: Seed, gates: FeatureGates): ErrorList {
  const errors = validateSeed(next, gates);
  const newNetworks = next.spec.networks ?? {};
  const oldNetworks = prev.spec.networks ?? {};
  if (!sameList(newNetworks.ipFamilies ?? [], oldNetworks.ipFamilies ?? [])) {
    errors.push(invalid(NETWORKS.child('ipFamilies'), newNetworks.ipFamilies ?? [], 'field is immutable'));
  }
  for (const name of ['pods', 'services'] as const) {
    if (newNetworks[name] !== oldNetworks[name]) {
      errors.push(invalid(NETWORKS.child(name), newNetworks[name] ?? null, 'field is immutable'));
    }
  }
  if (oldNetworks.nodes !== undefined && newNetworks.nodes !== oldNetworks.nodes) {
    errors.push(invalid(NETWORKS.child('nodes'), newNetworks.nodes ?? null, 'field is immutable'));
  }
  return errors;
}
