/**
 * Object metadata as the API server checks it, and Gardener's name and required-field rules for Shoots, through
 * `admit()` (what the CLI and the webhook run).
 */
import { describe, expect, it } from 'vitest';
import { admit } from '../../../src/apis/admission.js';
import type { Shoot } from '../../../src/apis/core/v1beta1/shoot.js';
import { qualifiedNameErrors } from '../../../src/apis/validation/object-meta.js';
import { causesOf, gateSets, ipv4ShootObject, seedObject, type Cause } from '../../fixtures/objects.js';

const LABEL =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end " +
  "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is " +
  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start " +
  "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is " +
  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

const NOT_A_PROJECT_NAMESPACE =
  'a Shoot must be in a project namespace: "garden" or "garden-<project>" (its seed namespace ' +
  '"shoot--<project>--<name>" and DNS names are made from the project)';

const causes = (object: unknown): Cause[] => causesOf(admit({ object, gates: gateSets.none }).errors);
const invalid = (field: string, value: string, detail: string): Cause => ({
  field,
  reason: 'FieldValueInvalid',
  message: `Invalid value: ${JSON.stringify(value)}: ${detail}`,
});

function shoot(edit: (s: Shoot) => void): Shoot {
  const s = ipv4ShootObject();
  edit(s);
  return s;
}

describe('object metadata, as the API server checks it', () => {
  it.each([
    ['Bad_Name', [invalid('metadata.name', 'Bad_Name', LABEL)]],
    ['-a', [invalid('metadata.name', '-a', LABEL)]],
    ['a.b', [invalid('metadata.name', 'a.b', LABEL)]],
    ['a'.repeat(64), [invalid('metadata.name', 'a'.repeat(64), 'must be no more than 63 characters')]],
  ])('a Shoot name is a DNS label: %s', (name, expected) => {
    // Outside a project namespace (no project+shoot length limit): compare the name errors alone.
    const got = causes(shoot((s) => ((s.metadata.name = name), (s.metadata.namespace = 'default'))));
    expect(got.filter((c) => c.field === 'metadata.name')).toEqual(expected);
  });

  it('a Seed name is a DNS subdomain', () => {
    expect(causes({ ...seedObject(), metadata: { name: 'Bad_Name' } })).toEqual([
      invalid('metadata.name', 'Bad_Name', SUBDOMAIN),
    ]);
    expect(causes({ ...seedObject(), metadata: { name: 'seed.a' } })).toEqual([]);
  });

  it('name or generateName is required; generateName may end with a dash', () => {
    expect(causes(shoot((s) => (s.metadata = { namespace: 'garden-dev' })))).toEqual([
      {
        field: 'metadata.name',
        reason: 'FieldValueRequired',
        message: 'Required value: name or generateName is required',
      },
    ]);
    expect(causes(shoot((s) => (s.metadata = { generateName: 'x-', namespace: 'garden-dev' })))).toEqual([]);
    expect(causes(shoot((s) => (s.metadata = { generateName: 'X-', namespace: 'garden-dev' })))).toEqual([
      invalid('metadata.generateName', 'X-', LABEL),
    ]);
  });

  it('a namespace is a DNS label on namespaced kinds and forbidden on cluster-scoped ones', () => {
    expect(causes(shoot((s) => (s.metadata.namespace = 'Garden')))).toEqual([
      invalid('metadata.namespace', 'Garden', LABEL),
      invalid('metadata.namespace', 'Garden', NOT_A_PROJECT_NAMESPACE),
    ]);
    // Left out, the API server takes it from the request.
    expect(causes(shoot((s) => delete s.metadata.namespace))).toEqual([]);
    expect(causes({ ...seedObject(), metadata: { name: 's', namespace: 'x' } })).toEqual([
      { field: 'metadata.namespace', reason: 'FieldValueForbidden', message: 'Forbidden: not allowed on this type' },
    ]);
  });

  it('label keys and values, annotation keys and size, finalizers', () => {
    const got = causes(
      shoot((s) => {
        s.metadata.labels = { 'ok.io/fine': 'v', 'bad key': 'v', k: 'bad value!' };
        s.metadata.annotations = { 'example.com/a': 'x', '/x': 'y' };
        s.metadata.finalizers = ['gardener', 'a/b/c'];
      }),
    );
    expect(got.map((c) => [c.field, c.message.slice(0, 40)])).toEqual([
      ['metadata.labels', 'Invalid value: "bad key": name part must'],
      ['metadata.labels', 'Invalid value: "bad value!": a valid lab'],
      ['metadata.annotations', 'Invalid value: "/x": prefix part must be'],
      ['metadata.finalizers[1]', 'Invalid value: "a/b/c": a qualified name'],
    ]);
    const huge = causes(shoot((s) => (s.metadata.annotations = { a: 'x'.repeat(256 * 1024) })));
    expect(huge).toEqual([
      {
        field: 'metadata.annotations',
        reason: 'FieldValueTooLong',
        message: 'Too long: may not be more than 262144 bytes',
      },
    ]);
    // Bytes of UTF-8, not characters: 2 bytes each, one byte over the limit with the key, and one byte under.
    expect(causes(shoot((s) => (s.metadata.annotations = { a: 'é'.repeat(128 * 1024) })))).toEqual(huge);
    expect(causes(shoot((s) => (s.metadata.annotations = { a: 'é'.repeat(128 * 1024 - 1) })))).toEqual([]);
  });

  it.each([
    ['example.com/name', []],
    ['Name_1.x', []],
    ['', ['name part must be non-empty']],
    ['/a', ['prefix part must be non-empty']],
    ['a/', ['name part must be non-empty']],
    ['x'.repeat(64), ['name part must be no more than 63 characters']],
  ])('qualified name %j', (value, expected) => {
    expect(qualifiedNameErrors(value)).toEqual(expected);
  });

  it('control bytes in a name come back escaped in the message', () => {
    const [cause] = causes(shoot((s) => ((s.metadata.name = 'a\u001b[2Jb'), (s.metadata.namespace = 'default'))));
    expect(cause?.message).toContain('"a\\u001b[2Jb"');
  });
});

describe("Gardener's Shoot name rules", () => {
  it('a shoot name may not contain two consecutive hyphens', () => {
    expect(causes(shoot((s) => (s.metadata.name = 'x--yy')))).toEqual([
      invalid('metadata.name', 'x--yy', 'name may not contain two consecutive hyphens'),
    ]);
  });

  it('nor may the project name (garden-<project>): x--yy in local and yy in local--x would share a seed namespace', () => {
    expect(causes(shoot((s) => ((s.metadata.name = 'yy'), (s.metadata.namespace = 'garden-local--x'))))).toEqual([
      invalid(
        'metadata.namespace',
        'garden-local--x',
        'project "local--x": name may not contain two consecutive hyphens',
      ),
    ]);
  });

  it('project and shoot name together have at most 21 characters', () => {
    const ok = shoot((s) => ((s.metadata.name = 'a'.repeat(18)), (s.metadata.namespace = 'garden-dev')));
    expect(causes(ok)).toEqual([]);
    const long = shoot((s) => ((s.metadata.name = 'a'.repeat(19)), (s.metadata.namespace = 'garden-dev')));
    expect(causes(long)).toEqual([
      invalid(
        'metadata.name',
        'a'.repeat(19),
        `the length of the shoot name and the project name must not exceed 21 characters (project: dev; shoot: ${'a'.repeat(19)})`,
      ),
    ]);
    // The project of namespace `garden` is `garden`; other namespaces have no project.
    expect(causes(shoot((s) => ((s.metadata.name = 'a'.repeat(16)), (s.metadata.namespace = 'garden'))))).toHaveLength(
      1,
    );
    expect(causes(shoot((s) => ((s.metadata.name = 'a'.repeat(30)), (s.metadata.namespace = 'team-a'))))).toEqual([
      invalid('metadata.namespace', 'team-a', NOT_A_PROJECT_NAMESPACE),
    ]);
  });

  it('a Shoot lives in a project namespace, garden or garden-<project>, whose project names its seed namespace', () => {
    for (const namespace of ['garden', 'garden-local', 'garden-dev']) {
      expect(causes(shoot((s) => (s.metadata.namespace = namespace))), namespace).toEqual([]);
    }
    // `local` would map to shoot--local--<name> and api.<name>.local..., the names of the shoot in garden-local
    for (const namespace of ['local', 'default', 'gardener', 'shoot--local--local']) {
      expect(causes(shoot((s) => (s.metadata.namespace = namespace))), namespace).toEqual([
        invalid('metadata.namespace', namespace, NOT_A_PROJECT_NAMESPACE),
      ]);
    }
  });

  it('worker names are DNS labels of at most 15 characters, each once', () => {
    const got = causes(
      shoot((s) => {
        const base = s.spec.provider!.workers![0]!;
        s.spec.provider!.workers = [
          { ...base, name: 'a'.repeat(16) },
          { ...base, name: 'Pool' },
          { ...base, name: 'w' },
          { ...base, name: 'w' },
        ];
      }),
    );
    expect(got).toEqual([
      {
        field: 'spec.provider.workers[0].name',
        reason: 'FieldValueTooLong',
        message: 'Too long: may not be more than 15 bytes',
      },
      invalid('spec.provider.workers[1].name', 'Pool', LABEL),
      { field: 'spec.provider.workers[3].name', reason: 'FieldValueDuplicate', message: 'Duplicate value: "w"' },
    ]);
  });
});

describe("Gardener's required Shoot fields outside networking", () => {
  it('provider type, region and cloud profile, with Gardener messages', () => {
    const got = causes(
      shoot((s) => {
        delete s.spec.provider!.type;
        delete s.spec.region;
        delete s.spec.cloudProfileName;
      }),
    );
    expect(got).toEqual([
      {
        field: 'spec.provider.type',
        reason: 'FieldValueRequired',
        message: 'Required value: must specify a provider type',
      },
      { field: 'spec.region', reason: 'FieldValueRequired', message: 'Required value: must specify a region' },
      {
        field: 'spec.cloudProfile.name',
        reason: 'FieldValueRequired',
        message: 'Required value: must specify a cloud profile',
      },
    ]);
  });

  it('the cloud profile may be given as cloudProfile.name, and the Kubernetes version may be left out', () => {
    const s = shoot((x) => {
      delete x.spec.cloudProfileName;
      x.spec.cloudProfile = { name: 'local' };
      delete x.spec.kubernetes!.version;
    });
    expect(causes(s)).toEqual([]);
  });

  it('a Shoot with `spec: {}` is invalid', () => {
    const fields = causes({
      apiVersion: 'core.gardener.cloud/v1beta1',
      kind: 'Shoot',
      metadata: { name: 'a', namespace: 'garden-dev' },
      spec: {},
    }).map((c) => c.field);
    expect(fields).toEqual(['spec.provider.type', 'spec.region', 'spec.cloudProfile.name']);
  });

  it('an empty seed name is refused', () => {
    expect(causes(shoot((s) => (s.spec.seedName = '')))).toEqual([
      invalid('spec.seedName', '', 'seed name must not be empty when providing the key'),
    ]);
  });
});
