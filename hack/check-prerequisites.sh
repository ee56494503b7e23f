#!/usr/bin/env bash
# Checks what the project needs from the machine before anything is built or started, and names everything that is
# missing in one message, with the command that installs it. The one list of prerequisites: hack/ensure-binaries.sh
# runs it before a build, `gardener-ipv6 up` before it starts anything, and CI (`test`) before the tests.
#
# Usage: hack/check-prerequisites.sh build|up|test [--ipv6-only] [--build-binaries]
#   build             building the control plane binaries: Go >= MIN_GO_VERSION (hack/versions.env)
#   up                `gardener-ipv6 up`: BIND9, openssl; with --ipv6-only also iproute2 and root;
#                     with --build-binaries (some binary is not built yet) also Go
#   test              `npm test`: what `up` needs, plus iproute2, dnsutils and shellcheck (root is recommended)
# Exit code: 0 all present, 1 something is missing (the message on stderr), 2 bad usage.
set -uo pipefail

# Builtins only where the check itself could be missing tools.
here="${BASH_SOURCE[0]%/*}"
[[ "$here" == "${BASH_SOURCE[0]}" ]] && here=.
ROOT="$(cd "$here/.." && pwd)"
# shellcheck source=hack/versions.env
source "$ROOT/hack/versions.env"

purpose="${1:-}"
shift || true
ipv6_only=0
build_binaries=0
for arg in "$@"; do
  case "$arg" in
    --ipv6-only) ipv6_only=1 ;;
    --build-binaries) build_binaries=1 ;;
    *)
      echo "usage: $0 build|up|test [--ipv6-only] [--build-binaries]" >&2
      exit 2
      ;;
  esac
done

missing=()
packages=()

# need COMMAND DEBIAN-PACKAGE WHAT
need() {
  command -v "$1" >/dev/null 2>&1 && return 0
  missing+=("$3: \`$1\` not found (Debian package $2)")
  packages+=("$2")
}

# version_at_least HAVE MIN: dotted numeric versions (1.26.8 >= 1.26).
version_at_least() {
  local -a have min
  IFS=. read -r -a have <<<"$1"
  IFS=. read -r -a min <<<"$2"
  local i h m
  for ((i = 0; i < ${#min[@]}; i++)); do
    h="${have[i]:-0}"
    m="${min[i]}"
    h="${h%%[!0-9]*}"
    ((10#${h:-0} > 10#$m)) && return 0
    ((10#${h:-0} < 10#$m)) && return 1
  done
  return 0
}

need_go() {
  local go="" have
  if command -v go >/dev/null 2>&1; then
    go="$(command -v go)"
  elif [[ -x /usr/local/go/bin/go ]]; then
    go=/usr/local/go/bin/go
  fi
  if [[ -z "$go" ]]; then
    missing+=("Go >= $MIN_GO_VERSION to build the control plane binaries: \`go\` not found (Debian's Go is too old:
      install it from https://go.dev/dl/, or set GARDENER_IPV6_BIN_DIR to a folder with ready-made binaries)")
    return
  fi
  have="$("$go" env GOVERSION 2>/dev/null)"
  have="${have#go}"
  if [[ -z "$have" ]] || ! version_at_least "$have" "$MIN_GO_VERSION"; then
    missing+=("Go >= $MIN_GO_VERSION to build the control plane binaries: $go is ${have:-of unknown version}
      (install a newer one from https://go.dev/dl/)")
  fi
}

need_root() {
  [[ $EUID -eq 0 ]] || missing+=("root: $1")
}

case "$purpose" in
  build)
    need_go
    ;;
  up)
    [[ $build_binaries -eq 1 ]] && need_go
    need named bind9 "BIND9, the DNS server of the shoots' records"
    need openssl openssl "openssl, for the control plane's certificates"
    if [[ $ipv6_only -eq 1 ]]; then
      need ip iproute2 "iproute2, for the IPv6-only network namespace"
      need_root "--ipv6-only creates a network namespace (run as root, or leave --ipv6-only out)"
    fi
    ;;
  test)
    [[ $build_binaries -eq 1 ]] && need_go
    need named bind9 "BIND9, for the DNS tests"
    need named-checkconf bind9-utils "BIND9's tools, for the DNS tests"
    need dig dnsutils "dig, for the DNS tests"
    need openssl openssl "openssl, for the control plane's certificates"
    need ip iproute2 "iproute2, for the IPv6-only test network namespace"
    need shellcheck shellcheck "shellcheck, which the tests run on hack/"
    ;;
  *)
    echo "usage: $0 build|up|test [--ipv6-only] [--build-binaries]" >&2
    exit 2
    ;;
esac

if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

{
  echo "error: missing prerequisites ($purpose):"
  for m in "${missing[@]}"; do echo "  - $m"; done
  if [[ ${#packages[@]} -gt 0 ]]; then
    sudo=""
    [[ $EUID -eq 0 ]] || sudo="sudo "
    echo "install the Debian packages with:"
    echo "  ${sudo}apt-get install -y ${packages[*]}"
  fi
} >&2
exit 1
