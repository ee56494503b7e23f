/**
 * Unknown fields, as Gardener's API server decodes strictly: a misspelled field of a Shoot or Seed is an error naming
 * its whole path, in `validate`, `default` and the webhook alike; every field of Gardener's types is accepted, and
 * raw extensions (`providerConfig`, ...) keep whatever they hold.
 */
import { describe, expect, it, vi } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ADMITTED_KINDS, handleAdmissionReview, type AdmissionMode } from '../../src/admission/review.js';
import { lookupKind } from '../../src/apis/registry.js';
import type { Status } from '../../src/apis/field/index.js';
import {
  cloudProfileObject,
  gateSets,
  ipv4ShootObject,
  networkObject,
  seedObject,
  workerObject,
} from '../fixtures/objects.js';
import { completeCloudProfileObject, completeSeedObject, completeShootObject } from '../fixtures/gardener-objects.js';
import { cli, tempFile } from '../support/cli.js';

type Json = Record<string, unknown>;
type Segment = string | number;

/** A copy of `object` with `value` at `path` (the parents exist). */
function withAt(object: Json, path: readonly Segment[], value: unknown): Json {
  const copy = structuredClone(object);
  let node = copy as Record<Segment, unknown>;
  for (const segment of path.slice(0, -1)) node = node[segment] as Record<Segment, unknown>;
  node[path.at(-1)!] = value;
  return copy;
}

const shoot = () => ipv4ShootObject() as unknown as Json;
const seed = () => seedObject() as unknown as Json;
const cloudProfile = () => cloudProfileObject() as unknown as Json;

/** [the field as it is printed, the object holding it]. */
const MISSPELLED: [string, () => Json][] = [
  ['spec.hibernaton', () => withAt(shoot(), ['spec', 'hibernaton'], { enabled: true })],
  ['spec.networking.ipFamily', () => withAt(shoot(), ['spec', 'networking', 'ipFamily'], ['IPv6'])],
  ['spec.provider.typo_field', () => withAt(shoot(), ['spec', 'provider', 'typo_field'], 'x')],
  [
    'spec.kubernetes.kubelet.maxPod',
    () =>
      withAt(withAt(shoot(), ['spec', 'kubernetes', 'kubelet'], {}), ['spec', 'kubernetes', 'kubelet', 'maxPod'], 110),
  ],
  ['spec.provider.workers[0].minimun', () => withAt(shoot(), ['spec', 'provider', 'workers', 0, 'minimun'], 2)],
  ['metadata.lables', () => withAt(shoot(), ['metadata', 'lables'], { a: 'b' })],
  ['status.technicalId', () => withAt(shoot(), ['status'], { technicalId: 'shoot--a--b' })],
  ['spec.networks.ipFamily', () => withAt(seed(), ['spec', 'networks', 'ipFamily'], ['IPv6'])],
  ['spec.settings.scheduling.visibel', () => withAt(seed(), ['spec', 'settings'], { scheduling: { visibel: false } })],
  ['spec.machineTypes[0].cpus', () => withAt(cloudProfile(), ['spec', 'machineTypes', 0, 'cpus'], 2)],
  ['spec.kubernetes.version', () => withAt(cloudProfile(), ['spec', 'kubernetes', 'version'], '1.37.1')],
  ['spec.podCidr', () => withAt(networkObject() as unknown as Json, ['spec', 'podCidr'], '10.3.0.0/16')],
  [
    'spec.pools[0].machineImage.verison',
    () => withAt(workerObject() as unknown as Json, ['spec', 'pools', 0, 'machineImage'], { verison: '1.0.0' }),
  ],
];

/** The kinds the webhook judges (a Worker is the CRD's alone). */
const ADMITTED = MISSPELLED.filter(([, make]) => ADMITTED_KINDS.includes(lookupKind(make())!));

function cause(field: string) {
  return { reason: 'FieldValueForbidden', field, message: `Forbidden: unknown field "${field}"` };
}

describe('a misspelled field', () => {
  it.each(MISSPELLED)('%s is refused by validate, naming its path', async (field, make) => {
    const object = make();
    const file = tempFile('object.json', JSON.stringify(object));
    const json = await cli(['validate', '-f', file, '-o', 'json']);
    expect(json.code).toBe(1);
    const status = JSON.parse(json.stdout) as Status;
    expect(status.details?.causes).toEqual([cause(field)]);
    const name = (object.metadata as { name: string }).name;
    const group = (object.apiVersion as string).split('/')[0]!;
    expect(status.message).toBe(
      `${object.kind as string}.${group} "${name}" is invalid: ${field}: Forbidden: unknown field "${field}"`,
    );
    const text = await cli(['validate', '-f', file]);
    expect(text.stdout).toContain(`  - ${field}: Forbidden: unknown field "${field}"\n`);
  });

  it.each(ADMITTED)('%s is refused by the validating webhook, naming its path', async (field, make) => {
    const answer = await review('validate', make());
    expect(answer.response.allowed).toBe(false);
    expect(answer.response.status?.code).toBe(422);
    expect(answer.response.status?.message).toContain(`${field}: Forbidden: unknown field "${field}"`);
    expect(answer.response.status?.details?.causes).toEqual([cause(field)]);
  });

  it.each(MISSPELLED)('%s is never written out: default refuses the object', async (field, make) => {
    const run = await cli(['default', '-f', tempFile('object.json', JSON.stringify(make()))]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`  - ${field}: Forbidden: unknown field "${field}"\n`);
  });

  it.each(ADMITTED)('%s gets no defaulting patch from the mutating webhook', async (_field, make) => {
    const answer = await review('mutate', make());
    expect(answer.response).toEqual({ uid: 'u1', allowed: true });
  });

  it('is reported once per field, with the other errors of the object', async () => {
    const object = withAt(
      withAt(shoot(), ['spec', 'provider', 'workers', 0, 'minimun'], 2),
      ['spec', 'networking', 'ipFamilies'],
      'IPv6',
    );
    const status = JSON.parse(
      (await cli(['validate', '-f', tempFile('o.json', JSON.stringify(object)), '-o', 'json'])).stdout,
    ) as Status;
    expect(status.details?.causes?.map((c) => c.field).sort()).toEqual([
      'spec.networking.ipFamilies',
      'spec.provider.workers[0].minimun',
    ]);
  });
});

/** The webhook's answer; the shoot's seed is `seed`, whatever its name. */
async function review(mode: AdmissionMode, object: unknown, seed: unknown = seedObject()) {
  const context = { gates: gateSets.none, lookupSeed: vi.fn(async () => seed) };
  return handleAdmissionReview(
    {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: { uid: 'u1', operation: 'CREATE', object },
    },
    context,
    mode,
  );
}

describe("every field of Gardener's types", () => {
  it.each([
    ['Shoot', completeShootObject],
    ['Seed', completeSeedObject],
    ['CloudProfile', completeCloudProfileObject],
  ])('a %s that sets them all is valid, and default keeps every one', async (_, make) => {
    const object = make();
    const file = tempFile('object.json', JSON.stringify(object));
    const validated = await cli(['validate', '-f', file]);
    expect(validated.stdout).toMatch(/ is valid\n$/);
    expect(validated.code).toBe(0);
    const defaulted = await cli(['default', '-f', file]);
    expect(defaulted.code).toBe(0);
    expect(parseAllDocuments(defaulted.stdout)[0]!.toJS()).toMatchObject(object);
  });

  it('passes the webhook', async () => {
    expect((await review('validate', completeShootObject(), completeSeedObject())).response).toEqual({
      uid: 'u1',
      allowed: true,
    });
    expect((await review('validate', completeSeedObject())).response).toEqual({ uid: 'u1', allowed: true });
    expect((await review('validate', completeCloudProfileObject())).response).toEqual({ uid: 'u1', allowed: true });
  });
});

describe('raw extensions', () => {
  const anything = { apiVersion: 'x/v1', kind: 'Anything', deep: { list: [1, 'two', { three: true }] }, typo_field: 1 };

  it.each<[string, Segment[]]>([
    ['spec.networking.providerConfig', ['spec', 'networking', 'providerConfig']],
    ['spec.provider.infrastructureConfig', ['spec', 'provider', 'infrastructureConfig']],
    ['spec.provider.controlPlaneConfig', ['spec', 'provider', 'controlPlaneConfig']],
    ['spec.provider.workers[0].providerConfig', ['spec', 'provider', 'workers', 0, 'providerConfig']],
    ['spec.extensions[0].providerConfig', ['spec', 'extensions']],
  ])('%s keeps its unknown fields through default', async (_, path) => {
    const value = path.at(-1) === 'extensions' ? [{ type: 'foo', providerConfig: anything }] : anything;
    // Not calico's: a providerConfig of another network type is that extension's to judge.
    const object = withAt(withAt(shoot(), ['spec', 'networking', 'type'], 'cilium'), path, value);
    const run = await cli(['default', '-f', tempFile('object.json', JSON.stringify(object))]);
    expect(run.stderr).toBe('');
    const out = parseAllDocuments(run.stdout)[0]!.toJS() as Json;
    let node: unknown = out;
    for (const segment of path) node = (node as Record<Segment, unknown>)[segment];
    expect(node).toEqual(value);
    expect((await cli(['validate', '-f', tempFile('object.json', JSON.stringify(object))])).code).toBe(0);
  });

  it("a CloudProfile's spec.providerConfig keeps its unknown fields through default", async () => {
    const object = withAt(cloudProfile(), ['spec', 'providerConfig'], anything);
    const run = await cli(['default', '-f', tempFile('object.json', JSON.stringify(object))]);
    expect(run.stderr).toBe('');
    expect((parseAllDocuments(run.stdout)[0]!.toJS() as { spec: Json }).spec.providerConfig).toEqual(anything);
  });
});
