#!/usr/bin/env bash
# Builds the image, loads it into the kind cluster of an IP family and installs charts/gardener-ipv6 with the
# family's values (charts/gardener-ipv6/ci/FAMILY-values.yaml). Extra arguments go to `helm upgrade --install`,
# e.g. --set logLevel=debug.
# shellcheck source=hack/local/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
help_requested "$@" && usage "Builds gardener-ipv6:dev and installs the chart into gardener-local-FAMILY (namespace gardener-ipv6)."
parse_family "${1:-}"
shift || true
require docker kind kubectl helm
require_cluster

IMAGE="${GARDENER_IPV6_IMAGE:-gardener-ipv6:dev}"
log "building $IMAGE"
docker build -t "$IMAGE" "$ROOT"
kind load docker-image "$IMAGE" --name "$CLUSTER_NAME"

log "installing the chart into namespace $RELEASE_NAMESPACE"
helm upgrade --install gardener-ipv6 "$ROOT/charts/gardener-ipv6" \
  --kubeconfig "$CLUSTER_KUBECONFIG" \
  --namespace "$RELEASE_NAMESPACE" --create-namespace \
  --values "$ROOT/charts/gardener-ipv6/ci/$FAMILY-values.yaml" \
  --set-string image.repository="${IMAGE%:*}" --set-string image.tag="${IMAGE##*:}" \
  "$@"
for deployment in $(kubectl -n "$RELEASE_NAMESPACE" get deployments -l app.kubernetes.io/instance=gardener-ipv6 -o name); do
  kubectl -n "$RELEASE_NAMESPACE" rollout status "$deployment" --timeout=5m
done
log "running; next: hack/local/examples.sh $FAMILY"
