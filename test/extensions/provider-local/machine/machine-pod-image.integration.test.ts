/**
 * The machine pods' image in a machine's containerd: built (content-addressed, in the project's image cache),
 * imported with `ctr images import` as a Machine imports its images, and run with `ctr run`: node runs the agent
 * bundle, and the host tools, the kubelet and the shell find what they need inside the image alone.
 *
 * containerd runs with a machine's config (containerdConfig) in a private mount namespace whose /run and /var/lib
 * are the test's own, as in a machine, and in a cgroup named like a machine's (which the machine janitor removes if
 * the test dies): the shims, runc and the containers' cgroups (paths relative to runc's own) are all below it.
 */
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEBIAN_STATIC_BUSYBOX } from '../../../../src/extensions/provider-local/machine/images.js';
import { type BuiltImage } from '../../../../src/extensions/provider-local/machine/image-archive.js';
import {
  HOST_TOOLS_PATH,
  MACHINE_HOST_TOOLS,
  MACHINE_POD_CNI_DIR,
  MACHINE_POD_IMAGE,
  buildMachinePodImage,
} from '../../../../src/extensions/provider-local/machine/pod-image.js';
import { MACHINE_BINARIES } from '../../../../src/extensions/provider-local/machine/machine-options.js';
import { machineID } from '../../../../src/extensions/provider-local/machine/janitor.js';
import { MACHINE_PATHS, containerdConfig } from '../../../../src/extensions/provider-local/machine/config.js';
import { startProcess, which, type ManagedProcess } from '../../../../src/system/process.js';
import { projectRoot } from '../../../../src/system/project.js';
import { CgroupSubtree, mountedCgroupV1Hierarchies } from '../../../../src/system/cgroups.js';
import { BIN_DIR } from './shoot-env.js';

function unsupportedReason(): string | undefined {
  if (process.getuid?.() !== 0) return 'containerd needs root';
  const missing = MACHINE_BINARIES.filter((b) => !existsSync(join(BIN_DIR, b)));
  if (missing.length > 0) return `missing binaries in ${BIN_DIR}: ${missing.join(', ')}`;
  const tools = Object.keys(MACHINE_HOST_TOOLS).filter((t) => which(t, HOST_TOOLS_PATH) === undefined);
  if (tools.length > 0) return `missing host tools: ${tools.join(', ')}`;
  if (!existsSync(DEBIAN_STATIC_BUSYBOX)) return 'no /bin/busybox (apt-get install busybox-static)';
  if (mountedCgroupV1Hierarchies().length === 0) return 'no cgroup v1 hierarchies';
  return undefined;
}

/**
 * containerd's cgroup (the cgroup.procs files in $PROCS) and mount namespace: its own /run (a tmpfs) and /var/lib (a
 * folder of the test), then containerd.
 */
const CONTAINERD_SETUP = `set -e
for f in $PROCS; do echo $$ > "$f"; done
dir="$1"; shift
mount -t tmpfs -o mode=755 tmpfs /run
mount --bind "$dir/var-lib" /var/lib
exec "$@"
`;

const reason = unsupportedReason();

describe.runIf(reason === undefined).sequential("the machine pods' image in a machine's containerd", () => {
  let dir: string;
  let image: BuiltImage;
  let containerd: ManagedProcess | undefined;
  const cgroup = new CgroupSubtree(machineID('pod-image-test'));
  const env = { PATH: `${BIN_DIR}:${HOST_TOOLS_PATH}`, HOME: '/root' };

  /** ctr inside containerd's mount namespace; stdin from a file when given. */
  const ctr = (args: string[], stdinFile?: string, timeoutMs = 60_000) => {
    const stdin = stdinFile === undefined ? 'ignore' : openSync(stdinFile, 'r');
    try {
      return spawnSync(
        which('nsenter') ?? 'nsenter',
        [
          `--target=${containerd!.pid}`,
          '--mount',
          '--',
          join(BIN_DIR, 'ctr'),
          '--address',
          MACHINE_PATHS.containerdSocket,
          ...args,
        ],
        { encoding: 'utf8', env, timeout: timeoutMs, stdio: [stdin, 'pipe', 'pipe'] },
      );
    } finally {
      if (typeof stdin === 'number') closeSync(stdin);
    }
  };

  let runs = 0;
  /**
   * Runs a command in a new container of the image; its exit code, stdout, and stdout and stderr. The command writes
   * both to files of a bind-mounted folder rather than through ctr's FIFOs: ctr may end before it has copied what a
   * short-lived task printed, and it adds warnings of its own (containerd's cgroup v1 deprecation) on stderr.
   */
  const runInImage = (command: string[]) => {
    const id = `pod-image-test-${++runs}`;
    const out = join(dir, id);
    mkdirSync(out);
    const result = ctr([
      '-n',
      'k8s.io',
      'run',
      '--rm',
      '--snapshotter',
      'overlayfs',
      // Relative: below runc's own cgroup, containerd's.
      '--cgroup',
      id,
      '--mount',
      `type=bind,src=${out},dst=/out,options=rbind:rw`,
      MACHINE_POD_IMAGE,
      id,
      'sh',
      '-c',
      'exec "$@" >/out/stdout 2>/out/stderr',
      'sh',
      ...command,
    ]);
    const read = (name: string) => (existsSync(join(out, name)) ? readFileSync(join(out, name), 'utf8') : '');
    const stdout = read('stdout');
    if (result.status !== 0 && stdout === '' && read('stderr') === '') {
      process.stderr.write(`[machine pod image] ctr run ${id}: ${result.stderr}\n`);
    }
    return { status: result.status, stdout, output: `${stdout}${read('stderr')}` };
  };

  beforeAll(async () => {
    const started = Date.now();
    image = await buildMachinePodImage(BIN_DIR, join(projectRoot(), '.cache', 'images'));
    const builtMs = Date.now() - started;
    dir = mkdtempSync(join(process.env.GARDENER_IPV6_TMPDIR || tmpdir(), 'machine-pod-image-'));
    mkdirSync(join(dir, 'var-lib'));
    cgroup.create();
    writeFileSync(join(dir, 'config.toml'), containerdConfig({ runcBinary: join(BIN_DIR, 'runc') }));
    containerd = startProcess({
      name: 'containerd',
      command: '/bin/sh',
      args: [
        '-c',
        CONTAINERD_SETUP,
        'containerd-namespace',
        dir,
        join(BIN_DIR, 'containerd'),
        '--config',
        join(dir, 'config.toml'),
      ],
      logFile: join(dir, 'containerd.log'),
      wrap: [which('unshare') ?? 'unshare', '--mount', '--propagation', 'private', '--'],
      env: { ...env, PROCS: cgroup.procsFiles().join(' ') },
    });
    const deadline = Date.now() + 30_000;
    while (ctr(['version'], undefined, 5_000).status !== 0) {
      if (containerd.exit() !== undefined || Date.now() > deadline) {
        throw new Error(`containerd did not come up:\n${containerd.tail()}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    const importStarted = Date.now();
    // As a Machine imports its images.
    const imported = ctr(
      ['-n', 'k8s.io', 'images', 'import', '--snapshotter', 'overlayfs', '--digests', '-'],
      image.archive,
      180_000,
    );
    if (imported.status !== 0) throw new Error(`ctr images import: ${imported.stderr}`);
    const size = Math.round(statSync(image.archive).size / 2 ** 20);
    process.stderr.write(
      `[machine pod image] ${size} MiB, built or found in ${builtMs}ms, imported in ${Date.now() - importStarted}ms\n`,
    );
  }, 300_000);

  afterAll(async () => {
    await containerd?.stop(5_000);
    cgroup.destroy();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('is in containerd under its name and digest', () => {
    const list = ctr(['-n', 'k8s.io', 'images', 'list', '--quiet']);
    expect(list.stdout.split('\n')).toContain(MACHINE_POD_IMAGE);
    const check = ctr(['-n', 'k8s.io', 'images', 'list', `name==${MACHINE_POD_IMAGE}`]);
    expect(check.stdout).toContain(image.manifestDigest);
  });

  it('runs the agent bundle with node', () => {
    const run = runInImage([process.execPath, '/usr/local/lib/gardener-ipv6/agent/gardener-ipv6.mjs', '--version']);
    expect(run.output).toMatch(/^gardener-ipv6 \d+\.\d+\.\d+/);
    expect(run.status).toBe(0);
  });

  it.each([
    [['nft', '--version'], /^nftables v/],
    [['ip', '-V'], /^ip utility, iproute2-/],
    [['nsenter', '--version'], /^nsenter from util-linux/],
    [['/usr/local/lib/gardener-ipv6/bin/kubelet', '--version'], /^Kubernetes v/],
    [['conntrack', '--version'], /^conntrack v/],
    [['bridge', '-V'], /^bridge utility, /],
  ])('runs %j from the image', (command, output) => {
    const run = runInImage(command);
    expect(run.output).toMatch(output);
    expect(run.status).toBe(0);
  });

  it("has a shell that runs util-linux's mount and sysctl from procps, not busybox's applets", () => {
    const run = runInImage([
      'sh',
      '-c',
      `command -v mount umount unshare sysctl ip; mount --version; sysctl --version; setpriv --version; ls ${MACHINE_POD_CNI_DIR}`,
    ]);
    expect(run.status).toBe(0);
    expect(run.output).toContain('/usr/bin/mount\n');
    expect(run.output).toMatch(/^mount from util-linux/m);
    expect(run.output).toMatch(/^sysctl from procps-ng/m);
    expect(run.output).toMatch(/^setpriv from util-linux/m);
    expect(run.output).toMatch(/^bridge\ngardener-ipv6-network-policy\nhost-local\nloopback\nportmap$/m);
  });

  it("runs a machine's shell commands with busybox's applets", () => {
    const run = runInImage(['sh', '-c', 'mkdir -p /tmp/a && touch /tmp/a/b && ls /tmp/a && cat /proc/1/comm']);
    expect(run.stdout).toBe('b\nsh\n');
    expect(run.status).toBe(0);
  });
});
