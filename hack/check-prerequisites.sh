#!/usr/bin/env bash
# Checks what the project needs from the machine before anything is built or started, and names everything that is
# missing in one message, with the one command that installs it. The one list of prerequisites: hack/ensure-binaries.sh
# runs it before a build, `gardener-ipv6 up` before it starts anything, and `npm test` (hack/test-in-netns.mjs) before
# the tests; `all` is every path of the README at once, the first step on a new machine (with --install it also
# installs what is missing). .ci/run installs the same Debian packages.
#
# Usage: hack/check-prerequisites.sh build [NAME...] [--install]
#        hack/check-prerequisites.sh up [--ipv6-only] [--no-machines] [--raise-sysctls] [--build-binaries[=NAME,...]]
#                                       [--install]
#        hack/check-prerequisites.sh test [--build-binaries[=NAME,...]] [--install]
#        hack/check-prerequisites.sh all [--install]
#   build   building binaries with hack/ensure-binaries.sh (NAMEs as there; default: all of them):
#             Go >= MIN_GO_VERSION (hack/versions.env); for pause and runc gcc and libc6-dev (a static C program,
#             runc's cgo); for runc pkg-config and libseccomp-dev (runc with seccomp); for agnhost-rootfs debootstrap
#   up      `gardener-ipv6 up`: Node >= package.json's engines, BIND9, openssl, util-linux (setpriv);
#             as root, where `up` gives shoots control planes and machines, iproute2 and, unless --no-machines,
#             what the machines need: util-linux (nsenter, unshare), a static busybox (busybox-static), nftables,
#             conntrack, procps (sysctl), and it warns about inotify limits too low for them (with --raise-sysctls,
#             as root, it raises them instead: what `up` as root asks for);
#             with --ipv6-only iproute2 and root;
#             with --build-binaries what building those binaries needs (as `build`; no list: all)
#   test    `npm test`: what `up` needs, plus iproute2, dnsutils (dig), bind9-utils and shellcheck
#             (the machines' tests run as root, so the machine needs are checked as root); without docker
#             (docker.io), debootstrap or jq it warns that the kind seed's e2e test is skipped
#   all     every path of the README together, whoever runs it: `build` of every binary (with debootstrap for
#             agnhost-rootfs), `up` as root with machines, `test`, the benchmarks' h2load (nghttp2-client) and the
#             kind seed (hack/local/up.sh): docker.io,
#             debootstrap, jq and IPv6 forwarding (net.ipv6.conf.all.forwarding=1, named with the `sysctl -w` line
#             that sets it; as hack/local/lib.sh, also IPv6 itself: net.ipv6.conf.all.disable_ipv6=0)
#   --install  as root: `apt-get update`, then the one `apt-get install` line of the missing Debian packages
#             (DEBIAN_FRONTEND=noninteractive) and the `sysctl -w` line of the kernel settings named (until the next
#             reboot), then the check again, whose exit code it exits with; not as root: the lines are printed with
#             sudo, not run (exit 1). apt-get and sysctl are the ones on PATH.
# Exit code: 0 all present (warnings may still be printed), 1 something is missing (the message on stderr),
# 2 bad usage.
# Env (for the tests): GARDENER_IPV6_PROC_ROOT stands in for /proc (as in hack/local/lib.sh), GARDENER_IPV6_FS_ROOT
# is put before the fixed paths looked at (/bin/busybox, /usr/local/go/bin/go, libc.a and pkg-config's folders
# when cc or pkg-config is missing); GARDENER_IPV6_NODE is the node to check instead of the one on PATH (`up` passes
# the one it runs on); GARDENER_IPV6_EUID stands in for the user id (0: checks and installs as root);
# PKG_CONFIG_LIBDIR and PKG_CONFIG_PATH are honoured as pkg-config does.
set -uo pipefail

# Builtins only where the check itself could be missing tools.
here="${BASH_SOURCE[0]%/*}"
[[ "$here" == "${BASH_SOURCE[0]}" ]] && here=.
ROOT="$(cd "$here/.." && pwd)"
# shellcheck source=hack/versions.env
source "$ROOT/hack/versions.env"
PROC_ROOT="${GARDENER_IPV6_PROC_ROOT:-/proc}"
FS_ROOT="${GARDENER_IPV6_FS_ROOT:-}"
euid="${GARDENER_IPV6_EUID:-$EUID}"
[[ "$euid" =~ ^[0-9]+$ ]] || euid=$EUID

# The Node version package.json's engines ask for ("node": ">=20.9").
MIN_NODE_VERSION=20
engines_node='"node": *">= *([0-9.]+)"'
while IFS= read -r line; do
  if [[ "$line" =~ $engines_node ]]; then
    MIN_NODE_VERSION="${BASH_REMATCH[1]}"
    break
  fi
done <"$ROOT/package.json"

# inotify limits are per user, and everything of the machines runs as root, together with whatever else root runs.
# Counted in /proc/*/fdinfo while the tests ran: each machine takes 9 inotify instances (kubelet 6, containerd 2,
# kube-proxy 1) and each control plane 8 (kube-apiserver 3, kube-controller-manager 5), so `up` (two seed nodes, two
# machines, two control planes) takes about 50, and the tests peaked at 66 on 2 cores: half of the kernel's default of
# 128, with more test files at once on more cores. Running out shows as kubelet's and containerd's "too many open
# files"; 512 is also what kind asks for its multi-node clusters, for the same reason. Watches: a kubelet holds 50-100
# (cAdvisor watches its containers' cgroups); 65536 leaves room for editors and file watchers of the same user and
# catches the 8192 the kernel gives machines with little memory. Only a warning: small setups run below them.
MIN_INOTIFY_INSTANCES=512
MIN_INOTIFY_WATCHES=65536

usage() {
  echo "usage: $0 build [NAME...] [--install]
       $0 up [--ipv6-only] [--no-machines] [--raise-sysctls] [--build-binaries[=NAME,...]] [--install]
       $0 test [--build-binaries[=NAME,...]] [--install]
       $0 all [--install]
  all: every prerequisite of the README's paths at once; --install: as root, installs what is missing" >&2
  exit 2
}

purpose="${1:-}"
shift || true
ipv6_only=0
machines=1
raise_sysctls=0
build_binaries=0
build_names=()
install=0
recheck_args=() # the arguments but --install, for the check after installing
for arg in "$@"; do
  [[ "$arg" == --install ]] || recheck_args+=("$arg")
  case "$arg" in
    --install) install=1 ;;
    --ipv6-only)
      [[ "$purpose" == up ]] || usage
      ipv6_only=1
      ;;
    --no-machines)
      [[ "$purpose" == up ]] || usage
      machines=0
      ;;
    --raise-sysctls)
      [[ "$purpose" == up ]] || usage
      raise_sysctls=1
      ;;
    --build-binaries | --build-binaries=*)
      [[ "$purpose" == up || "$purpose" == test ]] || usage
      build_binaries=1
      if [[ "$arg" == *=* ]]; then
        IFS=, read -r -a list <<<"${arg#*=}"
        build_names+=("${list[@]}")
      fi
      ;;
    -*) usage ;;
    *)
      [[ "$purpose" == build ]] || usage
      build_names+=("$arg")
      ;;
  esac
done

missing=()
packages=()
warnings=()
sysctls=()
set_sysctls=0 # a kernel setting in sysctls is missing, not only low
raised=()
declare -A checked=()

# lack WHAT [DEBIAN-PACKAGE]
lack() {
  missing+=("$1")
  [[ $# -ge 2 ]] || return 0
  local p
  for p in "${packages[@]}"; do [[ "$p" == "$2" ]] && return 0; done
  packages+=("$2")
}

# need COMMAND DEBIAN-PACKAGE WHAT (a command is checked once, for the first WHAT)
need() {
  [[ -z "${checked[$1]:-}" ]] || return 0
  checked[$1]=1
  command -v "$1" >/dev/null 2>&1 && return 0
  lack "$3: \`$1\` not found (Debian package $2)" "$2"
}

# version_at_least HAVE MIN: dotted numeric versions (1.26.8 >= 1.26).
version_at_least() {
  local -a have min
  IFS=. read -r -a have <<<"$1"
  IFS=. read -r -a min <<<"$2"
  local i h m
  for ((i = 0; i < ${#min[@]}; i++)); do
    h="${have[i]:-0}"
    m="${min[i]}"
    h="${h%%[!0-9]*}"
    ((10#${h:-0} > 10#$m)) && return 0
    ((10#${h:-0} < 10#$m)) && return 1
  done
  return 0
}

need_go() {
  local go="" have
  if command -v go >/dev/null 2>&1; then
    go="$(command -v go)"
  elif [[ -x "$FS_ROOT/usr/local/go/bin/go" ]]; then
    go="$FS_ROOT/usr/local/go/bin/go"
  fi
  if [[ -z "$go" ]]; then
    lack "Go >= $MIN_GO_VERSION to build the binaries: \`go\` not found (Debian's Go is too old:
      install it from https://go.dev/dl/, or set GARDENER_IPV6_BIN_DIR to a folder with ready-made binaries)"
    return
  fi
  have="$("$go" env GOVERSION 2>/dev/null)"
  have="${have#go}"
  if [[ -z "$have" ]] || ! version_at_least "$have" "$MIN_GO_VERSION"; then
    lack "Go >= $MIN_GO_VERSION to build the binaries: $go is ${have:-of unknown version}
      (install a newer one from https://go.dev/dl/)"
  fi
}

need_node() {
  local node="${GARDENER_IPV6_NODE:-}" have
  [[ -n "$node" ]] || node="$(command -v node 2>/dev/null)"
  if [[ -z "$node" ]]; then
    lack "Node >= $MIN_NODE_VERSION: \`node\` not found (Debian 12's nodejs is too old: install it from https://nodejs.org/)"
    return
  fi
  have="$("$node" --version 2>/dev/null)"
  have="${have#v}"
  if [[ -z "$have" ]] || ! version_at_least "$have" "$MIN_NODE_VERSION"; then
    lack "Node >= $MIN_NODE_VERSION: $node is ${have:-of unknown version} (install a newer one from https://nodejs.org/)"
  fi
}

# libc.a, which a static C program links (Debian's gcc only recommends libc6-dev, so --no-install-recommends leaves
# it out): where cc finds it, or without cc where Debian puts it.
need_libc() {
  local libc=""
  command -v cc >/dev/null 2>&1 && libc="$(cc -print-file-name=libc.a 2>/dev/null)"
  [[ "$libc" == /* && -f "$libc" ]] && return 0
  if [[ -z "$libc" ]]; then
    for libc in "$FS_ROOT"/usr/lib/*/libc.a "$FS_ROOT"/usr/lib/libc.a "$FS_ROOT"/usr/lib64/libc.a; do
      [[ -f "$libc" ]] && return 0
    done
  fi
  lack "the C library for static linking (the pause binary, runc): libc.a not found (Debian package libc6-dev)" \
    libc6-dev
}

# libseccomp as the build finds it: through pkg-config, or without pkg-config in the folders it would look in.
need_libseccomp() {
  if command -v pkg-config >/dev/null 2>&1; then
    pkg-config --exists libseccomp 2>/dev/null && return 0
  else
    local -a dirs=() more=()
    IFS=: read -r -a dirs <<<"${PKG_CONFIG_PATH:-}"
    if [[ -v PKG_CONFIG_LIBDIR ]]; then
      IFS=: read -r -a more <<<"$PKG_CONFIG_LIBDIR"
    else
      more=("$FS_ROOT"/usr/local/lib/*/pkgconfig "$FS_ROOT"/usr/local/lib/pkgconfig "$FS_ROOT"/usr/local/share/pkgconfig
        "$FS_ROOT"/usr/lib/*/pkgconfig "$FS_ROOT"/usr/lib/pkgconfig "$FS_ROOT"/usr/share/pkgconfig)
    fi
    local dir
    for dir in "${dirs[@]}" "${more[@]}"; do
      [[ -n "$dir" && -f "$dir/libseccomp.pc" ]] && return 0
    done
  fi
  lack "libseccomp, which runc is linked with (containerd gives pod sandboxes the RuntimeDefault seccomp profile):
      libseccomp.pc not found by pkg-config (Debian package libseccomp-dev)" libseccomp-dev
}

# need_build [NAME...]: what hack/ensure-binaries.sh needs to build these binaries (none: all).
need_build() {
  # debootstrap only when agnhost-rootfs is named: hack/ensure-binaries.sh names what it is about to build.
  local cgo=0 seccomp=0 rootfs=0 name
  if [[ $# -eq 0 ]]; then
    cgo=1
    seccomp=1
  fi
  for name in "$@"; do
    case "$name" in
      pause) cgo=1 ;;
      runc) cgo=1 seccomp=1 ;;
      agnhost-rootfs) rootfs=1 ;;
    esac
  done
  if [[ $rootfs -eq 1 ]]; then
    need debootstrap debootstrap "debootstrap, for the files of agnhost's image (Debian's packages)"
  fi
  need_go
  if [[ $cgo -eq 1 ]]; then
    need cc gcc "a C compiler, for the pause binary and runc's cgo (nsenter)"
    need_libc
  fi
  if [[ $seccomp -eq 1 ]]; then
    need pkg-config pkg-config "pkg-config, which finds libseccomp for runc"
    need_libseccomp
  fi
}

# The static busybox the machines' test image is made of (images.ts copies /bin/busybox into it): Debian's
# busybox-static; the busybox package's is linked dynamically and does not run in the image.
need_static_busybox() {
  local busybox="$FS_ROOT/bin/busybox" head=""
  if [[ ! -x "$busybox" ]]; then
    lack "a static busybox, for the machines' test image: /bin/busybox not found (Debian package busybox-static)" \
      busybox-static
    return
  fi
  # A dynamically linked ELF names its loader (/lib64/ld-linux-x86-64.so.2, /lib/ld-musl-...) in its first bytes.
  LC_ALL=C IFS= read -r -d '' -N 4096 head <"$busybox" 2>/dev/null
  if [[ "$head" == *"/ld-"* ]]; then
    lack "a static busybox, for the machines' test image: /bin/busybox is linked dynamically (Debian package
      busybox-static replaces busybox)" busybox-static
  fi
}

# want_sysctl KEY MIN WHY: a warning (with the command that raises it) when the kernel setting is below MIN; with
# --raise-sysctls as root, the setting is raised to MIN instead (and said so), a warning only if that fails.
want_sysctl() {
  local file="$PROC_ROOT/sys/${1//.//}" have=""
  [[ -r "$file" ]] || return 0
  read -r have <"$file" || true
  [[ "$have" =~ ^[0-9]+$ ]] || return 0
  if ((have < $2)) && [[ $raise_sysctls -eq 1 && $euid -eq 0 ]] && { echo "$2" >"$file"; } 2>/dev/null; then
    raised+=("$1 from $have to $2 ($3)")
  elif ((have < $2)); then
    warnings+=("$1 is $have, below $2 ($3)")
    sysctls+=("$1=$2")
  fi
}

need_machines() {
  need nsenter util-linux "nsenter, which enters the machines' namespaces"
  need unshare util-linux "unshare, which creates the machines' namespaces"
  need_static_busybox
  need nft nftables "nftables, for kube-proxy's nftables mode and the machines' rules"
  need conntrack conntrack "conntrack, for kube-proxy's cleanup of stale connections"
  need sysctl procps "sysctl, which the node agent sets the machines' kernel settings with"
  want_sysctl fs.inotify.max_user_instances "$MIN_INOTIFY_INSTANCES" \
    'kubelet and containerd then fail with "too many open files"'
  want_sysctl fs.inotify.max_user_watches "$MIN_INOTIFY_WATCHES" \
    'kubelet then fails to watch with "no space left on device"'
}

# The kind seed's IPv6 and dual-stack clusters need what hack/local/lib.sh requires of the host: IPv6, and IPv6
# forwarding, or their pods get no route out. A setting to change goes on the one `sysctl -w` line.
need_ipv6_forwarding() {
  local conf="$PROC_ROOT/sys/net/ipv6/conf/all" have=""
  if [[ ! -r "$conf/forwarding" ]]; then
    lack "IPv6, for the kind seed: $conf/forwarding not found (IPv6 is off on this host: boot without ipv6.disable=1)"
    return
  fi
  read -r have <"$conf/forwarding" || true
  if [[ "$have" != 1 ]]; then
    lack "IPv6 forwarding, without which the kind seed's pods get no route out:
      net.ipv6.conf.all.forwarding is ${have:-empty}, not 1 (set with the \`sysctl -w\` line below)"
    sysctls+=(net.ipv6.conf.all.forwarding=1)
    set_sysctls=1
  fi
  [[ -r "$conf/disable_ipv6" ]] || return 0
  read -r have <"$conf/disable_ipv6" || true
  if [[ "$have" != 0 ]]; then
    lack "IPv6 on this host's interfaces, for the kind seed:
      net.ipv6.conf.all.disable_ipv6 is ${have:-empty}, not 0 (set with the \`sysctl -w\` line below)"
    sysctls+=(net.ipv6.conf.all.disable_ipv6=0)
    set_sysctls=1
  fi
}

# The Docker engine (a machine may have the docker client alone, without an engine to start), also where PATH
# lacks sbin (dockerd is in /usr/sbin).
need_dockerd() {
  command -v dockerd >/dev/null 2>&1 && return 0
  [[ -x "$FS_ROOT/usr/sbin/dockerd" || -x "$FS_ROOT/usr/bin/dockerd" ]] && return 0
  lack "the Docker engine, which runs the kind seed's nodes: \`dockerd\` not found (Debian package docker.io)" docker.io
}

need_root() {
  [[ $euid -eq 0 ]] || lack "root: $1"
}

need_up() {
  need_node
  need named bind9 "BIND9, the DNS server of the shoots' records"
  need openssl openssl "openssl, for the control plane's certificates"
  need setpriv util-linux "setpriv, which ties the started processes' lives to ours"
  # `all` checks what `up` needs as root, whoever runs the check.
  if [[ $euid -eq 0 || "$purpose" == all ]]; then
    need ip iproute2 "iproute2, for the network namespaces of the shoots' control planes and machines"
    [[ $machines -eq 1 ]] && need_machines
  fi
  if [[ $ipv6_only -eq 1 ]]; then
    need ip iproute2 "iproute2, for the IPv6-only network namespace"
    need_root "--ipv6-only creates a network namespace (run as root, or leave --ipv6-only out)"
  fi
  [[ $build_binaries -eq 1 ]] && need_build "${build_names[@]}"
}

need_test() {
  need_up
  need ip iproute2 "iproute2, for the IPv6-only test network namespace"
  need named-checkconf bind9-utils "BIND9's tools, for the DNS tests"
  need dig dnsutils "dig, for the DNS tests"
  need shellcheck shellcheck "shellcheck, which the tests run on hack/"
}

case "$purpose" in
  build)
    need_build "${build_names[@]}"
    ;;
  up)
    need_up
    ;;
  test)
    need_test
    # Optional: the kind seed's e2e test (test/kind) skips itself without them.
    for tool in docker:docker.io debootstrap:debootstrap jq:jq; do
      command -v "${tool%%:*}" >/dev/null 2>&1 ||
        warnings+=("\`${tool%%:*}\` not found (Debian package ${tool#*:}): the kind seed's e2e test (test/kind) is skipped")
    done
    ;;
  all)
    # debootstrap builds agnhost's files (the agnhost-rootfs binary) and the kind seed's images.
    need debootstrap debootstrap "debootstrap, for agnhost's files and the kind seed's images (from Debian's packages)"
    need_build
    need_test
    need_dockerd
    need jq jq "jq, which the kind seed's image build and Docker's runtime wrapper edit JSON with"
    need h2load nghttp2-client "h2load, which \`npm run bench -- webhook\` drives the webhook with"
    need_ipv6_forwarding
    ;;
  *) usage ;;
esac

sudo=""
[[ $euid -eq 0 ]] || sudo="sudo "
{
  if [[ ${#missing[@]} -gt 0 ]]; then
    echo "error: missing prerequisites ($purpose):"
    for m in "${missing[@]}"; do echo "  - $m"; done
    if [[ ${#packages[@]} -gt 0 ]]; then
      echo "install the Debian packages with:"
      echo "  ${sudo}apt-get install -y --no-install-recommends ${packages[*]}"
    fi
  fi
  if [[ ${#raised[@]} -gt 0 ]]; then
    echo "raised kernel settings too low for the machines ($purpose; until the next reboot):"
    for r in "${raised[@]}"; do echo "  - $r"; done
  fi
  if [[ ${#warnings[@]} -gt 0 ]]; then
    echo "warning: kernel settings too low for the machines ($purpose):"
    for w in "${warnings[@]}"; do echo "  - $w"; done
  fi
  if [[ ${#sysctls[@]} -gt 0 ]]; then
    if [[ $set_sysctls -eq 1 ]]; then
      echo "set the kernel settings with (and in /etc/sysctl.d/ to keep them after a reboot):"
    else
      echo "raise them with (and in /etc/sysctl.d/ to keep them after a reboot):"
    fi
    echo "  ${sudo}sysctl -w ${sysctls[*]}"
  fi
} >&2
status=0
[[ ${#missing[@]} -eq 0 ]] || status=1

# --install: what the lines above name, as root, then the check again.
[[ $install -eq 1 && (${#packages[@]} -gt 0 || ${#sysctls[@]} -gt 0) ]] || exit $status
if [[ $euid -ne 0 ]]; then
  echo "--install: not run, it needs root: run the line(s) above, or this check as root" >&2
  exit 1
fi
{
  if [[ ${#packages[@]} -gt 0 ]]; then
    if ! command -v apt-get >/dev/null 2>&1; then
      echo "--install: \`apt-get\` not found: install the Debian packages above with this system's package manager"
    else
      echo "--install: apt-get update, then the install line above"
      export DEBIAN_FRONTEND=noninteractive
      { apt-get update && apt-get install -y --no-install-recommends "${packages[@]}"; } >&2 ||
        echo "--install: apt-get failed (above)"
    fi
  fi
  if [[ ${#sysctls[@]} -gt 0 ]]; then
    if ! command -v sysctl >/dev/null 2>&1; then
      echo "--install: \`sysctl\` not found (Debian package procps): the kernel settings above are not set"
    else
      echo "--install: the sysctl line above (until the next reboot)"
      sysctl -w "${sysctls[@]}" >&2 || echo "--install: sysctl failed (above)"
    fi
  fi
  echo "--install: checking again ($purpose)"
} >&2
"$BASH" "${BASH_SOURCE[0]}" "$purpose" "${recheck_args[@]}"
status=$?
[[ $status -ne 0 ]] || echo "--install: all prerequisites present ($purpose)" >&2
exit $status
