/**
 * The file size rule of eslint.config.js (hack/eslint/file-size.js): a file over the limit fails lint unless its
 * header says why it is one concept; the project's own src/ keeps to it.
 */
import { join } from 'node:path';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import { projectPlugin, projectSourceProblems } from '../support/lint.js';

const ROOT = join(import.meta.dirname, '../..');
const fileSize = await projectPlugin('file-size.js');

async function lint(text: string, max = 5): Promise<string[]> {
  const eslint = new ESLint({
    cwd: ROOT,
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        languageOptions: { parser: tseslint.parser },
        plugins: { 'file-size': fileSize },
        rules: { 'file-size/max-lines': ['error', { max }] },
      },
    ],
  });
  const [result] = await eslint.lintText(text, { filePath: join(ROOT, 'src', 'example.ts') });
  return result!.messages.map((m) => `${m.line}: ${m.message}`);
}

const code = (lines: number) => Array.from({ length: lines }, (_, i) => `export const v${i} = ${i};`).join('\n') + '\n';

describe('file-size/max-lines', () => {
  it('passes a file within the limit, its last newline not counted as a line', async () => {
    expect(await lint(code(5))).toEqual([]);
  });

  it('fails a longer file, saying how to pass', async () => {
    expect(await lint(code(6))).toEqual([
      '1: 6 lines, over 5: split the file, or say in its header why it is one concept ' +
        '("Kept as one file (over 5 lines): …")',
    ]);
  });

  it('passes a longer file whose header says why it is one concept, and only then', async () => {
    const header = (why: string) => `/**\n * A module.\n * ${why}\n */\n`;
    expect(
      await lint(header('Kept as one file (over 5 lines): one parser, its cases side by side.') + code(4)),
    ).toEqual([]);
    // The words without a reason, or a reason that is not in the header, do not count.
    expect(await lint(header('Kept as one file.') + code(4))).toHaveLength(1);
    expect(await lint(`${code(5)}/* Kept as one file (over 5 lines): too late. */\n`)).toHaveLength(1);
  });
});

describe("the project's own source tree", () => {
  it('has no file over 400 lines that does not say why', async () => {
    expect(await projectSourceProblems('file-size')).toEqual([]);
  }, 180_000);
});
