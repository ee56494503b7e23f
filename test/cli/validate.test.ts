import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { cli, parseJSONStream, tempFile } from '../support/cli.js';

const ROOT = join(import.meta.dirname, '..', '..');
const example = (name: string) => join(ROOT, 'examples', name);

const ipv6Shoot = (extra = '') => `apiVersion: core.gardener.cloud/v1beta1
kind: Shoot
metadata:
  name: s6
  namespace: garden-dev
spec:
  cloudProfile:
    name: local
  region: local
  provider:
    type: local
    workers:
      - name: w1
  networking:
    type: calico
    ipFamilies: [IPv6]
    nodes: fd00:10:1:100::/56
${extra}`;

describe('gardener-ipv6 validate', () => {
  it('prints a Success Status and exits 0 for a valid object', async () => {
    const run = await cli([
      'validate',
      '-f',
      example('shoot-ipv6.yaml'),
      '--feature-gates',
      'IPv6SingleStack=true',
      '-o',
      'json',
    ]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      apiVersion: 'v1',
      kind: 'Status',
      metadata: {},
      status: 'Success',
      details: { name: 'local', group: 'core.gardener.cloud', kind: 'Shoot' },
      code: 200,
    });
  });

  it('rejects an IPv6 shoot without the IPv6SingleStack gate with a 422 Status naming the field', async () => {
    const run = await cli(['validate', '-f', tempFile('s.yaml', ipv6Shoot()), '-o', 'json']);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({
      apiVersion: 'v1',
      kind: 'Status',
      status: 'Failure',
      reason: 'Invalid',
      code: 422,
      message:
        'Shoot.core.gardener.cloud "s6" is invalid: spec.networking.ipFamilies: Invalid value: ["IPv6"]: IPv6 single-stack networking is not supported',
      details: {
        name: 's6',
        group: 'core.gardener.cloud',
        kind: 'Shoot',
        causes: [
          {
            reason: 'FieldValueInvalid',
            field: 'spec.networking.ipFamilies',
            message: 'Invalid value: ["IPv6"]: IPv6 single-stack networking is not supported',
          },
        ],
      },
    });
  });

  it('prints one Status per document and exits 1 when any is invalid', async () => {
    const file = tempFile(
      'multi.yaml',
      `${ipv6Shoot()}---\n${ipv6Shoot().replace('name: s6', 'name: s7').replace('nodes: fd00:10:1:100::/56', 'nodes: 10.0.0.0/16')}`,
    );
    const run = await cli(['validate', '-f', file, '--feature-gates', 'IPv6SingleStack=true', '-o', 'json']);
    expect(run.code).toBe(1);
    const statuses = parseJSONStream(run.stdout) as { status: string; details: { name: string; causes?: unknown[] } }[];
    expect(statuses.map((s) => [s.details.name, s.status])).toEqual([
      ['s6', 'Success'],
      ['s7', 'Failure'],
    ]);
    expect(statuses[1]!.details.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.networking.nodes',
        message: 'Invalid value: "10.0.0.0": must be a valid IPv6 address',
      },
    ]);
  });

  it('applies the seed context: shoot defaults fill pods and services, overlaps with the seed are errors', async () => {
    const gates = ['--feature-gates', 'IPv6SingleStack=true'];
    const ok = await cli(['validate', '-f', example('shoot-ipv6.yaml'), '--seed', example('seed-ipv6.yaml'), ...gates]);
    expect(ok).toMatchObject({ code: 0, stdout: 'Shoot.core.gardener.cloud "local" is valid\n' });

    const clash = tempFile('clash.yaml', ipv6Shoot().replace('fd00:10:1:100::/56', 'fd00:10:1::/56'));
    const run = await cli(['validate', '-f', clash, '--seed', example('seed-ipv6.yaml'), ...gates, '-o', 'json']);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout).details.causes).toContainEqual({
      reason: 'FieldValueInvalid',
      field: 'spec.networking.nodes',
      message: 'Invalid value: "fd00:10:1::/56": shoot node network intersects with seed pod network',
    });
  });

  it('validates an update with --old', async () => {
    const old = tempFile('old.yaml', ipv6Shoot('    pods: fd00:10:3::/56\n'));
    const next = tempFile('new.yaml', ipv6Shoot('    pods: fd00:10:5::/56\n'));
    const run = await cli([
      'validate',
      '-f',
      next,
      '--old',
      old,
      '--feature-gates',
      'IPv6SingleStack=true',
      '-o',
      'json',
    ]);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout).details.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.networking.pods',
        message: 'Invalid value: "fd00:10:5::/56": field is immutable',
      },
    ]);
  });

  it('prints field errors as text by default', async () => {
    const run = await cli(['validate', '-f', tempFile('s.yaml', ipv6Shoot())]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe(
      'Shoot.core.gardener.cloud "s6" is invalid:\n' +
        '  - spec.networking.ipFamilies: Invalid value: ["IPv6"]: IPv6 single-stack networking is not supported\n',
    );
  });

  it('reads JSON from stdin', async () => {
    const doc = JSON.stringify({
      apiVersion: 'extensions.gardener.cloud/v1alpha1',
      kind: 'DNSRecord',
      metadata: { name: 'r' },
      spec: {
        type: 'local',
        secretRef: { name: 's' },
        name: 'api.example.com',
        recordType: 'AAAA',
        values: ['1.2.3.4'],
      },
    });
    const run = await cli(['validate', '-f', '-', '-o', 'json'], doc);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout).details.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.values[0]',
        message: 'Invalid value: "1.2.3.4": must be a valid IPv6 address',
      },
    ]);
  });

  it.each([
    ['a missing file', ['validate', '-f', '/nonexistent/shoot.yaml'], /\/nonexistent\/shoot\.yaml: cannot read/],
    [
      'bad YAML',
      ['validate', '-f', tempFile('bad.yaml', 'kind: Shoot\n  bad: [indent\n')],
      /bad\.yaml: .*(YAML|parse)/,
    ],
    [
      'an unknown kind',
      ['validate', '-f', tempFile('cm.yaml', 'apiVersion: v1\nkind: ConfigMap\n')],
      /cm\.yaml: object 1: unknown kind "ConfigMap"/,
    ],
    [
      'a scalar document',
      ['validate', '-f', tempFile('scalar.yaml', '42\n')],
      /scalar\.yaml: document 1 is not an object/,
    ],
    ['an empty file', ['validate', '-f', tempFile('empty.yaml', '')], /empty\.yaml: no objects found/],
    [
      'an unknown feature gate',
      ['validate', '-f', example('shoot-ipv4.yaml'), '--feature-gates', 'Foo=true'],
      /unrecognized feature gate: Foo/,
    ],
    [
      'a non-boolean gate value',
      ['validate', '-f', example('shoot-ipv4.yaml'), '--feature-gates', 'DualStack=yes'],
      /invalid value of DualStack=yes/,
    ],
    ['a missing -f', ['validate'], /required option '-f, --filename <file>'/],
    ['an unknown output format', ['validate', '-f', example('shoot-ipv4.yaml'), '-o', 'xml'], /invalid/],
  ])('exits 2 with a message naming the problem for %s', async (_, args, message) => {
    const run = await cli(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stdout).toBe('');
  });

  it('prints help', async () => {
    const run = await cli(['validate', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('--feature-gates <list>');
    expect(run.stdout).toContain('Exit codes: 0 all objects valid, 1 some object invalid, 2');
  });

  it('works as an installed binary', async () => {
    const bin = join(ROOT, 'bin', 'gardener-ipv6.js');
    const { stdout } = await promisify(execFile)(process.execPath, [
      bin,
      'validate',
      '-f',
      example('shoot-ipv6.yaml'),
      '--feature-gates',
      'IPv6SingleStack=true',
    ]);
    expect(stdout).toBe('Shoot.core.gardener.cloud "local" is valid\n');
    const failure = await promisify(execFile)(process.execPath, [
      bin,
      'validate',
      '-f',
      example('shoot-ipv6.yaml'),
    ]).catch((e: { code: number; stdout: string }) => e);
    expect(failure).toMatchObject({ code: 1 });
  });
});
