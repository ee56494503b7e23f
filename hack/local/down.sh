#!/usr/bin/env bash
# Deletes the kind cluster of an IP family and its kubeconfig, this host's routes to its load-balancer networks,
# kind's Docker network when no other cluster uses it, and what a broken image build left in .cache/kind-images.
# The images themselves stay in Docker, as a cache for the next hack/local/up.sh (docker rmi to free the space).
# shellcheck source=hack/local/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
help_requested "$@" && usage "Deletes the kind cluster gardener-local-FAMILY, its routes and kind's network when unused."
parse_family "${1:-}"
require docker kind

# The routes hack/local/deploy.sh added point at the cluster's first node: those (and only those) are removed.
node="$(kind get nodes --name "$CLUSTER_NAME" 2>/dev/null | head -n1)"
if [[ -n "$node" && "$(id -u)" == 0 ]]; then
  for address in $(docker inspect "$node" --format '{{range .NetworkSettings.Networks}}{{.GlobalIPv6Address}} {{.IPAddress}}{{end}}' 2>/dev/null); do
    [[ -n "$address" ]] || continue
    for network in $({ ip route show; ip -6 route show; } 2>/dev/null | awk -v via="$address" '$2 == "via" && $3 == via { print $1 }'); do
      ip route del "$network" via "$address" 2>/dev/null || true
      log "removed the route $network via $address"
    done
  done
fi
kind delete cluster --name "$CLUSTER_NAME"
rm -f "$CLUSTER_KUBECONFIG"
if docker network inspect kind >/dev/null 2>&1 &&
  [[ -z "$(docker network inspect kind --format '{{range .Containers}}{{.Name}} {{end}}' 2>/dev/null | tr -d ' ')" ]]; then
  docker network rm kind >/dev/null && log "removed the Docker network kind"
fi
rm -rf "$ROOT"/.cache/kind-images/rootfs-* "$ROOT"/.cache/kind-images/{kind-base,components,app}
log "deleted $CLUSTER_NAME"
