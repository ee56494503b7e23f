/**
 * Which extension types this installation runs, and the admission check Gardener's `ExtensionValidator` makes: a
 * Shoot may only use a provider, networking or DNS provider type that some extension handles; otherwise its
 * Network (or DNSRecord) would wait forever for a controller that never comes.
 */
import type { Shoot } from '../apis/core/v1beta1/shoot.js';
import { FieldPath, invalid, type ErrorList } from '../apis/field/index.js';
import { hasWorkers } from '../apis/core/v1beta1/helpers.js';

export interface RegisteredExtensionTypes {
  /** `spec.provider.type` of shoots: the provider extension (the gardenlet's provider-local). */
  readonly provider: readonly string[];
  /** `spec.networking.type`: Network extensions. */
  readonly networking: readonly string[];
  /** `spec.dns.providers[].type` of the primary provider: DNSRecord extensions. */
  readonly dns: readonly string[];
}

/** What `run` and `up` start: provider-local, the calico Network extension, the local DNS extension. */
export const DEFAULT_REGISTERED_EXTENSION_TYPES: RegisteredExtensionTypes = {
  provider: ['local'],
  networking: ['calico'],
  dns: ['local'],
};

/** Gardener's marker for a DNS provider no extension manages. */
const DNS_UNMANAGED = 'unmanaged';

function unregistered(path: FieldPath, value: string, what: string, registered: readonly string[]) {
  const known = registered.length > 0 ? registered.map((t) => JSON.stringify(t)).join(', ') : 'none';
  return invalid(path, value, `given Shoot uses non-registered ${what} (registered in this installation: ${known})`);
}

/** Field errors for each type the shoot uses that no extension of this installation handles. */
export function validateShootExtensionTypes(shoot: Shoot, registered: RegisteredExtensionTypes): ErrorList {
  const errors: ErrorList = [];
  const spec = FieldPath.root('spec');
  // As Gardener: provider and networking extensions only matter for shoots with workers.
  if (hasWorkers(shoot)) {
    const provider = shoot.spec.provider?.type;
    if (provider && !registered.provider.includes(provider)) {
      errors.push(unregistered(spec.child('provider', 'type'), provider, 'provider type', registered.provider));
    }
    const networking = shoot.spec.networking?.type;
    if (networking && !registered.networking.includes(networking)) {
      errors.push(unregistered(spec.child('networking', 'type'), networking, 'networking type', registered.networking));
    }
  }
  (shoot.spec.dns?.providers ?? []).forEach((provider, i) => {
    if (!provider.primary || !provider.type || provider.type === DNS_UNMANAGED) return;
    if (registered.dns.includes(provider.type)) return;
    const path = spec.child('dns', 'providers').index(i).child('type');
    errors.push(unregistered(path, provider.type, 'DNS provider type', registered.dns));
  });
  return errors;
}

/** `a,b` → `['a', 'b']`, for the command line. */
export function parseTypeList(list: string): string[] {
  return list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
