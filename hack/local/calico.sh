#!/usr/bin/env bash
# Installs calico into the kind cluster of an IP family (hack/calico/FAMILY) and waits until the node is Ready.
# shellcheck source=hack/local/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
help_requested "$@" && usage "Installs calico with the pools of the family (IPv6: fd00:10:1::/56 with NAT66) into gardener-local-FAMILY."
parse_family "${1:-}"
require docker kubectl
require_cluster

log "applying hack/calico/$FAMILY (the calico manifest is fetched from GitHub)"
# Server-side: calico's CRDs are too large for the last-applied annotation of a client-side apply.
kubectl apply --server-side --force-conflicts -k "$ROOT/hack/calico/$FAMILY"
kubectl -n kube-system rollout status daemonset/calico-node --timeout=5m
kubectl wait --for=condition=Ready nodes --all --timeout=5m
log "calico is running; next: hack/local/deploy.sh $FAMILY"
