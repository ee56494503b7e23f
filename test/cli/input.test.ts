/**
 * How the commands read their input: within a stated size limit (exit 2, one line), and as kubectl reads it (YAML
 * 1.1 scalars; keys the object model can't hold are field errors, not silently dropped).
 */
import { truncateSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { cli, parseJSONStream, tempFile } from '../support/cli.js';

const shoot = (metadata: string, spec = '') => `apiVersion: core.gardener.cloud/v1beta1
kind: Shoot
metadata:
${metadata}
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
${spec}`;
const GATES = ['--feature-gates', 'IPv6SingleStack=true'];

interface Cause {
  field: string;
  message: string;
}
const causesOf = (stdout: string) =>
  (parseJSONStream(stdout) as { details?: { causes?: Cause[] } }[]).flatMap((s) => s.details?.causes ?? []);

describe('input size limit', () => {
  it('refuses a file over the default 64 MiB before reading it, with exit 2 and one line', async () => {
    const file = tempFile('huge.yaml', '');
    truncateSync(file, 64 * 1024 * 1024 + 1);
    for (const command of ['validate', 'default', 'render']) {
      const run = await cli([command, '-f', file, ...GATES]);
      expect(run.code, command).toBe(2);
      expect(run.stderr).toBe(
        `error: ${file}: the input is larger than the limit of 64 MiB (raise it with --max-input-size)\n`,
      );
      expect(run.stdout).toBe('');
    }
  });

  it('counts all files of a command together, stdin too, and --max-input-size raises or lowers the limit', async () => {
    // JSON: no YAML document limit in the way.
    const text = JSON.stringify(parseAllDocuments(shoot('  name: s1'))[0]!.toJS());
    const file = tempFile('shoot.json', text);
    const size = Buffer.byteLength(text);
    expect((await cli(['validate', '-f', file, ...GATES, '--max-input-size', String(size)])).code).toBe(0);
    const twice = await cli(['validate', '-f', file, '-f', '-', ...GATES, '--max-input-size', `${size + 10}`], text);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toBe(
      `error: -: the input is larger than the limit of ${size + 10} bytes (raise it with --max-input-size)\n`,
    );
    expect((await cli(['validate', '-f', file, '-f', '-', ...GATES, '--max-input-size', '1Ki'], text)).code).toBe(0);
    const bad = await cli(['default', '-f', file, '--max-input-size', 'lots']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('error: --max-input-size: "lots" is not a size (e.g. 64Mi, 1Gi, 1048576)\n');
  });

  it('refuses one YAML document larger than an eighth of the limit before parsing it', async () => {
    const big = shoot('  name: s1', `  # ${'x'.repeat(2000)}\n`);
    const file = tempFile('big.yaml', `${shoot('  name: s0')}---\n${big}`);
    const run = await cli(['validate', '-f', file, ...GATES, '--max-input-size', '8Ki']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `error: ${file}: document 2 (line 18) is larger than 1 KiB, the limit for one YAML document (1/8 of ` +
        `--max-input-size): split it, raise the limit, or pass JSON\n`,
    );
    // The same as JSON is parsed as JSON.
    const json = tempFile('big.json', JSON.stringify(parseAllDocuments(big)[0]!.toJS()));
    expect((await cli(['validate', '-f', json, ...GATES, '--max-input-size', '8Ki'])).code).toBe(0);
  });
});

describe('YAML as kubectl reads it (YAML 1.1)', () => {
  it.each(['yes', 'Yes', 'on', 'OFF', 'y', 'n', 'no', 'true'])(
    'refuses `name: %s`, a boolean to kubectl',
    async (name) => {
      const file = tempFile('shoot.yaml', shoot(`  name: ${name}`));
      const run = await cli(['validate', '-f', file, ...GATES, '-o', 'json']);
      expect(run.code).toBe(1);
      expect(causesOf(run.stdout)).toContainEqual({
        field: 'metadata.name',
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${!/^(y|yes|on|true)$/i.test(name) ? 'false' : 'true'}: expected string, received boolean`,
      });
    },
  );

  it('refuses a JSON object that names a key twice, as it refuses a YAML one, naming the field', async () => {
    const json = JSON.stringify(parseAllDocuments(shoot('  name: dup'))[0]!.toJS()).replace(
      '"ipFamilies":["IPv6"]',
      '"ipFamilies":["IPv6"],"ipFamilies":["IPv4"]',
    );
    for (const command of ['validate', 'default']) {
      const run = await cli([command, '-f', tempFile('shoot.json', json), ...(command === 'validate' ? GATES : [])]);
      expect(run.code, command).toBe(2);
      expect(run.stderr, command).toMatch(
        /^error: \S+shoot\.json: duplicate field "spec\.networking\.ipFamilies": an object names it twice/,
      );
      expect(run.stdout, command).toBe('');
    }
    const yaml = await cli(['validate', '-f', tempFile('shoot.yaml', shoot('  name: dup\n  name: dup2')), ...GATES]);
    expect(yaml.code).toBe(2);
    expect(yaml.stderr).toContain('Map keys must be unique');
  });

  it('accepts the quoted name, and prints strings kubectl would misread quoted', async () => {
    const file = tempFile(
      'shoot.yaml',
      shoot('  name: "yes"\n  labels: {a: "on", b: "0777"}\n  annotations: {c: "1:20"}'),
    );
    expect((await cli(['validate', '-f', file, ...GATES])).code).toBe(0);
    const run = await cli(['default', '-f', file]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('name: "yes"\n');
    expect(run.stdout).toContain('a: "on"\n');
    expect(run.stdout).toContain('b: "0777"\n');
    // go-yaml v2 has no sexagesimal numbers: a string either way.
    expect(run.stdout).toContain('c: 1:20\n');
  });

  it('reads numbers as go-yaml v2 does: octal 010 and 0o10, 1_000; no sexagesimal, timestamps as strings', async () => {
    const file = tempFile(
      'shoot.yaml',
      shoot(
        '  name: s1\n  annotations: {t: "x"}',
        '  kubernetes:\n    version: 1.31.1\n    kubelet: {maxPods: 0o10, podPidsLimit: 1_000, containerLogMaxFiles: 010}\n  hibernation:\n    schedules: [{start: 1:20, end: 2024-01-01}]\n',
      ),
    );
    const run = await cli(['default', '-f', file]);
    expect(run.code).toBe(0);
    const out = parseAllDocuments(run.stdout)[0]!.toJS() as {
      spec: { kubernetes: { kubelet: Record<string, unknown> }; hibernation: { schedules: unknown[] } };
    };
    expect(out.spec.kubernetes.kubelet).toMatchObject({ maxPods: 8, podPidsLimit: 1000, containerLogMaxFiles: 8 });
    expect(out.spec.hibernation.schedules).toEqual([{ start: '1:20', end: '2024-01-01' }]);
  });
});

describe('keys the object model cannot hold', () => {
  it.each([
    ['YAML', shoot('  name: s1\n  labels:\n    __proto__: x\n    app: a')],
    [
      'JSON',
      JSON.stringify(parseAllDocuments(shoot('  name: s1'))).replace(
        '"metadata":{',
        '"metadata":{"labels":{"__proto__":"x","app":"a"},',
      ),
    ],
  ])('reports a __proto__ label of %s as a field error instead of dropping it', async (_format, text) => {
    const file = tempFile('shoot.yaml', text.startsWith('[') ? JSON.stringify(JSON.parse(text)[0]) : text);
    const run = await cli(['validate', '-f', file, ...GATES, '-o', 'json']);
    expect(run.code).toBe(1);
    expect(causesOf(run.stdout)).toContainEqual({
      field: 'metadata.labels.__proto__',
      reason: 'FieldValueInvalid',
      message: 'Invalid value: "x": the key "__proto__" is not supported',
    });
  });
});
