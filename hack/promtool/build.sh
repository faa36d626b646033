#!/usr/bin/env bash
# Builds promtool (github.com/prometheus/prometheus, from the Go module proxy) into a cache folder and
# prints the binary's path. Reuses the cache when the binary exists.
#   usage: hack/promtool/build.sh
set -euo pipefail
version=v0.316.0
out=${DENO_CCM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/deno-ccm}/promtool-$version
if [[ -x "$out/promtool" ]]; then
  echo "$out/promtool"
  exit 0
fi
command -v go >/dev/null || { echo "go is required to build promtool (https://go.dev/dl)" >&2; exit 1; }
mkdir -p "$out"
start=$(date +%s)
echo "building promtool $version into $out (first build takes a few minutes)" >&2
CGO_ENABLED=0 GOBIN="$out/.bin" go install -trimpath -ldflags "-s -w" "github.com/prometheus/prometheus/cmd/promtool@$version" >&2
mv "$out/.bin/promtool" "$out/promtool"
rmdir "$out/.bin"
echo "built in $(( $(date +%s) - start )) s" >&2
echo "$out/promtool"
