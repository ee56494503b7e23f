/**
 * hack/check-prerequisites.sh, the one list of what the machine needs, run with a PATH of stubs: everything missing
 * is named in one message with the command that installs it. And `up` runs it before it starts anything.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { missingUpPrerequisites } from '../../src/localenv/prerequisites.js';
import { projectRoot } from '../../src/localenv/project.js';
import { which } from '../../src/localenv/process.js';

const SCRIPT = join(projectRoot(), 'hack', 'check-prerequisites.sh');
const BASH = which('bash')!;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A PATH holding bash and stubs of these commands (a stub `go` reports `goVersion`). */
function stubPath(commands: readonly string[], goVersion?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'gardener-ipv6-prereq-'));
  dirs.push(dir);
  symlinkSync(BASH, join(dir, 'bash'));
  for (const command of commands) {
    const body = command === 'go' ? `echo go${goVersion ?? '1.26.0'}` : 'exit 0';
    writeFileSync(join(dir, command), `#!${BASH}\n${body}\n`);
    chmodSync(join(dir, command), 0o755);
  }
  return dir;
}

function check(path: string, ...args: string[]) {
  const run = spawnSync(BASH, [SCRIPT, ...args], { encoding: 'utf8', env: { PATH: path } });
  return { code: run.status, stderr: run.stderr };
}

const asRoot = process.getuid?.() === 0;

describe('hack/check-prerequisites.sh', () => {
  it('names everything `up --ipv6-only` misses in one message, with one install line', () => {
    const run = check(stubPath([]), 'up', '--ipv6-only');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('error: missing prerequisites (up):');
    expect(run.stderr).toContain(
      "BIND9, the DNS server of the shoots' records: `named` not found (Debian package bind9)",
    );
    expect(run.stderr).toContain('`openssl` not found (Debian package openssl)');
    expect(run.stderr).toContain('`ip` not found (Debian package iproute2)');
    expect(run.stderr).toContain(`${asRoot ? '' : 'sudo '}apt-get install -y bind9 openssl iproute2\n`);
    expect(run.stderr.match(/apt-get install/g)).toHaveLength(1);
  });

  it('passes when everything is there', () => {
    expect(check(stubPath(['named', 'openssl', 'ip']), 'up').code).toBe(0);
    expect(check(stubPath(['go']), 'build').code).toBe(0);
  });

  it('asks the tests for the DNS tools and shellcheck too', () => {
    const run = check(stubPath(['named', 'openssl', 'ip']), 'test');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('apt-get install -y bind9-utils dnsutils shellcheck\n');
  });

  it('names a Go that is too old, with the version it needs', () => {
    const run = check(stubPath(['go'], '1.20.3'), 'build');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/Go >= 1\.\d+ to build the control plane binaries: .*\/go is 1\.20\.3/);
    expect(run.stderr).not.toContain('apt-get');
    // Needed by `up` only when a binary must be built.
    expect(check(stubPath(['go', 'named', 'openssl'], '1.20.3'), 'up').code).toBe(0);
    expect(check(stubPath(['go', 'named', 'openssl'], '1.20.3'), 'up', '--build-binaries').code).toBe(1);
  });

  it.skipIf(asRoot)('asks for root for --ipv6-only', () => {
    expect(check(stubPath(['named', 'openssl', 'ip']), 'up', '--ipv6-only').stderr).toContain('root: --ipv6-only');
  });

  it('refuses an unknown purpose or flag (exit 2)', () => {
    expect(check(stubPath([]), 'deploy').code).toBe(2);
    expect(check(stubPath([]), 'up', '--fast').code).toBe(2);
  });

  it.skipIf(which('shellcheck') === undefined)('passes shellcheck', () => {
    const run = spawnSync('shellcheck', ['-x', 'hack/check-prerequisites.sh'], {
      encoding: 'utf8',
      cwd: projectRoot(),
    });
    expect(run.stdout + run.stderr).toBe('');
  });
});

describe('up checks the prerequisites before it starts anything', () => {
  it('returns the message naming what is missing', () => {
    const env = {
      PATH: stubPath([]),
      GARDENER_IPV6_BIN_DIR: stubPath(['etcd', 'kube-apiserver', 'kube-controller-manager']),
    };
    const message = missingUpPrerequisites({ ipv6Only: false, env });
    expect(message).toContain('error: missing prerequisites (up):');
    expect(message).toContain('apt-get install -y bind9 openssl');
    expect(missingUpPrerequisites({ ipv6Only: false, env: { ...env, PATH: stubPath(['named', 'openssl']) } })).toBe(
      undefined,
    );
  });
});
