#!/usr/bin/env bash
# Creates the kind cluster of an IP family from hack/kind/cluster-FAMILY.yaml, without a CNI (calico.sh is next),
# and writes its kubeconfig to .cache/kind/gardener-local-FAMILY.kubeconfig. A cluster that exists is kept.
# shellcheck source=hack/local/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
help_requested "$@" && usage "Creates the kind cluster gardener-local-FAMILY (IPv6: pods fd00:10:1::/48, services fd00:10:2::/112)."
parse_family "${1:-}"
require docker kind kubectl host_ipv6

mkdir -p "$(dirname "$CLUSTER_KUBECONFIG")"
config="$KIND_CONFIG"
if [[ "$(uname -s)" == Darwin ]]; then
  # Docker Desktop forwards published ports over IPv4 only: the API server has to be reached at 127.0.0.1.
  config="$(mktemp)"
  trap 'rm -f "$config"' EXIT
  awk '{ print } /^networking:$/ { print "  apiServerAddress: 127.0.0.1" }' "$KIND_CONFIG" >"$config"
fi

if kind get clusters 2>/dev/null | grep -qx "$CLUSTER_NAME"; then
  log "kind cluster $CLUSTER_NAME exists; writing its kubeconfig"
  kind export kubeconfig --name "$CLUSTER_NAME" --kubeconfig "$CLUSTER_KUBECONFIG"
else
  log "creating kind cluster $CLUSTER_NAME from ${KIND_CONFIG#"$ROOT"/}"
  kind create cluster --config "$config" --kubeconfig "$CLUSTER_KUBECONFIG"
fi
log "the node stays NotReady until calico runs: hack/local/calico.sh $FAMILY"
echo "export KUBECONFIG=$CLUSTER_KUBECONFIG"
