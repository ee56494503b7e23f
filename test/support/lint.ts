/** The project's own ESLint rules (hack/eslint/) as its tests load them. */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ESLint, type Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { projectRoot } from '../../src/system/project.js';

const ROOT = projectRoot();

/** A plugin of hack/eslint/ (JavaScript, as ESLint loads it: imported by URL, typed here). */
export async function projectPlugin(file: string): Promise<ESLint.Plugin> {
  return (await import(pathToFileURL(join(ROOT, 'hack', 'eslint', file)).href)).default as ESLint.Plugin;
}

/**
 * The problems the rules of `plugin` find in the project's src/ with the configuration eslint.config.js gives them
 * (only those rules: the others are lint's business), as `file:line: message`.
 */
export async function projectSourceProblems(plugin: string): Promise<string[]> {
  const projectConfig = (await import(pathToFileURL(join(ROOT, 'eslint.config.js')).href)).default as Linter.Config[];
  const config = projectConfig.find((c) => c.plugins?.[plugin]);
  if (config === undefined) throw new Error(`eslint.config.js has no block with the plugin ${plugin}`);
  const eslint = new ESLint({
    cwd: ROOT,
    overrideConfigFile: true,
    overrideConfig: [{ ...config, languageOptions: { parser: tseslint.parser } }],
  });
  const results = await eslint.lintFiles(['src']);
  return results.flatMap((r) =>
    r.messages.filter((m) => m.ruleId?.startsWith(`${plugin}/`)).map((m) => `${r.filePath}:${m.line}: ${m.message}`),
  );
}
