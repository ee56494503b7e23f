/**
 * cgroup v1 subtrees for groups of processes that must be found, counted and killed as one (a machine and
 * everything it starts, including container processes that are no children of ours): a folder of the same name
 * in every hierarchy, below the cgroup this process runs in.
 *
 * Synchronous: cleanup runs from `exit` handlers too.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface CgroupHierarchy {
  /** Where it is mounted here, e.g. `/sys/fs/cgroup/memory`. */
  mountPoint: string;
  /** Mount options that select it: `memory`, `cpu,cpuacct`, `none,name=systemd`. */
  options: string;
  /** The controllers (or `name=...`) of the hierarchy, as in /proc/self/cgroup. */
  controllers: string[];
  /** The cgroup of this process in it, e.g. `/` or `/process_api/abc`. */
  ownPath: string;
}

/** The cgroup v1 hierarchies mounted here with this process's place in each; empty on a pure cgroup v2 host. */
export function cgroupV1Hierarchies(
  mountinfo = readFileSync('/proc/self/mountinfo', 'utf8'),
  ownCgroups = readFileSync('/proc/self/cgroup', 'utf8'),
): CgroupHierarchy[] {
  const own = new Map<string, string>();
  for (const line of ownCgroups.split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line);
    if (m && m[1]) own.set(m[1], m[2]!);
  }
  const hierarchies: CgroupHierarchy[] = [];
  const seen = new Set<string>();
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const [fstype, , superOptions] = right.split(' ');
    if (fstype !== 'cgroup' || superOptions === undefined) continue;
    const fields = left.split(' ');
    const mountPoint = fields[4]!;
    // The part of the hierarchy mounted here: `/` on a host, the container's own cgroup in a container (runc
    // bind-mounts it without a cgroup namespace), which /proc/self/cgroup names in full.
    const mountRoot = fields[3]!;
    const controllers = superOptions
      .split(',')
      .filter(
        (o) =>
          o !== 'rw' &&
          o !== 'ro' &&
          o !== 'none' &&
          !o.startsWith('release_agent') &&
          o !== 'clone_children' &&
          o !== 'noprefix' &&
          o !== 'xattr',
      );
    const key = [...controllers].sort().join(',');
    if (controllers.length === 0 || seen.has(key)) continue;
    seen.add(key);
    const ownPath = relativeTo(mountRoot, own.get(controllers.join(',')) ?? own.get(key) ?? '/');
    const options = controllers.some((c) => c.startsWith('name='))
      ? ['none', ...controllers].join(',')
      : controllers.join(',');
    hierarchies.push({ mountPoint, options, controllers, ownPath });
  }
  return hierarchies;
}

/** `path` as seen below a mount of `root`: `/a/b` below `/a` is `/b`. */
function relativeTo(root: string, path: string): string {
  if (root === '/' || root === '') return path;
  if (path === root) return '/';
  return path.startsWith(`${root}/`) ? path.slice(root.length) : path;
}

/**
 * Mounts a tmpfs at /sys/fs/cgroup and each hierarchy in $@ (`memory`, `name=systemd`) below it, unless something is
 * mounted at /sys/fs/cgroup already (by the host, or by another process that held the lock before).
 */
const MOUNT_CGROUP_V1 = `set -e
mountpoint -q /sys/fs/cgroup && exit 0
mount -t tmpfs -o mode=755 cgroup /sys/fs/cgroup
for controllers in "$@"; do
  case "$controllers" in
    name=*) dir="/sys/fs/cgroup/\${controllers#name=}"; options="none,$controllers" ;;
    *) dir="/sys/fs/cgroup/$controllers"; options="$controllers" ;;
  esac
  mkdir -p "$dir"
  mount -t cgroup -o "$options" cgroup "$dir"
done
`;

/**
 * The cgroup v1 hierarchies, mounting them under /sys/fs/cgroup first when this process belongs to v1 hierarchies
 * that are not mounted in its mount namespace: `ip netns exec` mounts a fresh sysfs over /sys, which hides the
 * host's cgroup mounts (and its mount namespace is private, so mounting them again there changes nothing outside).
 */
export function mountedCgroupV1Hierarchies(): CgroupHierarchy[] {
  const found = cgroupV1Hierarchies();
  const wanted: string[] = [];
  for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
    const m = /^\d+:([^:]+):/.exec(line);
    if (m) wanted.push(m[1]!);
  }
  if (found.length >= wanted.length) return found;
  // Fewer than this process belongs to: hidden, or being mounted by another process of this mount namespace (test
  // files side by side). One mounts at a time, under a lock on /sys/fs (which nothing mounts over); the others wait
  // and find them all.
  execFileSync('flock', ['/sys/fs', 'sh', '-c', MOUNT_CGROUP_V1, 'mount-cgroup-v1', ...wanted], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return cgroupV1Hierarchies();
}

/** A named cgroup in every v1 hierarchy, below our own cgroup in each. */
export class CgroupSubtree {
  readonly dirs: string[];

  constructor(
    readonly name: string,
    readonly hierarchies: readonly CgroupHierarchy[] = mountedCgroupV1Hierarchies(),
  ) {
    if (hierarchies.length === 0) {
      throw new Error(
        'no cgroup v1 hierarchies are mounted: machines need a cgroup v1 host (cgroup v2 is not supported yet)',
      );
    }
    this.dirs = hierarchies.map((h) => join(h.mountPoint, h.ownPath, name));
  }

  /** Creates the folders (and `child` below them); cpuset folders get their parent's CPUs and memory nodes. */
  create(child?: string): void {
    for (const dir of this.dirs) {
      for (const d of child ? [dir, join(dir, child)] : [dir]) {
        if (!existsSync(d)) mkdirSync(d);
        const cpus = join(d, 'cpuset.cpus');
        if (existsSync(cpus) && readFileSync(cpus, 'utf8').trim() === '') {
          writeFileSync(cpus, readFileSync(join(d, '..', 'cpuset.cpus'), 'utf8'));
          writeFileSync(join(d, 'cpuset.mems'), readFileSync(join(d, '..', 'cpuset.mems'), 'utf8'));
        }
      }
    }
  }

  /** The `cgroup.procs` files of `child` in every hierarchy, for a process to write its pid into. */
  procsFiles(child?: string): string[] {
    return this.dirs.map((dir) => join(child ? join(dir, child) : dir, 'cgroup.procs'));
  }

  /** Every pid in the subtree (from one hierarchy that has them all: the first). */
  pids(): number[] {
    const pids = new Set<number>();
    for (const dir of this.dirs) for (const pid of subtreePids(dir)) pids.add(pid);
    return [...pids];
  }

  /** SIGKILLs everything in the subtree, waits (up to timeoutMs) until it is empty, then removes the folders. */
  destroy(timeoutMs = 10_000): void {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const pids = this.pids();
      if (pids.length === 0) break;
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
      if (Date.now() > deadline) throw new Error(`cgroup ${this.name}: processes ${pids.join(', ')} did not go away`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    }
    for (const dir of this.dirs) removeTree(dir, deadline);
  }

  exists(): boolean {
    return this.dirs.some((dir) => existsSync(dir));
  }
}

function subtreePids(dir: string): number[] {
  if (!existsSync(dir)) return [];
  const pids: number[] = [];
  try {
    for (const line of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n')) if (line) pids.push(Number(line));
    for (const entry of readdirSync(dir)) {
      const sub = join(dir, entry);
      if (statSync(sub).isDirectory()) pids.push(...subtreePids(sub));
    }
  } catch {
    // Removed meanwhile.
  }
  return pids;
}

/**
 * Removes a cgroup and its children, deepest first. A process that has begun to exit is no longer listed in
 * `cgroup.procs` but keeps its cgroup busy until the kernel has torn it down (its memory, its files), so `EBUSY`
 * is retried until the deadline.
 */
function removeTree(dir: string, deadline: number): void {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir)) {
    const sub = join(dir, entry);
    try {
      if (statSync(sub).isDirectory()) removeTree(sub, deadline);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EBUSY') throw e;
      // Removed meanwhile.
    }
  }
  for (;;) {
    try {
      rmdirSync(dir);
      return;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code !== 'EBUSY' || Date.now() > deadline) throw e;
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
  }
}

/** Names of the subtrees directly below our own cgroup (in the first hierarchy) that match, for janitors. */
export function listSubtrees(
  match: RegExp,
  hierarchies: readonly CgroupHierarchy[] = mountedCgroupV1Hierarchies(),
): string[] {
  const names = new Set<string>();
  for (const h of hierarchies) {
    const dir = join(h.mountPoint, h.ownPath);
    try {
      for (const entry of readdirSync(dir)) if (match.test(entry)) names.add(entry);
    } catch {
      // Not readable.
    }
  }
  return [...names];
}
