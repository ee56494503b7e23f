#!/usr/bin/env bash
# Creates the CloudProfile `local`, the Seed and the Shoot of an IP family from examples/, waits until the Shoot is
# reconciled and shows the DNS records of its API server.
# shellcheck source=hack/local/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
help_requested "$@" && usage "Applies examples/cloudprofile-local.yaml, examples/seed-*.yaml and examples/shoot-*.yaml of the family and waits for the Shoot."
parse_family "${1:-}"
require docker kubectl
require_cluster

seed="$(seed_example "$FAMILY")"
case "$FAMILY" in
  ipv6) shoot=shoot-ipv6.yaml name=local record=AAAA ;;
  ipv4) shoot=shoot-ipv4.yaml name=local-v4 record=A ;;
  dual) shoot=shoot-dual-stack.yaml name=local-dual record=AAAA ;;
esac

# The webhook must answer before Seeds and Shoots can be written (failurePolicy Fail). A rolled-out Deployment is not
# enough: the API server reaches it through its Service, which answers once kube-proxy has programmed the pod's
# endpoint. A server-side dry run goes through the webhook without writing anything.
kubectl -n "$RELEASE_NAMESPACE" rollout status deployment/gardener-ipv6-admission --timeout=3m
deadline=$((SECONDS + 120))
until out="$(kubectl apply --dry-run=server -f "$ROOT/examples/cloudprofile-local.yaml" 2>&1)"; do
  [[ "$out" == *"failed calling webhook"* ]] || die "$out"
  ((SECONDS < deadline)) || die "the admission webhook did not answer within 2 minutes: $out"
  sleep 1
done
# The Shoot's admission defaults and checks it against the CloudProfile it names: the profile comes first.
kubectl apply -f "$ROOT/examples/cloudprofile-local.yaml"
kubectl apply -f "$ROOT/examples/$seed"
kubectl create namespace garden-local --dry-run=client -o yaml | kubectl apply -f -
kubectl apply -f "$ROOT/examples/$shoot"

log "waiting for shoot garden-local/$name"
if ! kubectl -n garden-local wait "shoot/$name" --for=jsonpath='{.status.lastOperation.state}'=Succeeded --timeout=5m; then
  kubectl -n garden-local get shoot "$name" -o jsonpath='{.status.lastOperation}{"\n"}' >&2
  die "shoot garden-local/$name did not succeed; see docs/troubleshooting.md"
fi
kubectl get dnsrecords -n "shoot--local--$name" \
  -o custom-columns=NAME:.metadata.name,TYPE:.spec.recordType,DNS-NAME:.spec.name,VALUES:.spec.values,STATE:.status.lastOperation.state

api="api.$name.local.external.local.gardener.cloud"
log "the shoot's API server name: $api"
echo "Ask the cluster's DNS server (TCP: kubectl port-forward carries TCP only):"
echo "  kubectl -n $RELEASE_NAMESPACE port-forward service/gardener-ipv6-dns-server 10053:53 &"
echo "  dig +tcp -p 10053 @::1 $record $api"
