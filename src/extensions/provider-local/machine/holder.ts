/**
 * A machine's namespace holder: a `pause` process in a mount and cgroup namespace of its own (and the machine's
 * network namespace) that holds the machine's mounts, and how commands and files get into the machine through it.
 * The state dir it mounts from is prepared here too.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { lstat, mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { mountedCgroupV1Hierarchies, type CgroupSubtree } from '../../../system/cgroups.js';
import { startProcess, which, type ManagedProcess, type StartOptions } from '../../../system/process.js';
import { directoryTarget } from '../node-agent/node-agent.js';

/** Writes its pid into the cgroup.procs files in $GIPV6_CGROUP_PROCS, then execs the rest of the command line. */
const MOVE_INTO_CGROUP = [
  '/bin/sh',
  '-c',
  'for f in $GIPV6_CGROUP_PROCS; do echo $$ > "$f"; done; unset GIPV6_CGROUP_PROCS; exec "$@"',
  'cgroup-move',
];

/**
 * The holder's setup, run inside the new mount and cgroup namespaces (and the machine's network namespace), then
 * `exec pause`. $1 is the state dir, $2 the pause binary, $3 `fresh` for a sysfs of the machine's own network
 * namespace (a machine pod keeps the one of its pod's), the rest `dir:options` of the cgroup hierarchies.
 * Order matters when the state dir lies below one of the folders mounted over: /var and /run come last.
 */
const HOLDER_SETUP = `set -e
state="$1"; pause="$2"; sysfs="$3"; shift 3
if [ "$sysfs" = fresh ]; then mount -t sysfs sysfs /sys; fi
mount -t tmpfs -o mode=755 cgroup /sys/fs/cgroup
for h in "$@"; do
  dir="\${h%%:*}"; opts="\${h#*:}"
  mkdir -p "/sys/fs/cgroup/$dir"
  mount -t cgroup -o "$opts" cgroup "/sys/fs/cgroup/$dir"
done
mkdir -p /opt /var /run
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$state/etc,workdir=$state/.etc-work" /etc
mount --bind "$state/opt" /opt
mount --bind "$state/var" /var
mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /run/lock /run/netns
touch /run/.gardener-ipv6-machine-ready
exec "$pause"
`;

export interface HolderOptions {
  /** The machine's name, for errors. */
  name: string;
  stateDir: string;
  /** The folder with the machine's binaries (pause among them). */
  binDir: string;
  /** The machine's own network namespace; undefined to stay in the one we run in. */
  netns: string | undefined;
  cgroup: CgroupSubtree;
}

/** The environment of the machine's processes: its binaries first on PATH. */
function machineEnv(binDir: string): NodeJS.ProcessEnv {
  return {
    PATH: `${binDir}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
    HOME: '/root',
  };
}

/** The folders of the state dir the holder mounts, and the links /var keeps to /run. */
export async function prepareStateDir(stateDir: string): Promise<void> {
  const s = stateDir;
  for (const dir of [
    'etc',
    '.etc-work',
    'opt/cni/bin',
    'var/lib/kubelet',
    'var/lib/containerd',
    'var/log',
    'var/tmp',
    'logs',
  ]) {
    await mkdir(join(s, dir), { recursive: true });
  }
  for (const [link, target] of [
    ['var/run', '/run'],
    ['var/lock', '/run/lock'],
  ] as const) {
    // lstat, not exists: the link dangles where the caller has no such folder (a machine image without /run).
    const present = await lstat(join(s, link)).then(
      () => true,
      () => false,
    );
    if (!present) await symlink(target, join(s, link));
  }
}

export class NamespaceHolder {
  readonly process: ManagedProcess;

  /** Starts the holder; `ready()` says when its mounts are there. */
  constructor(private readonly o: HolderOptions) {
    const hierarchies = mountedCgroupV1Hierarchies().map((h) => `${h.mountPoint.split('/').pop()}:${h.options}`);
    this.process = startProcess({
      name: 'holder',
      command: '/bin/sh',
      args: [
        '-c',
        HOLDER_SETUP,
        'machine-holder',
        o.stateDir,
        join(o.binDir, 'pause'),
        o.netns !== undefined ? 'fresh' : 'keep',
        ...hierarchies,
      ],
      logFile: join(o.stateDir, 'logs', 'holder.log'),
      wrap: [
        ...MOVE_INTO_CGROUP,
        ...(o.netns !== undefined ? [which('nsenter') ?? 'nsenter', `--net=/run/netns/${o.netns}`, '--'] : []),
        which('unshare') ?? 'unshare',
        '--cgroup',
        '--mount',
        '--propagation',
        'private',
        '--',
      ],
      env: { ...machineEnv(o.binDir), GIPV6_CGROUP_PROCS: o.cgroup.procsFiles().join(' ') },
    });
  }

  get pid(): number {
    return this.process.pid;
  }

  /** The machine's root as seen from here (through the holder's mount namespace). */
  get rootDir(): string {
    return `/proc/${this.process.pid}/root`;
  }

  /** Resolves once the holder's mounts are there; fails with its output when it exits first or takes 10 s. */
  async ready(): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!existsSync(`/proc/${this.process.pid}/root/run/.gardener-ipv6-machine-ready`)) {
      if (this.process.exit() !== undefined || Date.now() > deadline) {
        throw new Error(`machine ${this.o.name}: namespace setup failed:\n${this.process.tail()}`);
      }
      await sleep(20);
    }
  }

  /** The command prefix that enters the machine's mount, network and cgroup namespaces (through the holder). */
  private enter(): string[] {
    return [which('nsenter') ?? 'nsenter', `--target=${this.process.pid}`, '--mount', '--net', '--cgroup', '--'];
  }

  /** How to start a command inside the machine, in the cgroup `system` of the machine. */
  spec(name: string, command: string, args: string[]): StartOptions {
    return {
      name,
      command,
      args,
      logFile: join(this.o.stateDir, 'logs', `${name}.log`),
      wrap: [...MOVE_INTO_CGROUP, ...this.enter()],
      env: { ...machineEnv(this.o.binDir), GIPV6_CGROUP_PROCS: this.o.cgroup.procsFiles('system').join(' ') },
    };
  }

  /** Runs a command inside the machine to completion; stdin from a file when given. */
  exec(command: string, args: string[], stdinFile?: string, timeoutMs = 120_000): Promise<string> {
    const argv = [...this.enter(), command, ...args];
    return new Promise((resolve, reject) => {
      // The file itself as stdin, not a pipe: ctr seeks past content it has.
      const stdin = stdinFile !== undefined ? openSync(stdinFile, 'r') : 'ignore';
      let child: ChildProcessByStdio<null, Readable, Readable>;
      try {
        child = spawn(argv[0]!, argv.slice(1), {
          env: machineEnv(this.o.binDir),
          stdio: [stdin, 'pipe', 'pipe'],
        }) as ChildProcessByStdio<null, Readable, Readable>;
      } finally {
        if (typeof stdin === 'number') closeSync(stdin);
      }
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (out += c.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        if (code === 0) resolve(out);
        else
          reject(new Error(`${command} ${args.join(' ')} in machine ${this.o.name} failed (${code}): ${out.trim()}`));
      });
    });
  }
}

/** Writes a file inside a machine, below its root as seen from here. */
export async function writeFileInside(rootDir: string, path: string, content: string, mode = 0o644): Promise<void> {
  await directoryTarget({ rootDir }).writeFile(path, Buffer.from(content), mode);
}
