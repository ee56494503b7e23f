/**
 * The machine agent for the machine image: this project's CLI bundled by esbuild into one ES module that node runs
 * without node_modules, next to a package.json that names the package.
 *
 * What a bundle changes: the CLI finds "its package" by walking up from its own file (projectRoot() in
 * src/system/project.ts), which finds the package.json written here, so `--version` and `--help` work. Everything
 * else it reads below the package root is not in the image: hack/versions.env (`--version` then lists only the
 * Kubernetes and etcd versions), charts/ (the CRDs and the calico chart), examples/ and hack/'s scripts; commands
 * that need those (`up`, `run`) do not work from the image. pino's transports (worker files next to pino's modules)
 * are not used by the project and would not work bundled.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { projectRoot } from '../../../system/project.js';

/** The bundle's file name: the image runs `node /opt/gardener-ipv6/gardener-ipv6.mjs`. */
export const AGENT_BUNDLE_FILE = 'gardener-ipv6.mjs';

export interface AgentBundle {
  /** The folder with the bundle and its package.json, named after their content. */
  dir: string;
  /** The bundle: `node <script> --help`. */
  script: string;
  /** The package.json the bundle finds its name and version in. */
  packageJson: string;
}

/** The entry point in a checkout (TypeScript) or, without src/, in the installed package (compiled). */
export function agentEntryPoint(root = projectRoot()): string {
  const source = join(root, 'src', 'cli', 'bundle-entry.ts');
  return existsSync(source) ? source : join(root, 'dist', 'cli', 'bundle-entry.js');
}

/**
 * CommonJS modules in an ES module bundle call `require` for node's built-in modules (commander's
 * `require('node:events')`); esbuild's ESM output has no `require`, so the bundle makes one.
 */
const REQUIRE_BANNER =
  "import { createRequire as __gardenerIPv6CreateRequire } from 'node:module';\n" +
  'const require = __gardenerIPv6CreateRequire(import.meta.url);';

/**
 * Bundles the CLI into `<outDir>/agent-<digest>/`, unless that folder is there already: same sources, same bytes,
 * same folder (esbuild's output is deterministic, and paths in it are relative to the project root). esbuild is a
 * dependency of the package: `up` builds the machine image wherever it runs.
 */
export async function bundleAgent(outDir: string, root = projectRoot()): Promise<AgentBundle> {
  const { build } = await import('esbuild').catch((e: Error) => {
    throw new Error(`bundling the machine agent needs esbuild (a dependency of this package): ${e.message}`);
  });
  const result = await build({
    entryPoints: [agentEntryPoint(root)],
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    format: 'esm',
    // The node the image carries is this one.
    target: `node${process.versions.node}`,
    banner: { js: REQUIRE_BANNER },
    outfile: AGENT_BUNDLE_FILE,
    write: false,
    logLevel: 'silent',
  });
  const bundle = result.outputFiles[0]!.contents;
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; version: string };
  const packageJson = Buffer.from(
    JSON.stringify({ name: manifest.name, version: manifest.version, type: 'module', private: true }, null, 2) + '\n',
  );
  const digest = createHash('sha256').update(bundle).update(packageJson).digest('hex').slice(0, 32);
  const dir = join(outDir, `agent-${digest}`);
  const script = join(dir, AGENT_BUNDLE_FILE);
  const packageJsonPath = join(dir, 'package.json');
  await mkdir(dir, { recursive: true });
  // Write then rename: a parallel builder of the same bundle never sees half a file.
  const suffix = `${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  for (const [path, data] of [
    [script, bundle],
    [packageJsonPath, packageJson],
  ] as const) {
    if (existsSync(path)) continue;
    await writeFile(`${path}.${suffix}`, data);
    await rename(`${path}.${suffix}`, path);
  }
  return { dir, script, packageJson: packageJsonPath };
}
