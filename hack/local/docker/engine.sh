#!/usr/bin/env bash
# Makes sure a Docker engine answers. When none does and this is Linux as root with dockerd installed (Debian's
# docker.io) but no service manager started it, starts dockerd in the background (log and pid under
# .cache/docker/), and waits until it answers. What this host lacks is detected, not assumed:
#   - a bounding set without capabilities the kernel knows (CAP_SYS_RESOURCE in some sandboxes): Docker 20.10's
#     privileged containers (kind's nodes) would fail with "unable to apply caps", so dockerd gets
#     runc-without-missing-caps as its default runtime.
# Usage: hack/local/docker/engine.sh [--stop]   (--stop ends a dockerd this script started)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
HERE="$ROOT/hack/local/docker"
STATE="$ROOT/.cache/docker"
log() { printf '[hack/local/docker/engine.sh] %s\n' "$*" >&2; }
die() {
  printf '[hack/local/docker/engine.sh] error: %s\n' "$*" >&2
  exit 1
}

if [[ "${1:-}" == --stop ]]; then
  if [[ -f "$STATE/dockerd.pid" ]] && kill -0 "$(cat "$STATE/dockerd.pid")" 2>/dev/null; then
    pid="$(cat "$STATE/dockerd.pid")"
    kill "$pid"
    # dockerd stops its containers and its containerd first: wait for it, so nothing of it runs on.
    for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && die "dockerd $pid did not stop within 30 s"
    log "stopped dockerd $pid"
  fi
  rm -f "$STATE/dockerd.pid"
  exit 0
fi

docker info >/dev/null 2>&1 && exit 0
command -v docker >/dev/null || die "the docker command is missing: apt-get install docker.io"
[[ "$(uname -s)" == Linux && "$(id -u)" == 0 ]] ||
  die "no Docker engine answers (docker info) and only root on Linux can start one here: start Docker and retry"
command -v dockerd >/dev/null || die "no Docker engine answers and dockerd is not installed: apt-get install docker.io"

# Capabilities the kernel knows but this process can't hold.
missing_caps() {
  local bounding last
  bounding=$((16#$(awk '/^CapBnd:/ { print $2 }' /proc/self/status)))
  last="$(cat /proc/sys/kernel/cap_last_cap)"
  [[ $(((1 << (last + 1)) - 1)) -ne $((bounding & ((1 << (last + 1)) - 1))) ]]
}

# dockerd needs the cgroup hierarchies at /sys/fs/cgroup; `ip netns exec` (and `unshare -m` with a new sysfs)
# hides them, and a dockerd started there would not be the host's anyway. (A hidden mount still shows in
# /proc/self/mountinfo: what counts is what the folders are.)
cgroups_visible() {
  local dir
  [[ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" == cgroup2fs ]] && return 0
  for dir in /sys/fs/cgroup/*/; do
    [[ "$(stat -fc %T "$dir" 2>/dev/null)" == cgroupfs ]] && return 0
  done
  return 1
}
cgroups_visible ||
  die "no cgroup hierarchy is mounted at /sys/fs/cgroup in this mount namespace (ip netns exec hides the host's): start dockerd from the host's mount namespace"

mkdir -p "$STATE"
args=(--host unix:///var/run/docker.sock --pidfile "$STATE/dockerd.pid")
if missing_caps; then
  command -v jq >/dev/null || die "this host's processes lack capabilities Docker 20.10 grants privileged containers; the runtime wrapper that drops them needs jq: apt-get install jq"
  log "this host's bounding set lacks capabilities the kernel knows: dockerd runs containers through hack/local/docker/runc-without-missing-caps"
  args+=(--add-runtime "gv6-runc=$HERE/runc-without-missing-caps" --default-runtime gv6-runc)
fi
log "starting dockerd (log: ${STATE#"$ROOT"/}/dockerd.log)"
setsid dockerd "${args[@]}" >"$STATE/dockerd.log" 2>&1 </dev/null &
for _ in $(seq 60); do
  docker info >/dev/null 2>&1 && {
    log "Docker $(docker info --format '{{.ServerVersion}}') answers"
    exit 0
  }
  kill -0 $! 2>/dev/null || break
  sleep 1
done
tail -n 20 "$STATE/dockerd.log" >&2
die "dockerd did not answer within 60 s (log: $STATE/dockerd.log)"
