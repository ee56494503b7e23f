#!/usr/bin/env bash
# Builds every image a kind seed needs without an image registry, from Debian's packages and the binaries of
# hack/ensure-binaries.sh, into the local Docker engine:
#   gardener-ipv6/debian:bookworm-KEY   Debian bookworm (debootstrap, minbase + the node tools), `docker import`ed
#   gardener-ipv6/kind-base:KEY         kind's node base image on it: systemd, kind's own files (entrypoint, units,
#                                       containerd config, from the sigs.k8s.io/kind module), containerd, runc,
#                                       crictl and the CNI plugins from the pinned builds, the cgroup delegation hook
#                                       and a read-write sysfs for machine pods in user namespaces, the host's node
#                                       and the NetworkPolicy enforcer's CNI plugin
#   gardener-ipv6/kind-node:VERSION     the node image, assembled as `kind build node-image` does (kubeadm, kubelet,
#                                       kubectl in /usr/bin, /kind/version, the component images imported into
#                                       containerd) — `kind build node-image` itself always fetches from a registry
#   gardener-ipv6:dev                   the project's image (bin/, dist/, production node_modules, charts/internal,
#                                       the host's node binary)
#   gardener-ipv6/bind9:KEY             BIND9 from Debian's bind9, for the chart's DNS server
# The component images carry the names `kubeadm config images list` prints (etcd and CoreDNS with the pinned
# versions' tags; the kind config sets them); the control plane's are the shoots' own (`gardener-ipv6 images`). Every image is keyed by what it is built from: a second run with
# nothing changed builds nothing. Prints `NAME=IMAGE` lines for the callers (hack/local/kind-up.sh).
#
# Usage: hack/kind/build-images.sh [--base-only]   Env: GARDENER_IPV6_DEBIAN_MIRROR (default http://deb.debian.org/debian)
#   --base-only  the Debian base alone, which needs no binary: downloads and disk, so .ci/run builds it while the
#                binaries compile
set -euo pipefail
BASE_ONLY=0
case "${1:-}" in
  --base-only) BASE_ONLY=1 ;;
  "") ;;
  *)
    echo "usage: $0 [--base-only]" >&2
    exit 2
    ;;
esac
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=hack/versions.env
source "$ROOT/hack/versions.env"
BIN="$ROOT/.cache/bin"
WORK="$ROOT/.cache/kind-images"
MIRROR="${GARDENER_IPV6_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
KIND_MODULE="$(go env GOMODCACHE 2>/dev/null || echo "$HOME/go/pkg/mod")/sigs.k8s.io/kind@$KIND_VERSION"

log() { printf '[hack/kind/build-images.sh] %s\n' "$*" >&2; }
die() {
  printf '[hack/kind/build-images.sh] error: %s\n' "$*" >&2
  exit 1
}

# What kind's base image installs (its images/base/Dockerfile), minus what a Docker-only seed never uses
# (nfs-common, open-iscsi, fuse-overlayfs), plus what the component images need.
PACKAGES=systemd,dbus,conntrack,iptables,nftables,iproute2,ethtool,util-linux,mount,kmod,libseccomp2,pigz,e2fsprogs,bash,ca-certificates,curl,jq,procps,ebtables

for tool in docker debootstrap; do
  command -v "$tool" >/dev/null || die "$tool is missing: apt-get install ${tool/docker/docker.io}"
done
[[ "$(id -u)" == 0 ]] || die "debootstrap needs root"
docker info >/dev/null 2>&1 || die "no Docker engine answers: bash hack/local/docker/engine.sh"
[[ $BASE_ONLY -eq 1 ]] || bash "$ROOT/hack/ensure-binaries.sh" kubeadm kubelet kubectl kube-apiserver \
  kube-controller-manager kube-scheduler kube-proxy etcd coredns pause containerd containerd-shim-runc-v2 ctr runc \
  crictl cni-bridge cni-host-local cni-loopback kind >&2
[[ $BASE_ONLY -eq 1 || -d "$KIND_MODULE/images/base/files" ]] || (cd "$ROOT" && GOFLAGS=-mod=mod go mod download "sigs.k8s.io/kind@$KIND_VERSION" >/dev/null 2>&1) ||
  die "sigs.k8s.io/kind@$KIND_VERSION is not in the module cache and could not be downloaded"
mkdir -p "$WORK"

key() { sha256sum | cut -c1-12; }
# A build context of this run's own: two builds at once (two checkouts sharing the cache) must not empty each other's.
CONTEXTS=()
new_context() {
  ctx="$(mktemp -d "$WORK/$1.XXXXXX")"
  CONTEXTS+=("$ctx")
}
trap 'rm -rf "${CONTEXTS[@]}"' EXIT
exists() { docker image inspect "$1" >/dev/null 2>&1; }
stamp() { cat "$BIN/.$1.stamp"; }

# --- Debian base ------------------------------------------------------------------------------------------------
BASE_KEY="$(printf 'bookworm %s %s recipe=1' "$PACKAGES" "$MIRROR" | key)"
BASE="gardener-ipv6/debian:bookworm-$BASE_KEY"
if ! exists "$BASE"; then
  rootfs="$WORK/rootfs-$BASE_KEY"
  rm -rf "$rootfs"
  log "debootstrap bookworm into ${rootfs#"$ROOT"/} (about 2 minutes)"
  debootstrap --variant=minbase --include="$PACKAGES" bookworm "$rootfs" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 ||
    {
      tail -n 20 "$WORK/debootstrap.log" >&2
      die "debootstrap failed (log: $WORK/debootstrap.log)"
    }
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | docker import - "$BASE" >/dev/null
  rm -rf "$rootfs"
fi
log "base: $BASE"
[[ $BASE_ONLY -eq 0 ]] || exit 0

# Builds IMAGE from a Dockerfile read on stdin with CONTEXT (a folder) unless it exists.
build() {
  local image="$1" context="$2"
  exists "$image" && return 0
  log "building $image"
  local out
  # The classic builder (Debian's Docker 20.10 has no BuildKit): its deprecation notice is noise, its errors are not.
  out="$(DOCKER_BUILDKIT=0 docker build -q -t "$image" -f - "$context" 2>&1)" || {
    printf '%s\n' "$out" >&2
    die "building $image failed"
  }
}

# --- kind's node base -----------------------------------------------------------------------------------------------
(cd "$ROOT" && npm run --silent build >&2)
# Machine pods run in user namespaces of their own: the nodes' containerd delegates their cgroups to them through an
# OCI hook in its base runtime spec (`gardener-ipv6 cgroup-delegation`). kind's own base spec is containerd's default
# with kind's product-files hook, without rlimits.
DELEGATION="$(mktemp -d "$WORK/delegation.XXXXXX")"
CONTEXTS+=("$DELEGATION")
"$BIN/ctr" oci spec |
  jq '.hooks.createContainer[.hooks.createContainer | length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' |
  jq 'del(.process.rlimits)' >"$DELEGATION/default.json"
node "$ROOT/bin/gardener-ipv6.js" cgroup-delegation --default-spec "$DELEGATION/default.json" \
  --hook-path /kind/bin/cgroup-delegation-hook --out "$DELEGATION"
# The CNI plugin hack/local/cni.sh chains after the bridge: it asks the chart's NetworkPolicy enforcer for each new
# pod. A node script, for this host's node (the project's image carries the same binary).
NODE_BINARY="$(command -v node)"
node "$ROOT/bin/gardener-ipv6.js" network-policy-enforcer --print-cni-plugin /usr/local/bin/node \
  >"$DELEGATION/gardener-ipv6-network-policy"
NODE_BASE_KEY="$(printf '%s\n' "$BASE" "$(stamp containerd)" "$(stamp runc)" "$(stamp crictl)" "$(stamp cni-bridge)" \
  "$KIND_VERSION" "$(cat "$DELEGATION/cgroup-delegation-hook" "$DELEGATION/base-runtime-spec.json" | key)" \
  "$("$NODE_BINARY" --version)" "$(key <"$DELEGATION/gardener-ipv6-network-policy")" "recipe=4" | key)"
NODE_BASE="gardener-ipv6/kind-base:$NODE_BASE_KEY"
if ! exists "$NODE_BASE"; then
  new_context kind-base && mkdir -p "$ctx/bin" "$ctx/cni"
  cp -r "$KIND_MODULE/images/base/files" "$ctx/files" && chmod -R u+w "$ctx/files"
  cp "$BIN/containerd" "$BIN/containerd-shim-runc-v2" "$BIN/ctr" "$BIN/crictl" "$BIN/runc" "$ctx/bin/"
  for plugin in bridge host-local loopback; do cp "$BIN/cni-$plugin" "$ctx/cni/$plugin"; done
  cp "$DELEGATION/gardener-ipv6-network-policy" "$ctx/cni/"
  cp "$NODE_BINARY" "$ctx/bin/node"
  cp "$DELEGATION/base-runtime-spec.json" "$ctx/cri-base.json"
  cp "$DELEGATION/cgroup-delegation-hook" "$ctx/files/kind/bin/cgroup-delegation-hook"
  # A pod in a user namespace of its own mounts a sysfs of its own, which the kernel allows only where a read-write
  # sysfs is fully visible; kind's entrypoint remounts the node's sysfs read-only (for systemd). A sysfs of an empty
  # network namespace, read-write and used by nothing, is one.
  mkdir -p "$ctx/files/etc/systemd/system/containerd.service.d"
  cat >"$ctx/files/etc/systemd/system/containerd.service.d/10-gardener-ipv6-sysfs.conf" <<'UNIT'
[Service]
ExecStartPre=/bin/sh -c 'mountpoint -q /run/gardener-ipv6/sysfs || { mkdir -p /run/gardener-ipv6/sysfs && unshare --net mount -t sysfs -o nosuid,nodev,noexec sysfs /run/gardener-ipv6/sysfs; }'
UNIT
  # The steps of kind's images/base/Dockerfile, with the classic builder (no COPY --chmod).
  build "$NODE_BASE" "$ctx" <<EOF
FROM $BASE
COPY files/usr/local/bin/ /usr/local/bin/
COPY files/kind/ /kind/
COPY files/etc/ /etc/
COPY bin/containerd bin/containerd-shim-runc-v2 bin/ctr bin/crictl bin/node /usr/local/bin/
COPY bin/runc /usr/local/sbin/runc
COPY cni/ /opt/cni/bin/
COPY cri-base.json /etc/containerd/cri-base.json
RUN chmod 0755 /usr/local/bin/* /kind /kind/bin /kind/bin/* /opt/cni/bin/* \\
    && find /etc/systemd/system /etc/containerd /etc/default /etc/sysctl.d /etc/crictl.yaml -type f -exec chmod 0644 {} + \\
    && find /lib/systemd/system/sysinit.target.wants/ -name "systemd-tmpfiles-setup.service" -delete \\
    && rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* \\
       /lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/sockets.target.wants/*udev* \\
       /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/* \\
    && echo "ReadKMsg=no" >> /etc/systemd/journald.conf \\
    && ln -sf /usr/lib/systemd/systemd /sbin/init \\
    && systemctl enable kubelet.service containerd.service undo-mount-hacks.service \\
    && systemctl mask systemd-binfmt.service \\
    && mkdir -p /etc/kubernetes/manifests \\
    && containerd --version && runc --version && crictl --version && node --version
ENV container=docker
STOPSIGNAL SIGRTMIN+3
ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]
EOF
  rm -rf "$ctx"
fi
log "kind base: $NODE_BASE"

# --- component images (what kubeadm runs) -----------------------------------------------------------------------
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler and pause are the very images the shoots' control
# planes run (`gardener-ipv6 images`, OCI archives under the names kubeadm uses); kube-proxy (which needs iptables
# and nft) and CoreDNS (kubeadm's name for it) are built here on the Debian base.
SEED_IMAGES="$(node "$ROOT/bin/gardener-ipv6.js" images)"
# The sandbox image under kind's containerd name (tagged kubeadm's 3.10.2 in the node below); the machines carry the
# same binary as pause:3.10.2 too, for the e2e tests.
KUBEADM_PAUSE=registry.k8s.io/pause:3.10
KUBEADM_IMAGES=()
while IFS=$'\t' read -r name archive; do
  case "$name" in
    registry.k8s.io/etcd:* | registry.k8s.io/kube-apiserver:* | registry.k8s.io/kube-controller-manager:* | \
      registry.k8s.io/kube-scheduler:* | "$KUBEADM_PAUSE") KUBEADM_IMAGES+=("$archive") ;;
  esac
done <<<"$SEED_IMAGES"
[[ ${#KUBEADM_IMAGES[@]} -eq 5 ]] || die "gardener-ipv6 images printed ${#KUBEADM_IMAGES[@]} of kubeadm's 5 images"
ETCD_TAG="${ETCD_VERSION#v}-0"
COMPONENTS_KEY="$(printf '%s\n' "$BASE" "$(stamp kube-proxy)" "$(stamp coredns)" "recipe=2" | key)"
COMPONENTS_TAR="$WORK/components-$COMPONENTS_KEY.tar"
if [[ ! -f "$COMPONENTS_TAR" ]]; then
  new_context components
  cp "$BIN/kube-proxy" "$BIN/coredns" "$ctx/"
  docker rmi "registry.k8s.io/kube-proxy:$KUBERNETES_VERSION" "registry.k8s.io/coredns/coredns:$COREDNS_VERSION" >/dev/null 2>&1 || true
  # kubeadm's kube-proxy DaemonSet runs /usr/local/bin/kube-proxy; its CoreDNS Deployment the image's entrypoint.
  build "registry.k8s.io/kube-proxy:$KUBERNETES_VERSION" "$ctx" <<EOF
FROM $BASE
COPY kube-proxy /usr/local/bin/kube-proxy
ENTRYPOINT ["/usr/local/bin/kube-proxy"]
EOF
  build "registry.k8s.io/coredns/coredns:$COREDNS_VERSION" "$ctx" <<EOF
FROM $BASE
COPY coredns /coredns
ENTRYPOINT ["/coredns"]
EOF
  docker save -o "$COMPONENTS_TAR.tmp" "registry.k8s.io/kube-proxy:$KUBERNETES_VERSION" "registry.k8s.io/coredns/coredns:$COREDNS_VERSION"
  mv -f "$COMPONENTS_TAR.tmp" "$COMPONENTS_TAR"
  rm -rf "$ctx"
fi

# --- node image -----------------------------------------------------------------------------------------------
NODE_KEY="$(printf '%s\n' "$NODE_BASE" "$COMPONENTS_KEY" "${KUBEADM_IMAGES[@]##*/}" "$(stamp kubelet)" "$(stamp kubeadm)" \
  "recipe=3" | key)"
NODE="gardener-ipv6/kind-node:$KUBERNETES_VERSION-$NODE_KEY"
if ! exists "$NODE"; then
  log "assembling $NODE"
  id="$(docker run -d --privileged --entrypoint sleep "$NODE_BASE" infinity)"
  trap 'docker rm -f -v "$id" >/dev/null 2>&1 || true' EXIT
  for binary in kubeadm kubelet kubectl; do docker cp "$BIN/$binary" "$id:/usr/bin/$binary"; done
  docker exec "$id" sh -c "chmod 0755 /usr/bin/kubeadm /usr/bin/kubelet /usr/bin/kubectl && echo $KUBERNETES_VERSION > /kind/version"
  docker exec "$id" bash -c 'nohup containerd >/var/log/containerd-build.log 2>&1 &
    for i in $(seq 30); do [ -S /run/containerd/containerd.sock ] && ctr version >/dev/null 2>&1 && exit 0; sleep 1; done
    cat /var/log/containerd-build.log; exit 1'
  # What kind's node image build does: pinned (never garbage-collected), not unpacked (the snapshots are made when
  # a container first runs).
  for archive in "$COMPONENTS_TAR" "${KUBEADM_IMAGES[@]}"; do
    docker exec -i "$id" ctr --namespace=k8s.io images import --label=io.cri-containerd.pinned=pinned \
      --all-platforms --no-unpack --digests - <"$archive" >/dev/null
  done
  # kubeadm 1.37 names pause 3.10.2, kind's containerd config 3.10: one image under both names.
  docker exec "$id" ctr --namespace=k8s.io images tag --force registry.k8s.io/pause:3.10 registry.k8s.io/pause:3.10.2 >/dev/null
  # sleep is the container's pid 1 and reaps nothing: wait until containerd is gone or a zombie.
  docker exec "$id" sh -c 'pkill -x containerd; while ps -C containerd -o stat= | grep -qv "^Z"; do sleep 0.2; done
    rm -f /var/log/containerd-build.log'
  docker commit --change 'ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]' "$id" "$NODE" >/dev/null
  docker rm -f -v "$id" >/dev/null
  trap - EXIT
fi
log "node image: $NODE"
# --- the project's image ------------------------------------------------------------------------------------------
# What the Dockerfile builds where a registry is reachable, on the Debian base with this host's node: bin/, dist/,
# the production dependencies, the calico chart the network extension renders. Tagged by content, so a changed
# build rolls the chart's pods.
APP_KEY="$( (
  cd "$ROOT" && tar -c --sort=name --mtime=@0 --owner=0 --group=0 bin dist charts/internal package.json package-lock.json
  "$NODE_BINARY" --version
  echo "$BASE recipe=1"
) | key)"
APP="gardener-ipv6:dev-$APP_KEY"
if ! exists "$APP"; then
  LOCK_KEY="$(key <"$ROOT/package-lock.json")"
  modules="$WORK/app-modules-$LOCK_KEY"
  if [[ ! -d "$modules/node_modules" ]]; then
    log "installing the production dependencies (npm ci --omit=dev)"
    rm -rf "$modules" && mkdir -p "$modules"
    cp "$ROOT/package.json" "$ROOT/package-lock.json" "$modules/"
    (cd "$modules" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund >/dev/null)
  fi
  new_context app && mkdir -p "$ctx/app/charts"
  cp -r "$ROOT/bin" "$ROOT/dist" "$ROOT/package.json" "$modules/node_modules" "$ctx/app/"
  cp -r "$ROOT/charts/internal" "$ctx/app/charts/"
  cp "$NODE_BINARY" "$ctx/node"
  build "$APP" "$ctx" <<EOF
FROM $BASE
COPY node /usr/local/bin/node
COPY app /app
WORKDIR /app
ENV NODE_ENV=production
USER 65532:65532
EXPOSE 9443 8080
ENTRYPOINT ["/usr/local/bin/node", "--no-memory-reducer", "/app/bin/gardener-ipv6.js"]
CMD ["--help"]
EOF
  rm -rf "$ctx"
fi
log "project image: $APP"

# --- BIND9 ----------------------------------------------------------------------------------------------------------
BIND9="gardener-ipv6/bind9:$(printf '%s bind9 recipe=1' "$BASE" | key)"
build "$BIND9" "$WORK" <<EOF
FROM $BASE
RUN echo "deb $MIRROR bookworm main" > /etc/apt/sources.list \
    && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends bind9 >/dev/null \
    && rm -rf /var/lib/apt/lists/* && named -v
EOF
log "BIND9 image: $BIND9"

echo "NODE_IMAGE=$NODE"
echo "ETCD_TAG=$ETCD_TAG"
echo "COREDNS_TAG=$COREDNS_VERSION"
echo "APP_IMAGE=$APP"
echo "BIND9_IMAGE=$BIND9"
echo "SEED_IMAGES=$(cut -f2 <<<"$SEED_IMAGES" | tr '\n' ' ')"
