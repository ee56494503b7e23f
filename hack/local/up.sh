#!/usr/bin/env bash
# All steps in order: kind cluster, calico, chart, examples. Checks every prerequisite first.
# shellcheck source=hack/local/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
help_requested "$@" && usage "Creates gardener-local-FAMILY with calico, installs the chart and reconciles the example Shoot."
parse_family "${1:-}"
require docker kind kubectl helm host_ipv6

here="$(dirname "${BASH_SOURCE[0]}")"
bash "$here/kind-up.sh" "$FAMILY" >/dev/null
bash "$here/calico.sh" "$FAMILY"
bash "$here/deploy.sh" "$FAMILY"
bash "$here/examples.sh" "$FAMILY"
echo "export KUBECONFIG=$CLUSTER_KUBECONFIG"
