#!/usr/bin/env bash
# Creates the kind cluster of an IP family from hack/kind/cluster-FAMILY.yaml on the node image of
# hack/kind/build-images.sh (no registry needed), gives it a pod network (hack/local/cni.sh), routes the load-balancer
# networks of the shoots' API servers to its first node and writes its kubeconfig to
# .cache/kind/gardener-local-FAMILY.kubeconfig. A cluster that exists is kept.
#
# What this host lacks is detected and patched into the cluster's config, only where it is so:
#   - cgroup v1 (no cgroup2 at /sys/fs/cgroup): kubelet >= 1.35 refuses it unless failCgroupV1 is false;
#   - a bounding set without CAP_SYS_RESOURCE: containerd in the node can't give pod sandboxes a negative
#     oom_score_adj, so its CRI plugin gets restrict_oom_score_adj (what kind does for rootless nodes).
# shellcheck source=hack/local/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
help_requested "$@" && usage "Creates the kind cluster gardener-local-FAMILY (IPv6: pods fd00:10:1::/48, services fd00:10:2::/112)."
parse_family "${1:-}"
require docker kind kubectl host_ipv6

mkdir -p "$(dirname "$CLUSTER_KUBECONFIG")"
# kind's Docker network with the ranges of Gardener's local setup (the Seed examples' nodes: fd00:10::/64 and
# 172.18.0.0/16), created before kind would create it with its own.
KIND_NETWORK_V6=fd00:10::/64 KIND_NETWORK_V4=172.18.0.0/16
if ! docker network inspect kind >/dev/null 2>&1; then
  log "creating Docker network kind ($KIND_NETWORK_V6, $KIND_NETWORK_V4)"
  docker network create kind --driver bridge --ipv6 --subnet "$KIND_NETWORK_V6" --subnet "$KIND_NETWORK_V4" \
    --opt com.docker.network.bridge.enable_ip_masquerade=true --opt com.docker.network.driver.mtu=1500 >/dev/null
elif ! docker network inspect kind --format '{{range .IPAM.Config}}{{.Subnet}} {{end}}' | grep -qF "$KIND_NETWORK_V6"; then
  log "warning: Docker network kind exists without $KIND_NETWORK_V6 (the Seed examples' nodes range); remove it (docker network rm kind) when no cluster uses it"
fi
if kind get clusters 2>/dev/null | grep -qx "$CLUSTER_NAME"; then
  log "kind cluster $CLUSTER_NAME exists; writing its kubeconfig"
  kind export kubeconfig --name "$CLUSTER_NAME" --kubeconfig "$CLUSTER_KUBECONFIG"
else
  require root debootstrap
  images="$(bash "$ROOT/hack/kind/build-images.sh")"
  node_image="$(sed -n 's/^NODE_IMAGE=//p' <<<"$images")"
  etcd_tag="$(sed -n 's/^ETCD_TAG=//p' <<<"$images")"
  coredns_tag="$(sed -n 's/^COREDNS_TAG=//p' <<<"$images")"
  config="$(mktemp)"
  trap 'rm -f "$config"' EXIT
  {
    cat "$KIND_CONFIG"
    # The component images carry the pinned etcd and CoreDNS versions (hack/kind/build-images.sh).
    cat <<EOF
kubeadmConfigPatches:
  - |
    kind: ClusterConfiguration
    etcd:
      local:
        imageTag: "$etcd_tag"
    dns:
      imageTag: "$coredns_tag"
  - |
    kind: KubeletConfiguration
    # A machine pod with all its shoot runs: no machine takes more than an eighth of a small host's 32768 PIDs
    # (SEED_POD_PIDS_LIMIT in src/apis/provider-local/v1alpha1/kubelet.ts).
    podPidsLimit: 4096
EOF
    if [[ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" != cgroup2fs ]]; then
      log "this host mounts cgroup v1: the kubelets get failCgroupV1: false"
      cat <<EOF
  - |
    kind: KubeletConfiguration
    failCgroupV1: false
EOF
    fi
    bounding=$((16#$(awk '/^CapBnd:/ { print $2 }' /proc/self/status)))
    if ((!(bounding >> 24 & 1))); then
      log "this host's processes lack CAP_SYS_RESOURCE: the nodes' containerd restricts oom_score_adj"
      cat <<EOF
containerdConfigPatches:
  - |
    [plugins."io.containerd.grpc.v1.cri"]
      restrict_oom_score_adj = true
EOF
    fi
  } >"$config"
  log "creating kind cluster $CLUSTER_NAME from ${KIND_CONFIG#"$ROOT"/} on $node_image"
  # --retain keeps a node that failed to start long enough to say why (its control plane's containers and logs).
  # One more attempt after a failure: kubeadm gives up when the API server restarts while it bootstraps the admin
  # binding, which a busy machine can cause; the first attempt's logs stay in the output.
  for attempt in 1 2; do
    if kind create cluster --config "$config" --name "$CLUSTER_NAME" --image "$node_image" \
      --kubeconfig "$CLUSTER_KUBECONFIG" --wait 0s --retain; then
      break
    fi
    node="$CLUSTER_NAME-control-plane"
    log "kind create cluster failed (attempt $attempt); what the node $node ran:"
    docker exec "$node" crictl ps -a >&2 || true
    for component in etcd kube-apiserver; do
      for id in $(docker exec "$node" crictl ps -a -q --name "$component" 2>/dev/null | head -2); do
        log "the last lines of $component ($id):"
        docker exec "$node" crictl logs --tail 40 "$id" >&2 || true
      done
    done
    log "the kubelet's last lines:"
    docker exec "$node" journalctl -u kubelet --no-pager -n 40 >&2 || true
    kind delete cluster --name "$CLUSTER_NAME" >/dev/null 2>&1 || true
    [[ $attempt -lt 2 ]] || die "kind create cluster $CLUSTER_NAME failed twice"
  done
fi
bash "$ROOT/hack/local/cni.sh" "$FAMILY"
echo "export KUBECONFIG=$CLUSTER_KUBECONFIG"
