#!/usr/bin/env bash
# Builds kube-apiserver and kubectl from the k8s.io/kubernetes Go module into a cache folder and
# prints that folder (usable as KUBEBUILDER_ASSETS). Reuses the cache when both binaries exist.
#   usage: hack/kube_assets/build.sh [out-dir]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=$(awk '/^require k8s.io\/kubernetes/ {print $3}' "$here/go.mod")
out=${1:-${DENO_CCM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/deno-ccm}/kube-$version}
if [[ -x "$out/kube-apiserver" && -x "$out/kubectl" ]]; then
  echo "$out"
  exit 0
fi
command -v go >/dev/null || { echo "go is required to build kube-apiserver (https://go.dev/dl)" >&2; exit 1; }
mkdir -p "$out"
minor=${version#v1.}; minor=${minor%%.*}
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
start=$(date +%s)
echo "building kube-apiserver and kubectl $version into $out (first build takes several minutes)" >&2
cd "$here"
for cmd in kube-apiserver kubectl; do
  CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out/$cmd.tmp" "k8s.io/kubernetes/cmd/$cmd"
  mv "$out/$cmd.tmp" "$out/$cmd"
done
echo "built in $(( $(date +%s) - start )) s" >&2
echo "$out"
