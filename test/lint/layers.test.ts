/**
 * The import rules of eslint.config.js (hack/eslint/layers.js) on a small source tree of fixtures: a wrong-way
 * import, an import between folders of one layer and an import cycle each fail lint, naming the files; what the
 * layers allow passes. The last test lints the project's own src/ with its own configuration.
 */
import { join } from 'node:path';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import { projectPlugin, projectSourceProblems } from '../support/lint.js';

const FIXTURES = join(import.meta.dirname, 'fixtures');
const layers = await projectPlugin('layers.js');

async function lintFixtures(): Promise<Record<string, string[]>> {
  const eslint = new ESLint({
    cwd: FIXTURES,
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ['src/**/*.ts'],
        languageOptions: { parser: tseslint.parser },
        plugins: { layers },
        rules: {
          'layers/layers': [
            'error',
            {
              root: 'src',
              layers: [['net'], ['apis'], ['runtime'], ['system'], ['extensions/network', 'gardenlet'], ['app']],
              allow: [['runtime/client.ts', 'app/app.ts']],
            },
          ],
          'layers/no-cycle': ['error', { root: 'src' }],
        },
      },
    ],
  });
  const results = await eslint.lintFiles(['src']);
  return Object.fromEntries(
    results.map((r) => [r.filePath.slice(FIXTURES.length + 1), r.messages.map((m) => `${m.line}: ${m.message}`)]),
  );
}

describe('the import layers', async () => {
  const messages = await lintFixtures();

  it('fail lint on an import from src/apis into an extension', () => {
    expect(messages['src/apis/admission.ts']).toEqual([
      '2: src/apis/admission.ts (layer apis) must not import src/extensions/network/admission.ts (layer ' +
        'extensions/network): a layer imports only the layers below it (eslint.config.js)',
    ]);
  });

  it('fail lint on an import from the host toolkit into anything above it', () => {
    expect(messages['src/system/process.ts']).toEqual([
      '2: src/system/process.ts (layer system) must not import src/app/app.ts (layer app): a layer imports only ' +
        'the layers below it (eslint.config.js)',
    ]);
  });

  it('fail lint on an import between two folders of one layer', () => {
    expect(messages['src/gardenlet/worker.ts']).toEqual([
      '2: src/gardenlet/worker.ts (gardenlet) must not import src/extensions/network/admission.ts ' +
        '(extensions/network): the folders of one layer are independent of each other (eslint.config.js)',
    ]);
  });

  it('fail lint on a file in no layer', () => {
    expect(messages['src/unplaced/helper.ts']).toEqual([
      '1: src/unplaced/helper.ts is in no layer: add its folder to the layers in eslint.config.js',
    ]);
  });

  it('fail lint on an import cycle, type-only imports included, on each file of it', () => {
    expect(messages['src/app/flags.ts']).toEqual([
      '2: import cycle: src/app/flags.ts → src/app/checks.ts → src/app/flags.ts',
    ]);
    expect(messages['src/app/checks.ts']).toEqual([
      '1: import cycle: src/app/checks.ts → src/app/flags.ts → src/app/checks.ts',
    ]);
  });

  it('pass imports of the own folder and the layers below, and the allowed exceptions', () => {
    for (const file of [
      'src/net/cidr.ts',
      'src/apis/shoot.ts',
      'src/extensions/network/admission.ts',
      'src/runtime/client.ts',
      'src/app/app.ts',
    ]) {
      expect(messages[file], file).toEqual([]);
    }
  });
});

describe("the project's own source tree", () => {
  it('keeps its layers and has no import cycle', async () => {
    expect(await projectSourceProblems('layers')).toEqual([]);
  }, 180_000);
});
