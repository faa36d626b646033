#!/usr/bin/env bash
# Builds one of the repo's Go check programs (hack/<name>/, a module pinned to a client library from
# the Go module proxy) into a cache folder and prints the binary's path. Reuses a build of the same
# sources.   usage: hack/go_program_build.sh <name>
set -euo pipefail
name=$1
here=$(cd "$(dirname "$0")/$name" && pwd)
digest=$(cat "$here/go.mod" "$here/go.sum" "$here"/*.go | sha256sum | cut -c1-12)
out=${DENO_CCM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/deno-ccm}/$name-$digest
if [[ -x "$out/$name" ]]; then
  echo "$out/$name"
  exit 0
fi
command -v go >/dev/null || { echo "go is required to build hack/$name (https://go.dev/dl)" >&2; exit 1; }
mkdir -p "$out"
cd "$here"
CGO_ENABLED=0 go build -trimpath -o "$out/$name.tmp" .
mv "$out/$name.tmp" "$out/$name"
echo "$out/$name"
