#!/usr/bin/env bash
# Builds helm (helm.sh/helm/v3, from the Go module proxy) into a cache folder and prints the
# binary's path. Reuses the cache when the binary exists.
#   usage: hack/helm/build.sh
set -euo pipefail
version=v3.22.0
out=${DENO_CCM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/deno-ccm}/helm-$version
if [[ -x "$out/helm" ]]; then
  echo "$out/helm"
  exit 0
fi
command -v go >/dev/null || { echo "go is required to build helm (https://go.dev/dl)" >&2; exit 1; }
mkdir -p "$out"
start=$(date +%s)
echo "building helm $version into $out (first build takes a few minutes)" >&2
CGO_ENABLED=0 GOBIN="$out/.bin" go install -trimpath -ldflags "-s -w" "helm.sh/helm/v3/cmd/helm@$version" >&2
mv "$out/.bin/helm" "$out/helm"
rmdir "$out/.bin"
echo "built in $(( $(date +%s) - start )) s" >&2
echo "$out/helm"
