#!/usr/bin/env bash
# Builds the images (hack/kind/build-images.sh: no registry), loads them into the kind cluster of an IP family,
# installs charts/gardener-ipv6 with the family's values (charts/gardener-ipv6/ci/FAMILY-values.yaml) and routes the
# load-balancer networks of the shoots' API servers (the gardenlet's --load-balancer-networks, or the chart's
# defaults fd00:ff::/64 and 172.18.255.0/24) from this host to the first node, where kube-proxy serves them. Extra
# arguments go to `helm upgrade --install`, e.g. --set logLevel=debug.
# shellcheck source=hack/local/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
help_requested "$@" && usage "Builds the images and installs the chart into gardener-local-FAMILY (namespace gardener-ipv6)."
parse_family "${1:-}"
shift || true
require docker kind kubectl helm root debootstrap
require_cluster

images="$(bash "$ROOT/hack/kind/build-images.sh")"
value() { sed -n "s/^$1=//p" <<<"$images"; }
APP_IMAGE="$(value APP_IMAGE)" BIND9_IMAGE="$(value BIND9_IMAGE)"
log "loading $APP_IMAGE, $BIND9_IMAGE and the seed's images into $CLUSTER_NAME"
kind load docker-image "$APP_IMAGE" "$BIND9_IMAGE" --name "$CLUSTER_NAME" >/dev/null
for archive in $(value SEED_IMAGES); do
  kind load image-archive "$archive" --name "$CLUSTER_NAME" >/dev/null
done

log "installing the chart into namespace $RELEASE_NAMESPACE"
helm upgrade --install gardener-ipv6 "$ROOT/charts/gardener-ipv6" \
  --kubeconfig "$CLUSTER_KUBECONFIG" \
  --namespace "$RELEASE_NAMESPACE" --create-namespace \
  --values "$ROOT/charts/gardener-ipv6/ci/$FAMILY-values.yaml" \
  --set-string image.repository="${APP_IMAGE%:*}" --set-string image.tag="${APP_IMAGE##*:}" \
  --set-string dnsServer.image.repository="${BIND9_IMAGE%:*}" --set-string dnsServer.image.tag="${BIND9_IMAGE##*:}" \
  "$@" >/dev/null
for deployment in $(kubectl -n "$RELEASE_NAMESPACE" get deployments -l app.kubernetes.io/instance=gardener-ipv6 -o name); do
  kubectl -n "$RELEASE_NAMESPACE" rollout status "$deployment" --timeout=5m >/dev/null
done

# The shoots' API servers answer at their load-balancer addresses: route those networks to the first node.
node="$(kind get nodes --name "$CLUSTER_NAME" | head -n1)"
networks="$(kubectl -n "$RELEASE_NAMESPACE" get deployment gardener-ipv6-gardenlet --ignore-not-found \
  -o jsonpath='{.spec.template.spec.containers[0].args}' | sed -n 's/.*"--load-balancer-networks=\([^"]*\)".*/\1/p')"
[[ -n "$networks" ]] || networks="fd00:ff::/64,172.18.255.0/24"
for network in ${networks//,/ }; do
  if [[ "$network" == *:* ]]; then
    [[ "$FAMILY" == ipv4 ]] && continue
    via="$(docker inspect "$node" --format '{{(index .NetworkSettings.Networks "kind").GlobalIPv6Address}}')"
    route=(ip -6 route replace "$network" via "$via")
  else
    [[ "$FAMILY" == ipv6 ]] && continue
    via="$(docker inspect "$node" --format '{{(index .NetworkSettings.Networks "kind").IPAddress}}')"
    route=(ip route replace "$network" via "$via")
  fi
  if [[ "$(id -u)" == 0 ]]; then
    "${route[@]}"
    log "route $network via $node ($via)"
  else
    log "to reach the shoots' API servers from this host, run as root: ${route[*]}"
  fi
done
log "running; next: hack/local/examples.sh $FAMILY"
