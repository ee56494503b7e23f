#!/usr/bin/env bash
# The pod network of the kind cluster of an IP family, built from the CNI plugins in its node image: on every node a
# bridge with the node's pod ranges (spec.podCIDRs, host-local addresses, masquerade to the outside), and routes to
# the other nodes' pod ranges via their addresses on kind's Docker network — what kindnet does, with the plugins the
# shoots' machines use. After the bridge, the chain asks the chart's NetworkPolicy enforcer (its cniHook, on in
# charts/gardener-ipv6/ci/*-values.yaml) for each pod: its policies in force and its port on the bridge held to its
# addresses before its containers start. The node image carries that plugin (hack/kind/build-images.sh); until the
# chart runs the enforcer, new pods wait. Idempotent; waits until every node is Ready.
# shellcheck source=hack/local/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
help_requested "$@" && usage "Gives every node of gardener-local-FAMILY a bridge pod network and routes to the others' pod ranges."
parse_family "${1:-}"
require docker kubectl
require_cluster

CONFLIST=/etc/cni/net.d/10-gardener-ipv6-kind.conflist
family_of() { if [[ "$1" == *:* ]]; then echo IPv6; else echo IPv4; fi; }

# Waits for the kube-controller-manager to give every node its pod ranges.
for _ in $(seq 120); do
  missing="$(kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.spec.podCIDR}{"\n"}{end}' 2>/dev/null |
    awk 'NF < 2 { print $1 }' || echo unknown)"
  [[ -z "$missing" ]] && break
  sleep 1
done
[[ -z "$missing" ]] || die "nodes without pod ranges after 120 s: $missing"

nodes="$(kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.spec.podCIDRs[*]}{"\n"}{end}')"
declare -A node_ips=()
while read -r node _; do
  [[ -n "$node" ]] || continue
  node_ips[$node]="$(kubectl get node "$node" -o jsonpath='{range .status.addresses[?(@.type=="InternalIP")]}{.address} {end}')"
done <<<"$nodes"

while read -r node cidrs; do
  [[ -n "$node" ]] || continue
  ranges="" routes=""
  for cidr in $cidrs; do
    ranges+="${ranges:+,}[{\"subnet\":\"$cidr\"}]"
    if [[ "$(family_of "$cidr")" == IPv6 ]]; then routes+="${routes:+,}{\"dst\":\"::/0\"}"; else routes+="${routes:+,}{\"dst\":\"0.0.0.0/0\"}"; fi
  done
  log "$node: bridge with $cidrs"
  docker exec -i "$node" sh -c "mkdir -p /etc/cni/net.d && cat > $CONFLIST.tmp && mv $CONFLIST.tmp $CONFLIST" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "gardener-ipv6-kind",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": { "type": "host-local", "ranges": [$ranges], "routes": [$routes] }
    },
    {
      "type": "gardener-ipv6-network-policy",
      "socket": "/run/gardener-ipv6/network-policy/hook.sock",
      "timeoutSeconds": 20
    },
    { "type": "loopback" }
  ]
}
EOF
  # The other nodes' pod ranges, via their address of the same family.
  while read -r peer peer_cidrs; do
    [[ -n "$peer" && "$peer" != "$node" ]] || continue
    for cidr in $peer_cidrs; do
      for ip in ${node_ips[$peer]}; do
        if [[ "$(family_of "$cidr")" == "$(family_of "$ip")" ]]; then
          docker exec "$node" ip route replace "$cidr" via "$ip"
        fi
      done
    done
  done <<<"$nodes"
done <<<"$nodes"
kubectl wait --for=condition=Ready nodes --all --timeout=5m >/dev/null
log "every node is Ready"
