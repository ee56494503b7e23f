# shellcheck shell=bash
# Shared by the hack/local/*.sh scripts (sourced, not run): the IP family argument, the kind cluster's name and
# kubeconfig, and the prerequisite checks. Every check runs before anything changes and all missing things are
# reported at once.

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# Tools built by hack/ensure-binaries.sh (kubectl, helm) are a fallback for those on PATH.
PATH="$PATH:$ROOT/.cache/bin"
SCRIPT="hack/local/$(basename "$0")"
FAMILIES="ipv6|ipv4|dual"
# Where the host's sysctls are read; tests point this at a fake /proc.
PROC_ROOT="${GARDENER_IPV6_PROC_ROOT:-/proc}"

log() { printf '[%s] %s\n' "$SCRIPT" "$*" >&2; }
die() {
  printf '[%s] error: %s\n' "$SCRIPT" "$*" >&2
  exit 1
}

# help_requested "$@" && usage "WHAT THE SCRIPT DOES": prints the usage and exits 0.
help_requested() { [[ "${1:-}" == -h || "${1:-}" == --help ]]; }
usage() {
  printf 'usage: %s [%s]   (default: ipv6)\n%s\n' "$SCRIPT" "$FAMILIES" "$1"
  exit 0
}

# The family argument (ipv6, ipv4 or dual; default ipv6) into FAMILY, with the cluster's name and kubeconfig.
# shellcheck disable=SC2034 # used by the scripts that source this file
parse_family() {
  FAMILY="${1:-ipv6}"
  case "$FAMILY" in
    ipv6 | ipv4 | dual) ;;
    *)
      printf '[%s] error: unknown IP family "%s" (want %s)\n' "$SCRIPT" "$FAMILY" "$FAMILIES" >&2
      exit 2
      ;;
  esac
  # GARDENER_IPV6_KIND_CLUSTER names another cluster of the family (the e2e test's own).
  CLUSTER_NAME="${GARDENER_IPV6_KIND_CLUSTER:-gardener-local-$FAMILY}"
  KIND_CONFIG="$ROOT/hack/kind/cluster-$FAMILY.yaml"
  # The cluster's own kubeconfig: never the user's $KUBECONFIG, so nothing lands in another cluster by accident.
  CLUSTER_KUBECONFIG="${GARDENER_IPV6_KIND_DIR:-$ROOT/.cache/kind}/$CLUSTER_NAME.kubeconfig"
  RELEASE_NAMESPACE="gardener-ipv6"
}

# The example Seed of an IP family: its file in examples/.
seed_example() {
  case "$1" in
    ipv6) echo seed-ipv6.yaml ;;
    ipv4) echo seed-ipv4.yaml ;;
    dual) echo seed-dual-stack.yaml ;;
  esac
}

MISSING=()
missing() { MISSING+=("$*"); }

# Docker must answer, not just be installed: kind runs the cluster's nodes as its containers.
check_docker() {
  if ! command -v docker >/dev/null 2>&1; then
    missing "Docker is not available: the docker command is not on PATH. Install Docker Engine (Linux) or Docker Desktop (macOS) and start it."
    return
  fi
  local out
  if ! out="$(docker info --format '{{.ServerVersion}}' 2>&1)"; then
    # Root on Linux with Debian's docker.io but no service manager: start the engine (hack/local/docker/engine.sh).
    if [[ "$(uname -s)" == Linux && "$(id -u)" == 0 ]] && command -v dockerd >/dev/null 2>&1 &&
      bash "$ROOT/hack/local/docker/engine.sh" >&2; then
      return
    fi
    missing "Docker is not available: the docker command is installed but no Docker engine answers ($(sed -n '/[^[:space:]]/{p;q;}' <<<"$out")). Start the Docker daemon (or Docker Desktop) and check \`docker info\`."
  fi
}

check_tool() {
  local tool="$1" hint="$2"
  command -v "$tool" >/dev/null 2>&1 || missing "$tool is not on PATH: $hint"
}

check_kind() { check_tool kind "run \`bash hack/ensure-binaries.sh kind\` (kind $(sed -n 's/^KIND_VERSION=//p' "$ROOT/hack/versions.env"), built from the Go module proxy)."; }
check_debootstrap() { check_tool debootstrap "apt-get install debootstrap (the kind images are built from Debian's packages, hack/kind/build-images.sh)."; }
check_root() { [[ "$(id -u)" == 0 ]] || missing "root is needed to build the kind images (debootstrap) and to route the shoots' load-balancer addresses: run as root."; }
check_kubectl() { check_tool kubectl "install kubectl (https://kubernetes.io/docs/tasks/tools/) or run \`bash hack/ensure-binaries.sh kubectl\`."; }
check_openssl() { check_tool openssl "apt-get install openssl (the key and certificate request of a seed's garden credentials)."; }
check_helm() { check_tool helm "install helm 3 (https://helm.sh/docs/intro/install/) or run \`bash hack/ensure-binaries.sh helm\`."; }

# A sysctl of the host; empty when the file does not exist.
host_sysctl() {
  local file="$PROC_ROOT/sys/${1//.//}"
  if [[ -r "$file" ]]; then tr -d '[:space:]' <"$file"; fi
}

# IPv6 and dual-stack kind clusters on Linux need IPv6 on the host and IPv6 forwarding, or pods get no route out.
# Docker Desktop (macOS) runs its own Linux VM, which has both.
check_host_ipv6() {
  [[ "$FAMILY" == ipv4 ]] && return 0
  [[ "$(uname -s)" == Linux ]] || return 0
  local disabled forwarding
  disabled="$(host_sysctl net.ipv6.conf.all.disable_ipv6)"
  forwarding="$(host_sysctl net.ipv6.conf.all.forwarding)"
  if [[ -z "$disabled" ]]; then
    missing "IPv6 is not available on this host ($PROC_ROOT/sys/net/ipv6 is missing): boot without ipv6.disable=1."
  elif [[ "$disabled" != 0 ]]; then
    missing "IPv6 is disabled on this host (net.ipv6.conf.all.disable_ipv6=$disabled): sudo sysctl -w net.ipv6.conf.all.disable_ipv6=0"
  fi
  if [[ -n "$disabled" && "$forwarding" != 1 ]]; then
    missing "IPv6 forwarding is off on this host (net.ipv6.conf.all.forwarding=${forwarding:-unset}): sudo sysctl -w net.ipv6.conf.all.forwarding=1"
  fi
}

# Reports everything missing and exits 1, or returns when nothing is.
require() {
  local check
  MISSING=()
  for check in "$@"; do "check_$check"; done
  [[ ${#MISSING[@]} -eq 0 ]] && return 0
  printf '[%s] error: cannot go on, %d prerequisite(s) missing:\n' "$SCRIPT" "${#MISSING[@]}" >&2
  local m
  for m in "${MISSING[@]}"; do printf '  - %s\n' "$m" >&2; done
  if printf '%s\n' "${MISSING[@]}" | grep -q '^Docker is not available'; then
    printf '\nWithout Docker, run the same components against a local control plane instead (no containers, no kind):\n' >&2
    printf '  npx gardener-ipv6 up\n' >&2
    printf 'See docs/getting-started-ipv6.md, "Without Docker".\n' >&2
  fi
  exit 1
}

# The kind cluster of FAMILY must exist (hack/local/kind-up.sh writes its kubeconfig).
require_cluster() {
  [[ -f "$CLUSTER_KUBECONFIG" ]] ||
    die "no kubeconfig of the $FAMILY kind cluster at ${CLUSTER_KUBECONFIG#"$ROOT"/}: create the cluster first with hack/local/kind-up.sh $FAMILY"
  export KUBECONFIG="$CLUSTER_KUBECONFIG"
}
