#!/usr/bin/env bash
# All steps in order: images and kind cluster with its pod network, chart, examples. Checks every prerequisite first.
# shellcheck source=hack/local/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
help_requested "$@" && usage "Creates gardener-local-FAMILY, installs the chart and creates the example Seed and Shoot."
parse_family "${1:-}"
require docker kind kubectl helm host_ipv6 root debootstrap

here="$(dirname "${BASH_SOURCE[0]}")"
bash "$here/kind-up.sh" "$FAMILY" >/dev/null
bash "$here/deploy.sh" "$FAMILY"
bash "$here/examples.sh" "$FAMILY"
echo "export KUBECONFIG=$CLUSTER_KUBECONFIG"
