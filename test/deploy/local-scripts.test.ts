/**
 * hack/local/*.sh: syntax (bash -n, shellcheck when installed), the prerequisite checks (a PATH without docker, a
 * docker without an engine, missing tools, the host's IPv6 sysctls) and, with fake docker/kind/kubectl/helm that
 * record their calls, the commands each step runs for an IP family.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/system/project.js';
import { which } from '../../src/system/process.js';

const ROOT = projectRoot();
const SCRIPT_DIR = join(ROOT, 'hack', 'local');
const SCRIPTS = readdirSync(SCRIPT_DIR)
  .filter((f) => f.endsWith('.sh') && f !== 'lib.sh')
  .sort();
const BASH = which('bash') ?? '/bin/bash';
/**
 * The tools the scripts check for, never taken from the host in these tests (dockerd and debootstrap are left out
 * altogether: no test starts a Docker engine or builds an image; hack/kind/ does that for real).
 */
const FAKED = ['docker', 'kind', 'kubectl', 'helm', 'uname', 'dockerd', 'debootstrap'];

let work: string;
/** Symlinks to the host's tools except the faked ones. */
let hostTools: string;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'gardener-ipv6-scripts-'));
  hostTools = join(work, 'host');
  mkdirSync(hostTools);
  for (const dir of ['/usr/local/bin', '/usr/bin', '/bin', '/usr/sbin', '/sbin']) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      if (FAKED.includes(name) || existsSync(join(hostTools, name))) continue;
      symlinkSync(join(dir, name), join(hostTools, name));
    }
  }
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Env {
  /** Fake tools to put first on PATH. */
  fakes?: string[];
  /** Fake docker fails like a CLI without an engine. */
  dockerDown?: boolean;
  /** Contents of the fake /proc's IPv6 sysctls; the defaults are a host ready for IPv6 kind clusters. */
  disableIPv6?: string;
  forwarding?: string;
  /** What the fake uname says. @default 'Linux' */
  os?: string;
  /** Whether the kind cluster's kubeconfig exists. */
  cluster?: boolean;
  /** What the fake `kind get clusters` lists. */
  clusters?: string[];
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  /** The fake tools' calls: `tool args…`, with the KUBECONFIG kubectl saw. */
  calls: string[];
  /** The --config file the fake kind was given, when it was. */
  kindConfig?: string;
  kindDir: string;
}

function fakeTool(dir: string, name: string): void {
  const behaviour: Record<string, string> = {
    docker: `
case "$1" in
  info) if [[ -n "\${FAKE_DOCKER_DOWN:-}" ]]; then echo; echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" >&2; exit 1; fi; echo 27.3.1 ;;
esac`,
    kind: `
[[ "$1 $2" == "get clusters" ]] && printf '%s\\n' \${FAKE_KIND_CLUSTERS:-}
args=("$@")
for ((i = 0; i < \${#args[@]}; i++)); do
  case "\${args[i]}" in
    --kubeconfig) echo "apiVersion: v1" >"\${args[i+1]}" ;;
    --config) cp "\${args[i+1]}" "$FAKE_LOG.kind-config" ;;
  esac
done`,
    kubectl: `
echo "  KUBECONFIG=\${KUBECONFIG:-}" >>"$FAKE_LOG"
case "$*" in
  *"get deployments"*) printf 'deployment.apps/gardener-ipv6-%s\\n' admission gardenlet network-calico dns-local dns-server ;;
  *"create namespace"*) printf 'apiVersion: v1\\nkind: Namespace\\nmetadata:\\n  name: garden-local\\n' ;;
  *"apply -f -"*) cat >/dev/null ;;
esac`,
    helm: '',
    uname: 'echo "${FAKE_UNAME:-Linux}"',
  };
  const path = join(dir, name);
  writeFileSync(path, `#!/usr/bin/env bash\necho "${name} $*" >>"$FAKE_LOG"\n${behaviour[name] ?? ''}\n`);
  chmodSync(path, 0o755);
}

let runs = 0;
function runScript(script: string, args: string[], env: Env = {}): Run {
  const dir = join(work, `run-${++runs}`);
  const fakes = join(dir, 'bin');
  const proc = join(dir, 'proc');
  const kindDir = join(dir, 'kind');
  mkdirSync(fakes, { recursive: true });
  mkdirSync(join(proc, 'sys', 'net', 'ipv6', 'conf', 'all'), { recursive: true });
  mkdirSync(kindDir);
  writeFileSync(join(proc, 'sys', 'net', 'ipv6', 'conf', 'all', 'disable_ipv6'), `${env.disableIPv6 ?? '0'}\n`);
  writeFileSync(join(proc, 'sys', 'net', 'ipv6', 'conf', 'all', 'forwarding'), `${env.forwarding ?? '1'}\n`);
  const log = join(dir, 'calls.log');
  writeFileSync(log, '');
  for (const tool of new Set([...(env.fakes ?? []), 'uname'])) fakeTool(fakes, tool);
  if (env.cluster) writeFileSync(join(kindDir, `gardener-local-${args[0] ?? 'ipv6'}.kubeconfig`), 'apiVersion: v1\n');
  const result = spawnSync(BASH, [join(SCRIPT_DIR, script), ...args], {
    encoding: 'utf8',
    cwd: work,
    env: {
      PATH: `${fakes}:${hostTools}`,
      HOME: dir,
      FAKE_LOG: log,
      GARDENER_IPV6_PROC_ROOT: proc,
      GARDENER_IPV6_KIND_DIR: kindDir,
      ...(env.dockerDown ? { FAKE_DOCKER_DOWN: '1' } : {}),
      ...(env.os ? { FAKE_UNAME: env.os } : {}),
      ...(env.clusters ? { FAKE_KIND_CLUSTERS: env.clusters.join(' ') } : {}),
    },
  });
  const configFile = `${log}.kind-config`;
  return {
    code: result.status ?? -1,
    stdout: result.stdout,
    stderr: result.stderr,
    calls: readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('uname')),
    ...(existsSync(configFile) ? { kindConfig: readFileSync(configFile, 'utf8') } : {}),
    kindDir,
  };
}

describe('the scripts', () => {
  it.each(SCRIPTS)('%s is valid bash', (script) => {
    const result = spawnSync(BASH, ['-n', join(SCRIPT_DIR, script)], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it.skipIf(which('shellcheck') === undefined)('pass shellcheck', () => {
    const result = spawnSync(
      'shellcheck',
      ['-x', ...SCRIPTS.map((s) => join('hack', 'local', s)), 'hack/local/lib.sh'],
      {
        encoding: 'utf8',
        cwd: ROOT,
      },
    );
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('are the seven steps the getting-started page walks through', () => {
    expect(SCRIPTS).toEqual(['cni.sh', 'deploy.sh', 'down.sh', 'examples.sh', 'kind-up.sh', 'seed-up.sh', 'up.sh']);
    const page = readFileSync(join(ROOT, 'docs', 'getting-started-ipv6.md'), 'utf8');
    for (const script of SCRIPTS) expect(page, script).toContain(`hack/local/${script}`);
  });
});

describe('without Docker', () => {
  it.each(SCRIPTS)('%s stops at once with "Docker is not available" and points at `gardener-ipv6 up`', (script) => {
    const args = script === 'seed-up.sh' ? ['dual', '--garden', 'ipv6'] : ['ipv6'];
    const run = runScript(script, args, { fakes: ['kind', 'kubectl', 'helm'] });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'Docker is not available: the docker command is not on PATH. Install Docker Engine (Linux) or Docker Desktop (macOS) and start it.',
    );
    expect(run.stderr).toContain('npx gardener-ipv6 up');
    expect(run.stderr).toContain('docs/getting-started-ipv6.md');
    expect(run.calls).toEqual([]);
    expect(readdirSync(run.kindDir)).toEqual([]);
  });

  it('says the same when the docker CLI is there but no engine answers, with docker info’s reason', () => {
    const run = runScript('kind-up.sh', ['ipv6'], { fakes: ['docker', 'kind', 'kubectl'], dockerDown: true });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'Docker is not available: the docker command is installed but no Docker engine answers (Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?)',
    );
    expect(run.stderr).toContain('npx gardener-ipv6 up');
    expect(run.calls).toEqual(['docker info --format {{.ServerVersion}}']);
  });
});

describe('prerequisites', () => {
  it('lists everything missing at once', () => {
    const run = runScript('deploy.sh', ['ipv6'], { fakes: ['docker'] });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('prerequisite(s) missing:');
    expect(run.stderr).toContain('  - debootstrap is not on PATH: apt-get install debootstrap');
    expect(run.stderr).not.toContain('Docker is not available');
    expect(run.stderr).not.toContain('gardener-ipv6 up');
    expect(run.calls.filter((c) => !c.startsWith('docker info'))).toEqual([]);
  });

  it.each([
    [
      { disableIPv6: '1' },
      'IPv6 is disabled on this host (net.ipv6.conf.all.disable_ipv6=1): sudo sysctl -w net.ipv6.conf.all.disable_ipv6=0',
    ],
    [
      { forwarding: '0' },
      'IPv6 forwarding is off on this host (net.ipv6.conf.all.forwarding=0): sudo sysctl -w net.ipv6.conf.all.forwarding=1',
    ],
  ])('checks the Linux host for IPv6 kind clusters (%o)', (env, message) => {
    for (const family of ['ipv6', 'dual']) {
      const run = runScript('kind-up.sh', [family], { fakes: ['docker', 'kind', 'kubectl'], ...env });
      expect(run.code, family).toBe(1);
      expect(run.stderr, family).toContain(message);
      expect(
        run.calls.filter((c) => !c.startsWith('docker info')),
        family,
      ).toEqual([]);
    }
    // An IPv4 cluster, or Docker Desktop's own VM, needs neither: the cluster that exists is taken as it is.
    for (const [family, os] of [
      ['ipv4', 'Linux'],
      ['ipv6', 'Darwin'],
    ] as const) {
      const run = runScript('kind-up.sh', [family], {
        fakes: ['docker', 'kind', 'kubectl'],
        clusters: [`gardener-local-${family}`],
        os,
        ...env,
      });
      expect(run.stderr, family).not.toContain(message);
      expect(run.code, family).toBe(0);
      expect(run.calls).toContain(
        `kind export kubeconfig --name gardener-local-${family} --kubeconfig ${join(run.kindDir, `gardener-local-${family}.kubeconfig`)}`,
      );
    }
  });

  it('wants the kind cluster before installing into it', () => {
    const run = runScript('cni.sh', ['dual'], { fakes: ['docker', 'kubectl'] });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('create the cluster first with hack/local/kind-up.sh dual');
  });

  it('rejects an unknown family and explains itself with --help', () => {
    const bad = runScript('kind-up.sh', ['ipv5'], { fakes: ['docker', 'kind', 'kubectl'] });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown IP family "ipv5" (want ipv6|ipv4|dual)');
    const help = runScript('up.sh', ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('usage: hack/local/up.sh [ipv6|ipv4|dual]');
    expect(help.calls).toEqual([]);
  });

  it('adds a seed only to a garden that runs, of another family, and says how', () => {
    const fakes = ['docker', 'kind', 'kubectl', 'helm'] as const;
    const noGarden = runScript('seed-up.sh', ['dual'], { fakes: [...fakes] });
    expect(noGarden.code).toBe(2);
    expect(noGarden.stderr).toContain('--garden FAMILY is missing');
    const badGarden = runScript('seed-up.sh', ['dual', '--garden', 'ipv5'], { fakes: [...fakes] });
    expect(badGarden.code).toBe(2);
    expect(badGarden.stderr).toContain('unknown IP family "ipv5"');
    const same = runScript('seed-up.sh', ['ipv6', '--garden', 'ipv6'], { fakes: [...fakes] });
    expect(same.code).toBe(1);
    expect(same.stderr).toContain('the seed and the garden would be one cluster (gardener-local-ipv6)');
    const help = runScript('seed-up.sh', ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('usage: hack/local/seed-up.sh [ipv6|ipv4|dual] --garden [ipv6|ipv4|dual]');
    // Every prerequisite is checked before anything is created: no garden, nothing called but the checks.
    const missing = runScript('seed-up.sh', ['dual', '--garden', 'ipv6'], { fakes: [...fakes] });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no kubeconfig of the garden's kind cluster|prerequisite/);
    expect(missing.calls.filter((c) => /^kind (create|get)|^kubectl|^helm/.test(c))).toEqual([]);
  });
});

describe('with Docker (faked)', () => {
  const ALL = ['docker', 'kind', 'kubectl', 'helm'];

  it.each([
    ['ipv6', 'seed-ipv6.yaml', 'shoot-ipv6.yaml', 'local'],
    ['ipv4', 'seed-ipv4.yaml', 'shoot-ipv4.yaml', 'local-v4'],
    ['dual', 'seed-dual-stack.yaml', 'shoot-dual-stack.yaml', 'local-dual'],
  ])('examples.sh %s applies the CloudProfile, then that family’s seed and shoot', (family, seed, shoot, name) => {
    const run = runScript('examples.sh', [family], { fakes: ALL, cluster: true });
    expect(run.code).toBe(0);
    const applied = (file: string) => run.calls.indexOf(`kubectl apply -f ${ROOT}/examples/${file}`);
    expect(applied(seed)).toBeGreaterThan(-1);
    // The Shoot's admission reads the CloudProfile it names: it must be there first.
    expect(applied('cloudprofile-local.yaml')).toBeGreaterThan(-1);
    expect(applied('cloudprofile-local.yaml')).toBeLessThan(applied(shoot));
    expect(run.calls.some((c) => c.includes(`wait shoot/${name} `))).toBe(true);
    // Every kubectl call goes to the kind cluster, whatever KUBECONFIG the user had.
    const seen = run.calls.filter((c) => c.startsWith('  KUBECONFIG=')).map((c) => c.slice('  KUBECONFIG='.length));
    expect(new Set(seen)).toEqual(new Set([join(run.kindDir, `gardener-local-${family}.kubeconfig`)]));
  });

  it('down.sh deletes the cluster, its kubeconfig and the unused kind network', () => {
    const down = runScript('down.sh', ['dual'], { fakes: ALL, cluster: true });
    expect(down.code).toBe(0);
    expect(down.calls).toContain('kind delete cluster --name gardener-local-dual');
    expect(down.calls).toContain('docker network rm kind');
    expect(readdirSync(down.kindDir)).toEqual([]);
  });
});

describe.skipIf(process.getuid?.() !== 0 || which('unshare') === undefined)('docker/engine.sh', () => {
  /**
   * engine.sh in a mount namespace of its own whose /sys/fs/cgroup is an empty tmpfs, plus `mounts` run there first;
   * docker is faked down and dockerd is faked (it records its call and exits), so no engine ever starts.
   */
  function engineIn(mounts: string): Run & { dockerdCalled: boolean } {
    const dir = join(work, `engine-${++runs}`);
    const fakes = join(dir, 'bin');
    mkdirSync(fakes, { recursive: true });
    const log = join(dir, 'calls.log');
    writeFileSync(log, '');
    for (const tool of ['docker', 'dockerd', 'uname']) fakeTool(fakes, tool);
    const script = `mount -t tmpfs -o mode=755 cgroup /sys/fs/cgroup && ${mounts} exec ${BASH} ${join(SCRIPT_DIR, 'docker', 'engine.sh')}`;
    const result = spawnSync('unshare', ['--mount', '--propagation', 'private', BASH, '-c', script], {
      encoding: 'utf8',
      cwd: work,
      env: { PATH: `${fakes}:${hostTools}`, HOME: dir, FAKE_LOG: log, FAKE_DOCKER_DOWN: '1' },
    });
    const calls = readFileSync(log, 'utf8').split('\n').filter(Boolean);
    return {
      code: result.status ?? -1,
      stdout: result.stdout,
      stderr: result.stderr,
      calls,
      kindDir: dir,
      dockerdCalled: calls.some((c) => c.startsWith('dockerd ')),
    };
  }

  it('refuses to start dockerd where no cgroup hierarchy is mounted (as under ip netns exec), saying why', () => {
    const run = engineIn('');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('no cgroup hierarchy is mounted at /sys/fs/cgroup in this mount namespace');
    expect(run.dockerdCalled).toBe(false);
  });

  it('starts dockerd where a cgroup hierarchy is mounted', () => {
    const run = engineIn('mkdir /sys/fs/cgroup/pids && mount -t cgroup -o pids cgroup /sys/fs/cgroup/pids &&');
    expect(run.dockerdCalled).toBe(true);
    // The fake dockerd exits at once, so no engine answers: the script says so instead of hanging.
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('dockerd did not answer');
  });
});
