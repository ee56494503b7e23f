#!/usr/bin/env bash
# Adds a kind cluster of an IP family as a second seed of the garden that another kind cluster runs
# (hack/local/up.sh GARDEN_FAMILY), as Gardener's local setup adds kind2: the cluster (hack/local/kind-up.sh), garden
# credentials of its own for its gardenlet, the chart in its seed form (gardenlet, network and DNS extensions, a DNS
# server, no admission or scheduler), its load-balancer networks routed to its first node; its gardenlet registers
# its Seed in the garden (seedConfig: examples/seed-*.yaml of the family), and the script waits until the garden sees
# the gardenlet (GardenletReady).
#
# The gardenlet's garden credentials are a client certificate of gardener.cloud:system:seed:<seed> (group
# gardener.cloud:system:seeds), as Gardener's gardenlet holds: a key made here, a CertificateSigningRequest to the
# garden's signer kubernetes.io/kube-apiserver-client, approved with the garden's admin kubeconfig (Gardener's
# gardenlet sends the same request with a bootstrap token, and its controller manager approves it). The garden's
# RBAC and SeedRestriction webhook then limit it to its seed's objects. The garden's own gardenlet, when it served
# every Seed, is set to its own Seed (seedName) first, and a dual-stack seed turns on the garden's DualStack gate.
# shellcheck source=hack/local/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
if help_requested "$@"; then
  printf 'usage: %s [%s] --garden [%s]\n%s\n' "$SCRIPT" "$FAMILIES" "$FAMILIES" \
    "Creates gardener-local-FAMILY as a seed of the garden in gardener-local-GARDEN_FAMILY (hack/local/up.sh GARDEN_FAMILY)."
  exit 0
fi
family="" garden_family=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --garden)
      garden_family="${2:-}"
      shift 2 || true
      ;;
    -*)
      printf '[%s] error: unknown flag %s\n' "$SCRIPT" "$1" >&2
      exit 2
      ;;
    *)
      family="$1"
      shift
      ;;
  esac
done
if [[ -z "$garden_family" ]]; then
  printf '[%s] error: --garden FAMILY is missing: the IP family of the kind cluster that runs the garden (%s)\n' "$SCRIPT" "$FAMILIES" >&2
  exit 2
fi
parse_family "$garden_family"
GARDEN_FAMILY="$FAMILY"
GARDEN_CLUSTER_NAME="${GARDENER_IPV6_GARDEN_KIND_CLUSTER:-gardener-local-$GARDEN_FAMILY}"
GARDEN_KUBECONFIG="${GARDENER_IPV6_KIND_DIR:-$ROOT/.cache/kind}/$GARDEN_CLUSTER_NAME.kubeconfig"
parse_family "$family"
[[ "$CLUSTER_NAME" != "$GARDEN_CLUSTER_NAME" ]] ||
  die "the seed and the garden would be one cluster ($CLUSTER_NAME): give the seed another family than the garden"
require docker kind kubectl helm host_ipv6 root debootstrap openssl
[[ -f "$GARDEN_KUBECONFIG" ]] ||
  die "no kubeconfig of the garden's kind cluster at ${GARDEN_KUBECONFIG#"$ROOT"/}: create it first with hack/local/up.sh $GARDEN_FAMILY"

seed_file="$(seed_example "$FAMILY")" garden_seed_file="$(seed_example "$GARDEN_FAMILY")"
seed_name() { sed -n 's/^  name: //p' "$ROOT/examples/$1" | head -n1; }
SEED="$(seed_name "$seed_file")" GARDEN_SEED="$(seed_name "$garden_seed_file")"
# Apart from the garden's (the chart's defaults, fd00:ff::/64 and 172.18.255.0/24): each cluster's shoots answer at
# addresses of its own, routed to its own node.
LB_NETWORK_V6=fd00:ff:1::/64 LB_NETWORK_V4=172.18.254.0/24
SECRET=gardener-ipv6-garden-kubeconfig
garden() { kubectl --kubeconfig "$GARDEN_KUBECONFIG" "$@"; }

bash "$ROOT/hack/local/kind-up.sh" "$FAMILY" >/dev/null
export KUBECONFIG="$CLUSTER_KUBECONFIG"

# The garden's API server as this cluster's pods reach it: its control-plane node on kind's Docker network (its
# serving certificate names the node's address).
garden_node="$GARDEN_CLUSTER_NAME-control-plane"
if [[ "$GARDEN_FAMILY" == ipv4 ]]; then
  garden_server="https://$(docker inspect "$garden_node" --format '{{(index .NetworkSettings.Networks "kind").IPAddress}}'):6443"
else
  garden_server="https://[$(docker inspect "$garden_node" --format '{{(index .NetworkSettings.Networks "kind").GlobalIPv6Address}}')]:6443"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
csr="gardener-ipv6-seed-$SEED"
log "issuing garden credentials for gardener.cloud:system:seed:$SEED (CertificateSigningRequest $csr)"
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$work/key.pem" \
  -subj "/O=gardener.cloud:system:seeds/CN=gardener.cloud:system:seed:$SEED" -out "$work/csr.pem" 2>/dev/null
garden delete csr "$csr" --ignore-not-found >/dev/null
garden apply -f - >/dev/null <<EOF
apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata:
  name: $csr
spec:
  signerName: kubernetes.io/kube-apiserver-client
  request: $(base64 -w0 <"$work/csr.pem")
  usages: [digital signature, key encipherment, client auth]
EOF
garden certificate approve "$csr" >/dev/null
certificate=""
for _ in $(seq 60); do
  certificate="$(garden get csr "$csr" -o jsonpath='{.status.certificate}')"
  [[ -n "$certificate" ]] && break
  sleep 1
done
[[ -n "$certificate" ]] || die "the garden's signer issued no certificate for $csr within 60 s (kube-controller-manager's csrsigning)"
garden config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d >"$work/ca.pem"
base64 -d <<<"$certificate" >"$work/cert.pem"
kubeconfig="$work/kubeconfig"
kubectl config --kubeconfig "$kubeconfig" set-cluster garden --server "$garden_server" \
  --certificate-authority "$work/ca.pem" --embed-certs >/dev/null
kubectl config --kubeconfig "$kubeconfig" set-credentials "gardener.cloud:system:seed:$SEED" \
  --client-certificate "$work/cert.pem" --client-key "$work/key.pem" --embed-certs >/dev/null
kubectl config --kubeconfig "$kubeconfig" set-context garden --cluster garden --user "gardener.cloud:system:seed:$SEED" >/dev/null
kubectl config --kubeconfig "$kubeconfig" use-context garden >/dev/null
kubectl create namespace "$RELEASE_NAMESPACE" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl -n "$RELEASE_NAMESPACE" create secret generic "$SECRET" --from-file=kubeconfig="$kubeconfig" \
  --dry-run=client -o yaml | kubectl apply -f - >/dev/null

# One gardenlet per Seed: the garden's own, when it served every Seed, keeps to its own from now on. A dual-stack
# seed needs the garden's DualStack feature gate (its webhook and scheduler admit and place dual-stack shoots).
garden_values="$(helm get values gardener-ipv6 --kubeconfig "$GARDEN_KUBECONFIG" -n "$RELEASE_NAMESPACE" -o json)"
garden_upgrade=()
if [[ -z "$(sed -n 's/.*"seedName":"\([^"]*\)".*/\1/p' <<<"$garden_values")" ]]; then
  log "the garden's gardenlet serves Seed $GARDEN_SEED only from now on"
  garden_upgrade+=(--set-string seedName="$GARDEN_SEED")
fi
if [[ "$FAMILY" == dual && "$garden_values" != *'"DualStack":true'* ]]; then
  log "the garden gets the feature gate DualStack"
  garden_upgrade+=(--set featureGates.DualStack=true)
fi
if [[ ${#garden_upgrade[@]} -gt 0 ]]; then
  helm upgrade gardener-ipv6 "$ROOT/charts/gardener-ipv6" --kubeconfig "$GARDEN_KUBECONFIG" -n "$RELEASE_NAMESPACE" \
    --reuse-values "${garden_upgrade[@]}" >/dev/null
  for deployment in $(garden -n "$RELEASE_NAMESPACE" get deployments -l app.kubernetes.io/instance=gardener-ipv6 -o name); do
    garden -n "$RELEASE_NAMESPACE" rollout status "$deployment" --timeout=5m >/dev/null
  done
fi

# The gardenlet registers its Seed in the garden from seedConfig when it starts, as Gardener's gardenlet does.
{
  echo "seedConfig:"
  sed -e '/^[[:space:]]*#/d' -e 's/^/  /' "$ROOT/examples/$seed_file"
} >"$work/seed-values.yaml"
bash "$ROOT/hack/local/deploy.sh" "$FAMILY" --values "$work/seed-values.yaml" --set-string seedName="$SEED" \
  --set-string garden.kubeconfigSecret="$SECRET" \
  --set-string loadBalancerNetworks.ipv6="$LB_NETWORK_V6" --set-string loadBalancerNetworks.ipv4="$LB_NETWORK_V4"

log "waiting for the gardenlet to register Seed $SEED (examples/$seed_file) and the garden to see it ready"
deadline=$((SECONDS + 180))
until [[ "$(garden get seed "$SEED" --ignore-not-found -o jsonpath='{.status.conditions[?(@.type=="GardenletReady")].status}')" == True ]]; do
  ((SECONDS < deadline)) ||
    die "Seed $SEED is not GardenletReady after 3 minutes: kubectl --kubeconfig $CLUSTER_KUBECONFIG -n $RELEASE_NAMESPACE logs deployment/gardener-ipv6-gardenlet"
  sleep 2
done
log "Seed $SEED is ready; shoots go to the garden: kubectl --kubeconfig $GARDEN_KUBECONFIG apply -f examples/shoot-*.yaml"
echo "export KUBECONFIG=$CLUSTER_KUBECONFIG"
