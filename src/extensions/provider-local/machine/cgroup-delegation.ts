/**
 * Cgroup delegation to user namespaces, for a machine whose containerd runs machine pods with `hostUsers: false`
 * (a seed Node). Such a pod's root is an unprivileged user of the host, so the cgroups runc made for it belong to
 * the host's root and the containerd and kubelet inside can't make the cgroups of their own pods. On cgroup v2,
 * systemd and runc delegate a container's cgroup to it; on cgroup v1 (this host) nobody does, so a hook does what
 * the kernel's delegation model asks: the container's cgroup folder in every v1 hierarchy, with its `cgroup.procs`,
 * `tasks` and `cgroup.clone_children`, is given to the user the container's root is on the host. Its own limit
 * files stay the host root's: the machine makes and limits cgroups below its own, and can't raise its own limits.
 *
 * The hook is an OCI `createRuntime` hook in containerd's base runtime spec: runc runs it in the runtime's
 * namespaces once the container's cgroups exist and before the container's process runs. Containers without a user
 * namespace of their own (identity uid map) are left alone.
 */

/** The hook: the container's state (JSON with its `pid`) on stdin, per the OCI runtime spec. */
export const CGROUP_DELEGATION_HOOK = `#!/bin/sh
# OCI createRuntime hook: gives the cgroups (v1) of a container in a user namespace of its own to that namespace's
# root, so that it can make and limit cgroups below its own. Written by gardener-ipv6 (cgroup-delegation.ts).
set -eu
pid=$(tr -d '\\n' | sed -n 's/.*"pid": *\\([0-9][0-9]*\\).*/\\1/p')
if [ -z "$pid" ]; then echo "cgroup delegation: no pid in the container's state" >&2; exit 1; fi
uid=$(awk '$1 == 0 { print $2 }' "/proc/$pid/uid_map")
gid=$(awk '$1 == 0 { print $2 }' "/proc/$pid/gid_map")
# Root of the host's user namespace, or no root at all: nothing to delegate.
if [ -z "$uid" ] || [ "$uid" = 0 ] || [ -z "$gid" ]; then exit 0; fi
# The container's folder in every v1 hierarchy mounted here: /proc/PID/cgroup and mountinfo's roots are both
# relative to our cgroup namespace.
awk '
  FNR == NR {
    for (i = 1; i <= NF && $i != "-"; i++) {}
    if ($(i + 1) != "cgroup") next
    n = split($(i + 3), opts, ",")
    key = ""
    for (j = 1; j <= n; j++) if (opts[j] != "rw" && opts[j] != "ro" && opts[j] !~ /^(xattr|release_agent|clone_children|noprefix|cpuset_v2_mode)/) key = key "," opts[j]
    mount[key] = $5; root[key] = $4
    next
  }
  {
    split($0, f, ":"); if (f[2] == "") next
    path = substr($0, length(f[1]) + length(f[2]) + 3)
    n = split(f[2], c, ","); key = ""
    for (j = 1; j <= n; j++) key = key "," c[j]
    if (!(key in mount)) next
    if (root[key] != "/") { if (index(path, root[key]) != 1) next; path = substr(path, length(root[key]) + 1) }
    print mount[key] path
  }
' /proc/self/mountinfo "/proc/$pid/cgroup" | while IFS= read -r dir; do
  for f in "$dir" "$dir/cgroup.procs" "$dir/tasks" "$dir/cgroup.clone_children"; do
    if [ -e "$f" ]; then chown "$uid:$gid" "$f"; fi
  done
done
`;

interface RuntimeSpec {
  process?: Record<string, unknown>;
  linux?: Record<string, unknown>;
  hooks?: { createRuntime?: { path: string; args?: string[]; timeout?: number }[] } & Record<string, unknown>;
  [key: string]: unknown;
}

/** How long runc waits for the hook, in seconds. */
const HOOK_TIMEOUT_SECONDS = 10;

/**
 * containerd's base runtime spec with the delegation hook. `defaultSpec` is containerd's default (`ctr oci spec`);
 * without a base spec, the CRI plugin takes that default and removes its rlimits, AppArmor and seccomp profiles
 * (the pod's security context sets its own), so they are removed here too. The rlimits matter most: runc sets them
 * on a container's process from outside, which needs CAP_SYS_RESOURCE over a user namespace it doesn't own.
 */
export function containerdBaseRuntimeSpec(defaultSpec: RuntimeSpec, hookPath: string): RuntimeSpec {
  const { rlimits: _rlimits, apparmorProfile: _apparmor, ...process } = defaultSpec.process ?? {};
  const { seccomp: _seccomp, ...linux } = defaultSpec.linux ?? {};
  const hooks = defaultSpec.hooks ?? {};
  const others = (hooks.createRuntime ?? []).filter((h) => h.path !== hookPath);
  return {
    ...defaultSpec,
    process,
    linux,
    hooks: {
      ...hooks,
      createRuntime: [...others, { path: hookPath, args: ['cgroup-delegation'], timeout: HOOK_TIMEOUT_SECONDS }],
    },
  };
}
