/**
 * A Shoot against the CloudProfile it names, as Gardener's admission does it: defaulting (Kubernetes version, machine
 * image) and refusals (versions, machine types and images, region, provider type), end to end through
 * `admit({ object, cloudProfiles })`, with expiration dates judged at a fixed time.
 */
import { describe, expect, it } from 'vitest';
import { admit } from '../../../../src/apis/admission.js';
import type { CloudProfile } from '../../../../src/apis/core/v1beta1/cloudprofile.js';
import type { Shoot, Worker } from '../../../../src/apis/core/v1beta1/shoot.js';
import {
  causesOf,
  cloudProfileObject,
  gateSets,
  ipv4ShootObject,
  PROFILE_NOW,
  type Cause,
} from '../../../fixtures/objects.js';

const VERSION = 'spec.kubernetes.version';
const MACHINE = 'spec.provider.workers[0].machine';

/** The shoot of the tests: IPv4, one pool of `m5.large`, with `version` and the pool's `machine` when given. */
function shoot(version?: string, machine?: Worker['machine'], change: (s: Shoot) => void = () => {}): Shoot {
  const object = ipv4ShootObject();
  object.spec.kubernetes = version === undefined ? {} : { version };
  if (machine !== undefined) object.spec.provider!.workers![0]!.machine = machine;
  change(object);
  return object;
}

function admitWith(object: Shoot, opts: { old?: Shoot; profile?: unknown } = {}) {
  const profile = 'profile' in opts ? opts.profile : cloudProfileObject();
  const result = admit({
    object,
    ...(opts.old ? { oldObject: opts.old } : {}),
    gates: gateSets.none,
    cloudProfiles: (name) => (name === 'local' ? profile : undefined),
    now: PROFILE_NOW,
  });
  return { causes: causesOf(result.errors), shoot: result.object as Shoot };
}

const notSupported = (field: string, value: string, supported: string[]): Cause => ({
  field,
  reason: 'FieldValueNotSupported',
  message: `Unsupported value: "${value}": supported values: ${supported.map((s) => `"${s}"`).join(', ')}`,
});
const invalid = (field: string, message: string): Cause => ({ field, reason: 'FieldValueInvalid', message });
const noSuitableVersion = (version: string) =>
  invalid(
    VERSION,
    `Invalid value: "${version}": couldn't find a suitable version for ${version}. Suitable versions have a ` +
      "non-expired expiration date and are no 'preview' versions. 'Preview'-classified versions have to be " +
      'selected explicitly',
  );
/** What a new Shoot may ask for: every version but the expired ones. */
const CREATABLE = ['1.38.0 (preview)', '1.37.1', '1.36.4'];

describe('the Kubernetes version, from the CloudProfile', () => {
  it.each<[string, string | undefined, string, Cause[]]>([
    ['none: the newest supported one (not the preview)', undefined, '1.37.1', []],
    ['empty: the same', '', '1.37.1', []],
    ['a major: its newest', '1', '1.37.1', []],
    ['a minor: its newest patch that has not expired', '1.36', '1.36.4', []],
    ['a listed version', '1.37.1', '1.37.1', []],
    ['a preview version, asked for by its name', '1.38.0', '1.38.0', []],
    ['a minor with only a preview version: nothing', '1.38', '1.38', [noSuitableVersion('1.38')]],
    ['a minor it does not list: nothing', '1.33', '1.33', [noSuitableVersion('1.33')]],
    ['not a number', '1.x', '1.x', [invalid(VERSION, 'Invalid value: "x": must be a semantic version')]],
    ['a version it does not list', '1.33.0', '1.33.0', [notSupported(VERSION, '1.33.0', CREATABLE)]],
    ['an expired version, for a new Shoot', '1.36.2', '1.36.2', [notSupported(VERSION, '1.36.2', CREATABLE)]],
  ])('%s', (_, version, expected, causes) => {
    const result = admitWith(shoot(version));
    expect(result.shoot.spec.kubernetes?.version).toBe(expected);
    expect(result.causes).toEqual(causes);
  });

  it('on an update, is only judged when it changes; an existing Shoot may move onto an expired version', () => {
    const old = admitWith(shoot('1.35.0'), {
      profile: cloudProfileObject({ kubernetes: { versions: [{ version: '1.35.0' }] } }),
    });
    expect(old.causes).toEqual([]);
    expect(admitWith(shoot('1.35.0'), { old: old.shoot }).causes).toEqual([]);
    expect(admitWith(shoot('1.36.2'), { old: old.shoot }).causes).toEqual([]);
    expect(admitWith(shoot('1.34.0'), { old: old.shoot }).causes).toEqual([
      notSupported(VERSION, '1.34.0', ['1.38.0 (preview)', '1.37.1', '1.36.4', '1.36.2', '1.35.0']),
    ]);
  });

  it("expands a worker pool's partial version, and refuses one the profile does not list", () => {
    const pool = (version: string) =>
      shoot('1.37.1', undefined, (s) => (s.spec.provider!.workers![0]!.kubernetes = { version }));
    const expanded = admitWith(pool('1.36'));
    expect(expanded.causes).toEqual([]);
    expect(expanded.shoot.spec.provider?.workers?.[0]?.kubernetes?.version).toBe('1.36.4');
    expect(admitWith(pool('1.30.0')).causes).toEqual([
      notSupported('spec.provider.workers[0].kubernetes.version', '1.30.0', CREATABLE),
    ]);
  });
});

describe('a worker pool, against the CloudProfile', () => {
  it.each<[string, Worker['machine'], Worker['machine'], Cause[]]>([
    [
      'no image: the first image, its newest version that is not a preview',
      { type: 'local' },
      { type: 'local', image: { name: 'local', version: '1.0.0' } },
      [],
    ],
    [
      'an image name: its newest version of the architecture',
      { type: 'm5.large', image: { name: 'gardenlinux' } },
      { type: 'm5.large', image: { name: 'gardenlinux', version: '1592.1.0' } },
      [],
    ],
    [
      'arm64: the first image that has arm64 versions',
      { type: 'graviton', architecture: 'arm64' },
      { type: 'graviton', architecture: 'arm64', image: { name: 'gardenlinux', version: '1592.2.0' } },
      [],
    ],
    [
      'a machine type it does not list',
      { type: 'xl', image: { name: 'local', version: '1.0.0' } },
      { type: 'xl', image: { name: 'local', version: '1.0.0' } },
      [notSupported(`${MACHINE}.type`, 'xl', ['local', 'm5.large'])],
    ],
    [
      'an unusable machine type',
      { type: 'retired' },
      { type: 'retired', image: { name: 'local', version: '1.0.0' } },
      [
        invalid(
          `${MACHINE}.type`,
          'Invalid value: "retired": machine type "retired" is unusable, supported types are [local m5.large]',
        ),
      ],
    ],
    [
      'a machine type of another architecture',
      { type: 'graviton' },
      { type: 'graviton', image: { name: 'local', version: '1.0.0' } },
      [
        invalid(
          `${MACHINE}.type`,
          'Invalid value: "graviton": machine type "graviton" does not support CPU architecture "amd64", ' +
            'supported types are [local m5.large]',
        ),
      ],
    ],
    [
      'an architecture Gardener does not know',
      { type: 'local', architecture: 'riscv64' },
      { type: 'local', architecture: 'riscv64' },
      [notSupported(`${MACHINE}.architecture`, 'riscv64', ['amd64', 'arm64'])],
    ],
    [
      'an image it does not list',
      { type: 'local', image: { name: 'ubuntu', version: '24.04' } },
      { type: 'local', image: { name: 'ubuntu', version: '24.04' } },
      [
        invalid(
          `${MACHINE}.image`,
          'Invalid value: {"name":"ubuntu","version":"24.04"}: machine image version is not supported, supported ' +
            'machine image versions are: [gardenlinux:1592.1.0 local:1.0.0 local:1.1.0]',
        ),
      ],
    ],
    [
      'an image name it does not list, without a version',
      { type: 'local', image: { name: 'ubuntu' } },
      { type: 'local', image: { name: 'ubuntu' } },
      [
        invalid(
          `${MACHINE}.image`,
          'Invalid value: {"name":"ubuntu"}: machine image version is not supported, supported machine image ' +
            'versions are: [gardenlinux:1592.1.0 local:1.0.0 local:1.1.0]',
        ),
      ],
    ],
    [
      'an expired image version, for a new pool',
      { type: 'local', image: { name: 'local', version: '0.9.0' } },
      { type: 'local', image: { name: 'local', version: '0.9.0' } },
      [
        invalid(
          `${MACHINE}.image`,
          `Invalid value: {"name":"local","version":"0.9.0"}: machine image version 'local:0.9.0' is expired, ` +
            'supported machine image versions are: [gardenlinux:1592.1.0 local:1.0.0 local:1.1.0]',
        ),
      ],
    ],
    [
      'an image version of another architecture',
      { type: 'local', image: { name: 'gardenlinux', version: '1592.2.0' } },
      { type: 'local', image: { name: 'gardenlinux', version: '1592.2.0' } },
      [
        invalid(
          `${MACHINE}.image`,
          `Invalid value: {"name":"gardenlinux","version":"1592.2.0"}: machine image version ` +
            `'gardenlinux:1592.2.0' does not support CPU architecture "amd64", supported machine image versions ` +
            'are: [gardenlinux:1592.1.0 local:1.0.0 local:1.1.0]',
        ),
      ],
    ],
  ])('%s', (_, machine, expected, causes) => {
    const result = admitWith(shoot('1.37.1', machine));
    expect(result.shoot.spec.provider?.workers?.[0]?.machine).toEqual(expected);
    expect(result.causes).toEqual(causes);
  });

  it('on an update, keeps the image the stored pool has, and judges only what changed', () => {
    const profile = cloudProfileObject({
      machineTypes: [{ name: 'old-type', cpu: 1, memory: '1Gi' }],
      machineImages: [{ name: 'local', versions: [{ version: '0.8.0' }] }],
    });
    const old = admitWith(shoot('1.37.1', { type: 'old-type' }), { profile });
    expect(old.causes).toEqual([]);
    expect(old.shoot.spec.provider?.workers?.[0]?.machine?.image).toEqual({ name: 'local', version: '0.8.0' });

    // The profile no longer lists the pool's type and image: an update that leaves them is fine, and an image left
    // out (or named without a version) is the stored one, not the profile's newest.
    for (const machine of [{ type: 'old-type' }, { type: 'old-type', image: { name: 'local' } }]) {
      const updated = admitWith(shoot('1.37.1', machine), { old: old.shoot });
      expect(updated.causes).toEqual([]);
      expect(updated.shoot.spec.provider?.workers?.[0]?.machine?.image).toEqual({ name: 'local', version: '0.8.0' });
    }
    // An existing pool may move onto an expired version not older than its own; a new pool may not.
    const expired = { type: 'old-type', image: { name: 'local', version: '0.9.0' } };
    expect(admitWith(shoot('1.37.1', expired), { old: old.shoot }).causes).toEqual([]);
    const newPool = shoot('1.37.1', expired, (s) => (s.spec.provider!.workers![0]!.name = 'pool-new'));
    expect(admitWith(newPool, { old: old.shoot }).causes.map((c) => c.field)).toEqual([
      'spec.provider.workers[0].machine.type',
      'spec.provider.workers[0].machine.image',
    ]);
  });
});

describe("a pool's zones, from the region's", () => {
  const zoned = (zones: string[]) => shoot('1.37.1', undefined, (s) => (s.spec.provider!.workers![0]!.zones = zones));

  it('takes zones of the region, and refuses one it does not list, naming it', () => {
    expect(admitWith(zoned(['a', 'b'])).causes).toEqual([]);
    expect(admitWith(zoned(['a', 'c'])).causes).toEqual([
      notSupported('spec.provider.workers[0].zones[1]', 'c', ['a', 'b']),
    ]);
  });

  it("keeps a zone the pool had after the region dropped it; a new one must be the region's", () => {
    const old = admitWith(zoned(['a', 'c']), { profile: cloudProfileObject() }).shoot;
    expect(admitWith(zoned(['a', 'c']), { old }).causes).toEqual([]);
    expect(admitWith(zoned(['a', 'c', 'd']), { old }).causes).toEqual([
      notSupported('spec.provider.workers[0].zones[2]', 'd', ['a', 'b']),
    ]);
  });

  it("refuses every zone in a region that has none, and leaves an unknown region to the region's error", () => {
    const remote = zoned(['a']);
    remote.spec.region = 'remote';
    expect(admitWith(remote).causes).toEqual([
      {
        field: 'spec.provider.workers[0].zones[0]',
        reason: 'FieldValueNotSupported',
        message: 'Unsupported value: "a"',
      },
    ]);
    const mars = zoned(['a']);
    mars.spec.region = 'mars';
    expect(admitWith(mars).causes).toEqual([notSupported('spec.region', 'mars', ['local', 'remote'])]);
  });
});

describe('the CloudProfile itself', () => {
  it.each<[string, (s: Shoot) => void, Cause[]]>([
    [
      'a region it does not list',
      (s) => (s.spec.region = 'mars'),
      [notSupported('spec.region', 'mars', ['local', 'remote'])],
    ],
    [
      'another provider type: the pools are not judged',
      (s) => {
        s.spec.provider!.type = 'aws';
        s.spec.provider!.workers![0]!.machine = { type: 'xl' };
      },
      [
        invalid(
          'spec.provider.type',
          'Invalid value: "aws": provider type in shoot must equal provider type of referenced CloudProfile: "local"',
        ),
      ],
    ],
    [
      'a CloudProfile that does not exist (cloudProfileName)',
      (s) => (s.spec.cloudProfileName = 'gcp'),
      [{ field: 'spec.cloudProfileName', reason: 'FieldValueNotFound', message: 'Not found: "gcp"' }],
    ],
    [
      'a CloudProfile that does not exist (cloudProfile.name, which wins)',
      (s) => (s.spec.cloudProfile = { name: 'gcp' }),
      [{ field: 'spec.cloudProfile.name', reason: 'FieldValueNotFound', message: 'Not found: "gcp"' }],
    ],
    [
      'a NamespacedCloudProfile, which this project does not serve',
      (s) => (s.spec.cloudProfile = { name: 'local', kind: 'NamespacedCloudProfile' }),
      [notSupported('spec.cloudProfile.kind', 'NamespacedCloudProfile', ['CloudProfile'])],
    ],
  ])('%s', (_, change, causes) => {
    expect(admitWith(shoot('1.37.1', undefined, change)).causes).toEqual(causes);
  });

  it('that is not a usable CloudProfile is named', () => {
    const broken = { ...cloudProfileObject(), spec: { machineTypes: 'many' } } as unknown as CloudProfile;
    expect(admitWith(shoot('1.37.1'), { profile: broken }).causes).toEqual([
      invalid(
        'spec.cloudProfileName',
        'Invalid value: "local": cloud profile "local" cannot be used: not a valid CloudProfile: spec.machineTypes',
      ),
    ]);
  });

  it('unknown to the caller leaves the Shoot as it is: neither defaulted nor judged', () => {
    const object = shoot(undefined, { type: 'xl' });
    const result = admit({ object, gates: gateSets.none });
    expect(result.errors).toEqual([]);
    expect((result.object as Shoot).spec.kubernetes?.version).toBeUndefined();
    expect((result.object as Shoot).spec.provider?.workers?.[0]?.machine).toEqual({ type: 'xl' });
  });
});
