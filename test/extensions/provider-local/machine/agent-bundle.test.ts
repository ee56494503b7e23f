import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AGENT_BUNDLE_FILE,
  agentEntryPoint,
  bundleAgent,
  type AgentBundle,
} from '../../../../src/extensions/provider-local/machine/agent-bundle.js';
import { projectRoot } from '../../../../src/system/project.js';

const dir = mkdtempSync(join(tmpdir(), 'agent-bundle-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const version = (JSON.parse(readFileSync(join(projectRoot(), 'package.json'), 'utf8')) as { version: string }).version;

describe('the machine agent bundle', () => {
  let bundle: AgentBundle;
  /** The bundle and its package.json alone, as in the image: no node_modules, no sources above them. */
  let isolated: string;
  const run = (...args: string[]) =>
    spawnSync(process.execPath, [join(isolated, AGENT_BUNDLE_FILE), ...args], {
      encoding: 'utf8',
      cwd: dir,
      timeout: 30_000,
    });

  beforeAll(async () => {
    bundle = await bundleAgent(join(dir, 'cache'));
    isolated = join(dir, 'opt', 'gardener-ipv6');
    cpSync(bundle.dir, isolated, { recursive: true });
  }, 60_000);

  it('bundles the CLI entry of the checkout into one ES module with a package.json naming the package', () => {
    expect(agentEntryPoint()).toBe(join(projectRoot(), 'src', 'cli', 'bundle-entry.ts'));
    expect(basename(bundle.script)).toBe(AGENT_BUNDLE_FILE);
    expect(basename(bundle.dir)).toMatch(/^agent-[0-9a-f]{32}$/);
    expect(JSON.parse(readFileSync(bundle.packageJson, 'utf8'))).toEqual({
      name: 'gardener-ipv6',
      version,
      type: 'module',
      private: true,
    });
  });

  it('gives the same folder for the same sources', async () => {
    expect(await bundleAgent(join(dir, 'cache'))).toEqual(bundle);
  }, 60_000);

  it('runs without node_modules: --version, --help and a command loaded on demand', () => {
    const versionRun = run('--version');
    expect(versionRun.stderr).toBe('');
    expect(versionRun.status).toBe(0);
    expect(versionRun.stdout).toMatch(new RegExp(`^gardener-ipv6 ${version.replace(/\./g, '\\.')}\n`));
    const help = run('--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('Usage: gardener-ipv6');
    const validate = run(
      'validate',
      '-f',
      join(projectRoot(), 'examples', 'shoot-ipv6.yaml'),
      '--feature-gates',
      'IPv6SingleStack=true',
    );
    expect(validate.stderr).toBe('');
    expect(validate.stdout).toContain('is valid');
    expect(validate.status).toBe(0);
  });

  it('fails where the package.json is missing, as the CLI finds its version there', () => {
    rmSync(join(isolated, 'package.json'));
    try {
      const versionRun = run('--version');
      expect(versionRun.status).not.toBe(0);
      expect(versionRun.stderr).toContain('cannot find the gardener-ipv6 package root');
    } finally {
      cpSync(bundle.packageJson, join(isolated, 'package.json'));
    }
    expect(existsSync(join(isolated, 'package.json'))).toBe(true);
  });
});
