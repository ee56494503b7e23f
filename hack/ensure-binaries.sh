#!/usr/bin/env bash
# Provides the binaries of the local control plane in .cache/bin (gitignored):
#   kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kubelet, kube-proxy
#                            built from k8s.io/kubernetes     ($KUBERNETES_VERSION)
#   pause                    the sandbox binary, compiled with cc from the same module's build/pause/linux/pause.c
#   etcd                     built from go.etcd.io/etcd/server ($ETCD_VERSION)
#   helm                     built from helm.sh/helm/v3        ($HELM_VERSION)
#   containerd, containerd-shim-runc-v2, ctr
#                            built from github.com/containerd/containerd/v2 ($CONTAINERD_VERSION)
#   runc                     built from github.com/opencontainers/runc ($RUNC_VERSION; cgo for nsenter, with seccomp)
#   cni-bridge, cni-host-local, cni-loopback, cni-portmap
#                            built from github.com/containernetworking/plugins ($CNI_PLUGINS_VERSION)
#   coredns                  built from github.com/coredns/coredns ($COREDNS_VERSION)
#   kubeadm                  built from k8s.io/kubernetes     ($KUBERNETES_VERSION)
#   agnhost, regression-issue-74839
#                            the e2e tests' servers, from test/images of the same module
#   e2e.test                 Kubernetes' end-to-end test binary (test/e2e of the same module), for `npm run
#                            conformance` (hack/conformance.ts)
#   agnhost-rootfs           a folder: Debian bookworm (debootstrap minbase) with the tools the e2e tests exec in
#                            agnhost's image (sh, nc, curl, wget, dig, ip, iperf, socat), as upstream's Alpine-based one,
#                            and the files its Dockerfile adds (porter's key pair from the Kubernetes module, ...);
#                            with iptables, conntrack and ipset also the e2e tests' distroless-iptables image
#   crictl                   built from sigs.k8s.io/cri-tools ($CRI_TOOLS_VERSION)
#   kind                     built from sigs.k8s.io/kind      ($KIND_VERSION)
# The control plane needs the first group (plus etcd and helm); the machines of the local provider need the
# node group; the kind seed (hack/local/) kubeadm, crictl and kind; the conformance runner e2e.test.
# Versions are pinned in hack/versions.env. Every binary has a stamp file recording what it was built
# from, so a second run does not even start Go and finishes in milliseconds.
#
# Ready-made binaries win over building, looked up per binary in this order:
#   $GARDENER_IPV6_BIN_DIR/NAME   (project-specific; may hold all four)
#   $KUBEBUILDER_ASSETS/NAME      (setup-envtest layout; has etcd, kube-apiserver, kubectl, not helm)
#   .cache/bin/NAME               (built here)
# src/localenv/binaries.ts resolves binaries the same way.
#
# Usage: hack/ensure-binaries.sh [NAME|SET...]   (default: all; SETs: @control-plane @node @kind @test, the groups
#        above: `npm test` builds the first three up front, and the conformance file the last when it starts)
# Binaries of one module build in one `go build`, GARDENER_IPV6_BUILD_JOBS (default 2) modules at a time.
# Env:   GARDENER_IPV6_FORCE_BUILD=1 rebuilds even when a stamp matches.
#        GARDENER_IPV6_QUIET_CACHED=1 prints nothing when nothing needs building (for wrappers).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=hack/versions.env
source "$ROOT/hack/versions.env"

CACHE_DIR="$ROOT/.cache"
BIN_DIR="$CACHE_DIR/bin"
BUILD_DIR="$CACHE_DIR/build"
CONTROL_PLANE=(kube-apiserver kube-controller-manager kube-scheduler etcd kubectl helm)
NODE=(kubelet kube-proxy pause containerd containerd-shim-runc-v2 ctr runc cni-bridge cni-host-local cni-loopback cni-portmap
  coredns agnhost agnhost-rootfs regression-issue-74839)
KIND=(kubeadm crictl kind)
TEST=(e2e.test)
ALL=("${CONTROL_PLANE[@]}" "${NODE[@]}" "${KIND[@]}" "${TEST[@]}")
# What upstream's agnhost image adds to Alpine (test/images/agnhost/Dockerfile), as Debian packages; wget is
# busybox's applet there; iptables, conntrack and ipset are what its distroless-iptables image has.
AGNHOST_PACKAGES=bash,bind9-dnsutils,curl,netcat-openbsd,iproute2,iperf,socat,ca-certificates,wget,conntrack,iptables,ipset
DEBIAN_MIRROR="${GARDENER_IPV6_DEBIAN_MIRROR:-http://deb.debian.org/debian}"

log() { printf '[ensure-binaries] %s\n' "$*" >&2; }
die() {
  printf '[ensure-binaries] ERROR: %s\n' "$*" >&2
  exit 1
}

# What a binary is built from; a change here (or in versions.env) invalidates its stamp.
recipe() {
  case "$1" in
    kube-apiserver | kube-controller-manager | kube-scheduler | kubectl | kubelet | kube-proxy | kubeadm)
      echo "k8s.io/kubernetes@$KUBERNETES_VERSION recipe=1"
      ;;
    pause) echo "k8s.io/kubernetes@$KUBERNETES_VERSION build/pause recipe=1" ;;
    agnhost) echo "k8s.io/kubernetes@$KUBERNETES_VERSION test/images/agnhost recipe=1" ;;
    regression-issue-74839) echo "k8s.io/kubernetes@$KUBERNETES_VERSION test/images/regression-issue-74839 recipe=1" ;;
    e2e.test) echo "k8s.io/kubernetes@$KUBERNETES_VERSION test/e2e recipe=1" ;;
    agnhost-rootfs) echo "debian bookworm minbase $AGNHOST_PACKAGES k8s.io/kubernetes@$KUBERNETES_VERSION recipe=2" ;;
    etcd) echo "go.etcd.io/etcd/server/v3@$ETCD_VERSION recipe=1" ;;
    helm) echo "helm.sh/helm/v3@$HELM_VERSION recipe=1" ;;
    containerd | containerd-shim-runc-v2 | ctr) echo "github.com/containerd/containerd/v2@$CONTAINERD_VERSION recipe=1" ;;
    runc) echo "github.com/opencontainers/runc@$RUNC_VERSION recipe=2 seccomp" ;;
    cni-bridge | cni-host-local | cni-loopback | cni-portmap) echo "github.com/containernetworking/plugins@$CNI_PLUGINS_VERSION recipe=1" ;;
    coredns) echo "github.com/coredns/coredns@$COREDNS_VERSION recipe=1" ;;
    crictl) echo "sigs.k8s.io/cri-tools@$CRI_TOOLS_VERSION recipe=1" ;;
    kind) echo "sigs.k8s.io/kind@$KIND_VERSION recipe=1" ;;
    *) die "unknown binary '$1' (known: ${ALL[*]})" ;;
  esac
}

# Prints the ready-made binary for NAME from the env overrides, if any.
prebuilt() {
  local name="$1" dir
  for dir in "${GARDENER_IPV6_BIN_DIR:-}" "${KUBEBUILDER_ASSETS:-}"; do
    if [[ -n "$dir" && -x "$dir/$name" ]]; then
      echo "$dir/$name"
      return 0
    fi
  done
  return 1
}

is_fresh() {
  local name="$1"
  [[ -z "${GARDENER_IPV6_FORCE_BUILD:-}" && -x "$BIN_DIR/$name" && -f "$BIN_DIR/.$name.stamp" ]] &&
    [[ "$(cat "$BIN_DIR/.$name.stamp")" == "$(recipe "$name")" ]]
}

# --- Go ------------------------------------------------------------------------------------------------
GO=""
find_go() {
  [[ -n "$GO" ]] && return 0
  if command -v go >/dev/null 2>&1; then
    GO="$(command -v go)"
  elif [[ -x /usr/local/go/bin/go ]]; then
    GO=/usr/local/go/bin/go
  else
    die "Go is needed to build the binaries but 'go' is not on PATH (nor /usr/local/go/bin/go).
Install Go >= $MIN_GO_VERSION from https://go.dev/dl/, or point GARDENER_IPV6_BIN_DIR (or KUBEBUILDER_ASSETS)
at a folder with ready-made etcd, kube-apiserver, kubectl and helm binaries."
  fi
  local have
  have="$("$GO" env GOVERSION)" # e.g. go1.26.8
  have="${have#go}"
  if [[ "$(printf '%s\n%s\n' "$MIN_GO_VERSION" "$have" | sort -V | head -n1)" != "$MIN_GO_VERSION" ]]; then
    die "Go $have at $GO is too old: these versions need Go >= $MIN_GO_VERSION (see hack/versions.env)."
  fi
  log "using $GO (go$have), GOPROXY=$("$GO" env GOPROXY)"
}

# Runs one `go build -v` (or `go test -c`) of PKG... in MODDIR into OUT (a file, or a folder ending in / for several
# packages: one package load, and each binary links while the next packages compile), printing a progress line
# every 20s (packages compiled so far) rather than thousands of package names; on failure shows the end of the log.
go_build() {
  local label="$1" moddir="$2" ldflags="$3" out="$4"
  shift 4
  local logfile="$BUILD_DIR/$label.log" start=$SECONDS rc=0
  # A test binary (`go test -c`) lists no packages as it compiles them; vet is for its authors.
  local cmd=(build -v)
  [[ -z "${BUILD_TEST:-}" ]] || cmd=(test -c -vet=off)
  log "building $label from $* (log: ${logfile#"$ROOT"/}) ..."
  (
    cd "$moddir"
    # -mod=mod lets `go build` add the requirements and go.sum lines the throwaway module lacks. The linker drops
    # debug information (-s -w), so the compiler doesn't generate it either (-dwarf=false, every package).
    GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod" CGO_ENABLED="${BUILD_CGO:-0}" "$GO" "${cmd[@]}" -trimpath \
      -gcflags=all=-dwarf=false -tags "${BUILD_TAGS:-}" -ldflags "-s -w $ldflags" -o "$out" "$@"
  ) >"$logfile" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    for _ in $(seq 20); do
      sleep 1
      kill -0 "$pid" 2>/dev/null || break
    done
    if kill -0 "$pid" 2>/dev/null; then
      log "  ... $label: $((SECONDS - start))s, $(grep -vc '^go: ' "$logfile" || true) packages compiled"
    fi
  done
  wait "$pid" || rc=$?
  if [[ $rc -ne 0 ]]; then
    rm -rf "$out"
    tail -n 40 "$logfile" >&2
    if grep -qE 'dial tcp|no such host|connection refused|i/o timeout|410 Gone|404 Not Found|403 Forbidden' "$logfile"; then
      die "building $label failed while downloading Go modules: check network access to $("$GO" env GOPROXY) (log: $logfile)"
    fi
    die "building $label failed (exit $rc); log: $logfile"
  fi
  log "built $label in $((SECONDS - start))s"
}

# Moves a built file into the cache as NAME and stamps it with its recipe.
install_built() {
  local name="$1" file="$2"
  mv -f "$file" "$BIN_DIR/$name"
  recipe "$name" >"$BIN_DIR/.$name.stamp"
  log "  $name: $(version_of "$name")"
}

# go_build_group LABEL MODDIR LDFLAGS NAME=PKG...: the named binaries of one module in one `go build`.
go_build_group() {
  local label="$1" moddir="$2" ldflags="$3" pair
  shift 3
  local out="$BIN_DIR/.$label.tmp.$$" pkgs=()
  rm -rf "$out"
  mkdir -p "$out"
  for pair in "$@"; do pkgs+=("${pair#*=}"); done
  go_build "$label" "$moddir" "$ldflags" "$out/" "${pkgs[@]}"
  for pair in "$@"; do install_built "${pair%%=*}" "$out/$(exe_name "${pair#*=}")"; done
  rm -rf "$out"
}

# The file `go build` names a main package's binary: its path's last element, the one before a /vN major version.
exe_name() {
  local pkg="$1"
  [[ "$pkg" =~ /v[0-9]+$ ]] && pkg="${pkg%/*}"
  echo "${pkg##*/}"
}

version_of() {
  local bin="$BIN_DIR/$1"
  case "$1" in
    kubectl) "$bin" version --client 2>/dev/null | head -n1 ;;
    helm) "$bin" version --short 2>/dev/null ;;
    pause) "$bin" -v 2>&1 | head -n1 ;;
    cni-*) CNI_COMMAND=VERSION "$bin" </dev/null 2>/dev/null | head -n1 ;;
    coredns) "$bin" -version 2>/dev/null | head -n1 ;;
    e2e.test) echo "k8s.io/kubernetes@$KUBERNETES_VERSION test/e2e" ;;
    # A server with no version flag: it would start.
    regression-issue-74839) echo "k8s.io/kubernetes@$KUBERNETES_VERSION test/images/regression-issue-74839" ;;
    agnhost-rootfs) echo "$(du -sm "$bin" | cut -f1) MB" ;;
    ctr | runc | containerd*) "$bin" --version 2>/dev/null | head -n1 ;;
    *) "$bin" --version 2>/dev/null | head -n1 ;;
  esac || true
}

# Writes a throwaway main module requiring MODULE@VERSION. Replace directives of dependencies are ignored by
# Go, so the caller passes the replaces that the upstream main module relies on.
write_module() {
  local dir="$1" require="$2" replaces="${3:-}"
  mkdir -p "$dir"
  {
    echo "// Generated by hack/ensure-binaries.sh to build pinned binaries; safe to delete."
    echo "module gardener-ipv6.local/build"
    echo
    echo "go $MIN_GO_VERSION.0"
    echo
    echo "require $require"
    if [[ -n "$replaces" ]]; then
      echo
      echo "replace ("
      echo "$replaces"
      echo ")"
    fi
  } >"$dir/go.mod.new"
  # Keep go.sum and an identical go.mod from the previous attempt: re-running after a failure is cheaper.
  if ! cmp -s "$dir/go.mod.new" "$dir/go.mod" 2>/dev/null; then
    mv -f "$dir/go.mod.new" "$dir/go.mod"
    rm -f "$dir/go.sum"
  else
    rm -f "$dir/go.mod.new"
  fi
}

# k8s.io/kubernetes requires its staging modules (k8s.io/api, k8s.io/client-go, ...) at v0.0.0 and replaces
# them with ./staging/src/...; outside the repository each must be replaced by its published v0.MINOR.PATCH.
kubernetes_module() {
  local dir="$BUILD_DIR/kubernetes-$KUBERNETES_VERSION"
  [[ -f "$dir/.ready" ]] && {
    echo "$dir"
    return 0
  }
  local gomod staging_version replaces
  log "downloading k8s.io/kubernetes@$KUBERNETES_VERSION ..."
  local json
  json="$(cd "$BUILD_DIR" && "$GO" mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" 2>&1)" || true
  if grep -q '"Error"' <<<"$json" || ! grep -q '"GoMod"' <<<"$json"; then
    die "could not download k8s.io/kubernetes@$KUBERNETES_VERSION from $("$GO" env GOPROXY):
$(sed -n 's/^\s*"Error": "\(.*\)",\?$/\1/p' <<<"$json" | sed 's/\\n\\t/\n  /g')"
  fi
  gomod="$(sed -n 's/^\s*"GoMod": "\(.*\)",\?$/\1/p' <<<"$json")"
  [[ -f "$gomod" ]] || die "k8s.io/kubernetes@$KUBERNETES_VERSION: go.mod not found after download"
  staging_version="v0.${KUBERNETES_VERSION#v1.}" # v1.37.2 -> v0.37.2
  replaces="$(awk -v v="$staging_version" '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" { printf "\t%s => %s %s\n", $1, $1, v }' "$gomod")"
  [[ -n "$replaces" ]] || die "found no staging modules in $gomod"
  log "  replacing $(wc -l <<<"$replaces") staging modules with $staging_version"
  write_module "$dir" "k8s.io/kubernetes $KUBERNETES_VERSION" "$replaces"
  touch "$dir/.ready"
  echo "$dir"
}

kube_ldflags() {
  local v="$KUBERNETES_VERSION" minor major date flags="" pkg
  major="${v#v}"
  major="${major%%.*}"
  minor="${v#v*.}"
  minor="${minor%%.*}"
  date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  # Same variables as Kubernetes' hack/lib/version.sh, so `--version` and `kubectl version` report the release
  # (and the API server's /version, which clients use for skew checks).
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $pkg.gitVersion=$v -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
    flags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$date"
  done
  echo "$flags"
}

# The group a binary is built in: the binaries of one module come from one `go build`, and groups build side by side.
group_of() {
  case "$1" in
    kube-apiserver | kube-controller-manager | kube-scheduler | kubectl | kubelet | kube-proxy | kubeadm | agnhost | \
      regression-issue-74839)
      echo kubernetes
      ;;
    e2e.test) echo e2e ;;
    containerd | containerd-shim-runc-v2 | ctr) echo containerd ;;
    cni-bridge | cni-host-local | cni-loopback | cni-portmap) echo cni-plugins ;;
    *) echo "$1" ;;
  esac
}

# build_group GROUP NAME...: builds the named binaries of GROUP.
build_group() {
  local group="$1" dir name pairs=()
  shift
  case "$group" in
    kubernetes)
      dir="$(kubernetes_module)"
      for name in "$@"; do
        case "$name" in
          agnhost) pairs+=("agnhost=k8s.io/kubernetes/test/images/agnhost") ;; # Kubernetes' e2e test server
          # The e2e conntrack test's server that answers with out-of-window TCP packets.
          regression-issue-74839) pairs+=("$name=k8s.io/kubernetes/test/images/regression-issue-74839") ;;
          *) pairs+=("$name=k8s.io/kubernetes/cmd/$name") ;;
        esac
      done
      go_build_group kubernetes "$dir" "$(kube_ldflags)" "${pairs[@]}"
      ;;
    e2e)
      # Kubernetes' end-to-end tests, which the conformance runner points at a shoot (hack/conformance.ts).
      dir="$(kubernetes_module)"
      BUILD_TEST=1 go_build e2e.test "$dir" "$(kube_ldflags)" "$BIN_DIR/.e2e.test.tmp.$$" k8s.io/kubernetes/test/e2e
      install_built e2e.test "$BIN_DIR/.e2e.test.tmp.$$"
      ;;
    agnhost-rootfs) build_agnhost_rootfs ;;
    pause)
      # The sandbox image's binary: a static C program that sleeps and reaps zombies (Kubernetes' build/pause).
      dir="$(kubernetes_module)"
      local src
      src="$("$GO" env GOMODCACHE)/k8s.io/kubernetes@$KUBERNETES_VERSION/build/pause/linux/pause.c"
      [[ -f "$src" ]] || die "pause: $src not found in the module cache"
      command -v cc >/dev/null || die "pause: a C compiler (cc) is needed; install gcc"
      cc -Os -Wall -Werror -static -DVERSION="$KUBERNETES_VERSION" -o "$BIN_DIR/.pause.tmp.$$" "$src" ||
        die "pause: cc failed (static linking needs libc6-dev)"
      strip "$BIN_DIR/.pause.tmp.$$" 2>/dev/null || true
      install_built pause "$BIN_DIR/.pause.tmp.$$"
      ;;
    containerd)
      dir="$BUILD_DIR/containerd-$CONTAINERD_VERSION"
      write_module "$dir" "github.com/containerd/containerd/v2 $CONTAINERD_VERSION"
      for name in "$@"; do pairs+=("$name=github.com/containerd/containerd/v2/cmd/$name"); done
      # no_btrfs: the btrfs snapshotter needs cgo and headers; the machines use overlayfs.
      BUILD_TAGS="no_btrfs" go_build_group containerd "$dir" \
        "-X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION" "${pairs[@]}"
      ;;
    runc)
      # runc's nsenter is C, so cgo is required. With seccomp: containerd gives every pod sandbox the
      # RuntimeDefault profile whenever the kernel supports seccomp, and a runc without it refuses to start them.
      # Linked statically against libseccomp.a (Debian's libseccomp-dev, found through pkg-config).
      command -v cc >/dev/null || die "runc: a C compiler (cc) is needed for cgo; install gcc"
      pkg-config --exists libseccomp 2>/dev/null || die "runc: libseccomp is needed; install libseccomp-dev and pkg-config"
      dir="$BUILD_DIR/runc-$RUNC_VERSION"
      write_module "$dir" "github.com/opencontainers/runc $RUNC_VERSION"
      BUILD_CGO=1 BUILD_TAGS="seccomp" go_build_group runc "$dir" \
        "-X main.version=${RUNC_VERSION#v} -extldflags -static" runc=github.com/opencontainers/runc
      ;;
    cni-plugins)
      local plugin kind
      for name in "$@"; do
        plugin="${name#cni-}"
        kind=main
        [[ "$plugin" == host-local ]] && kind=ipam
        [[ "$plugin" == portmap ]] && kind=meta
        pairs+=("$name=github.com/containernetworking/plugins/plugins/$kind/$plugin")
      done
      dir="$BUILD_DIR/cni-plugins-$CNI_PLUGINS_VERSION"
      write_module "$dir" "github.com/containernetworking/plugins $CNI_PLUGINS_VERSION"
      go_build_group cni-plugins "$dir" \
        "-X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=$CNI_PLUGINS_VERSION" "${pairs[@]}"
      ;;
    coredns)
      dir="$BUILD_DIR/coredns-$COREDNS_VERSION"
      write_module "$dir" "github.com/coredns/coredns $COREDNS_VERSION"
      go_build_group coredns "$dir" "" coredns=github.com/coredns/coredns
      ;;
    crictl)
      dir="$BUILD_DIR/cri-tools-$CRI_TOOLS_VERSION"
      write_module "$dir" "sigs.k8s.io/cri-tools $CRI_TOOLS_VERSION"
      go_build_group crictl "$dir" "-X sigs.k8s.io/cri-tools/pkg/version.Version=$CRI_TOOLS_VERSION" \
        crictl=sigs.k8s.io/cri-tools/cmd/crictl
      ;;
    kind)
      dir="$BUILD_DIR/kind-$KIND_VERSION"
      write_module "$dir" "sigs.k8s.io/kind $KIND_VERSION"
      go_build_group kind "$dir" "" kind=sigs.k8s.io/kind
      ;;
    etcd)
      # The etcd server's main package is the root of go.etcd.io/etcd/server/v3; its go.mod's replaces only
      # point at sibling folders of the same release, which the requires already pin.
      dir="$BUILD_DIR/etcd-$ETCD_VERSION"
      write_module "$dir" "go.etcd.io/etcd/server/v3 $ETCD_VERSION"
      go_build_group etcd "$dir" "" etcd=go.etcd.io/etcd/server/v3
      ;;
    helm)
      dir="$BUILD_DIR/helm-$HELM_VERSION"
      write_module "$dir" "helm.sh/helm/v3 $HELM_VERSION"
      go_build_group helm "$dir" \
        "-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean" \
        helm=helm.sh/helm/v3/cmd/helm
      ;;
    *) die "unknown group '$group'" ;;
  esac
}

# What upstream's agnhost Dockerfile adds besides packages: `agnhost porter`'s TLS key pair in / (its working
# folder), /uploads, and the user and group the sig-node tests look for.
agnhost_image_files() {
  local root="$1" porter
  kubernetes_module >/dev/null # downloads the module's source into the cache
  porter="$("$GO" env GOMODCACHE)/k8s.io/kubernetes@$KUBERNETES_VERSION/test/images/agnhost/porter"
  [[ -f "$porter/localhost.crt" ]] || die "agnhost-rootfs: $porter/localhost.crt not found in the module cache"
  install -m 0644 "$porter/localhost.crt" "$root/localhost.crt"
  install -m 0644 "$porter/localhost.key" "$root/localhost.key"
  mkdir -p "$root/uploads"
  grep -q '^user-defined-in-image:' "$root/etc/passwd" ||
    echo 'user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh' >>"$root/etc/passwd"
  grep -q '^user-defined-in-image:' "$root/etc/group" || echo 'user-defined-in-image:x:1000:' >>"$root/etc/group"
  grep -q '^group-defined-in-image:' "$root/etc/group" ||
    echo 'group-defined-in-image:x:50000:user-defined-in-image' >>"$root/etc/group"
}

# agnhost's image is not the bare binary: the e2e tests exec /bin/sh, nc, curl and dig in it. Its files, from
# Debian's packages; images.ts adds the binary. Docs, man pages, locales and apt's state are left out: no test reads
# them, and every machine imports the image.
build_agnhost_rootfs() {
  [[ "$(id -u)" == 0 ]] || die "agnhost-rootfs: debootstrap needs root"
  command -v debootstrap >/dev/null || die "agnhost-rootfs: debootstrap is needed; install debootstrap"
  local tmp="$BIN_DIR/.agnhost-rootfs.tmp.$$" start=$SECONDS
  rm -rf "$tmp"
  log "debootstrap bookworm for agnhost's image (about 2 minutes; log: ${BUILD_DIR#"$ROOT"/}/agnhost-rootfs.log) ..."
  debootstrap --variant=minbase --include="$AGNHOST_PACKAGES" bookworm "$tmp" "$DEBIAN_MIRROR" \
    >"$BUILD_DIR/agnhost-rootfs.log" 2>&1 || {
    tail -n 20 "$BUILD_DIR/agnhost-rootfs.log" >&2
    rm -rf "$tmp"
    die "agnhost-rootfs: debootstrap failed (log: $BUILD_DIR/agnhost-rootfs.log)"
  }
  rm -rf "${tmp:?}"/usr/share/{doc,man,info,locale} "${tmp:?}"/var/cache/apt/* "${tmp:?}"/var/lib/apt/lists/* \
    "${tmp:?}"/var/log/* "${tmp:?}"/dev/* "${tmp:?}"/proc/* "${tmp:?}"/sys/* "${tmp:?}"/run/*
  agnhost_image_files "$tmp"
  rm -rf "$BIN_DIR/agnhost-rootfs"
  mv "$tmp" "$BIN_DIR/agnhost-rootfs"
  recipe agnhost-rootfs >"$BIN_DIR/.agnhost-rootfs.stamp"
  log "built agnhost-rootfs in $((SECONDS - start))s: $(version_of agnhost-rootfs)"
}

# Names of NAMES that neither the environment provides nor the cache holds fresh.
stale_names() {
  local name
  for name in "$@"; do
    prebuilt "$name" >/dev/null || is_fresh "$name" || echo "$name"
  done
}

main() {
  local names=() arg name found total_start=$SECONDS
  for arg in "$@"; do
    case "$arg" in
      @control-plane) names+=("${CONTROL_PLANE[@]}") ;;
      @node) names+=("${NODE[@]}") ;;
      @kind) names+=("${KIND[@]}") ;;
      @test) names+=("${TEST[@]}") ;;
      @*) die "unknown set '$arg' (known: @control-plane @node @kind @test)" ;;
      *) names+=("$arg") ;;
    esac
  done
  [[ ${#names[@]} -gt 0 ]] || names=("${ALL[@]}")
  for name in "${names[@]}"; do recipe "$name" >/dev/null; done
  mkdir -p "$BIN_DIR" "$BUILD_DIR"

  local to_build=()
  mapfile -t to_build < <(stale_names "${names[@]}")
  if [[ ${#to_build[@]} -gt 0 ]]; then
    # Serialise concurrent builds (CI's step and a developer's `up`, two test runs) on the same cache; a run with
    # nothing to build takes no lock, so it never waits for another run's build of binaries it doesn't need.
    if command -v flock >/dev/null 2>&1; then
      exec 9>"$BIN_DIR/.lock"
      if ! flock -n 9; then
        log "another ensure-binaries run holds $BIN_DIR/.lock; waiting ..."
        flock 9
      fi
      mapfile -t to_build < <(stale_names "${names[@]}")
    fi
  fi
  if [[ ${#to_build[@]} -gt 0 ]]; then
    # Everything the builds need (Go, and for pause and runc a C compiler, libc6-dev, libseccomp), named at once
    # before any of them starts, in seconds rather than at runc after the others' 20 minutes
    # (hack/check-prerequisites.sh).
    bash "$ROOT/hack/check-prerequisites.sh" build "${to_build[@]}" ||
      die "cannot build ${to_build[*]}: prerequisites missing (above)"
    build_all "${to_build[@]}"
  fi

  if ! quiet; then
    for name in "${names[@]}"; do
      if found="$(prebuilt "$name")"; then
        log "$name: using $found (from GARDENER_IPV6_BIN_DIR/KUBEBUILDER_ASSETS)"
      elif [[ " ${to_build[*]} " != *" $name "* ]]; then
        log "$name: cached ($(cat "$BIN_DIR/.$name.stamp"))"
      fi
    done
  fi
  if [[ ${#to_build[@]} -gt 0 ]] || ! quiet; then
    log "done in $((SECONDS - total_start))s"
  fi
}

# Builds NAMES by group, GARDENER_IPV6_BUILD_JOBS groups at a time (default 2): one group's module downloads,
# package loading and links (one core or none) overlap another's compiles. agnhost-rootfs (downloads and disk) runs
# beside them; e2e.test starts once the kubernetes group is done, whose packages it reuses from Go's build cache
# rather than compiling them a second time at the same moment.
build_all() {
  local name group jobs="${GARDENER_IPV6_BUILD_JOBS:-2}"
  [[ "$jobs" =~ ^[1-9][0-9]*$ ]] || die "GARDENER_IPV6_BUILD_JOBS must be a positive number, not '$jobs'"
  find_go
  declare -A members=()
  local order=()
  for name in "$@"; do
    group="$(group_of "$name")"
    [[ -n "${members[$group]:-}" ]] || order+=("$group")
    members[$group]+="$name "
  done
  # Fetched once, before the groups that read it start side by side.
  for group in kubernetes e2e pause agnhost-rootfs; do
    [[ -z "${members[$group]:-}" ]] || {
      kubernetes_module >/dev/null
      break
    }
  done
  # Longest first, so that the small groups fill the gaps beside it; e2e last, after kubernetes.
  local queue=() g
  for g in kubernetes helm containerd etcd coredns kind crictl runc cni-plugins pause; do
    [[ -z "${members[$g]:-}" ]] || queue+=("$g")
  done
  for g in "${order[@]}"; do
    case " ${queue[*]} e2e agnhost-rootfs " in *" $g "*) ;; *) queue+=("$g") ;; esac
  done
  [[ -z "${members[e2e]:-}" ]] || queue+=(e2e)

  declare -A running=()
  local failed=() pid kube_pid=""
  start_group() {
    local g="$1"
    # shellcheck disable=SC2086 # members are space-separated names
    (build_group "$g" ${members[$g]}) &
    running[$!]="$g"
    [[ "$g" != kubernetes ]] || kube_pid=$!
  }
  reap() {
    local done_pid="" rc=0
    wait -n -p done_pid "${!running[@]}" || rc=$?
    [[ -n "$done_pid" ]] || return 0
    [[ $rc -eq 0 ]] || failed+=("${running[$done_pid]}")
    [[ "$done_pid" != "$kube_pid" ]] || kube_pid=""
    unset "running[$done_pid]"
  }
  local rootfs_pid=""
  if [[ -n "${members[agnhost-rootfs]:-}" ]]; then
    (build_group agnhost-rootfs) &
    rootfs_pid=$!
  fi
  for g in "${queue[@]}"; do
    while [[ ${#running[@]} -ge $jobs ]] || [[ "$g" == e2e && -n "$kube_pid" ]]; do reap; done
    if [[ "$g" == e2e && " ${failed[*]} " == *" kubernetes "* ]]; then
      failed+=(e2e)
      continue
    fi
    start_group "$g"
  done
  while [[ ${#running[@]} -gt 0 ]]; do reap; done
  if [[ -n "$rootfs_pid" ]] && ! wait "$rootfs_pid"; then failed+=(agnhost-rootfs); fi
  [[ ${#failed[@]} -eq 0 ]] || die "these builds failed: ${failed[*]} (their errors are above; logs in ${BUILD_DIR#"$ROOT"/})"
}

quiet() { [[ "${GARDENER_IPV6_QUIET_CACHED:-}" == 1 ]]; }

main "$@"
