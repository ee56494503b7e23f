#!/usr/bin/env bash
# Deletes the kind cluster of an IP family and its kubeconfig.
# shellcheck source=hack/local/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
help_requested "$@" && usage "Deletes the kind cluster gardener-local-FAMILY."
parse_family "${1:-}"
require docker kind

kind delete cluster --name "$CLUSTER_NAME"
rm -f "$CLUSTER_KUBECONFIG"
log "deleted $CLUSTER_NAME"
