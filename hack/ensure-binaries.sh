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
#   e2e.test                 Kubernetes' end-to-end test binary (test/e2e of the same module), for
#                            `npm run conformance` (hack/conformance.ts)
#   agnhost-rootfs           a folder: Debian bookworm (debootstrap minbase) with the tools the e2e tests exec in
#                            agnhost's image (sh, nc, curl, dig, ip, iperf, socat), as upstream's Alpine-based one,
#                            and the files its Dockerfile adds (porter's key pair from the Kubernetes module, ...)
#   crictl                   built from sigs.k8s.io/cri-tools ($CRI_TOOLS_VERSION)
#   kind                     built from sigs.k8s.io/kind      ($KIND_VERSION)
# The control plane needs the first group (plus etcd and helm); the machines of the local provider need the
# node group; the kind seed (hack/local/) the last three.
# Versions are pinned in hack/versions.env. Every binary has a stamp file recording what it was built
# from, so a second run does not even start Go and finishes in milliseconds.
#
# Ready-made binaries win over building, looked up per binary in this order:
#   $GARDENER_IPV6_BIN_DIR/NAME   (project-specific; may hold all four)
#   $KUBEBUILDER_ASSETS/NAME      (setup-envtest layout; has etcd, kube-apiserver, kubectl, not helm)
#   .cache/bin/NAME               (built here)
# src/localenv/binaries.ts resolves binaries the same way.
#
# Usage: hack/ensure-binaries.sh [NAME...]   (default: all)
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
  coredns agnhost agnhost-rootfs)
KIND=(kubeadm crictl kind)
TEST=(e2e.test)
ALL=("${CONTROL_PLANE[@]}" "${NODE[@]}" "${KIND[@]}" "${TEST[@]}")
# What upstream's agnhost image adds to Alpine (test/images/agnhost/Dockerfile), as Debian packages.
AGNHOST_PACKAGES=bash,bind9-dnsutils,curl,netcat-openbsd,iproute2,iperf,socat,ca-certificates
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

# Runs `go build -v` for one binary, printing a progress line every 20s (packages compiled so far) rather
# than thousands of package names; on failure shows the end of the log.
go_build() {
  local name="$1" pkg="$2" moddir="$3" ldflags="$4"
  local logfile="$BUILD_DIR/$name.log" tmp="$BIN_DIR/.$name.tmp.$$"
  local start=$SECONDS rc=0
  # A test binary (`go test -c`) lists no packages as it compiles them; vet is for its authors.
  local cmd=(build -v)
  [[ -z "${BUILD_TEST:-}" ]] || cmd=(test -c -vet=off)
  log "building $name from $pkg (log: ${logfile#"$ROOT"/}) ..."
  (
    cd "$moddir"
    # -mod=mod lets `go build` add the requirements and go.sum lines the throwaway module lacks.
    GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod" CGO_ENABLED="${BUILD_CGO:-0}" "$GO" "${cmd[@]}" -trimpath \
      -tags "${BUILD_TAGS:-}" -ldflags "-s -w $ldflags" -o "$tmp" "$pkg"
  ) >"$logfile" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    for _ in $(seq 20); do
      sleep 1
      kill -0 "$pid" 2>/dev/null || break
    done
    if kill -0 "$pid" 2>/dev/null; then
      log "  ... $name: $((SECONDS - start))s, $(grep -vc '^go: ' "$logfile" || true) packages compiled"
    fi
  done
  wait "$pid" || rc=$?
  if [[ $rc -ne 0 ]]; then
    rm -f "$tmp"
    tail -n 40 "$logfile" >&2
    if grep -qE 'dial tcp|no such host|connection refused|i/o timeout|410 Gone|404 Not Found|403 Forbidden' "$logfile"; then
      die "building $name failed while downloading Go modules: check network access to $("$GO" env GOPROXY) (log: $logfile)"
    fi
    die "building $name failed (exit $rc); log: $logfile"
  fi
  mv -f "$tmp" "$BIN_DIR/$name"
  recipe "$name" >"$BIN_DIR/.$name.stamp"
  log "built $name in $((SECONDS - start))s: $(version_of "$name")"
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

build_one() {
  local name="$1" dir
  find_go
  mkdir -p "$BUILD_DIR"
  case "$name" in
    kube-apiserver | kube-controller-manager | kube-scheduler | kubectl | kubelet | kube-proxy | kubeadm)
      dir="$(kubernetes_module)"
      go_build "$name" "k8s.io/kubernetes/cmd/$name" "$dir" "$(kube_ldflags)"
      ;;
    agnhost)
      # Kubernetes' e2e test server (webhooks, netexec, ...): the test image of its conformance tests.
      dir="$(kubernetes_module)"
      go_build agnhost k8s.io/kubernetes/test/images/agnhost "$dir" ""
      ;;
    e2e.test)
      # Kubernetes' end-to-end tests, which the conformance runner points at a shoot (hack/conformance.ts).
      dir="$(kubernetes_module)"
      BUILD_TEST=1 go_build e2e.test k8s.io/kubernetes/test/e2e "$dir" "$(kube_ldflags)"
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
      mv -f "$BIN_DIR/.pause.tmp.$$" "$BIN_DIR/pause"
      recipe pause >"$BIN_DIR/.pause.stamp"
      log "built pause: $(version_of pause)"
      ;;
    containerd | containerd-shim-runc-v2 | ctr)
      dir="$BUILD_DIR/containerd-$CONTAINERD_VERSION"
      write_module "$dir" "github.com/containerd/containerd/v2 $CONTAINERD_VERSION"
      # no_btrfs: the btrfs snapshotter needs cgo and headers; the machines use overlayfs.
      BUILD_TAGS="no_btrfs" go_build "$name" "github.com/containerd/containerd/v2/cmd/$name" "$dir" \
        "-X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION"
      ;;
    runc)
      # runc's nsenter is C, so cgo is required. With seccomp: containerd gives every pod sandbox the
      # RuntimeDefault profile whenever the kernel supports seccomp, and a runc without it refuses to start them.
      # Linked statically against libseccomp.a (Debian's libseccomp-dev, found through pkg-config).
      command -v cc >/dev/null || die "runc: a C compiler (cc) is needed for cgo; install gcc"
      pkg-config --exists libseccomp 2>/dev/null || die "runc: libseccomp is needed; install libseccomp-dev and pkg-config"
      dir="$BUILD_DIR/runc-$RUNC_VERSION"
      write_module "$dir" "github.com/opencontainers/runc $RUNC_VERSION"
      BUILD_CGO=1 BUILD_TAGS="seccomp" go_build runc github.com/opencontainers/runc "$dir" \
        "-X main.version=${RUNC_VERSION#v} -extldflags -static"
      ;;
    cni-bridge | cni-host-local | cni-loopback | cni-portmap)
      local plugin="${name#cni-}" kind=main
      [[ "$plugin" == host-local ]] && kind=ipam
      [[ "$plugin" == portmap ]] && kind=meta
      dir="$BUILD_DIR/cni-plugins-$CNI_PLUGINS_VERSION"
      write_module "$dir" "github.com/containernetworking/plugins $CNI_PLUGINS_VERSION"
      go_build "$name" "github.com/containernetworking/plugins/plugins/$kind/$plugin" "$dir" \
        "-X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=$CNI_PLUGINS_VERSION"
      ;;
    coredns)
      dir="$BUILD_DIR/coredns-$COREDNS_VERSION"
      write_module "$dir" "github.com/coredns/coredns $COREDNS_VERSION"
      go_build coredns github.com/coredns/coredns "$dir" ""
      ;;
    crictl)
      dir="$BUILD_DIR/cri-tools-$CRI_TOOLS_VERSION"
      write_module "$dir" "sigs.k8s.io/cri-tools $CRI_TOOLS_VERSION"
      go_build crictl sigs.k8s.io/cri-tools/cmd/crictl "$dir" "-X sigs.k8s.io/cri-tools/pkg/version.Version=$CRI_TOOLS_VERSION"
      ;;
    kind)
      dir="$BUILD_DIR/kind-$KIND_VERSION"
      write_module "$dir" "sigs.k8s.io/kind $KIND_VERSION"
      go_build kind sigs.k8s.io/kind "$dir" ""
      ;;
    etcd)
      # The etcd server's main package is the root of go.etcd.io/etcd/server/v3; its go.mod's replaces only
      # point at sibling folders of the same release, which the requires already pin.
      dir="$BUILD_DIR/etcd-$ETCD_VERSION"
      write_module "$dir" "go.etcd.io/etcd/server/v3 $ETCD_VERSION"
      go_build etcd go.etcd.io/etcd/server/v3 "$dir" ""
      ;;
    helm)
      dir="$BUILD_DIR/helm-$HELM_VERSION"
      write_module "$dir" "helm.sh/helm/v3 $HELM_VERSION"
      go_build helm helm.sh/helm/v3/cmd/helm "$dir" \
        "-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
      ;;
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

main() {
  local names=("$@") name found total_start=$SECONDS built=0
  [[ ${#names[@]} -gt 0 ]] || names=("${ALL[@]}")
  mkdir -p "$BIN_DIR"

  # Serialise concurrent runs (CI step and a developer's `up`, two test runs) on the same cache.
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$BIN_DIR/.lock"
    if ! flock -n 9; then
      log "another ensure-binaries run holds $BIN_DIR/.lock; waiting ..."
      flock 9
    fi
  fi

  # Everything the builds need (Go, and for pause and runc a C compiler, libc6-dev, libseccomp), named at once
  # before any of them starts, in seconds rather than at runc after the others' 20 minutes
  # (hack/check-prerequisites.sh). Not run when nothing needs building.
  local to_build=()
  for name in "${names[@]}"; do
    recipe "$name" >/dev/null
    prebuilt "$name" >/dev/null || is_fresh "$name" || to_build+=("$name")
  done
  if [[ ${#to_build[@]} -gt 0 ]]; then
    bash "$ROOT/hack/check-prerequisites.sh" build "${to_build[@]}" ||
      die "cannot build ${to_build[*]}: prerequisites missing (above)"
  fi

  for name in "${names[@]}"; do
    if found="$(prebuilt "$name")"; then
      quiet || log "$name: using $found (from GARDENER_IPV6_BIN_DIR/KUBEBUILDER_ASSETS)"
    elif is_fresh "$name"; then
      quiet || log "$name: cached ($(cat "$BIN_DIR/.$name.stamp"))"
    else
      build_one "$name"
      built=1
    fi
  done
  if [[ $built -eq 1 ]] || ! quiet; then
    log "done in $((SECONDS - total_start))s"
  fi
}

quiet() { [[ "${GARDENER_IPV6_QUIET_CACHED:-}" == 1 ]]; }

main "$@"
