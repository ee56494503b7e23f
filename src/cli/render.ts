import { admit, UnknownKindError } from '../apis/admission.js';
import { extensionAdmission } from '../app/extension-admission.js';
import type { Seed } from '../apis/core/v1beta1/seed.js';
import type { Shoot } from '../apis/core/v1beta1/shoot.js';
import type { Network } from '../apis/extensions/v1alpha1/network.js';
import { statusFor, type FieldError, type Status } from '../apis/field/index.js';
import { desiredNetworkResources, InvalidProviderConfigError } from '../extensions/network/actuator.js';
import { shootNetworkingOf } from '../extensions/network/cluster.js';
import { CalicoValuesError } from '../extensions/network/values.js';
import type { Manifest } from '../extensions/network/manifests.js';
import { CloudProfiles, Seeds, Shoots } from '../apis/registry.js';
import type { FeatureGates } from '../featuregate/featuregate.js';
import { localDNSProvider, type LocalDNSOptions } from '../gardenlet/dns-provider.js';
import { desiredLoadBalancerIngress, type HostIPs } from '../extensions/provider-local/loadbalancer/ingress.js';
import { renderShootObjects } from '../gardenlet/shoot/desired.js';
import { shootNetworkingStatus, ShootNetworksError } from '../apis/core/v1beta1/networks.js';
import { InputLimit, readDocuments } from './documents.js';
import { EXIT_INVALID, EXIT_OK, InputError, type CliIO } from './io.js';
import { stringifyForKubectl } from './kubectl-yaml.js';

/** The extensions' admission with provider-local's defaults, as the webhook runs it unless told otherwise. */
const EXTENSION_ADMISSION = extensionAdmission();

export interface RenderOptions {
  readonly files: readonly string[];
  readonly gates: FeatureGates;
  readonly output: 'yaml' | 'json';
  readonly hostIPs: HostIPs;
  readonly dns: LocalDNSOptions;
  /** All files together. @default 64 MiB (DEFAULT_MAX_INPUT_BYTES of documents.ts) */
  readonly maxInputBytes?: number;
}

/**
 * Validates the Seed and the Shoots like `validate` (the Shoots against the CloudProfiles of the input, if any),
 * then prints the objects the gardenlet's reconcile creates for
 * each Shoot, computed by the same functions, without a server.
 */
export function runRender(options: RenderOptions, io: CliIO): number {
  const limit = new InputLimit(options.maxInputBytes);
  const documents = options.files.flatMap((file) => [...readDocuments(file, io, limit)]);
  const results = documents.map((document) => {
    try {
      return {
        document,
        result: admit({ object: document.object, gates: options.gates, extensionAdmission: EXTENSION_ADMISSION }),
      };
    } catch (e) {
      if (e instanceof UnknownKindError) throw new InputError(`${document.source}: ${e.message}`);
      throw e;
    }
  });
  const seeds = results.filter((r) => r.result.kind === Seeds);
  const shoots = results.filter((r) => r.result.kind === Shoots);
  const profiles = results.filter((r) => r.result.kind === CloudProfiles);
  const others = results.filter(
    (r) => r.result.kind !== Seeds && r.result.kind !== Shoots && r.result.kind !== CloudProfiles,
  );
  if (seeds.length !== 1) throw new InputError(`render needs exactly one Seed, found ${seeds.length}`);
  if (shoots.length === 0) throw new InputError('render needs at least one Shoot');
  if (others.length > 0) {
    throw new InputError(`${others[0]!.document.source}: render takes only a Seed, Shoots and CloudProfiles`);
  }

  const seedResult = seeds[0]!.result;
  // Every CloudProfile of the input, wherever it is: render has read them all before it admits a Shoot.
  const byName = new Map(profiles.map(({ document, result }) => [result.id.name, document.object]));
  const cloudProfiles = byName.size > 0 ? { cloudProfiles: (name: string) => byName.get(name) } : {};
  const shootResults = shoots.map(({ document }) =>
    admit({
      object: document.object,
      seed: seeds[0]!.document.object,
      gates: options.gates,
      extensionAdmission: EXTENSION_ADMISSION,
      ...cloudProfiles,
    }),
  );
  const invalid = [seedResult, ...profiles.map((p) => p.result), ...shootResults].filter((r) => r.errors.length > 0);
  if (invalid.length > 0) {
    for (const r of invalid) printStatus(statusFor(r.id, r.errors), options.output, io);
    return EXIT_INVALID;
  }

  const seed = seedResult.object as Seed;
  const dns = localDNSProvider(options.dns);
  const objects: unknown[] = [];
  for (const result of shootResults) {
    const shoot = result.object as Shoot;
    try {
      const shootObjects = renderShootObjects(seed, shoot, (s) => desiredLoadBalancerIngress(s, options.hostIPs), dns);
      objects.push(...shootObjects, ...calicoManifests(shoot, seed, shootObjects));
    } catch (e) {
      if (e instanceof InvalidProviderConfigError) {
        printStatus(statusFor(result.id, prefixed(e.errors, 'spec.networking.providerConfig')), options.output, io);
        return EXIT_INVALID;
      }
      if (e instanceof ShootNetworksError || e instanceof CalicoValuesError) {
        io.err(`error: shoot ${JSON.stringify(result.id.name ?? '')}: ${e.message}\n`);
        return EXIT_INVALID;
      }
      throw e;
    }
  }
  if (options.output === 'json') {
    io.out(`${JSON.stringify({ apiVersion: 'v1', kind: 'List', metadata: {}, items: objects }, null, 2)}\n`);
  } else {
    for (const o of objects) io.out(`---\n${stringifyForKubectl(o)}`);
  }
  return EXIT_OK;
}

/**
 * What the calico extension renders for the shoot's Network (the manifests it stores for delivery to the shoot),
 * with the second family's pod range from the shoot's networks as the gardenlet reports them.
 */
function calicoManifests(shoot: Shoot, seed: Seed, shootObjects: readonly { kind?: string }[]): readonly Manifest[] {
  const network = shootObjects.find((o): o is Network => o.kind === 'Network');
  if (!network || network.spec.type !== 'calico') return [];
  const shootNetworking = shootNetworkingOf(shoot, shootNetworkingStatus(shoot, seed));
  return desiredNetworkResources(network, { shoot: shootNetworking }).manifests;
}

/** The extension validates its providerConfig under `spec.providerConfig`; on a Shoot it lives elsewhere. */
function prefixed(errors: readonly FieldError[], path: string): FieldError[] {
  return errors.map((e) => ({ ...e, field: e.field.replace(/^spec\.providerConfig/, path) }));
}

function printStatus(status: Status, output: 'yaml' | 'json', io: CliIO): void {
  io.out(output === 'json' ? `${JSON.stringify(status, null, 2)}\n` : `---\n${stringifyForKubectl(status)}`);
}
