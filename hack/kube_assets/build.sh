#!/usr/bin/env bash
# Builds kube-apiserver, kubectl, kube-proxy, kube-controller-manager and kubelet from the k8s.io/kubernetes Go module
# into a cache folder and prints that folder (usable as KUBEBUILDER_ASSETS). Reuses the cache for binaries
# already built.
#   usage: hack/kube_assets/build.sh [--oldest] [--only kube-apiserver|kubectl|kube-proxy|kube-controller-manager|kubelet] [out-dir]
# The demo needs only kube-apiserver (--only kube-apiserver); the tests also use kubectl, kube-proxy (the
# draining proof runs a real kube-proxy per Node, each in its own network namespace) and
# kube-controller-manager (its node IPAM and node lifecycle, next to the CCM) and kubelet (real Nodes,
# tests/kubelet_test.ts).
# --oldest: kube-apiserver, kubectl and kubelet of the oldest supported minor (the module in oldest/), for the
# tests that run against both ends of the range (tests/oldest_minor_test.ts).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
commands=(kube-apiserver kubectl kube-proxy kube-controller-manager kubelet)
if [[ "${1:-}" == "--oldest" ]]; then
  here=$here/oldest
  commands=(kube-apiserver kubectl kubelet)
  shift
fi
if [[ "${1:-}" == "--only" ]]; then
  case "${2:-}" in
    kube-apiserver | kubectl | kube-proxy | kube-controller-manager | kubelet) commands=("$2") ;;
    *) echo "usage: $0 [--only kube-apiserver|kubectl|kube-proxy|kube-controller-manager|kubelet] [out-dir]" >&2; exit 2 ;;
  esac
  shift 2
fi
version=$(awk '/^require k8s.io\/kubernetes/ {print $3}' "$here/go.mod")
out=${1:-${DENO_CCM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/deno-ccm}/kube-$version}
missing=()
for cmd in "${commands[@]}"; do [[ -x "$out/$cmd" ]] || missing+=("$cmd"); done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "$out"
  exit 0
fi
command -v go >/dev/null || { echo "go is required to build ${missing[*]} (https://go.dev/dl)" >&2; exit 1; }
mkdir -p "$out"
minor=${version#v1.}; minor=${minor%%.*}
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
start=$(date +%s)
echo "building ${missing[*]} $version into $out (a first build takes several minutes)" >&2
cd "$here"
for cmd in "${missing[@]}"; do
  CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out/$cmd.tmp" "k8s.io/kubernetes/cmd/$cmd"
  mv "$out/$cmd.tmp" "$out/$cmd"
done
echo "built in $(( $(date +%s) - start )) s" >&2
echo "$out"
