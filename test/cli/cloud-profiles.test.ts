/**
 * CloudProfiles in the input of `validate`, `default` and `render`: without a cluster, the input is the garden. A
 * CloudProfile counts for the Shoots after it (`render`: for all of them); without one, Shoots are judged alone.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { cli, parseJSONStream, tempFile } from '../support/cli.js';

const example = (name: string) => join(import.meta.dirname, '..', '..', 'examples', name);
const PROFILE = example('cloudprofile-local.yaml');
const GATES = ['--feature-gates', 'IPv6SingleStack=true'];

const SHOOT_TEXT = readFileSync(example('shoot-ipv6.yaml'), 'utf8');

/** The example IPv6 shoot asking for `version` on a machine of `type`, as a file. */
function shoot(version: string, type = 'local'): string {
  const object = parseAllDocuments(SHOOT_TEXT)[0]!.toJS() as {
    spec: { kubernetes: { version: string }; provider: { workers: { machine: object }[] } };
  };
  object.spec.kubernetes.version = version;
  object.spec.provider.workers[0]!.machine = { type };
  return tempFile('shoot.json', JSON.stringify(object));
}

describe('CloudProfiles in the input', () => {
  it('validate judges a Shoot after a CloudProfile against it, and one naming another as not found', async () => {
    const other = readFileSync(PROFILE, 'utf8').replace('name: local', 'name: other').replace('1.37.1', '1.36.0');
    const run = await cli([
      'validate',
      '-f',
      PROFILE,
      '-f',
      shoot('1.33.0', 'xl'),
      '-f',
      tempFile('other.yaml', other.replace(/^#.*\n/gm, '')),
      '-o',
      'json',
      ...GATES,
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('');
    const [profile, judged, otherProfile] = parseJSONStream(run.stdout) as {
      status: string;
      details: { causes?: unknown[] };
    }[];
    expect(profile!.status).toBe('Success');
    expect(otherProfile!.status).toBe('Success');
    expect(judged!.details.causes).toEqual([
      {
        reason: 'FieldValueNotSupported',
        field: 'spec.kubernetes.version',
        message: 'Unsupported value: "1.33.0": supported values: "1.37.1"',
      },
      {
        reason: 'FieldValueNotSupported',
        field: 'spec.provider.workers[0].machine.type',
        message: 'Unsupported value: "xl": supported values: "local", "local-2cpu"',
      },
    ]);

    const missing = await cli([
      'validate',
      '-f',
      PROFILE,
      '-f',
      tempFile('s.yaml', SHOOT_TEXT.replace(/name: local\n {2}region/, 'name: gcp\n  region')),
      ...GATES,
    ]);
    expect(missing.stdout).toContain('  - spec.cloudProfile.name: Not found: "gcp"\n');
  });

  it('validate judges a Shoot before any CloudProfile alone, and says so when its CloudProfile comes later', async () => {
    const run = await cli(['validate', '-f', shoot('1.33.0'), '-f', PROFILE, ...GATES]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      'Shoot.core.gardener.cloud "local" is valid\nCloudProfile.core.gardener.cloud "local" is valid\n',
    );
    expect(run.stderr).toMatch(
      /^warning: .*cloudprofile-local\.yaml: object 1: CloudProfile "local" comes after .*shoot\.json: object 1, a Shoot that names it and was not checked against it: put CloudProfiles before the Shoots\n$/,
    );
  });

  it('validate does not count a CloudProfile the API server would refuse', async () => {
    const invalid = readFileSync(PROFILE, 'utf8').replace('type: local', 'type: ""');
    const run = await cli(['validate', '-f', tempFile('p.yaml', invalid), '-f', shoot('1.37.1'), ...GATES]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('Shoot.core.gardener.cloud "local" is valid\n');
  });

  it('default gives a Shoot the version and image of its CloudProfile', async () => {
    const run = await cli(['default', '-f', PROFILE, '-f', shoot('1.37')]);
    expect(run.stderr).toBe('');
    const [profile, defaulted] = parseAllDocuments(run.stdout).map((d) => d.toJS());
    expect(profile.spec.machineTypes[0]).toMatchObject({ usable: true, architecture: 'amd64' });
    expect(defaulted.spec.kubernetes.version).toBe('1.37.1');
    expect(defaulted.spec.provider.workers[0].machine).toEqual({
      type: 'local',
      image: { name: 'local', version: '1.0.0' },
    });
  });

  it('render admits the Shoots against the CloudProfiles of its input, wherever they are', async () => {
    const args = ['render', '-f', example('seed-ipv6.yaml'), ...GATES];
    const refused = await cli([...args, '-f', shoot('1.33.0'), '-f', PROFILE, '-o', 'json']);
    expect(refused.code).toBe(1);
    const [status] = parseJSONStream(refused.stdout) as { details: { causes: { field: string }[] } }[];
    expect(status!.details.causes.map((c) => c.field)).toEqual(['spec.kubernetes.version']);
    const rendered = await cli([...args, '-f', shoot('1.37'), '-f', PROFILE]);
    expect(rendered.code, rendered.stderr).toBe(0);
  });
});
