/**
 * hack/check-prerequisites.sh, the one list of what the machine needs, run with a fake PATH (stubs, or links to the
 * host's tools), an empty PKG_CONFIG_LIBDIR and fake / and /proc folders: everything missing is named with its Debian
 * package, in one message with one `apt-get install` line. hack/ensure-binaries.sh runs it before any build, and `up`
 * before it starts anything; `all` checks every path of the README at once, and `--install` runs the line (stubs of
 * apt-get and sysctl here, with the user id overridden).
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BINARY_NAMES } from '../../src/localenv/binaries.js';
import { missingUpPrerequisites, upBinariesToBuild } from '../../src/localenv/prerequisites.js';
import { projectRoot } from '../../src/system/project.js';
import { which } from '../../src/system/process.js';

const ROOT = projectRoot();
const SCRIPT = join(ROOT, 'hack', 'check-prerequisites.sh');
const BASH = which('bash')!;
const asRoot = process.getuid?.() === 0;
const MIN_NODE = /"node":\s*">=\s*([\d.]+)"/.exec(readFileSync(join(ROOT, 'package.json'), 'utf8'))![1]!;
const MIN_GO = /^MIN_GO_VERSION=(\S+)$/m.exec(readFileSync(join(ROOT, 'hack', 'versions.env'), 'utf8'))![1]!;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gardener-ipv6-prereq-'));
  dirs.push(dir);
  return dir;
}

/** What `up` (and with it `test`) needs as any user, and as root for the machines. */
const UP_TOOLS = ['node', 'named', 'openssl', 'setpriv'];
const MACHINE_TOOLS = ['ip', 'nsenter', 'unshare', 'nft', 'conntrack', 'sysctl'];
const TEST_TOOLS = ['ip', 'named-checkconf', 'dig', 'shellcheck'];

/**
 * A PATH holding bash, stubs of these commands and links to the host's `links`. A stub `go` reports Go `go`, a stub
 * `node` Node `node`, a stub `cc` finds libc.a at `libc` (in the fake / of fakeRoot()), a stub `pkg-config` finds a
 * library whose .pc file is in a folder of PKG_CONFIG_LIBDIR, other stubs exit 0.
 */
function fakePath(
  stubs: readonly string[],
  opts: { go?: string; node?: string; libc?: string; links?: readonly string[] } = {},
): string {
  const dir = tempDir();
  symlinkSync(BASH, join(dir, 'bash'));
  for (const command of stubs) {
    const body =
      command === 'go'
        ? `echo go${opts.go ?? '1.26.0'}`
        : command === 'node'
          ? `echo v${opts.node ?? '20.19.0'}`
          : command === 'cc'
            ? `echo ${opts.libc ?? 'libc.a'}`
            : command === 'pkg-config'
              ? 'IFS=:; for d in $PKG_CONFIG_LIBDIR; do [ -f "$d/$2.pc" ] && exit 0; done; exit 1'
              : 'exit 0';
    writeFileSync(join(dir, command), `#!${BASH}\n${body}\n`);
    chmodSync(join(dir, command), 0o755);
  }
  for (const command of opts.links ?? []) symlinkSync(which(command)!, join(dir, command));
  return dir;
}

/**
 * A fake / (GARDENER_IPV6_FS_ROOT) and /proc (GARDENER_IPV6_PROC_ROOT): optionally a busybox at bin/busybox (static, or
 * naming a loader as a dynamically linked one does), libc.a, libseccomp.pc (in `pkgConfig`, a folder for
 * PKG_CONFIG_LIBDIR), net.ipv6.conf.all.forwarding and disable_ipv6, and the inotify limits (default: above the
 * minimums).
 */
function fakeRoot(
  opts: {
    busybox?: 'static' | 'dynamic';
    libc?: boolean;
    libseccomp?: boolean;
    forwarding?: number;
    disableIpv6?: number;
    instances?: number;
    watches?: number;
  } = {},
): { fs: string; proc: string; libc: string; pkgConfig: string } {
  const dir = tempDir();
  const fs = join(dir, 'fs');
  const proc = join(dir, 'proc');
  const libc = join(fs, 'usr', 'lib', 'x86_64-linux-gnu', 'libc.a');
  const pkgConfig = join(fs, 'usr', 'lib', 'x86_64-linux-gnu', 'pkgconfig');
  mkdirSync(join(fs, 'bin'), { recursive: true });
  if (opts.busybox) {
    const loader = opts.busybox === 'dynamic' ? '/lib64/ld-linux-x86-64.so.2\0' : '';
    writeFileSync(join(fs, 'bin', 'busybox'), Buffer.from(`\x7fELF\x02\x01\x01\0\0\0${loader}busybox\0`, 'latin1'));
    chmodSync(join(fs, 'bin', 'busybox'), 0o755);
  }
  if (opts.libc) {
    mkdirSync(join(libc, '..'), { recursive: true });
    writeFileSync(libc, '!<arch>\n');
  }
  if (opts.libseccomp) {
    mkdirSync(pkgConfig, { recursive: true });
    writeFileSync(join(pkgConfig, 'libseccomp.pc'), 'Name: libseccomp\nVersion: 2.5.4\nLibs: -lseccomp\n');
  }
  const ipv6 = join(proc, 'sys', 'net', 'ipv6', 'conf', 'all');
  if (opts.forwarding !== undefined || opts.disableIpv6 !== undefined) mkdirSync(ipv6, { recursive: true });
  if (opts.forwarding !== undefined) writeFileSync(join(ipv6, 'forwarding'), `${opts.forwarding}\n`);
  if (opts.disableIpv6 !== undefined) writeFileSync(join(ipv6, 'disable_ipv6'), `${opts.disableIpv6}\n`);
  mkdirSync(join(proc, 'sys', 'fs', 'inotify'), { recursive: true });
  writeFileSync(join(proc, 'sys', 'fs', 'inotify', 'max_user_instances'), `${opts.instances ?? 8192}\n`);
  writeFileSync(join(proc, 'sys', 'fs', 'inotify', 'max_user_watches'), `${opts.watches ?? 1048576}\n`);
  return { fs, proc, libc, pkgConfig };
}

function check(args: string[], opts: { path: string; root?: ReturnType<typeof fakeRoot>; env?: NodeJS.ProcessEnv }) {
  const root = opts.root ?? fakeRoot();
  const run = spawnSync(BASH, [SCRIPT, ...args], {
    encoding: 'utf8',
    env: {
      PATH: opts.path,
      GARDENER_IPV6_FS_ROOT: root.fs,
      GARDENER_IPV6_PROC_ROOT: root.proc,
      PKG_CONFIG_LIBDIR: '',
      ...opts.env,
    },
  });
  return { code: run.status, stderr: run.stderr };
}

/** The packages of the one `apt-get install` line (and that there is exactly one). */
function aptPackages(stderr: string): string[] {
  const lines = stderr.split('\n').filter((l) => l.includes('apt-get'));
  expect(lines).toHaveLength(1);
  const m = /^ {2}(?:sudo )?apt-get install -y --no-install-recommends (.+)$/.exec(lines[0]!);
  expect(m, lines[0]).not.toBeNull();
  return m![1]!.split(' ');
}

const sudo = asRoot ? '' : 'sudo ';
/** A user id that is not root's, for GARDENER_IPV6_EUID. */
const NON_ROOT = '1000';

describe('hack/check-prerequisites.sh build', () => {
  it('names everything hack/ensure-binaries.sh needs, with one install line', () => {
    const run = check(['build'], { path: fakePath([]) });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('error: missing prerequisites (build):');
    expect(run.stderr).toContain(`Go >= ${MIN_GO} to build the binaries: \`go\` not found`);
    expect(run.stderr).toContain('`cc` not found (Debian package gcc)');
    expect(run.stderr).toContain('libc.a not found (Debian package libc6-dev)');
    expect(run.stderr).toContain('`pkg-config` not found (Debian package pkg-config)');
    expect(run.stderr).toContain('libseccomp.pc not found by pkg-config (Debian package libseccomp-dev)');
    // Go is not Debian's (too old): named, not installed by apt.
    expect(aptPackages(run.stderr)).toEqual(['gcc', 'libc6-dev', 'pkg-config', 'libseccomp-dev']);
    expect(run.stderr).toContain(`  ${sudo}apt-get install -y --no-install-recommends gcc libc6-dev`);
  });

  it('passes when everything is there; a real pkg-config does not find libseccomp in an empty PKG_CONFIG_LIBDIR', () => {
    const root = fakeRoot({ libc: true });
    const pkgConfig = which('pkg-config') !== undefined;
    const path = fakePath(pkgConfig ? ['go', 'cc'] : ['go', 'cc', 'pkg-config'], {
      libc: root.libc,
      links: pkgConfig ? ['pkg-config'] : [],
    });
    const pcDir = tempDir();
    writeFileSync(
      join(pcDir, 'libseccomp.pc'),
      'Name: libseccomp\nDescription: fake\nVersion: 2.5.4\nLibs: -lseccomp\nCflags:\n',
    );
    expect(check(['build'], { path, root, env: { PKG_CONFIG_LIBDIR: pcDir } })).toEqual({ code: 0, stderr: '' });
    if (pkgConfig) {
      const run = check(['build'], { path, root });
      expect(run.code).toBe(1);
      expect(aptPackages(run.stderr)).toEqual(['libseccomp-dev']);
    }
  });

  it('without pkg-config looks for libseccomp.pc where pkg-config would (PKG_CONFIG_PATH, PKG_CONFIG_LIBDIR)', () => {
    const root = fakeRoot({ libc: true });
    const path = fakePath(['go', 'cc'], { libc: root.libc });
    const pcDir = tempDir();
    writeFileSync(join(pcDir, 'libseccomp.pc'), 'Name: libseccomp\n');
    expect(aptPackages(check(['build'], { path, root, env: { PKG_CONFIG_PATH: pcDir } }).stderr)).toEqual([
      'pkg-config',
    ]);
    expect(aptPackages(check(['build'], { path, root }).stderr)).toEqual(['pkg-config', 'libseccomp-dev']);
  });

  it('asks only for what the named binaries need: C for pause, C and libseccomp for runc, Go for the rest', () => {
    const path = fakePath(['go']);
    expect(check(['build', 'etcd', 'kube-apiserver', 'helm'], { path })).toEqual({ code: 0, stderr: '' });
    expect(aptPackages(check(['build', 'etcd', 'pause'], { path }).stderr)).toEqual(['gcc', 'libc6-dev']);
    expect(aptPackages(check(['build', 'runc'], { path }).stderr)).toEqual([
      'gcc',
      'libc6-dev',
      'pkg-config',
      'libseccomp-dev',
    ]);
  });

  it('names a Go that is too old, with the version it needs', () => {
    const run = check(['build', 'etcd'], { path: fakePath(['go'], { go: '1.20.3' }) });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      new RegExp(`Go >= ${MIN_GO.replace('.', '\\.')} to build the binaries: .*/go is 1\\.20\\.3`),
    );
    expect(run.stderr).not.toContain('apt-get');
  });
});

describe('hack/check-prerequisites.sh up', () => {
  it('names everything `up --ipv6-only` misses in one message, with one install line', () => {
    const run = check(['up', '--ipv6-only'], { path: fakePath([]) });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('error: missing prerequisites (up):');
    expect(run.stderr).toContain(`Node >= ${MIN_NODE}: \`node\` not found`);
    expect(run.stderr).toContain(
      "BIND9, the DNS server of the shoots' records: `named` not found (Debian package bind9)",
    );
    expect(run.stderr).toContain('`openssl` not found (Debian package openssl)');
    expect(run.stderr).toContain('`setpriv` not found (Debian package util-linux)');
    expect(run.stderr).toContain('`ip` not found (Debian package iproute2)');
    const machines = ['busybox-static', 'nftables', 'conntrack', 'procps'];
    // As root, `up` gives the shoots machines: their tools are named too (and util-linux once, for three commands).
    expect(aptPackages(run.stderr)).toEqual(
      asRoot
        ? ['bind9', 'openssl', 'util-linux', 'iproute2', ...machines]
        : ['bind9', 'openssl', 'util-linux', 'iproute2'],
    );
    if (asRoot) {
      expect(run.stderr).toContain('`nsenter` not found (Debian package util-linux)');
      expect(run.stderr).toContain('`unshare` not found (Debian package util-linux)');
      expect(run.stderr).toContain('/bin/busybox not found (Debian package busybox-static)');
      expect(run.stderr).toContain('`nft` not found (Debian package nftables)');
      expect(run.stderr).toContain('`conntrack` not found (Debian package conntrack)');
      expect(run.stderr).toContain('`sysctl` not found (Debian package procps)');
    } else {
      expect(run.stderr).toContain('root: --ipv6-only');
    }
    expect(run.stderr.match(/`ip` not found/g)).toHaveLength(1);
  });

  it('passes when everything is there, silently', () => {
    const root = fakeRoot({ busybox: 'static' });
    expect(check(['up'], { path: fakePath([...UP_TOOLS, ...MACHINE_TOOLS]), root })).toEqual({ code: 0, stderr: '' });
    expect(check(['up', '--no-machines'], { path: fakePath(UP_TOOLS) }).code).toBe(asRoot ? 1 : 0); // root: `ip`
  });

  it.skipIf(!asRoot)('as root with --no-machines asks for none of the machines’ tools', () => {
    const run = check(['up', '--no-machines'], { path: fakePath([...UP_TOOLS, 'ip']) });
    expect(run).toEqual({ code: 0, stderr: '' });
  });

  it.skipIf(!asRoot)('as root names a dynamically linked busybox, which does not run in the machines’ image', () => {
    const root = fakeRoot({ busybox: 'dynamic' });
    const run = check(['up'], { path: fakePath([...UP_TOOLS, ...MACHINE_TOOLS]), root });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('/bin/busybox is linked dynamically');
    expect(aptPackages(run.stderr)).toEqual(['busybox-static']);
  });

  it.skipIf(!asRoot)('as root warns about inotify limits too low for the machines, with one sysctl command', () => {
    const path = fakePath([...UP_TOOLS, ...MACHINE_TOOLS]);
    const run = check(['up'], { path, root: fakeRoot({ busybox: 'static', instances: 128, watches: 8192 }) });
    expect(run.code).toBe(0);
    expect(run.stderr).not.toContain('error');
    expect(run.stderr).toContain('warning: kernel settings too low for the machines (up):');
    expect(run.stderr).toContain('fs.inotify.max_user_instances is 128, below 512');
    expect(run.stderr).toContain('fs.inotify.max_user_watches is 8192, below 65536');
    expect(run.stderr).toContain('\n  sysctl -w fs.inotify.max_user_instances=512 fs.inotify.max_user_watches=65536\n');
    const one = check(['up'], { path, root: fakeRoot({ busybox: 'static', instances: 128 }) });
    expect(one.stderr).toContain('\n  sysctl -w fs.inotify.max_user_instances=512\n');
    expect(check(['up', '--no-machines'], { path, root: fakeRoot({ instances: 128 }) }).stderr).toBe('');
  });

  it.skipIf(!asRoot)('as root with --raise-sysctls raises the inotify limits instead, and says so', () => {
    const path = fakePath([...UP_TOOLS, ...MACHINE_TOOLS]);
    const root = fakeRoot({ busybox: 'static', instances: 128, watches: 8192 });
    const run = check(['up', '--raise-sysctls'], { path, root });
    expect(run.code).toBe(0);
    expect(run.stderr).not.toContain('warning');
    expect(run.stderr).toContain('raised kernel settings too low for the machines (up; until the next reboot):');
    expect(run.stderr).toContain('fs.inotify.max_user_instances from 128 to 512');
    expect(run.stderr).toContain('fs.inotify.max_user_watches from 8192 to 65536');
    const inotify = join(root.proc, 'sys', 'fs', 'inotify');
    expect(readFileSync(join(inotify, 'max_user_instances'), 'utf8').trim()).toBe('512');
    expect(readFileSync(join(inotify, 'max_user_watches'), 'utf8').trim()).toBe('65536');
    // Raised once: the next check finds nothing to say.
    expect(check(['up', '--raise-sysctls'], { path, root }).stderr).toBe('');
    expect(check(['test', '--raise-sysctls'], { path, root }).code).toBe(2);
  });

  it(`names a Node older than package.json's engines (${MIN_NODE})`, () => {
    const path = fakePath(UP_TOOLS.filter((t) => t !== 'node'));
    const old = fakePath(['node'], { node: '18.19.0' });
    const run = check(['up', '--no-machines'], {
      path: `${path}:${old}`,
      env: { GARDENER_IPV6_NODE: join(old, 'node') },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`Node >= ${MIN_NODE}: ${join(old, 'node')} is 18.19.0`);
  });

  it('with --build-binaries also what building those binaries needs', () => {
    const tools = asRoot ? [...UP_TOOLS, ...MACHINE_TOOLS] : UP_TOOLS;
    const root = fakeRoot({ busybox: 'static' });
    const path = fakePath(['go', ...tools], { go: '1.20.3' });
    expect(check(['up'], { path, root }).code).toBe(0);
    const cp = check(['up', '--build-binaries=etcd,kube-apiserver'], { path, root });
    expect(cp.code).toBe(1);
    expect(cp.stderr).toContain('/go is 1.20.3');
    expect(cp.stderr).not.toContain('apt-get');
    const machines = check(['up', '--build-binaries=etcd,runc'], { path, root });
    expect(aptPackages(machines.stderr)).toEqual(['gcc', 'libc6-dev', 'pkg-config', 'libseccomp-dev']);
  });
});

describe('hack/check-prerequisites.sh test', () => {
  it('asks the tests for the DNS tools and shellcheck too', () => {
    const run = check(['test'], {
      path: fakePath([...UP_TOOLS, ...MACHINE_TOOLS]),
      root: fakeRoot({ busybox: 'static' }),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('error: missing prerequisites (test):');
    expect(run.stderr).toContain('`dig` not found (Debian package dnsutils)');
    expect(aptPackages(run.stderr)).toEqual(['bind9-utils', 'dnsutils', 'shellcheck']);
  });

  it('names only Debian packages that .ci/run installs, through `all --install`', () => {
    const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8');
    expect(ci).toMatch(/^bash hack\/check-prerequisites\.sh all --install$/m);
    const named = aptPackages(check(['test', '--build-binaries'], { path: fakePath([]) }).stderr);
    expect(named).toEqual(expect.arrayContaining(['libseccomp-dev', 'pkg-config', 'gcc', 'libc6-dev', 'dnsutils']));
    const all = aptPackages(check(['all'], { path: fakePath([]) }).stderr);
    for (const p of named) expect(all, p).toContain(p);
  });
});

describe('hack/check-prerequisites.sh all', () => {
  /** Every Debian package `all` can ask for, with the commands (on PATH) and files (in the fake /) it stands for. */
  const PACKAGES: Record<string, { commands?: readonly string[]; file?: 'busybox' | 'libc' | 'libseccomp' }> = {
    debootstrap: { commands: ['debootstrap'] },
    gcc: { commands: ['cc'] },
    'libc6-dev': { file: 'libc' },
    'pkg-config': { commands: ['pkg-config'] },
    'libseccomp-dev': { file: 'libseccomp' },
    bind9: { commands: ['named'] },
    openssl: { commands: ['openssl'] },
    'util-linux': { commands: ['setpriv', 'nsenter', 'unshare'] },
    iproute2: { commands: ['ip'] },
    'busybox-static': { file: 'busybox' },
    nftables: { commands: ['nft'] },
    conntrack: { commands: ['conntrack'] },
    procps: { commands: ['sysctl'] },
    'bind9-utils': { commands: ['named-checkconf'] },
    dnsutils: { commands: ['dig'] },
    shellcheck: { commands: ['shellcheck'] },
    'docker.io': { commands: ['dockerd'] },
    jq: { commands: ['jq'] },
    'nghttp2-client': { commands: ['h2load'] },
  };

  /**
   * A machine with everything `all` checks but the `lacking` Debian packages' commands and files (Go and Node are
   * stubs of new enough versions), IPv6 forwarding `forwarding` (default 1), and the user id `euid`.
   */
  function machine(
    lacking: readonly string[] = [],
    opts: { forwarding?: number; disableIpv6?: number; instances?: number; euid?: string } = {},
  ) {
    const gone = lacking.map((p) => PACKAGES[p]!);
    const lacks = (file: string) => gone.some((p) => p.file === file);
    const root = fakeRoot({
      busybox: lacks('busybox') ? undefined : 'static',
      libc: !lacks('libc'),
      libseccomp: !lacks('libseccomp'),
      forwarding: opts.forwarding ?? 1,
      disableIpv6: opts.disableIpv6,
      instances: opts.instances,
    });
    const commands = Object.values(PACKAGES)
      .flatMap((p) => p.commands ?? [])
      .filter((c) => !gone.some((p) => p.commands?.includes(c)));
    const path = fakePath(['go', 'node', ...commands], { libc: root.libc });
    const env = { PKG_CONFIG_LIBDIR: root.pkgConfig, GARDENER_IPV6_EUID: opts.euid ?? '0' };
    return { path, root, env };
  }

  /** The `sysctl -w` command lines of the output. */
  const sysctlLines = (stderr: string) => stderr.split('\n').filter((l) => /^ {2}(?:sudo )?sysctl -w /.test(l));

  it.each(Object.keys(PACKAGES))(
    'names %s alone, as root and not, when only its commands or files are missing',
    (pkg) => {
      for (const euid of ['0', NON_ROOT]) {
        const { path, root, env } = machine([pkg], { euid });
        const run = check(['all'], { path, root, env });
        expect(run.code, euid).toBe(1);
        expect(run.stderr, euid).toContain('error: missing prerequisites (all):');
        expect(run.stderr, euid).toContain(`(Debian package ${pkg})`);
        expect(aptPackages(run.stderr), euid).toEqual([pkg]);
        expect(run.stderr, euid).toContain(
          `\n  ${euid === '0' ? '' : 'sudo '}apt-get install -y --no-install-recommends ${pkg}\n`,
        );
        expect(sysctlLines(run.stderr), euid).toEqual([]);
      }
    },
  );

  it('names every package once, in one line, when everything is missing', () => {
    const run = check(['all'], { path: fakePath([]), root: fakeRoot({ forwarding: 1 }) });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`Go >= ${MIN_GO} to build the binaries: \`go\` not found`);
    expect(run.stderr).toContain(`Node >= ${MIN_NODE}: \`node\` not found`);
    const named = aptPackages(run.stderr);
    expect(new Set(named).size).toBe(named.length);
    expect([...named].sort()).toEqual(Object.keys(PACKAGES).sort());
    // util-linux stands for three commands, debootstrap for two purposes: each is named once.
    expect(run.stderr.match(/`debootstrap` not found/g)).toHaveLength(1);
    expect(run.stderr.match(/\(Debian package util-linux\)/g)).toHaveLength(3);
    // Errors, not the warnings of `test`.
    expect(run.stderr).not.toContain('is skipped');
  });

  it('passes silently when everything is there, as root and not', () => {
    for (const euid of ['0', NON_ROOT]) {
      const { path, root, env } = machine([], { euid });
      expect(check(['all'], { path, root, env }), euid).toEqual({ code: 0, stderr: '' });
      // Nothing to install: --install has nothing to do, and says nothing.
      expect(check(['all', '--install'], { path, root, env }), euid).toEqual({ code: 0, stderr: '' });
    }
  });

  it('names IPv6 forwarding that is off, with one sysctl line (the inotify limits on it too)', () => {
    const off = machine([], { forwarding: 0 });
    const run = check(['all'], off);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('net.ipv6.conf.all.forwarding is 0, not 1');
    expect(run.stderr).not.toContain('apt-get');
    expect(sysctlLines(run.stderr)).toEqual(['  sysctl -w net.ipv6.conf.all.forwarding=1']);
    const user = machine([], { forwarding: 0, euid: NON_ROOT });
    expect(sysctlLines(check(['all'], user).stderr)).toEqual(['  sudo sysctl -w net.ipv6.conf.all.forwarding=1']);
    // Low inotify limits stay warnings, on the same one line.
    const low = check(['all'], machine(['jq'], { forwarding: 0, instances: 128 }));
    expect(low.code).toBe(1);
    expect(low.stderr).toContain('fs.inotify.max_user_instances is 128, below 512');
    expect(aptPackages(low.stderr)).toEqual(['jq']);
    expect(sysctlLines(low.stderr)).toEqual([
      '  sysctl -w fs.inotify.max_user_instances=512 net.ipv6.conf.all.forwarding=1',
    ]);
    // Only the warning: passes, as for `up`.
    expect(check(['all'], machine([], { instances: 128 })).code).toBe(0);
  });

  it('names IPv6 that is off or disabled on the host, as hack/local/lib.sh', () => {
    const { path, env } = machine();
    const noIpv6 = check(['all'], { path, root: fakeRoot({ busybox: 'static', libc: true, libseccomp: true }), env });
    expect(noIpv6.code).toBe(1);
    expect(noIpv6.stderr).toContain('/sys/net/ipv6/conf/all/forwarding not found');
    expect(sysctlLines(noIpv6.stderr)).toEqual([]);
    const disabled = check(['all'], machine([], { forwarding: 0, disableIpv6: 1 }));
    expect(disabled.code).toBe(1);
    expect(disabled.stderr).toContain('net.ipv6.conf.all.disable_ipv6 is 1, not 0');
    expect(sysctlLines(disabled.stderr)).toEqual([
      '  sysctl -w net.ipv6.conf.all.forwarding=1 net.ipv6.conf.all.disable_ipv6=0',
    ]);
    expect(check(['all'], machine([], { disableIpv6: 0 })).code).toBe(0);
  });

  it('refuses the flags of the other purposes (exit 2)', () => {
    const { path, root, env } = machine();
    for (const args of [['--no-machines'], ['--ipv6-only'], ['--raise-sysctls'], ['--build-binaries'], ['runc']]) {
      expect(check(['all', ...args], { path, root, env }).code, args[0]).toBe(2);
    }
  });
});

describe('hack/check-prerequisites.sh --install', () => {
  const CHMOD = which('chmod')!;

  /**
   * Stubs of apt-get and sysctl put into the fake PATH `bin`, which log their arguments (apt-get with its
   * DEBIAN_FRONTEND): `apt-get install` puts stubs of the commands `provides` lists for the packages it is given into
   * `bin` (as installing them would), `sysctl -w` writes the settings into the fake /proc; with `failUpdate`
   * `apt-get update` fails. Returns the logs' paths.
   */
  function installStubs(
    bin: string,
    provides: Record<string, readonly string[]>,
    opts: { failUpdate?: boolean } = {},
  ): { aptLog: string; sysctlLog: string } {
    const logs = tempDir();
    const aptLog = join(logs, 'apt-get.log');
    const sysctlLog = join(logs, 'sysctl.log');
    const cases = Object.entries(provides).map(
      ([pkg, commands]) =>
        `    ${pkg}) for c in ${commands.join(' ')}; do printf '#!%s\\nexit 0\\n' '${BASH}' >"${bin}/$c"; '${CHMOD}' 755 "${bin}/$c"; done ;;`,
    );
    const apt = [
      `#!${BASH}`,
      `echo "DEBIAN_FRONTEND=$DEBIAN_FRONTEND $*" >>'${aptLog}'`,
      `[ "$1" = update ] && exit ${opts.failUpdate ? 100 : 0}`,
      'shift',
      'for p in "$@"; do',
      '  case "$p" in',
      ...cases,
      '  esac',
      'done',
    ];
    const sysctl = [
      `#!${BASH}`,
      `echo "$*" >>'${sysctlLog}'`,
      '[ "$1" = -w ] && shift',
      'for kv in "$@"; do k="${kv%%=*}"; echo "${kv#*=}" >"$GARDENER_IPV6_PROC_ROOT/sys/${k//.//}"; done',
    ];
    for (const [name, lines] of [
      ['apt-get', apt],
      ['sysctl', sysctl],
    ] as const) {
      writeFileSync(join(bin, name), `${lines.join('\n')}\n`);
      chmodSync(join(bin, name), 0o755);
    }
    return { aptLog, sysctlLog };
  }
  const logLines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n') : []);

  /** What `all` needs, on a fake PATH without jq and debootstrap, with IPv6 forwarding off, as user `euid`. */
  function lackingJqAndDebootstrap(euid: string) {
    const root = fakeRoot({ busybox: 'static', libc: true, libseccomp: true, forwarding: 0 });
    const tools = ['go', 'cc', 'pkg-config', ...UP_TOOLS, ...MACHINE_TOOLS, ...TEST_TOOLS, 'dockerd', 'h2load'];
    const path = fakePath(tools, { libc: root.libc });
    return { path, root, env: { PKG_CONFIG_LIBDIR: root.pkgConfig, GARDENER_IPV6_EUID: euid } };
  }

  it('as root runs apt-get update, then the one install line, sets the kernel settings, and checks again', () => {
    const machine = lackingJqAndDebootstrap('0');
    const { aptLog, sysctlLog } = installStubs(machine.path, { jq: ['jq'], debootstrap: ['debootstrap'] });
    const run = check(['all', '--install'], machine);
    expect(logLines(aptLog)).toEqual([
      'DEBIAN_FRONTEND=noninteractive update',
      'DEBIAN_FRONTEND=noninteractive install -y --no-install-recommends debootstrap jq',
    ]);
    expect(logLines(sysctlLog)).toEqual(['-w net.ipv6.conf.all.forwarding=1']);
    const forwarding = join(machine.root.proc, 'sys', 'net', 'ipv6', 'conf', 'all', 'forwarding');
    expect(readFileSync(forwarding, 'utf8').trim()).toBe('1');
    // The first check named them; the second finds everything.
    expect(run.stderr).toContain('  apt-get install -y --no-install-recommends debootstrap jq\n');
    expect(run.stderr.match(/error: missing prerequisites/g)).toHaveLength(1);
    expect(run.stderr).toContain('--install: all prerequisites present (all)');
    expect(run.code).toBe(0);
  });

  it('as root exits with the second check: what is still missing is named again', () => {
    const machine = lackingJqAndDebootstrap('0');
    const { aptLog } = installStubs(machine.path, { debootstrap: ['debootstrap'] });
    const run = check(['all', '--install'], machine);
    expect(logLines(aptLog)).toHaveLength(2);
    expect(run.code).toBe(1);
    expect(run.stderr.match(/error: missing prerequisites \(all\):/g)).toHaveLength(2);
    expect(run.stderr.split('--install: checking again (all)')[1]).toContain(
      '  apt-get install -y --no-install-recommends jq\n',
    );
  });

  it('as root does not install when apt-get update fails, nor without apt-get', () => {
    const machine = lackingJqAndDebootstrap('0');
    const { aptLog } = installStubs(machine.path, { jq: ['jq'], debootstrap: ['debootstrap'] }, { failUpdate: true });
    const failed = check(['all', '--install'], machine);
    expect(logLines(aptLog)).toEqual(['DEBIAN_FRONTEND=noninteractive update']);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('--install: apt-get failed');
    const without = lackingJqAndDebootstrap('0');
    const run = check(['all', '--install'], without);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('--install: `apt-get` not found');
  });

  it('works with every purpose, for what that purpose names', () => {
    for (const args of [['build'], ['up', '--build-binaries'], ['test', '--build-binaries'], ['all']]) {
      const root = fakeRoot({ busybox: 'static', libc: true, libseccomp: true, forwarding: 1 });
      const tools = [
        'go',
        'pkg-config',
        ...UP_TOOLS,
        ...MACHINE_TOOLS,
        ...TEST_TOOLS,
        'dockerd',
        'h2load',
        'jq',
        'debootstrap',
      ];
      const path = fakePath(tools);
      const { aptLog } = installStubs(path, { gcc: ['cc'] });
      const env = { PKG_CONFIG_LIBDIR: root.pkgConfig, GARDENER_IPV6_EUID: '0' };
      const run = check([...args, '--install'], { path, root, env });
      expect(logLines(aptLog), args[0]).toEqual([
        'DEBIAN_FRONTEND=noninteractive update',
        'DEBIAN_FRONTEND=noninteractive install -y --no-install-recommends gcc',
      ]);
      expect(run.code, args[0]).toBe(0);
    }
  });

  it('not as root prints the lines with sudo and runs nothing (exit 1)', () => {
    const machine = lackingJqAndDebootstrap(NON_ROOT);
    const { aptLog, sysctlLog } = installStubs(machine.path, { jq: ['jq'], debootstrap: ['debootstrap'] });
    const run = check(['all', '--install'], machine);
    expect(run.code).toBe(1);
    expect(aptPackages(run.stderr)).toEqual(['debootstrap', 'jq']);
    expect(run.stderr).toContain('\n  sudo apt-get install -y --no-install-recommends debootstrap jq\n');
    expect(run.stderr).toContain('\n  sudo sysctl -w net.ipv6.conf.all.forwarding=1\n');
    expect(run.stderr).toContain('--install: not run, it needs root');
    expect(existsSync(aptLog)).toBe(false);
    expect(existsSync(sysctlLog)).toBe(false);
    const forwarding = join(machine.root.proc, 'sys', 'net', 'ipv6', 'conf', 'all', 'forwarding');
    expect(readFileSync(forwarding, 'utf8').trim()).toBe('0');
  });
});

describe('hack/check-prerequisites.sh', () => {
  it('refuses an unknown purpose or flag (exit 2)', () => {
    const path = fakePath([]);
    expect(check(['deploy'], { path }).code).toBe(2);
    expect(check(['up', '--fast'], { path }).code).toBe(2);
    expect(check(['up', 'runc'], { path }).code).toBe(2);
    expect(check(['build', '--ipv6-only'], { path }).code).toBe(2);
    expect(check(['test', '--no-machines'], { path }).code).toBe(2);
  });

  it('passes on this machine for every purpose (when the machine has everything)', (ctx) => {
    // As the script looks: on PATH only.
    const onPath = (command: string) =>
      (process.env.PATH ?? '').split(':').some((dir) => dir !== '' && existsSync(join(dir, command)));
    const lacking = [...UP_TOOLS.filter((t) => t !== 'node'), ...TEST_TOOLS, 'cc', 'pkg-config']
      .concat(asRoot ? MACHINE_TOOLS : [])
      .filter((t) => !onPath(t));
    if (!onPath('go') && !existsSync('/usr/local/go/bin/go')) lacking.push('go');
    if (onPath('pkg-config') && spawnSync('pkg-config', ['--exists', 'libseccomp']).status !== 0) {
      lacking.push('libseccomp');
    }
    if (asRoot && !existsSync('/bin/busybox')) lacking.push('/bin/busybox');
    if (lacking.length > 0) ctx.skip(`this machine lacks ${lacking.join(', ')}`);
    const env = { ...process.env, GARDENER_IPV6_NODE: process.execPath };
    for (const purpose of ['build', 'up', 'test']) {
      const run = spawnSync(BASH, [SCRIPT, purpose], { encoding: 'utf8', env });
      expect(run.stderr, purpose).not.toContain('error');
      expect(run.status, purpose).toBe(0);
      // Nothing but, on a host with low inotify limits, the warning about them.
      expect(run.stderr.replace(/^warning: kernel settings[\s\S]*sysctl -w [^\n]*\n/m, ''), purpose).toBe('');
    }
  });

  it.skipIf(which('shellcheck') === undefined)('passes shellcheck, as hack/ensure-binaries.sh', () => {
    const run = spawnSync('shellcheck', ['-x', 'hack/check-prerequisites.sh', 'hack/ensure-binaries.sh'], {
      encoding: 'utf8',
      cwd: ROOT,
    });
    expect(run.stdout + run.stderr).toBe('');
  });
});

describe('hack/ensure-binaries.sh runs the build check first', () => {
  /** The external commands ensure-binaries.sh runs before it builds anything. */
  const SCRIPT_TOOLS = ['dirname', 'mkdir', 'cat'];

  it('stops in seconds, before any build, naming what the builds lack', () => {
    const started = Date.now();
    const run = spawnSync(BASH, [join(ROOT, 'hack', 'ensure-binaries.sh'), 'etcd', 'runc'], {
      encoding: 'utf8',
      env: {
        PATH: fakePath(['go'], { links: SCRIPT_TOOLS }),
        GARDENER_IPV6_FS_ROOT: fakeRoot().fs,
        PKG_CONFIG_LIBDIR: '',
        // Build even if this checkout has them cached.
        GARDENER_IPV6_FORCE_BUILD: '1',
      },
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('error: missing prerequisites (build):');
    expect(aptPackages(run.stderr)).toEqual(['gcc', 'libc6-dev', 'pkg-config', 'libseccomp-dev']);
    expect(run.stderr).toContain('[ensure-binaries] ERROR: cannot build etcd runc: prerequisites missing (above)');
    expect(run.stderr).not.toContain('building');
  });

  it('checks nothing when every binary is ready-made, and says nothing with GARDENER_IPV6_QUIET_CACHED=1', () => {
    const bin = fakePath(['runc', 'pause']);
    const run = spawnSync(BASH, [join(ROOT, 'hack', 'ensure-binaries.sh'), 'runc', 'pause'], {
      encoding: 'utf8',
      // No go, no cc, no pkg-config: the check would fail.
      env: {
        PATH: fakePath([], { links: SCRIPT_TOOLS }),
        GARDENER_IPV6_FS_ROOT: fakeRoot().fs,
        GARDENER_IPV6_BIN_DIR: bin,
        GARDENER_IPV6_QUIET_CACHED: '1',
      },
    });
    expect({ code: run.status, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
  });
});

describe('up checks the prerequisites before it starts anything', () => {
  /** Ready-made binaries, so that nothing needs building (nor Go). */
  const allBinaries = () => ({ GARDENER_IPV6_BIN_DIR: fakePath(BINARY_NAMES) });

  it('returns the message naming what is missing', () => {
    const root = fakeRoot({ busybox: 'static' });
    const env = {
      PATH: fakePath([]),
      GARDENER_IPV6_FS_ROOT: root.fs,
      GARDENER_IPV6_PROC_ROOT: root.proc,
      ...allBinaries(),
    };
    const message = missingUpPrerequisites({ ipv6Only: false, env });
    expect(message).toContain('error: missing prerequisites (up):');
    expect(message).toContain(`apt-get install -y --no-install-recommends bind9 openssl util-linux`);
    const path = fakePath([...UP_TOOLS, ...MACHINE_TOOLS]);
    expect(missingUpPrerequisites({ ipv6Only: false, env: { ...env, PATH: path } })).toBe(undefined);
  });

  it.skipIf(!asRoot)('as root asks for the machines’ tools unless machines are off', () => {
    const root = fakeRoot({ busybox: 'static' });
    const env = {
      PATH: fakePath([...UP_TOOLS, 'ip']),
      GARDENER_IPV6_FS_ROOT: root.fs,
      GARDENER_IPV6_PROC_ROOT: root.proc,
      ...allBinaries(),
    };
    expect(missingUpPrerequisites({ ipv6Only: false, env })).toContain('(Debian package nftables)');
    expect(missingUpPrerequisites({ ipv6Only: false, machines: false, env })).toBe(undefined);
  });

  it.skipIf(!asRoot)('passes on what a check that passed says: as root, the inotify limits it raised', () => {
    const root = fakeRoot({ busybox: 'static', instances: 128 });
    const env = {
      PATH: fakePath([...UP_TOOLS, ...MACHINE_TOOLS]),
      GARDENER_IPV6_FS_ROOT: root.fs,
      GARDENER_IPV6_PROC_ROOT: root.proc,
      ...allBinaries(),
    };
    const warnings: string[] = [];
    expect(missingUpPrerequisites({ ipv6Only: false, env, warn: (s) => warnings.push(s) })).toBe(undefined);
    expect(warnings.join('')).toContain('fs.inotify.max_user_instances from 128 to 512');
    expect(readFileSync(join(root.proc, 'sys', 'fs', 'inotify', 'max_user_instances'), 'utf8').trim()).toBe('512');
  });

  it('builds (and so checks the build of) only the binaries that are not there', () => {
    expect(upBinariesToBuild({ root: true, machines: true, env: allBinaries() })).toEqual([]);
    const some = upBinariesToBuild({ root: false, machines: true, env: {} });
    for (const name of some) expect(['etcd', 'kube-apiserver', 'kube-controller-manager']).toContain(name);
  });
});
