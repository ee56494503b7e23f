/**
 * The cgroup delegation hook on this host's kernel: run as runc runs it (the container's state on stdin) for a
 * process in a user namespace of its own and for one in ours, in a cgroup of the test's own in every v1 hierarchy.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CGROUP_DELEGATION_HOOK,
  containerdBaseRuntimeSpec,
} from '../../../../src/extensions/provider-local/machine/cgroup-delegation.js';
import { CgroupSubtree, mountedCgroupV1Hierarchies } from '../../../../src/system/cgroups.js';
import { waitFor } from '../../../support/wait.js';

const HOST_UID = 300_000;
const unsupported =
  process.getuid?.() !== 0
    ? 'needs root'
    : mountedCgroupV1Hierarchies().length === 0
      ? 'needs cgroup v1 hierarchies'
      : undefined;

describe('the base runtime spec', () => {
  const defaultSpec = {
    ociVersion: '1.2.1',
    process: { cwd: '/', rlimits: [{ type: 'RLIMIT_NOFILE', hard: 1024, soft: 1024 }], apparmorProfile: 'x' },
    linux: { namespaces: [{ type: 'mount' }], seccomp: { defaultAction: 'SCMP_ACT_ERRNO' } },
    hooks: { createContainer: [{ path: '/kind/bin/mount-product-files.sh' }] },
  };

  it("is containerd's default with the hook, as the CRI plugin uses it: no rlimits, AppArmor or seccomp", () => {
    const spec = containerdBaseRuntimeSpec(defaultSpec, '/etc/containerd/hook');
    expect(spec).toEqual({
      ociVersion: '1.2.1',
      process: { cwd: '/' },
      linux: { namespaces: [{ type: 'mount' }] },
      hooks: {
        createContainer: [{ path: '/kind/bin/mount-product-files.sh' }],
        createRuntime: [{ path: '/etc/containerd/hook', args: ['cgroup-delegation'], timeout: 10 }],
      },
    });
  });

  it('has the hook once, however often it is made', () => {
    const twice = containerdBaseRuntimeSpec(containerdBaseRuntimeSpec(defaultSpec, '/h'), '/h');
    expect(twice.hooks?.createRuntime).toHaveLength(1);
  });
});

describe.skipIf(unsupported !== undefined)('the cgroup delegation hook (needs root and cgroup v1)', () => {
  let dir: string;
  let cgroup: CgroupSubtree | undefined;
  let child: ChildProcess | undefined;

  afterEach(() => {
    child?.kill('SIGKILL');
    cgroup?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A `sleep` in a cgroup of its own, in a user namespace whose root is HOST_UID when `userns`. */
  async function containerProcess(userns: boolean): Promise<{ pid: number; dirs: string[] }> {
    dir = mkdtempSync(join(process.env.GARDENER_IPV6_TMPDIR || tmpdir(), 'gardener-ipv6-test-'));
    cgroup = new CgroupSubtree(`gv6-test-delegation-${process.pid}`);
    cgroup.create();
    // The child joins the cgroup itself, before it runs anything.
    const procs = cgroup.procsFiles().join(' ');
    const command = userns ? 'exec unshare --user sleep 60' : 'exec sleep 60';
    child = spawn('sh', ['-c', `for f in ${procs}; do echo $$ > "$f"; done; ${command}`], { stdio: 'ignore' });
    const pid = child.pid!;
    if (userns) {
      // As a runtime does: the map written from outside, once the namespace exists.
      await waitFor(() => readlinkSync(`/proc/${pid}/ns/user`) !== readlinkSync('/proc/self/ns/user'), {
        timeoutMs: 5_000,
        message: 'the user namespace',
      });
      writeFileSync(`/proc/${pid}/uid_map`, `0 ${HOST_UID} 65536\n`);
      writeFileSync(`/proc/${pid}/setgroups`, 'deny');
      writeFileSync(`/proc/${pid}/gid_map`, `0 ${HOST_UID} 65536\n`);
    }
    return { pid, dirs: cgroup.dirs };
  }

  function runHook(pid: number): { status: number | null; stderr: string } {
    const hook = join(dir, 'hook');
    writeFileSync(hook, CGROUP_DELEGATION_HOOK, { mode: 0o755 });
    const r = spawnSync(hook, [], { input: JSON.stringify({ ociVersion: '1.2.1', id: 'c', pid, bundle: dir }) });
    return { status: r.status, stderr: r.stderr.toString() };
  }

  it("gives a user namespace's root its cgroup in every hierarchy, and none of its own limits", async () => {
    const { pid, dirs } = await containerProcess(true);
    expect(runHook(pid)).toEqual({ status: 0, stderr: '' });
    for (const d of dirs) {
      for (const f of ['', 'cgroup.procs', 'tasks', 'cgroup.clone_children']) {
        expect(statSync(join(d, f)).uid, join(d, f)).toBe(HOST_UID);
        expect(statSync(join(d, f)).gid, join(d, f)).toBe(HOST_UID);
      }
    }
    const limits = dirs.flatMap((d) =>
      ['memory.limit_in_bytes', 'pids.max', 'cpu.shares'].map((f) => join(d, f)).filter(existsSync),
    );
    expect(limits.length).toBeGreaterThan(0);
    for (const f of limits) expect(statSync(f).uid, f).toBe(0);
  });

  it('leaves the cgroups of a process in our user namespace alone', async () => {
    const { pid, dirs } = await containerProcess(false);
    expect(runHook(pid)).toEqual({ status: 0, stderr: '' });
    for (const d of dirs) expect(statSync(d).uid, d).toBe(0);
  });

  it('fails, saying why, without a pid in the state', () => {
    dir = mkdtempSync(join(process.env.GARDENER_IPV6_TMPDIR || tmpdir(), 'gardener-ipv6-test-'));
    const hook = join(dir, 'hook');
    writeFileSync(hook, CGROUP_DELEGATION_HOOK, { mode: 0o755 });
    const r = spawnSync(hook, [], { input: '{"id":"c"}' });
    expect(r.status).toBe(1);
    expect(r.stderr.toString()).toMatch(/no pid in the container's state/);
  });
});
