#!/usr/bin/env bash
# Builds a Go command from the Go module proxy into a cache folder and prints the binary's path;
# reuses the cache when the binary exists. Used for the test tools (helm, promtool).
#   usage: hack/go_tool_build.sh NAME PACKAGE VERSION
set -euo pipefail
name=$1 package=$2 version=$3
out=${DENO_CCM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/deno-ccm}/$name-$version
if [[ -x "$out/$name" ]]; then
  echo "$out/$name"
  exit 0
fi
command -v go >/dev/null || { echo "go is required to build $name (https://go.dev/dl)" >&2; exit 1; }
mkdir -p "$out"
start=$(date +%s)
echo "building $name $version into $out (first build takes a few minutes)" >&2
CGO_ENABLED=0 GOBIN="$out/.bin" go install -trimpath -ldflags "-s -w" "$package@$version" >&2
mv "$out/.bin/$name" "$out/$name"
rmdir "$out/.bin"
echo "built in $(( $(date +%s) - start )) s" >&2
echo "$out/$name"
