/**
 * CloudProfile defaulting and validation, in Gardener's words (`defaults_cloudprofile.go`, `validation/cloudprofile.go`).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { admit } from '../../../../src/apis/admission.js';
import type { CloudProfile, CloudProfileSpec } from '../../../../src/apis/core/v1beta1/cloudprofile.js';
import { defaultCloudProfile } from '../../../../src/apis/core/v1beta1/defaults.js';
import {
  validateCloudProfile,
  validateCloudProfileUpdate,
} from '../../../../src/apis/core/v1beta1/validation/cloudprofile.js';
import { generateCertificates } from '../../../../src/localenv/certs.js';
import {
  causesOf,
  cloudProfileObject,
  EXPIRED,
  gateSets,
  NOT_YET_EXPIRED,
  PROFILE_NOW,
  type Cause,
} from '../../../fixtures/objects.js';

/** A valid profile: the fixture without its expired versions (a new CloudProfile may not have any). */
function profile(spec: Partial<CloudProfileSpec> = {}): CloudProfile {
  return cloudProfileObject({
    kubernetes: { versions: [{ version: '1.37.1' }, { version: '1.36.4', expirationDate: NOT_YET_EXPIRED }] },
    machineImages: [{ name: 'local', versions: [{ version: '1.0.0' }] }],
    ...spec,
  });
}

const causes = (p: CloudProfile) => causesOf(validateCloudProfile(defaultCloudProfile(p), PROFILE_NOW));
const c = (field: string, reason: string, message: string): Cause => ({
  field,
  reason: `FieldValue${reason}`,
  message,
});

describe('CloudProfile defaulting', () => {
  it("sets Gardener's defaults: usable types, containerd, amd64, the major update strategy", () => {
    const defaulted = defaultCloudProfile(
      profile({
        machineTypes: [
          { name: 'a', cpu: 1, memory: '1Gi' },
          { name: 'b', cpu: 1, memory: '1Gi', usable: false, architecture: 'arm64' },
        ],
        volumeTypes: [{ name: 'ssd', class: 'premium' }],
        machineImages: [
          {
            name: 'local',
            versions: [
              { version: '1.0.0' },
              {
                version: '2.0.0',
                cri: [{ name: 'containerd', containerRuntimes: [{ type: 'gvisor' }] }],
                architectures: ['arm64'],
              },
            ],
            updateStrategy: 'patch',
          },
        ],
      }),
    );
    expect(defaulted.spec.machineTypes).toEqual([
      { name: 'a', cpu: 1, memory: '1Gi', usable: true, architecture: 'amd64' },
      { name: 'b', cpu: 1, memory: '1Gi', usable: false, architecture: 'arm64' },
    ]);
    expect(defaulted.spec.volumeTypes).toEqual([{ name: 'ssd', class: 'premium', usable: true }]);
    expect(defaulted.spec.machineImages).toEqual([
      {
        name: 'local',
        updateStrategy: 'patch',
        versions: [
          { version: '1.0.0', cri: [{ name: 'containerd' }], architectures: ['amd64'] },
          {
            version: '2.0.0',
            cri: [{ name: 'containerd', containerRuntimes: [{ type: 'gvisor' }] }],
            architectures: ['arm64'],
          },
        ],
      },
    ]);
  });

  it('leaves architectures to the capabilities when the profile defines machine capabilities', () => {
    const defaulted = defaultCloudProfile(
      profile({ machineCapabilities: [{ name: 'architecture', values: ['arm64'] }] }),
    );
    expect(defaulted.spec.machineTypes?.[0]).not.toHaveProperty('architecture');
    expect(defaulted.spec.machineImages?.[0]?.versions[0]).not.toHaveProperty('architectures');
  });
});

describe('CloudProfile validation', () => {
  it('accepts a valid profile, and the one up creates', () => {
    expect(causes(profile())).toEqual([]);
  });

  it.each<[string, Partial<CloudProfileSpec>, Cause[]]>([
    [
      'nothing of what Gardener requires',
      { type: undefined, kubernetes: undefined, machineImages: [], machineTypes: undefined, regions: [] },
      [
        c('spec.type', 'Required', 'Required value: must provide a provider type'),
        c('spec.kubernetes.versions', 'Required', 'Required value: must provide at least one Kubernetes version'),
        c('spec.machineImages', 'Required', 'Required value: must provide at least one machine image'),
        c('spec.machineTypes', 'Required', 'Required value: must provide at least one machine type'),
        c('spec.regions', 'Required', 'Required value: must provide at least one region'),
      ],
    ],
    [
      'Kubernetes versions that are not major.minor.patch, twice, of an unknown classification',
      {
        kubernetes: {
          versions: [
            { version: 'v1.37.1' },
            { version: '1.37.1', classification: 'beta' },
            { version: '1.37.1' },
            { version: '1.36.0', expirationDate: 'tomorrow' },
          ],
        },
      },
      [
        c(
          'spec.kubernetes.versions[0].version',
          'Invalid',
          'Invalid value: "v1.37.1": all Kubernetes versions must match the regex ^([0-9]+\\.){2}[0-9]+$',
        ),
        c(
          'spec.kubernetes.versions[1].classification',
          'NotSupported',
          'Unsupported value: "beta": supported values: "deprecated", "preview", "supported"',
        ),
        c('spec.kubernetes.versions[2].version', 'Duplicate', 'Duplicate value: "1.37.1"'),
        c(
          'spec.kubernetes.versions[3].expirationDate',
          'Invalid',
          'Invalid value: "tomorrow": must be an RFC 3339 date-time',
        ),
      ],
    ],
    [
      'an expiring newest Kubernetes version, two supported versions of one minor',
      {
        kubernetes: {
          versions: [
            { version: '1.37.1', expirationDate: NOT_YET_EXPIRED },
            { version: '1.36.4', classification: 'supported' },
            { version: '1.36.5', classification: 'supported' },
          ],
        },
      },
      [
        c(
          'spec.kubernetes.versions[2]',
          'Forbidden',
          'Forbidden: unable to add version "1.36.5" with classification "supported". Only one "supported" version is ' +
            'allowed per minor version',
        ),
        c(
          'spec.kubernetes.versions[0].expirationDate',
          'Invalid',
          `Invalid value: "${NOT_YET_EXPIRED}": expiration date of latest kubernetes version ('1.37.1') must not be set`,
        ),
      ],
    ],
    [
      'machine images: a name twice, no versions, a version no semantic version, twice, a CRI Gardener lacks',
      {
        machineImages: [
          {
            name: 'local',
            versions: [{ version: 'latest' }, { version: '1.0.0', cri: [{ name: 'docker' }] }, { version: '1.0.0' }],
          },
          { name: 'local', versions: [] },
        ],
      },
      [
        c(
          'spec.machineImages[0].versions[0].version',
          'Invalid',
          'Invalid value: "latest": could not parse version. Use a semantic version. In case there is no semantic ' +
            'version for this image use the extensibility provider (define mapping in the CloudProfile) to map to ' +
            'the actual non semantic version',
        ),
        c(
          'spec.machineImages[0].versions[1].cri[0].name',
          'NotSupported',
          'Unsupported value: "docker": supported values: "containerd"',
        ),
        c('spec.machineImages[0].versions[2].version', 'Duplicate', 'Duplicate value: "1.0.0"'),
        c('spec.machineImages[1].name', 'Duplicate', 'Duplicate value: "local"'),
        c(
          'spec.machineImages[1].versions',
          'Required',
          "Required value: must provide at least one version for the machine image 'local'",
        ),
      ],
    ],
    [
      'an update strategy Gardener does not know',
      { machineImages: [{ name: 'local', versions: [{ version: '1.0.0' }], updateStrategy: 'weekly' }] },
      [
        c(
          'spec.machineImages[0].updateStrategy',
          'NotSupported',
          'Unsupported value: "weekly": supported values: "major", "minor", "patch"',
        ),
      ],
    ],
    [
      'machine types: a name twice, negative or no quantities, a storage with both sizes',
      {
        machineTypes: [
          { name: 'a', cpu: '-1', memory: 'lots' },
          {
            name: 'a',
            cpu: 1,
            memory: '1Gi',
            storage: { class: 'standard', type: 'ssd', size: '10Gi', minSize: '5Gi' },
          },
        ],
      },
      [
        c('spec.machineTypes[0].cpu', 'Invalid', 'Invalid value: "-1": cpu value must not be negative'),
        c(
          'spec.machineTypes[0].memory',
          'Invalid',
          `Invalid value: "lots": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
        ),
        c('spec.machineTypes[1].name', 'Duplicate', 'Duplicate value: "a"'),
        c(
          'spec.machineTypes[1].storage',
          'Invalid',
          'Invalid value: {"class":"standard","type":"ssd","size":"10Gi","minSize":"5Gi"}: not allowed to configure ' +
            'both "size" and "minSize"',
        ),
      ],
    ],
    [
      'regions and volume types: names twice or empty, a zone twice, a class missing',
      {
        regions: [{ name: 'local', zones: [{ name: 'a' }, { name: 'a' }] }, { name: 'local' }, { name: '' }],
        volumeTypes: [{ name: 'ssd', class: '' }],
      },
      [
        c('spec.volumeTypes[0].class', 'Required', 'Required value: must provide a class'),
        c('spec.regions[0].zones[1].name', 'Duplicate', 'Duplicate value: "a"'),
        c('spec.regions[1].name', 'Duplicate', 'Duplicate value: "local"'),
        c('spec.regions[2].name', 'Required', 'Required value: must provide a region name'),
      ],
    ],
    [
      'a CA bundle that is no certificate',
      { caBundle: '-----BEGIN CERTIFICATE-----\nbm9wZQ==\n-----END CERTIFICATE-----\n' },
      [
        c(
          'spec.caBundle',
          'Invalid',
          'Invalid value: "-----BEGIN CERTIFICATE-----\\nbm9wZQ==\\n-----END CERTIFICATE-----\\n": caBundle is not a ' +
            'valid PEM-encoded certificate',
        ),
      ],
    ],
  ])('refuses %s', (_, spec, expected) => {
    expect(causes(profile(spec))).toEqual(expected);
  });

  it('accepts a CA bundle of certificates', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gardener-ipv6-cloudprofile-'));
    try {
      const certs = await generateCertificates(dir, { ipAddresses: ['::1'], dnsNames: ['localhost'], days: 1 });
      expect(causes(profile({ caBundle: readFileSync(certs.caCert, 'utf8') }))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses to create versions that expired already; an update keeps those it had', () => {
    const expiring = profile({
      kubernetes: { versions: [{ version: '1.37.1' }, { version: '1.36.2', expirationDate: EXPIRED }] },
      machineImages: [
        { name: 'local', versions: [{ version: '1.0.0' }, { version: '0.9.0', expirationDate: EXPIRED }] },
      ],
    });
    const forbidden = (field: string, version: string) =>
      c(
        field,
        'Forbidden',
        `Forbidden: unable to create version "${version}". Creating a version with expiration date in the past is ` +
          'not allowed',
      );
    expect(causes(expiring)).toEqual([
      forbidden('spec.kubernetes.versions[1]', '1.36.2'),
      forbidden('spec.machineImages[0].versions[1]', '0.9.0'),
    ]);
    expect(validateCloudProfileUpdate(expiring, expiring, PROFILE_NOW)).toEqual([]);
    const added = profile({
      kubernetes: { versions: [{ version: '1.37.1' }, { version: '1.36.1', expirationDate: EXPIRED }] },
    });
    expect(causesOf(validateCloudProfileUpdate(added, expiring, PROFILE_NOW))).toEqual([
      forbidden('spec.kubernetes.versions[1]', '1.36.1'),
    ]);
  });

  it('is what admission runs for a CloudProfile, with the cluster-scoped object meta rules', () => {
    const namespaced = { ...profile(), metadata: { name: 'local', namespace: 'garden' } };
    expect(causesOf(admit({ object: namespaced, gates: gateSets.none }).errors)).toEqual([
      c('metadata.namespace', 'Forbidden', 'Forbidden: not allowed on this type'),
    ]);
  });
});
